"""Op-table rows of the fourth part of the pl-head §3.1-3.6 catalogue (batched matmul, ...): appended
to `op_table.CASES` / `TCASES` when op_table is imported, so the op-table tests run them on both
backends like every other row."""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PadValue
from pypto.ir.expr import ConstInt

from . import op_table as T
from .op_table import SUM, C, Case, R, TCase, ref

Mat, Acc = MemorySpace.Mat, MemorySpace.Acc


def _I(v: int) -> ConstInt:
    return ConstInt(v, DataType.INT32)


def _bload(src: str, rows: int, cols: int, shape3: str) -> str:
    return f"pl.reshape(pl.load({src}, [0, 0], [{rows}, {cols}], target_memory=pl.Mem.Mat), {shape3})"


def _bmm(x, a, b, nb):  # a [16, 16] as [2, 8, 16], b [nb * 16, 32] as [nb, 16, 32] -> [16, 32]
    return ref("block.batch_matmul")(x[a][:16, :16].reshape(2, 8, 16),
                                     x[b][:nb * 16, :32].reshape(nb, 16, 32)).reshape(16, 32)


_A, _B = _bload("a", 16, 16, "[2, 8, 16]"), _bload("b", 32, 32, "[2, 16, 32]")
_OUT = "r = pl.reshape(r3, [16, 32])"
_BM = dict(operands=("a", "b"), tol=SUM, blocks=1, out=(16, 32))
CASES = [
    Case("block.batch_matmul", body=(f"r3 = pl.batch_matmul({_A}, {_B})", _OUT), **_BM,
         expect=lambda x, i0, vr, vc, vk, dt: _bmm(x, "a", "b", 2)),
    # one rhs matrix broadcast over the batch
    Case("block.batch_matmul", id="batch_matmul_bcast", **_BM,
         body=(f"r3 = pl.batch_matmul({_A}, {_bload('b', 16, 32, '[1, 16, 32]')})", _OUT),
         expect=lambda x, i0, vr, vc, vk, dt: _bmm(x, "a", "b", 1)),
    Case("block.batch_matmul_acc", **_BM,
         body=(f"r0 = pl.batch_matmul({_A}, {_B})",
               f"r3 = pl.tile.batch_matmul_acc(r0, {_bload('c', 16, 16, '[2, 8, 16]')}, "
               f"{_bload('pos', 32, 32, '[2, 16, 32]')})", _OUT),
         expect=lambda x, i0, vr, vc, vk, dt: _bmm(x, "a", "b", 2) + _bmm(x, "c", "pos", 2)),
]
# a 3-D tile's last two dims swapped, batch by batch (the batched form of pto.ttrans)
CASES.append(Case("block.transpose_view", ("a",), id="transpose_view_batched", blocks=1, out=(32, 8),
                  body=("r3 = pl.tile.transpose_view(pl.reshape(pl.load(a, [0, 0], [16, 16]), [2, 8, 16]))",
                        "r = pl.reshape(r3, [32, 8])"),
                  expect=lambda x, i0, vr, vc, vk, dt: x["a"][:16, :16].reshape(2, 8, 16).transpose(0, 2, 1)
                  .reshape(32, 8)))
CASES.append(Case("block.extract", ("a",), blocks=1, out=(4, 16), call="pl.tile.extract({0}, 3, 5, [4, 16])",
                  expect=lambda args, vr, vc, dt: args[0][3:7, 5:21]))
# the valid region moved (the data kept): fillpad shows which region the tile / tensor now has
CASES.append(Case("block.set_validshape", (), id="set_validshape_fillpad", out=(R, C), blocks=1,
                  body=(f"t = pl.load(a, [0, 0], [{R}, {C}])",
                        "r = pl.fillpad(pl.set_validshape(t, 5, 20), pad_value=pl.PadValue.min)"),
                  expect=lambda x, i0, vr, vc, vk, dt: ref("block.fillpad")(x["a"][:R, :C], pad_value=PadValue.min,
                                                                            valid=(5, 20))))
# (in an explicit InCore scope, like op_table's tensor.fillpad row)
_TFILL = TCase("tensor.set_validshape", "pl.tensor.fillpad(pl.set_validshape({a}, 13, 37), pad_value=pl.PadValue.max)",
               lambda x, dt: ref("tensor.fillpad")(x["a"], pad_value=PadValue.max, valid=(13, 37)), ("setvalid",),
               incore=True)
# broadcast copies into a created target ([16, 1] along the columns, [1, 64] along the rows)
TCASES = [TCase("tensor.expand_clone", f"pl.expand_clone({{{v}}}, t0)",
                lambda x, dt, v=v: np.broadcast_to(x[v], (R, C)).copy(), ("expand_clone",), id=f"expand_clone_{v}",
                pre=(f"t0 = pl.create_tensor([{R}, {C}], dtype=pl.{{dt}})",))
          for v in ("row", "col")] + [_TFILL]
# an L1 buffer: zeros where nothing was assembled (in a kernel: it exists only on the chip)
# Philox bits (ops/rng.py), plus an operand so the row has one: the bits are the same on both backends
CASES.append(Case("block.random", ("a",), id="random_add", blocks=1, out="full", dtypes=("INT32",),
                  call=f"pl.add({{0}}, pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [{R}, {C}], dtype=pl.INT32))",
                  expect=lambda args, vr, vc, dt: (args[0].astype(np.int64) + ref("block.random")(
                      0x1234, 0x5678, 1, 2, 3, 4, (R, C), dtype=DataType.INT32)).astype(np.int32)))
TCASES.append(TCase("tensor.random", f"pl.random(9, 10, 0xFFFFFFFF, 7, 0, 0, [{R}, {C}], dtype=pl.INT32, rounds=7)",
                    lambda x, dt: ref("tensor.random")(9, 10, 0xFFFFFFFF, 7, 0, 0, (R, C), dtype=DataType.INT32,
                                                       rounds=7),
                    ("random",), dtypes=("INT32",)))
TCASES.append(TCase("tensor.create_l1", "pl.add(t0, {a})", lambda x, dt: x["a"] + np.zeros((), x["a"].dtype),
                    ("create_l1",), pre=(f"t0 = pl.create_l1([{R}, {C}], pl.{{dt}})",), incore=True))


def _probe(acc: bool):
    def call(dt):
        a, b = T._tile(dt, (2, 8, 16), Mat), T._tile(dt, (2, 16, 32), Mat)
        return ((T._tile(T._acc_dt(dt), (2, 8, 32), Acc), a, b) if acc else (a, b)), {}
    return call


PROBE_CALL = {"block.batch_matmul": _probe(False), "block.batch_matmul_acc": _probe(True),
              "block.extract": lambda dt: ((T._tile(dt), ConstInt(3, DataType.INT32), ConstInt(5, DataType.INT32),
                                            T._ints(4, 16)), {}),
              "block.set_validshape": lambda dt: ((T._tile(dt), _I(5), _I(20)), {}),
              "tensor.set_validshape": lambda dt: ((T._tensor(dt), _I(13), _I(37)), {}),
              "block.random": lambda dt: ((*(_I(v) for v in (1, 2, 3, 4, 5, 6)), T._ints(R, C)), {"dtype": dt}),
              "tensor.random": lambda dt: ((*(_I(v) for v in (1, 2, 3, 4, 5, 6)), T._ints(R, C)), {"dtype": dt}),
              "tensor.create_l1": lambda dt: ((T._ints(R, C),), {"dtype": dt}),
              "tensor.expand_clone": lambda dt: ((T._tensor(dt, (R, 1)), T._tensor(dt, (R, C))), {})}
SHARD_FAMILIES = {"matmul": ("batch_matmul", "batch_matmul_acc"), "layout": ("extract", "expand_clone", "set_validshape"),
                  "memory": ("create_l1", "random")}


def install() -> None:
    """Append the rows, probes and shard families to op_table's tables (once)."""
    if any(c.op == "block.batch_matmul_acc" for c in T.CASES):
        return
    T.CASES.extend(CASES)
    T.TCASES.extend(TCASES)
    T._PROBE_CALL.update(PROBE_CALL)
    T.SKIP["block.expand_clone"] = "the tile form of tensor.expand_clone (no pl spelling): its tensor rows run it"
    for shard, fams in SHARD_FAMILIES.items():
        T.SHARDS[shard] = (*T.SHARDS[shard], *fams)
        T._SHARD_OF_FAMILY.update({f: shard for f in fams})


__all__ = ["CASES", "TCASES", "install"]
