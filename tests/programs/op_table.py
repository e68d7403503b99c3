"""The op table of `test_ops_e2e.py` and the `pl` programs built from it.

Two tables, one row per way of calling a registry op (`OPS`):

- `CASES` (block level): the operands the op takes (tiles loaded from the inputs, broadcast
  vectors, scalars), how the `pl` call is spelled, how the expected value follows from the op's
  registry `reference`, and the tolerance.
- `TCASES` (tensor level): a `pl` expression over tensors, written straight in the orchestration;
  the pipeline scopes it, outlines it into a kernel and lowers it to tiles. Row-local ones also run
  on whole tensors with a dynamic row count (tiled by the pipeline over row blocks).

The dtypes a row runs with are not listed: `dtypes_of` asks the op's type rule which of
fp32/fp16/bf16/int32/int8 it accepts (an `OpError` means "not allowed").

One program per dtype and shard (`ops_program(dt, shard=...)`; `SHARDS` groups the op families)
holds its rows, so a test item builds one native library of a few dozen kernels. Its inputs are tensors `a b c pos shift mask` of [M, 64] with a dynamic M (run with
M = 45 and 48), `row` [M, 1], `col` [1, 64], `w` [M, 2048] and a scalar `sv` of the dtype; the
floats hold NaN, inf and -0.0, the ints their type's MIN and MAX (and MIN / -1, x / 0):

- Block rows: one InCore kernel each. It loops over the row blocks of its inputs
  (`for i in pl.range(0, M, 16)`), loads [16, 64] tiles whose valid region is
  `[pl.min(16, M - i), 64 - 27 * j]` for block j — (16, 64), (16, 37), (13, 10) at M = 45: the full
  tile, ragged columns, and a ragged last block — applies the op and stores the valid region into its
  own [48, 64] slot of the output tensor of the result dtype, the rest keeping its sentinel. A few
  rows have kernels of their own (`Case.kernel`: loop-carried tiles, an if choosing a tile).
  `ops_program(dt, static=True)` writes the three blocks out with static valid shapes instead
  (for M = 45).
- Tensor rows: the op on [16, 64] views of the inputs (or other windows), the result assembled
  into its slot of the output; row-local rows also on the whole [M, 64] tensors, returned from
  the entry function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType, MemorySpace, PadValue
from pypto.ir.expr import ConstFloat, ConstInt, MakeTuple, Var
from pypto.ir.op import OpError
from pypto.ir.types import TensorType, TileType
from pypto.ops import OPS, Level

DTYPES = ("FP32", "FP16", "BF16", "INT32", "INT8")
NP = {"FP32": np.dtype(np.float32), "FP16": np.dtype(np.float16), "BF16": np.dtype(ml_dtypes.bfloat16),
      "INT32": np.dtype(np.int32), "INT8": np.dtype(np.int8), "BOOL": np.dtype(np.bool_)}  # (BOOL: results only)
FLOATS = ("FP32", "FP16", "BF16")

R, C = 16, 64  # tile shape of the block rows; tensor rows use [16, 64] windows
WIDE = 2048  # columns of input `w`: its rows are tiled in many row blocks
M_ROWS = 45  # the dynamic row count M the programs run with (also 48: no ragged last block; the
# tensor rows read windows of up to 40 rows, the block rows' kernels handle at most 48)
OUT_ROWS = 3 * R  # rows of every output slot
SENTINEL = -99  # what every output element starts as (representable in every dtype)
INPUTS = ("a", "b", "c", "pos", "shift", "mask")


def dt_of(name: str) -> DataType:
    return getattr(DataType, name)


def ref(op: str) -> Callable:
    return OPS[op].reference


SKIP = {
    "system.sync_src": "system op: set/wait flags are inserted by InsertSync and checked by its tests and the "
                       "interpreter's hazard checker",
    "system.sync_dst": "system op: set/wait flags are inserted by InsertSync and checked by its tests and the "
                       "interpreter's hazard checker",
    "system.bar_v": "system op: barriers are inserted by InsertSync and checked by its tests and the hazard checker",
    "system.bar_m": "system op: barriers are inserted by InsertSync and checked by its tests and the hazard checker",
    "system.bar_all": "system op: barriers are inserted by InsertSync and checked by its tests and the hazard checker",
    "system.syncall": "a barrier across the blocks of an spmd grid, no value: tests/language/test_tasks.py checks "
                      "the rendezvous on both backends",
    **{f"block.{n}": "a cross-core pipe op: its value is another block's push, not a NumPy function; "
                     "tests/language/test_cross_core_pipes.py checks it on both backends"
       for n in ("tpush_to_aic", "tpush_to_aiv", "tpop_from_aic", "tpop_from_aiv")},
    "block.alloc": "buffer declaration inserted by InitMemRef; every kernel of this file allocates through it",
    "block.mgather": "reads a whole kernel-parameter tensor by index (not a [16, 64] tile op): "
                     "tests/language/test_pl_catalogue5.py checks rows and elements in every OOB mode on both backends",
    "block.mscatter": "writes a whole kernel-parameter tensor by index (not a [16, 64] tile op): "
                      "tests/language/test_pl_catalogue5.py checks it on both backends",
    "block.paged_gather": "reads a paged pool and its block table as whole kernel-parameter tensors (not a [16, 64] "
                          "tile op): tests/language/test_pl_paged_gather.py checks it on both backends",
    "tensor.paged_gather": "lowers to block.paged_gather over whole kernel parameters: "
                           "tests/language/test_pl_paged_gather.py checks it on both backends",
}


# ---------------------------------------------------------------------------------------------
# block-level rows


@dataclass(frozen=True)
class Case:
    """One way of calling a block-level registry op.

    operands: `a b c pos shift mask` ([16, 64] tiles of those inputs), `row` ([16, 1] of `row`),
      `col` ([1, 64] of `col`), `sv` (the kernel's scalar parameter, passed on from the entry's), and
      scalar literals (see `scalar_literal`).
    call: the `pl` expression, `{0}`, `{1}`, ... standing for the operands and `{dt}` for the dtype;
      default `pl.block.<name>(operands)`. With `body`, the kernel's lines per row block instead
      (placeholders `{i}` row offset, `{vr}` `{vc}` `{vk}` valid extents, `{dt}`), ending in `r = ...`.
    out: the result's valid region given the operands' (vr, vc): `t` (vr, vc), `row` (vr, 1),
      `col` (1, vc), `t16` / `t32` (vr, min(vc, 16 / 32)), `tT` (min(vc, 16), vr), `full` (the
      whole tile), or `(rows, cols)`.
    expect: (operand arrays of the valid region, vr, vc, dt) -> expected result; default the
      registry reference applied to the operands with `kw`. Rows with `body` get the [M, 64] inputs
      as a dict and the block's (i0, vr, vc, vk) instead.
    tol: "exact", ("ulp", n): within n units in the last place of the result dtype, or
      ("sum", n): n ulp plus the fp32 rounding of a 64-term sum of the magnitudes (reductions, matmul).
    """

    op: str
    operands: tuple[str, ...] = ()
    call: str = ""
    kw: dict = field(default_factory=dict)
    out: Any = "t"
    expect: Callable | None = None
    tol: Any = "exact"
    id: str = ""
    dtypes: tuple[str, ...] | None = None  # narrower than the type rule (cast: the source dtype)
    blocks: int = 3  # 1: only the first block, with the whole tile valid (static shapes)
    stmt: bool = False  # `call` is a statement updating operand 0 in place (block.write)
    body: tuple[str, ...] = ()
    probe: tuple[str, ...] | None = None  # operand kinds for the type rule when they differ from operands
    store: str = "out = pl.store(r, [{i}, 0], out)"  # with `body`
    kernel: tuple[str, ...] = ()  # the whole kernel body but `return out` ({dt}); expect(x, dt) -> [(row, array)]

    @property
    def name(self) -> str:
        return self.id or self.op.split(".", 1)[1].rstrip("_")

    def text(self, names: list[str], dt: str) -> str:
        if self.call:
            return self.call.format(*names, dt=dt)
        return f"pl.block.{self.op.split('.', 1)[1]}({', '.join(names)})"


def _default_expect(case: Case) -> Callable:
    def f(args, vr, vc, dt):
        with np.errstate(all="ignore"):
            return ref(case.op)(*args, **case.kw)
    return f


def _pad_tile(x: np.ndarray) -> np.ndarray:
    t = np.zeros((R, C), x.dtype)
    t[: x.shape[0], : x.shape[1]] = x
    return t


SUM = ("sum", 1)
CASES: list[Case] = []
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "rem"):
    CASES.append(Case(f"block.{_n}", ("a", "b")))
CASES += [  # broadcasting ([16, 1] / [1, 64] operands on either side)
    Case("block.add", ("a", "row"), id="add_row_bcast"),
    Case("block.mul", ("a", "col"), id="mul_col_bcast"),
    Case("block.sub", ("row", "a"), id="sub_row_bcast_lhs"),
    Case("block.div", ("col", "a"), id="div_col_bcast_lhs"),
]
for _n in ("and_", "or_", "xor"):
    CASES.append(Case(f"block.{_n}", ("a", "b")))
for _n in ("shl", "shr"):
    CASES.append(Case(f"block.{_n}", ("a", "shift")))
for _n in ("adds", "subs", "muls", "divs", "maxs", "mins", "rems", "ands", "ors", "xors", "shls", "shrs"):
    CASES.append(Case(f"block.{_n}", ("a", "s")))
CASES += [  # scalar corner cases: x / 0 and x % 0 (ints: 0), shifts past the width, a float scalar on ints
    Case("block.divs", ("a", "s0"), id="divs_zero"),
    Case("block.rems", ("a", "s0"), id="rems_zero"),
    Case("block.shls", ("a", "sbig"), id="shls_wide"),
    Case("block.shrs", ("a", "sbig"), id="shrs_wide"),
    Case("block.adds", ("a", "sf"), id="adds_float_scalar"),
    Case("block.muls", ("a", "sf"), id="muls_float_scalar"),
]
CASES += [  # mixed dtypes: the other operand cast in the kernel; the result dtype is the promoted one
    Case("block.add", ("a", "b"), call="pl.block.add({0}, pl.block.cast({1}, target_type=pl.FP32))", id="add_mixed_fp32",
         probe=("a", "fp32"), expect=lambda args, vr, vc, dt: ref("block.add")(args[0], args[1].astype(np.float32))),
    Case("block.mul", ("a", "b"), call="pl.block.mul(pl.block.cast({1}, target_type=pl.INT32), {0})", id="mul_mixed_int32",
         probe=("i32", "a"), expect=lambda args, vr, vc, dt: ref("block.mul")(
             ref("block.cast")(args[1], target_type=DataType.INT32), args[0])),
    Case("block.maximum", ("a", "b"), call="pl.block.maximum({0}, pl.block.cast({1}, target_type=pl.FP16))",
         id="maximum_mixed_fp16", probe=("a", "fp16"),
         expect=lambda args, vr, vc, dt: ref("block.maximum")(args[0], args[1].astype(np.float16))),
]
CASES += [  # a scalar argument of the kernel (the entry's `sv`, in the program's dtype)
    Case("block.adds", ("a", "sv"), id="adds_scalar_arg"),
    Case("block.divs", ("a", "sv"), id="divs_scalar_arg"),
    Case("block.cmps", ("a", "sv"), call="pl.block.cmps({0}, {1}, cmp_type=4)", kw={"cmp_type": CmpType.GT},
         id="cmps_scalar_arg"),
    Case("block.expands", ("a", "sv"), id="expands_scalar_arg"),
]


def _col_total(fn: str) -> Callable:
    """Reduce each row block's columns, then combine the blocks in a tile of the dtype (as the kernel)."""
    def f(x, dt):
        acc = None
        for _, i0, vr, _, _ in block_rows(len(x["a"])):
            part = ref(f"block.{fn}")(x["a"][i0:i0 + vr]).astype(x["a"].dtype)  # a tile of the dtype
            if acc is None:
                acc = part
            else:
                comb = ref("block.add") if fn == "col_sum" else ref("block.maximum")
                acc = comb(acc, part).astype(x["a"].dtype)
        return [(0, acc)]
    return f


def _branchy(x, dt):
    out = []
    for j, i0, vr, vc, vk in block_rows(len(x["a"])):
        t = x["a"][i0:i0 + vr]
        out.append((i0, ref("block.neg")(t) if j == 1 else ref("block.abs")(t)))
    return out


CASES += [  # control flow in kernels: loop-carried tiles (SSA and plain reassignment), an if choosing a tile
    Case("block.col_sum", ("a",), id="col_sum_loop_carried", tol=("sum", 3), expect=_col_total("col_sum"),
         kernel=("acc = pl.block.full([1, 64], dtype=pl.{dt}, value=0)",
                 "for i, (s,) in pl.range(0, M, 16, init_values=(acc,)):",
                 "    t = pl.load(a, [i, 0], [16, 64], valid_shapes=[pl.min(16, M - i), 64])",
                 "    res = pl.yield_(pl.add(s, pl.col_sum(t)))",
                 "out = pl.store(res, [0, 0], out)")),
    Case("block.col_max", ("a",), id="col_max_reassigned", expect=_col_total("col_max"),
         kernel=("m = pl.load(a, [0, 0], [1, 64])",
                 "for i in pl.range(0, M, 16):",
                 "    t = pl.load(a, [i, 0], [16, 64], valid_shapes=[pl.min(16, M - i), 64])",
                 "    m = pl.maximum(m, pl.col_max(t))",
                 "out = pl.store(m, [0, 0], out)")),
    Case("block.neg", ("a",), id="if_else_tile", expect=_branchy,
         kernel=("for i in pl.range(0, M, 16):",
                 "    t = pl.load(a, [i, 0], [16, 64], valid_shapes=[pl.min(16, M - i), 64])",
                 "    if i == 16:",
                 "        r = pl.neg(t)",
                 "    else:",
                 "        r = pl.abs(t)",
                 "    out = pl.store(r, [i, 0], out)")),
]
CASES += [
    Case("block.prelu", ("a", "b", "c"), id="prelu_tmp", expect=lambda args, vr, vc, dt: ref("block.prelu")(*args[:2])),
    Case("block.xor", ("a", "b", "c"), id="xor_tmp", expect=lambda args, vr, vc, dt: ref("block.xor")(*args[:2])),
    Case("block.lrelu", ("a", "s")),
    Case("block.prelu", ("a", "b")),
    Case("block.addc", ("a", "b", "c")),
    Case("block.subc", ("a", "b", "c")),
    Case("block.addsc", ("a", "s", "c")),
    Case("block.subsc", ("a", "s", "c")),
    Case("block.sel", ("mask", "a", "b")),
    Case("block.sels", ("a", "b", "mode")),
]
for _cmp in CmpType:
    CASES.append(Case("block.cmp", ("a", "b"), call=f"pl.block.cmp({{0}}, {{1}}, cmp_type={_cmp.value})",
                      kw={"cmp_type": _cmp}, id=f"cmp_{_cmp.name.lower()}"))
for _cmp in (CmpType.LT, CmpType.GE, CmpType.EQ):
    CASES.append(Case("block.cmps", ("a", "s"), call=f"pl.block.cmps({{0}}, {{1}}, cmp_type={_cmp.value})",
                      kw={"cmp_type": _cmp}, id=f"cmps_{_cmp.name.lower()}"))
# packed predicate masks (pypto/ops/masks.py), read back through the select that consumes them
_CMP_NP = {CmpType.EQ: np.equal, CmpType.NE: np.not_equal, CmpType.LT: np.less, CmpType.LE: np.less_equal,
           CmpType.GT: np.greater, CmpType.GE: np.greater_equal}
for _cmp in CmpType:
    CASES.append(Case("block.cmp_mask", ("a", "b"), kw={"cmp_type": _cmp}, id=f"cmp_mask_{_cmp.name.lower()}",
                      call=f"pl.block.sel_mask(pl.block.cmp_mask({{0}}, {{1}}, cmp_type={_cmp.value}), {{0}}, {{1}})",
                      expect=lambda args, vr, vc, dt, _f=_CMP_NP[_cmp]: np.where(_f(args[0], args[1]), args[0], args[1])))
for _cmp in (CmpType.LT, CmpType.GE):
    CASES.append(Case("block.cmps_mask", ("a", "s"), kw={"cmp_type": _cmp}, id=f"cmps_mask_{_cmp.name.lower()}",
                      call=f"pl.block.sel_mask(pl.block.cmps_mask({{0}}, {{1}}, cmp_type={_cmp.value}), {{0}}, "
                           f"pl.block.neg({{0}}))",
                      expect=lambda args, vr, vc, dt, _f=_CMP_NP[_cmp]: np.where(
                          _f(args[0], np.asarray(args[1]).astype(args[0].dtype)), args[0], -args[0])))
CASES.append(Case("block.sel_mask", ("a", "b", "c"), probe=("mask8", "a", "b"),
                  call="pl.block.sel_mask(pl.block.cmp_mask({0}, {1}, cmp_type=4), {2}, {1}, "
                       "pl.block.create_tile([1, 32], dtype=pl.UINT8))",
                  expect=lambda args, vr, vc, dt: np.where(args[0] > args[1], args[2], args[1])))
CASES += [
    Case("block.exp", ("a",), tol=("ulp", 2)),
    Case("block.log", ("pos",), tol=("ulp", 2)),
    Case("block.sqrt", ("pos",)),
    Case("block.rsqrt", ("pos",)),
    Case("block.recip", ("a",)),
    Case("block.neg", ("a",)),
    Case("block.abs", ("a",)),
    Case("block.relu", ("a",)),
    Case("block.softplus", ("a",), tol=("ulp", 4)),
    *[Case(f"block.{_n}", ("pos" if _n.startswith("log") else "a",), tol=("ulp", 2))
      for _n in ("tanh", "sin", "cos", "exp2", "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc", "rint")],
    Case("block.not_", ("a",)),
]
# the math family of elementwise_math.py: C library lane by lane (2 ulp, pow 4), the rest exact
_MATH1 = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "cbrt")
CASES += [Case(f"block.{_n}", ("a",), tol=("ulp", 2)) for _n in _MATH1]
CASES += [Case(f"block.{_n}", ("a",)) for _n in ("sign", "isnan", "isfinite", "signbit")]
CASES += [Case(f"block.{_n}", ("a", "b"), tol=("ulp", 4) if _n == "pow" else ("ulp", 2) if _n != "copysign" else "exact")
          for _n in ("pow", "atan2", "hypot", "copysign")]
CASES += [Case(f"block.{_n}", ("a", "b")) for _n in ("fmod", "remainder", "floor_div", "ceil_div", "gcd")]
CASES += [Case("block.fmods", ("a", "s")), Case("block.fmods", ("a", "s0"), id="fmods_zero")]
for _n in ("row_sum", "row_max", "row_min", "row_absmax"):
    _tol = SUM if _n == "row_sum" else "exact"
    CASES.append(Case(f"block.{_n}", ("a",), out="row", tol=_tol))
    CASES.append(Case(f"block.{_n}", ("a", "c"), out="row", id=f"{_n}_tmp", tol=_tol,
                      expect=lambda args, vr, vc, dt, _n=_n: ref(f"block.{_n}")(args[0])))
for _n in ("col_sum", "col_max", "col_min"):
    CASES.append(Case(f"block.{_n}", ("a",), out="col", tol=SUM if _n == "col_sum" else "exact"))
for _n in ("sum", "max", "min"):
    for _ax in (0, 1):
        CASES.append(Case(f"block.{_n}", ("a",), call=f"pl.block.{_n}({{0}}, axis={_ax}, keepdim=True)",
                          kw={"axis": _ax, "keepdim": True}, out="col" if _ax == 0 else "row",
                          id=f"{_n}_axis{_ax}", tol=SUM if _n == "sum" else "exact"))
for _n in ("sum", "max"):  # keepdim=False: a rank-1 result, stored into a row of the output with shapes=[...]
    CASES.append(Case(f"block.{_n}", ("a",), id=f"{_n}_axis1_rank1", blocks=1, out=(1, R), kw={"axis": 1},
                      tol=SUM if _n == "sum" else "exact",
                      body=(f"r = pl.block.{_n}(pl.load(a, [0, 0], [{R}, {C}]), axis=1)",),
                      store=f"out = pl.store(r, [0, 0], out, [1, {R}])",
                      expect=lambda x, i0, vr, vc, vk, dt, _n=_n: ref(f"block.{_n}")(x["a"][:R], axis=1)[None, :]))
# product, arg-extrema, scans, sorts (pypto/ops/ordering.py): NaN, ties (b repeats a), ragged blocks
for _n in ("row_prod", "row_argmax", "row_argmin"):
    CASES.append(Case(f"block.{_n}", ("a",), out="row", tol=("ulp", 64) if _n == "row_prod" else "exact"))
    CASES.append(Case(f"block.{_n}", ("a", "c"), out="row", id=f"{_n}_tmp", tol=("ulp", 64) if _n == "row_prod"
                      else "exact", expect=lambda args, vr, vc, dt, _n=_n: ref(f"block.{_n}")(args[0])))
for _n in ("col_prod", "col_argmax", "col_argmin"):
    CASES.append(Case(f"block.{_n}", ("a",), out="col", tol=("ulp", 16) if _n == "col_prod" else "exact"))
CASES.append(Case("block.row_cumsum", ("a",), tol=SUM))
CASES.append(Case("block.row_cumprod", ("pos",), tol=("ulp", 64)))
for _n, _k, _l in (("row_topk", 4, 1), ("row_topk", 64, 0), ("row_topk_idx", 1, 1), ("row_topk_idx", 64, 0)):
    CASES.append(Case(f"block.{_n}", ("a",), call=f"pl.block.{_n}({{0}}, {_k}, {_l})", id=f"{_n}_k{_k}_l{_l}",
                      out=(R, _k), blocks=1, probe=("a", "mode", "mode"),
                      expect=lambda args, vr, vc, dt, _n=_n, _k=_k, _l=_l: ref(f"block.{_n}")(args[0], _k, _l)))
CASES += [
    Case("block.sort32", ("a",), call="pl.block.sort32(pl.block.view({0}, [16, 32], [0, 0]), 5)", out=(R, C),
         blocks=1, probe=("a", "mode"), expect=lambda args, vr, vc, dt: ref("block.sort32")(args[0][:, :32], 5)),
    Case("block.mrgsort", ("a",), call="pl.block.mrgsort({0}, 4)", out=(R, C), blocks=1, probe=("a", "mode"),
         expect=lambda args, vr, vc, dt: ref("block.mrgsort")(args[0], 4)),
]
CASES.append(Case("block.row_expand", ("a",)))
CASES.append(Case("block.col_expand", ("a", "col")))
for _n in ("add", "sub", "mul", "div", "max", "min"):
    CASES.append(Case(f"block.row_expand_{_n}", ("a", "row")))
    CASES.append(Case(f"block.col_expand_{_n}", ("a", "col")))
CASES.append(Case("block.expands", ("a", "s")))
for _pad in (PadValue.zero, PadValue.max, PadValue.min):
    CASES.append(Case("block.fillpad", ("a",), call=f"pl.block.fillpad({{0}}, pad_value={_pad.value})",
                      out="full", id=f"fillpad_{_pad.name}",
                      expect=lambda args, vr, vc, dt, _pad=_pad: ref("block.fillpad")(
                          _pad_tile(args[0]), pad_value=_pad, valid=(vr, vc))))

# data movement and scalar access
CASES += [
    Case("block.load", ("a",), call="{0}", expect=lambda args, vr, vc, dt: args[0]),
    Case("block.load", (), id="load_transpose", out="t16",
         body=("r = pl.load(a, [0, {i}], [16, 16], valid_shapes=[{vc16}, {vr}], transpose=True)",),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.load")(x["a"], (0, i0), (16, 16), (min(vc, 16), vr),
                                                                transpose=True)[:vr, :min(vc, 16)]),
    Case("block.store", ("a",), call="{0}", expect=lambda args, vr, vc, dt: args[0]),
    Case("block.move", ("a",), call="pl.move({0}, target_memory=pl.Mem.Vec)",
         expect=lambda args, vr, vc, dt: ref("block.move")(args[0], target_memory=MemorySpace.Vec)),
    Case("block.move", id="move_mat_to_vec", operands=("a",),
         body=("r = pl.move(pl.load(a, [{i}, 0], [16, 64], valid_shapes=[{vr}, {vc}], target_memory=pl.Mem.Mat), "
               "target_memory=pl.Mem.Vec)",),
         expect=lambda x, i0, vr, vc, vk, dt: x["a"][i0:i0 + vr, :vc]),
    Case("block.move", ("a",), id="move_transpose", out=(32, R), blocks=1,
         call="pl.move(pl.block.view({0}, [16, 32], [0, 0]), target_memory=pl.Mem.Vec, transpose=True)",
         expect=lambda args, vr, vc, dt: ref("block.move")(args[0][:, :32], target_memory=MemorySpace.Vec,
                                                           transpose=True)),
    Case("block.full", (), call=f"pl.block.full([{R}, {C}], dtype=pl.{{dt}}, value=3)", out="full", blocks=1,
         expect=lambda args, vr, vc, dt: ref("block.full")((R, C), dtype=dt_of(dt), value=3)),
    # ci (pl.arange): one row of start + j * step; a negative step, descending, a float step
    Case("block.ci", (), call=f"pl.block.ci(3, [1, {C}], dtype=pl.{{dt}}, step=-2)", out=(1, C), blocks=1,
         expect=lambda args, vr, vc, dt: ref("block.ci")(3, (1, C), -2, dtype=dt_of(dt))),
    Case("block.ci", (), call=f"pl.tile.arange(5, [1, {C}], dtype=pl.{{dt}}, descending=True)", out=(1, C),
         blocks=1, id="ci_descending",
         expect=lambda args, vr, vc, dt: ref("block.ci")(5, (1, C), 1, dtype=dt_of(dt), descending=True)),
    Case("block.ci", (), call=f"pl.block.ci(0.25, [1, {C}], dtype=pl.FP32, step=0.375)", out=(1, C), blocks=1,
         id="ci_float_step", dtypes=("FP32",),
         expect=lambda args, vr, vc, dt: ref("block.ci")(0.25, (1, C), 0.375, dtype=DataType.FP32)),
    Case("block.create_tile", (), out="full", blocks=1,
         call=f"pl.block.expands(pl.block.create_tile([{R}, {C}], dtype=pl.{{dt}}), 2)",
         expect=lambda args, vr, vc, dt: ref("block.expands")(ref("block.create_tile")((R, C), dtype=dt_of(dt)), 2)),
    Case("block.read", ("a",), call="pl.block.adds({0}, pl.block.read({0}, [2, 3]))",
         expect=lambda args, vr, vc, dt: ref("block.adds")(args[0], ref("block.read")(args[0], (2, 3)))),
    Case("block.write", ("a",), call="pl.block.write({0}, [2, 3], 5)", stmt=True,
         expect=lambda args, vr, vc, dt: ref("block.write")(args[0], (2, 3), 5)),
    Case("block.get_block_idx", ("a",), call="pl.block.adds({0}, pl.block.get_block_idx())",
         expect=lambda args, vr, vc, dt: ref("block.adds")(args[0], ref("block.get_block_idx")())),
    Case("block.get_block_num", ("a",), call="pl.block.adds({0}, pl.block.get_block_num())",
         expect=lambda args, vr, vc, dt: ref("block.adds")(args[0], ref("block.get_block_num")())),
    Case("block.view", ("a",), call="pl.block.view({0}, [8, 32], [4, 3])", out=(8, 32), blocks=1,
         expect=lambda args, vr, vc, dt: ref("block.view")(args[0], (8, 32), (4, 3))),
    Case("block.view", ("a",), call="pl.block.view({0}, [8, 32], [4, 3], valid_shape=[5, 20])", out=(5, 20),
         blocks=1, id="view_valid", expect=lambda args, vr, vc, dt: ref("block.view")(args[0], (8, 32), (4, 3))[:5, :20]),
    Case("block.concat", ("a", "b"), blocks=1, out="full",
         call="pl.block.concat(pl.block.view({0}, [16, 24], [0, 0]), pl.block.view({1}, [16, 40], [0, 8]))",
         expect=lambda args, vr, vc, dt: ref("block.concat")(args[0][:, :24], args[1][:, 8:48])),
    Case("block.assemble", ("a", "b"), blocks=1, out="full",
         call="pl.block.assemble({0}, pl.block.view({1}, [8, 32], [0, 0]), [4, 16])",
         expect=lambda args, vr, vc, dt: ref("block.assemble")(args[0], args[1][:8, :32], (4, 16))),
    Case("block.reshape", ("a",), blocks=1, out=(8, 64),
         call="pl.block.reshape(pl.block.view({0}, [16, 32], [0, 0]), [8, 64])",
         expect=lambda args, vr, vc, dt: ref("block.reshape")(args[0][:, :32], (8, 64))),
    Case("block.transpose", ("a",), blocks=1, out=(16, 16),
         call="pl.block.transpose(pl.block.view({0}, [16, 16], [0, 5]), axis1=0, axis2=1)",
         expect=lambda args, vr, vc, dt: ref("block.transpose")(args[0][:, 5:21], axis1=0, axis2=1)),
]

# windows, transposes and scalar access of ragged tiles at offsets / indices computed in the loop (j = i // 16)
_T0 = "t = pl.load(a, [{i}, 0], [16, 64], valid_shapes=[{vr}, {vc}])"


def _blk(x, i0, vr, vc):
    return x["a"][i0:i0 + vr, :vc]


CASES += [
    Case("block.transpose", ("a",), id="transpose_ragged", out="tT",
         body=("t = pl.load(a, [{i}, 0], [16, 16], valid_shapes=[{vr}, {vc16}])",
               "r = pl.block.transpose(t, axis1=0, axis2=1)"),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.transpose")(_blk(x, i0, vr, min(vc, 16)), axis1=0, axis2=1)),
    Case("block.move", ("a",), id="move_transpose_ragged", out="tT",
         body=("t = pl.load(a, [{i}, 0], [16, 16], valid_shapes=[{vr}, {vc16}])",
               "r = pl.move(t, target_memory=pl.Mem.Vec, transpose=True)"),
         expect=lambda x, i0, vr, vc, vk, dt: _blk(x, i0, vr, min(vc, 16)).T),
    Case("block.view", ("a",), id="view_loop_offsets", out=(8, 8),
         body=(_T0, "j = {i} // 16", "r = pl.block.view(t, [8, 8], [j, j])"),
         expect=lambda x, i0, vr, vc, vk, dt: x["a"][i0 + i0 // 16:i0 + i0 // 16 + 8, i0 // 16:i0 // 16 + 8]),
    Case("block.assemble", ("a",), id="assemble_loop_offsets",
         body=(_T0, "j = {i} // 16", "r = pl.block.assemble(t, pl.block.view(t, [4, 4], [0, 0]), [j + 1, j])"),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.assemble")(
             _blk(x, i0, vr, vc), _blk(x, i0, 4, 4), (i0 // 16 + 1, i0 // 16))),
    Case("block.read", ("a",), id="read_loop_index",
         body=(_T0, "j = {i} // 16", "r = pl.block.muls(t, pl.block.read(t, [j + 2, j]))"),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.muls")(
             _blk(x, i0, vr, vc), ref("block.read")(x["a"], (i0 + i0 // 16 + 2, i0 // 16)))),
    Case("block.write", ("a",), id="write_loop_index",
         body=(_T0, "j = {i} // 16", "pl.block.write(t, [j, j + 3], -7)", "r = t"),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.write")(_blk(x, i0, vr, vc), (i0 // 16, i0 // 16 + 3), -7)),
]

# matmul family: Mat -> Left / Right -> Acc, M = vr, K = vk, N = vc of each row block
_LEFT = "pl.move(pl.load({src}, [{i}, 0], [{m}, 32], valid_shapes=[{vm}, {{vk}}], target_memory=pl.Mem.Mat), " \
        "target_memory=pl.Mem.Left)"
_RIGHT = "pl.move(pl.load({src}, [0, 0], [32, 64], valid_shapes=[{{vk}}, {{vc}}], target_memory=pl.Mem.Mat), " \
         "target_memory=pl.Mem.Right)"


def _lhs(src: str, m: int = R) -> str:
    return _LEFT.format(src=src, i="{i}", m=m, vm="{vr}" if m == R else "1")


def _mm(x, a, b, i0, rows, vk, vc):
    return ref("block.matmul")(x[a][i0:i0 + rows, :vk], x[b][:vk, :vc])


def _bias(x, vc):
    return x["col"][:, :vc]


_MM = dict(operands=("a", "b"), tol=SUM, probe=("left", "right"))
CASES += [
    Case("block.matmul", body=(f"r = pl.matmul({_lhs('a')}, {_RIGHT.format(src='b')})",), **_MM,
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, vr, vk, vc)),
    Case("block.matmul", id="matmul_to_vec", **_MM,
         body=(f"r = pl.move(pl.matmul({_lhs('a')}, {_RIGHT.format(src='b')}), target_memory=pl.Mem.Vec)",),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, vr, vk, vc)),
    Case("block.matmul_acc", **dict(_MM, probe=("acc", "left", "right")),
         body=(f"r0 = pl.matmul({_lhs('a')}, {_RIGHT.format(src='b')})",
               f"r = pl.matmul_acc(r0, {_lhs('c')}, {_RIGHT.format(src='pos')})"),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, vr, vk, vc) + _mm(x, "c", "pos", i0, vr, vk, vc)),
    Case("block.matmul_bias", **dict(_MM, probe=("left", "right", "bias")),
         body=("bias = pl.load(col, [0, 0], [1, 64], valid_shapes=[1, {vc}], target_memory=pl.Mem.Bias)",
               f"r = pl.matmul_bias({_lhs('a')}, {_RIGHT.format(src='b')}, bias)"),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, vr, vk, vc) + _bias(x, vc)),
    Case("block.gemv", out="col", **dict(_MM, probe=("gemv_left", "right")),
         body=(f"r = pl.gemv({_lhs('a', 1)}, {_RIGHT.format(src='b')})",),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, 1, vk, vc)),
    Case("block.gemv_acc", out="col", **dict(_MM, probe=("gemv_acc", "gemv_left", "right")),
         body=(f"r0 = pl.gemv({_lhs('a', 1)}, {_RIGHT.format(src='b')})",
               f"r = pl.gemv_acc(r0, {_lhs('c', 1)}, {_RIGHT.format(src='pos')})"),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, 1, vk, vc) + _mm(x, "c", "pos", i0, 1, vk, vc)),
    Case("block.gemv_bias", out="col", **dict(_MM, probe=("gemv_left", "right", "bias")),
         body=("bias = pl.load(col, [0, 0], [1, 64], valid_shapes=[1, {vc}], target_memory=pl.Mem.Bias)",
               f"r = pl.gemv_bias({_lhs('a', 1)}, {_RIGHT.format(src='b')}, bias)"),
         expect=lambda x, i0, vr, vc, vk, dt: _mm(x, "a", "b", i0, 1, vk, vc) + _bias(x, vc)),
    Case("block.load", id="matmul_rhs_transposed_load", out="t32", **_MM,
         body=("bt = pl.load(b, [0, 0], [32, 32], valid_shapes=[{vc32}, {vk}], target_memory=pl.Mem.Mat, "
               "transpose=True)",
               f"r = pl.matmul({_lhs('a')}, pl.move(bt, target_memory=pl.Mem.Right))"),
         expect=lambda x, i0, vr, vc, vk, dt: ref("block.matmul")(x["a"][i0:i0 + vr, :vk], x["b"][:min(vc, 32), :vk].T)),
]


_IDX = "pl.block.cast({1}, target_type=pl.INT32)"  # an INT32 index of `shift` (0..7: inside every valid row)


def _idx(x):
    return x.astype(np.int32)


CASES += [  # gathers and scatters inside a row (pypto/ops/indexing.py); duplicate indices in every row
    Case("block.gather", ("a", "shift"), call="pl.block.gather({0}, " + _IDX + ")", probe=("a", "idx"),
         expect=lambda args, vr, vc, dt: ref("block.gather")(args[0], _idx(args[1]))),
    *[Case("block.scatter", ("a", "shift", "b"), call="pl.block.scatter({0}, " + _IDX + f", {{2}}, reduce={_m})",
           kw={"reduce": _m}, probe=("a", "idx", "a"), id=f"scatter_{_id}",
           expect=lambda args, vr, vc, dt, _m=_m: ref("block.scatter")(args[0], _idx(args[1]), args[2], reduce=_m))
      for _m, _id in ((0, "last"), (1, "add"), (2, "mul"))],
    Case("block.gather_mask", ("a",), call="pl.block.gather_mask({0}, mask_pattern=1)", kw={"mask_pattern": 1},
         out=lambda vr, vc: (vr, (vc + 1) // 2), id="gather_mask_even"),
    Case("block.gather_mask", ("a",), call="pl.block.gather_mask({0}, mask_pattern=5)", kw={"mask_pattern": 5},
         out=lambda vr, vc: (vr, (vc + 1) // 4), id="gather_mask_third_of_4"),
    Case("block.reinterpret_view", ("a",), call="pl.block.reinterpret_view({0}, target_type=pl.{dt})",
         kw={"target_type": "{dt}"}, expect=lambda args, vr, vc, dt: args[0]),
    Case("block.reinterpret_view", ("a",), call="pl.block.reinterpret_view({0}, target_type=pl.INT32)",
         kw={"target_type": DataType.INT32}, dtypes=("FP32",), id="reinterpret_fp32_as_int32"),
]


# cast: every (source, target) pair the type rule allows; float -> int with every rounding mode
CAST_MODES = (CastMode.round, CastMode.rint, CastMode.floor, CastMode.ceil, CastMode.trunc)


def cast_cases(src: str) -> list[Case]:
    out = []
    for dst in DTYPES:
        modes = CAST_MODES if src in FLOATS and dst not in FLOATS else (CastMode.round,)
        for m in modes:
            out.append(Case("block.cast", ("c",), call=f"pl.block.cast({{0}}, target_type=pl.{dst}, mode={m.value})",
                            kw={"target_type": dt_of(dst), "mode": m}, id=f"cast_to_{dst}_{m.name}", dtypes=(src,)))
    return out


# ---------------------------------------------------------------------------------------------
# tensor-level rows


@dataclass(frozen=True)
class TCase:
    """One tensor-level call, written in the orchestration.

    call: a `pl` expression over `{a}` ... `{mask}` ([16, 64] windows of the inputs), `{row}`
      ([16, 1]), `{col}` ([1, 64]), `{sv}` (the scalar argument), `{dt}`; with `dynamic`, also run on
      the whole [M, 64] tensors (`{row}` [M, 1]). `pre` are statements before it (same placeholders).
    expect: (dict of the operand arrays, dt) -> expected result (its shape is the result's).
    probe: operand kinds for the type rule (as for Case).
    """

    op: str
    call: str
    expect: Callable
    probe: tuple[str, ...]
    kw: dict = field(default_factory=dict)
    dynamic: bool = False
    tol: Any = "exact"
    id: str = ""
    pre: tuple[str, ...] = ()
    post: tuple[str, ...] = ()  # statements after the result is assembled (tensor.write)
    dtypes: tuple[str, ...] | None = None
    incore: bool = False  # inside an explicit `with pl.incore():` (see the row's comment for why)
    static: bool = True  # run on the [16, 64] windows (False: only on the dynamic tensors)
    dyn_shape: str = f"[M, {C}]"  # the dynamic result's shape

    @property
    def name(self) -> str:
        return "t_" + (self.id or self.op.split(".", 1)[1])


def _t(op: str, call: str, names: tuple[str, ...], *, ref_kw: dict | None = None, **kw) -> TCase:
    """A tensor row whose expected value is the op's reference on the named operands."""
    rk = ref_kw or {}
    probe = kw.pop("probe", names)
    return TCase(op, call, lambda x, dt: ref(op)(*[_operand(x, n) for n in names], **rk), probe, **kw)


def _operand(x: dict, n: str):
    return x[n] if n in x else (scalar_literal("s", x["dt"]) if n == "s" else x["sv"])


TCASES: list[TCase] = []
for _n in ("add", "sub", "mul", "div", "maximum", "minimum"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.{_n}({{a}}, {{b}})", ("a", "b"), dynamic=True))
TCASES += [
    _t("tensor.add", "pl.add({a}, {row})", ("a", "row"), id="add_row_bcast", dynamic=True),
    _t("tensor.mul", "pl.mul({a}, {col})", ("a", "col"), id="mul_col_bcast", dynamic=True),
    _t("tensor.sub", "pl.sub({a}, {row})", ("a", "row"), id="sub_row_bcast", dynamic=True),
    _t("tensor.div", "pl.div({a}, {col})", ("a", "col"), id="div_col_bcast", dynamic=True),
]
for _n in ("add", "sub", "mul", "div", "maximum", "minimum"):
    TCASES.append(_t(f"tensor.{_n}_scalar", f"pl.{_n}({{a}}, {{s}})", ("a", "s"), dynamic=True))
TCASES.append(_t("tensor.mul_scalar", "pl.mul({a}, {sv})", ("a", "sv"), id="mul_scalar_arg", dynamic=True))
for _cmp in (CmpType.LT, CmpType.GE, CmpType.EQ):
    TCASES.append(_t("tensor.cmp", f"pl.tensor.cmp({{a}}, {{b}}, cmp_type={_cmp.value})", ("a", "b"),
                     ref_kw={"cmp_type": _cmp}, id=f"tcmp_{_cmp.name.lower()}", dynamic=True))
    TCASES.append(_t("tensor.cmps", f"pl.tensor.cmps({{a}}, {{s}}, cmp_type={_cmp.value})", ("a", "s"),
                     ref_kw={"cmp_type": _cmp}, id=f"tcmps_{_cmp.name.lower()}", dynamic=True))
TCASES.append(_t("tensor.sel", "pl.tensor.sel({mask}, {a}, {b})", ("mask", "a", "b"), dynamic=True))
for _n in ("exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu", "softplus", "tanh", "sin", "cos", "exp2",
           "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc", "rint"):
    _src = "pos" if _n in ("log", "sqrt", "rsqrt") or _n.startswith("log") else "a"
    TCASES.append(_t(f"tensor.{_n}", f"pl.{_n}({{{_src}}})", (_src,), dynamic=True,
                     tol=("ulp", 4) if _n == "softplus" else "exact" if _n in ("sqrt", "rsqrt", "recip", "neg", "abs",
                                                                                "relu") else ("ulp", 2)))
for _n in (*_MATH1, "sign", "isnan", "isfinite", "signbit", "not_"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.tensor.{_n}({{a}})", ("a",), dynamic=True,
                     tol=("ulp", 2) if _n in _MATH1 else "exact"))
for _n in ("pow", "atan2", "hypot", "copysign", "fmod", "remainder", "floor_div", "ceil_div", "gcd", "and_", "or_",
           "xor"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.tensor.{_n}({{a}}, {{b}})", ("a", "b"), dynamic=True,
                     tol=("ulp", 4) if _n == "pow" else ("ulp", 2) if _n in ("atan2", "hypot") else "exact"))
for _n in ("shl", "shr"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.tensor.{_n}({{a}}, {{shift}})", ("a", "shift"), dynamic=True))
for _n in ("fmod", "and", "or", "xor", "shl", "shr"):
    TCASES.append(_t(f"tensor.{_n}_scalar", f"pl.tensor.{_n}s({{a}}, {{s}})", ("a", "s"), dynamic=True))
for _n in ("col_sum", "col_max", "col_min"):  # (not row-local: static windows only)
    TCASES.append(_t(f"tensor.{_n}", f"pl.tensor.{_n}({{a}})", ("a",), tol=SUM if _n == "col_sum" else "exact"))
for _n in ("row_sum", "row_max", "row_min", "row_absmax"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.{_n}({{a}})", ("a",), dynamic=True, tol=SUM if _n == "row_sum" else "exact",
                     dyn_shape="[M, 1]"))
for _n in ("row_prod", "row_argmax", "row_argmin"):
    TCASES.append(_t(f"tensor.{_n}", f"pl.{_n}({{a}})", ("a",), dynamic=True, dyn_shape="[M, 1]",
                     tol=("ulp", 64) if _n == "row_prod" else "exact"))
for _n in ("col_prod", "col_argmax", "col_argmin"):  # (not row-local: static windows only)
    TCASES.append(_t(f"tensor.{_n}", f"pl.tensor.{_n}({{a}})", ("a",), tol=("ulp", 16) if _n == "col_prod" else "exact"))
TCASES.append(_t("tensor.row_cumsum", "pl.row_cumsum({a})", ("a",), dynamic=True, tol=SUM))
TCASES.append(_t("tensor.row_cumprod", "pl.row_cumprod({pos})", ("pos",), dynamic=True, tol=("ulp", 64)))
TCASES += [
    TCase("tensor.row_topk", "pl.row_topk({a}, 5, 1)", lambda x, dt: ref("tensor.row_topk")(x["a"], 5, 1),
          ("a", "mode", "mode"), dynamic=True, dyn_shape="[M, 5]"),
    TCase("tensor.row_topk_idx", "pl.row_topk_idx({a}, 64, 0)", lambda x, dt: ref("tensor.row_topk_idx")(x["a"], 64, 0),
          ("a", "mode", "mode"), dynamic=True),
    TCase("tensor.sort32", "pl.sort32(pl.view(a, [16, 32], [0, 0]), 0)",
          lambda x, dt: ref("tensor.sort32")(x["a"][:, :32], 0), ("a", "mode")),
    TCase("tensor.mrgsort", "pl.mrgsort({a}, 8)", lambda x, dt: ref("tensor.mrgsort")(x["a"], 8), ("a", "mode"),
          dynamic=True),
]
TCASES.append(_t("tensor.row_expand", "pl.row_expand({a})", ("a",), dynamic=True))
TCASES.append(_t("tensor.col_expand", "pl.col_expand({a}, {col})", ("a", "col"), dynamic=True))
for _n in ("add", "sub", "mul", "div", "max", "min"):
    TCASES.append(_t(f"tensor.row_expand_{_n}", f"pl.row_expand_{_n}({{a}}, {{row}})", ("a", "row"), dynamic=True))
    TCASES.append(_t(f"tensor.col_expand_{_n}", f"pl.col_expand_{_n}({{a}}, {{col}})", ("a", "col"), dynamic=True))
TCASES.append(_t("tensor.expands", "pl.expands({a}, {s})", ("a", "s"), dynamic=True))
# The row-local rows above run on the dynamic [M, 64] tensors (tiled by the pipeline over row blocks,
# the last one ragged); these also on static [16, 64] windows (whole-tensor tiles). Not all of them:
# static extents make the native build slow (the C++ compiler unrolls every loop of constant extent).
_STATIC_TOO = {"add", "add_row_bcast", "mul_col_bcast", "mul_scalar_arg", "sub_scalar", "exp", "neg", "row_sum",
               "row_expand_sub", "col_expand_mul", "expands"}
TCASES = [replace(t, static=(t.id or t.op.split(".", 1)[1]) in _STATIC_TOO) for t in TCASES]


def tensor_cast_cases(src: str) -> list[TCase]:
    out = []
    for dst in DTYPES:
        for m in ((CastMode.round, CastMode.floor) if src in FLOATS and dst not in FLOATS else (CastMode.round,)):
            out.append(_t("tensor.cast", f"pl.cast({{c}}, pl.{dst}, mode={m.value})", ("c",),
                          ref_kw={"target_type": dt_of(dst), "mode": m}, kw={"target_type": dt_of(dst), "mode": m},
                          id=f"cast_to_{dst}_{m.name}", dynamic=True, dtypes=(src,), static=dst == "FP32"))
    return out


def _tmm(x, a_trans=False):
    a = x["a_full"][:32, :16] if a_trans else x["a"][:16, :32]  # a_trans: the [32, 16] window, transposed
    return ref("tensor.matmul")(a, x["b_full"][:32], a_trans=a_trans)


TCASES += [
    TCase("tensor.ci", "pl.arange(-4, [1, 64], dtype=pl.{dt}, step=3)",
          lambda x, dt: ref("tensor.ci")(-4, (1, 64), 3, dtype=dt_of(dt)), ("ci",)),
    TCase("tensor.ci", "pl.add(pl.tensor.ci(7, [1, 64], dtype=pl.{dt}, descending=True), {a})",
          lambda x, dt: ref("tensor.add")(ref("tensor.ci")(7, (1, 64), dtype=dt_of(dt), descending=True), x["a"]),
          ("ci",), id="ci_row_bcast"),
    TCase("tensor.full", "pl.full([16, 64], dtype=pl.{dt}, value=3)",
          lambda x, dt: ref("tensor.full")((16, 64), dtype=dt_of(dt), value=3), ("full",)),
    # in an explicit InCore scope: a view with valid_shape made in the orchestration reaches the
    # outlined kernel as a plain tensor and its valid region is lost (a pass bug, reported)
    TCase("tensor.fillpad", "pl.tensor.fillpad(pl.view(a, [16, 64], [0, 0], valid_shape=[13, 37]), pad_value=2)",
          lambda x, dt: ref("tensor.fillpad")(x["a"], pad_value=PadValue.max, valid=(13, 37)), ("a",),
          kw={"pad_value": PadValue.max}, incore=True),
    TCase("tensor.read", "pl.add({a}, pl.tensor.read(a, [2, 3]))",
          lambda x, dt: ref("tensor.add_scalar")(x["a"], ref("tensor.read")(x["a"], (2, 3))), ("read",)),
    TCase("tensor.write", "{a}", lambda x, dt: ref("tensor.write")(x["a"], (5, 7), ref("tensor.read")(x["a"], (2, 3))),
          ("write",), post=("pl.tensor.write({out}, [5, {col0} + 7], pl.tensor.read(a, [2, 3]))",)),
    TCase("tensor.create", "pl.add(t0, {a})", lambda x, dt: ref("tensor.add")(
        ref("tensor.create")((16, 64), dtype=dt_of(dt)), x["a"]), ("create",),
          pre=("t0 = pl.create_tensor([16, 64], dtype=pl.{dt})",)),
    TCase("tensor.dim", "pl.expands({a}, pl.tensor.dim(a, 0))",
          lambda x, dt: ref("tensor.expands")(x["a"], ref("tensor.dim")(x["a_full"], axis=0)), ("dim",)),
    TCase("tensor.view", "pl.view(b, [8, 32], [4, 3])", lambda x, dt: ref("tensor.view")(x["b_full"], (8, 32), (4, 3)),
          ("view",)),
    TCase("tensor.assemble", "pl.assemble(t0, pl.view(b, [8, 32], [0, 0]), [4, 16])",
          lambda x, dt: ref("tensor.assemble")(ref("tensor.add_scalar")(x["a"], 0), x["b"][:8, :32], (4, 16)),
          ("assemble",),
          pre=("t0 = pl.add({a}, 0)",), id="assemble_local"),
    TCase("tensor.concat", "pl.concat(pl.view(a, [16, 24], [0, 0]), pl.view(b, [16, 40], [0, 8]))",
          lambda x, dt: ref("tensor.concat")(x["a"][:, :24], x["b"][:, 8:48]), ("concat",)),
    TCase("tensor.reshape", "pl.reshape(pl.view(a, [8, 64], [0, 0]), [16, 32])",
          lambda x, dt: ref("tensor.reshape")(x["a"][:8], (16, 32)), ("reshape",)),
    TCase("tensor.reshape", "pl.reshape(pl.neg({a}), [32, 32])",
          lambda x, dt: ref("tensor.reshape")(ref("tensor.neg")(x["a"]), (32, 32)), ("reshape",), id="reshape_computed"),
    TCase("tensor.transpose", "pl.transpose(pl.view(a, [16, 16], [0, 5]), axis1=0, axis2=1)",
          lambda x, dt: ref("tensor.transpose")(x["a"][:, 5:21], axis1=0, axis2=1), ("transpose",)),
    TCase("tensor.matmul", "pl.matmul(pl.view(a, [16, 32], [0, 0]), pl.view(b, [32, 64], [0, 0]))",
          lambda x, dt: _tmm(x), ("mm_a", "mm_b"), tol=SUM),
    TCase("tensor.matmul", "pl.matmul(pl.view(a, [32, 16], [0, 0]), pl.view(b, [32, 64], [0, 0]), a_trans=True)",
          lambda x, dt: _tmm(x, a_trans=True), ("mm_a", "mm_b"), tol=SUM, id="matmul_a_trans"),
    TCase("tensor.matmul", "pl.matmul(pl.view(a, [16, 32], [0, 0]), pl.view(c, [40, 32], [0, 0]), b_trans=True)",
          lambda x, dt: ref("tensor.matmul")(x["a"][:16, :32], x["c_full"][:40, :32], b_trans=True), ("mm_a", "mm_b"),
          tol=SUM, id="matmul_b_trans"),
    TCase("tensor.matmul", "pl.matmul(pl.view(a, [16, 32], [0, 0]), pl.view(b, [32, 64], [0, 0]), out_dtype=pl.{dt})",
          lambda x, dt: _tmm(x), ("mm_a", "mm_b"), tol=SUM, id="matmul_out_dtype", kw={"out_dtype": "{dt}"}),
    TCase("tensor.matmul", "pl.add(pl.matmul(pl.view(a, [16, 32], [0, 0]), pl.view(b, [32, 64], [0, 0])), {c})",
          lambda x, dt: ref("tensor.add")(_tmm(x).astype(dt_of(dt).to_numpy()), x["c"]), ("mm_a", "mm_b"), tol=SUM,
          id="matmul_then_add"),  # (the matmul result is rounded to its dtype before the add)
    TCase("tensor.matmul_acc", "pl.matmul_acc(t0, pl.view(c, [16, 32], [0, 0]), pl.view(pos, [32, 64], [0, 0]))",
          lambda x, dt: ref("tensor.matmul_acc")(_tmm(x).astype(dt_of(dt).to_numpy()), x["c_full"][:16, :32],
                                                 x["pos_full"][:32]),
          ("mm_acc", "mm_a", "mm_b"), tol=SUM,
          pre=("t0 = pl.matmul(pl.view(a, [16, 32], [0, 0]), pl.view(b, [32, 64], [0, 0]))",)),
]


_TIDX = "pl.cast({shift}, pl.INT32)"
TCASES += [  # row-local: also on the dynamic [M, 64] tensors, tiled over row blocks
    TCase("tensor.gather", "pl.gather({a}, " + _TIDX + ")",
          lambda x, dt: ref("tensor.gather")(x["a"], _idx(x["shift"])), ("a", "idx"), dynamic=True),
    TCase("tensor.scatter", "pl.scatter({a}, " + _TIDX + ", {b}, reduce=1)",
          lambda x, dt: ref("tensor.scatter")(x["a"], _idx(x["shift"]), x["b"], reduce=1), ("a", "idx", "a"),
          kw={"reduce": 1}, dynamic=True),
    TCase("tensor.gather_mask", "pl.gather_mask({a}, mask_pattern=2)",
          lambda x, dt: ref("tensor.gather_mask")(x["a"], mask_pattern=2), ("a",), kw={"mask_pattern": 2},
          dynamic=True, dyn_shape=f"[M, {C // 2}]"),
    TCase("tensor.reinterpret_view", "pl.reinterpret_view({a}, target_type=pl.{dt})", lambda x, dt: x["a"], ("a",),
          kw={"target_type": "{dt}"}, dynamic=True),
]


def _win(x, n, r0, c0, rows, cols):
    return x[f"{n}_full"][r0:r0 + rows, c0:c0 + cols]


_ODD = "pl.view({n}, [13, 37], [3, 5])"  # a static window that fills no SIMD vector evenly
TCASES += [  # odd static shapes (tiles of [13, 37]), rank-1 and rank-3 tensors, wide rows (many row blocks)
    TCase("tensor.add", f"pl.add({_ODD.format(n='a')}, {_ODD.format(n='b')})",
          lambda x, dt: ref("tensor.add")(_win(x, "a", 3, 5, 13, 37), _win(x, "b", 3, 5, 13, 37)), ("a", "b"),
          id="add_13x37"),
    TCase("tensor.neg", f"pl.neg({_ODD.format(n='a')})",
          lambda x, dt: ref("tensor.neg")(_win(x, "a", 3, 5, 13, 37)), ("a",), id="neg_13x37"),
    TCase("tensor.row_sum", f"pl.row_sum({_ODD.format(n='a')})",
          lambda x, dt: ref("tensor.row_sum")(_win(x, "a", 3, 5, 13, 37)), ("a",), id="row_sum_13x37", tol=SUM),
    TCase("tensor.mul", f"pl.mul({_ODD.format(n='a')}, pl.view(col, [1, 37], [0, 5]))",
          lambda x, dt: ref("tensor.mul")(_win(x, "a", 3, 5, 13, 37), x["col"][:, 5:42]), ("a", "col"),
          id="mul_col_bcast_13x37"),
    TCase("tensor.transpose", f"pl.transpose({_ODD.format(n='a')}, axis1=0, axis2=1)",
          lambda x, dt: ref("tensor.transpose")(_win(x, "a", 3, 5, 13, 37), axis1=0, axis2=1), ("transpose",),
          id="transpose_13x37"),
    TCase("tensor.matmul", "pl.matmul(pl.view(a, [13, 29], [1, 2]), pl.view(b, [29, 37], [3, 4]))",
          lambda x, dt: ref("tensor.matmul")(_win(x, "a", 1, 2, 13, 29), _win(x, "b", 3, 4, 29, 37)), ("mm_a", "mm_b"),
          tol=SUM, id="matmul_13x29x37"),
    TCase("tensor.add", "pl.reshape(pl.add(pl.reshape(pl.view(a, [1, 64], [2, 0]), [64]), "
          "pl.reshape(pl.view(b, [1, 64], [2, 0]), [64])), [1, 64])",
          lambda x, dt: ref("tensor.add")(x["a_full"][2:3], x["b_full"][2:3]), ("a", "b"), id="add_rank1"),
    TCase("tensor.add", "pl.reshape(pl.add(pl.reshape({a}, [2, 8, 64]), pl.reshape({b}, [2, 8, 64])), [16, 64])",
          lambda x, dt: ref("tensor.add")(x["a"], x["b"]), ("a", "b"), id="add_rank3"),
    TCase("tensor.row_max", "pl.reshape(pl.row_max(pl.reshape({a}, [2, 8, 64])), [16, 1])",
          lambda x, dt: ref("tensor.row_max")(x["a"]), ("a",), id="row_max_rank3"),
    TCase("tensor.add", "pl.add(pl.view(a, [M, 37], [0, 5]), pl.view(b, [M, 37], [0, 5]))",
          lambda x, dt: ref("tensor.add")(x["a"][:, 5:42], x["b"][:, 5:42]), ("a", "b"), id="add_strided_window",
          static=False, dynamic=True, dyn_shape="[M, 37]"),
    TCase("tensor.row_expand_sub", "pl.row_expand_sub({w}, pl.row_max({w}))",
          lambda x, dt: ref("tensor.row_expand_sub")(x["w"], ref("tensor.row_max")(x["w"])), ("a", "row"),
          id="row_expand_sub_row_max_wide", static=False, dynamic=True, dyn_shape=f"[M, {WIDE}]"),
]


# ---------------------------------------------------------------------------------------------
# dtypes from the type rules


def _tile(dt: DataType, shape=(R, C), space: MemorySpace = MemorySpace.Vec) -> Var:
    return Var("t", TileType(shape, dt, space))


def _tensor(dt: DataType, shape=(R, C)) -> Var:
    return Var("x", TensorType(shape, dt))


def _ints(*v: int) -> MakeTuple:
    return MakeTuple(tuple(ConstInt(x) for x in v))


def _scalar(dt: DataType):
    return ConstFloat(1.5) if dt.is_float else ConstInt(3, DataType.INT32)


def _acc_dt(dt: DataType) -> DataType:
    return DataType.FP32 if dt.is_float else DataType.INT32


# operands of the type rule for probe kinds that are not plain [16, 64] tiles / tensors
_PROBE_ARG: dict[str, Callable[[DataType, Level], Any]] = {
    "row": lambda dt, lv: (_tensor if lv is Level.TENSOR else _tile)(dt, (R, 1)),
    "col": lambda dt, lv: (_tensor if lv is Level.TENSOR else _tile)(dt, (1, C)),
    "s": lambda dt, lv: _scalar(dt),
    "s0": lambda dt, lv: _scalar(dt),
    "sv": lambda dt, lv: _scalar(dt),
    "sf": lambda dt, lv: ConstFloat(1.5),
    "sbig": lambda dt, lv: _scalar(dt),
    "mode": lambda dt, lv: ConstInt(1, DataType.INT32),
    "mask8": lambda dt, lv: _tile(DataType.UINT8, (R, 32)),  # a packed predicate mask of [R, C] tiles
    "fp32": lambda dt, lv: _tile(DataType.FP32),
    "fp16": lambda dt, lv: _tile(DataType.FP16),
    "i32": lambda dt, lv: _tile(DataType.INT32),
    "idx": lambda dt, lv: (_tensor if lv is Level.TENSOR else _tile)(DataType.INT32),  # a gather / scatter index
    "left": lambda dt, lv: _tile(dt, (R, 32), MemorySpace.Left),
    "right": lambda dt, lv: _tile(dt, (32, C), MemorySpace.Right),
    "gemv_left": lambda dt, lv: _tile(dt, (1, 32), MemorySpace.Left),
    "acc": lambda dt, lv: _tile(_acc_dt(dt), (R, C), MemorySpace.Acc),
    "gemv_acc": lambda dt, lv: _tile(_acc_dt(dt), (1, C), MemorySpace.Acc),
    "bias": lambda dt, lv: _tile(dt, (1, C), MemorySpace.Bias),
    "mm_a": lambda dt, lv: _tensor(dt, (R, 32)),
    "mm_b": lambda dt, lv: _tensor(dt, (32, C)),
    "mm_acc": lambda dt, lv: _tensor(dt, (R, C)),  # (a tensor matmul returns its operand dtype)
}
# whole operand lists (and attributes) for ops whose operands are shapes, indices, windows
_PROBE_CALL: dict[str, Callable[[DataType], tuple[tuple, dict]]] = {
    "block.load": lambda dt: ((_tensor(dt, (M_ROWS, C)), _ints(0, 0), _ints(R, C)), {}),
    "block.store": lambda dt: ((_tile(dt), _ints(0, 0), _tensor(dt)), {}),
    "block.move": lambda dt: ((_tile(dt),), {"target_memory": MemorySpace.Vec}),
    "block.full": lambda dt: ((_ints(R, C),), {"dtype": dt, "value": 3}),
    "block.create_tile": lambda dt: ((_ints(R, C),), {"dtype": dt}),
    "block.read": lambda dt: ((_tile(dt), _ints(2, 3)), {}),
    "block.write": lambda dt: ((_tile(dt), _ints(2, 3), ConstInt(5, DataType.INT32)), {}),
    "block.view": lambda dt: ((_tile(dt), _ints(8, 32), _ints(4, 3)), {}),
    "block.concat": lambda dt: ((_tile(dt, (R, 24)), _tile(dt, (R, 40))), {}),
    "block.assemble": lambda dt: ((_tile(dt), _tile(dt, (8, 32)), _ints(4, 16)), {}),
    "block.reshape": lambda dt: ((_tile(dt, (R, 32)), _ints(8, 64)), {}),
    "block.transpose": lambda dt: ((_tile(dt, (R, R)),), {"axis1": 0, "axis2": 1}),
    "block.get_block_idx": lambda dt: ((), {}),
    "block.ci": lambda dt: ((ConstInt(3, DataType.INDEX), _ints(1, C), ConstInt(1, DataType.INDEX)), {"dtype": dt}),
    "tensor.ci": lambda dt: ((ConstInt(3, DataType.INDEX), _ints(1, C), ConstInt(1, DataType.INDEX)), {"dtype": dt}),
    "block.get_block_num": lambda dt: ((), {}),
    "tensor.full": lambda dt: ((_ints(R, C),), {"dtype": dt, "value": 3}),
    "tensor.read": lambda dt: ((_tensor(dt), _ints(2, 3)), {}),
    "tensor.write": lambda dt: ((_tensor(dt), _ints(2, 3), _scalar(dt)), {}),
    "tensor.create": lambda dt: ((_ints(R, C),), {"dtype": dt}),
    "tensor.dim": lambda dt: ((_tensor(dt),), {"axis": 0}),
    "tensor.view": lambda dt: ((_tensor(dt), _ints(8, 32), _ints(4, 3)), {}),
    "tensor.assemble": lambda dt: ((_tensor(dt), _tensor(dt, (8, 32)), _ints(4, 16)), {}),
    "tensor.concat": lambda dt: ((_tensor(dt, (R, 24)), _tensor(dt, (R, 40))), {}),
    "tensor.reshape": lambda dt: ((_tensor(dt, (8, 64)), _ints(16, 32)), {}),
    "tensor.transpose": lambda dt: ((_tensor(dt, (R, R)),), {"axis1": 0, "axis2": 1}),
}


def result_type(case: Case | TCase, dt: str):
    """The op's type rule on operands of this row in dtype `dt`; None where it raises OpError."""
    od = OPS[case.op]
    d = dt_of(dt)
    kinds = case.probe if case.probe is not None else getattr(case, "operands", ())
    if case.op in _PROBE_CALL and not any(k in _PROBE_ARG for k in kinds if k.startswith("mm")):
        args, kw = _PROBE_CALL[case.op](d)
    else:
        args = tuple(_PROBE_ARG[k](d, od.level) if k in _PROBE_ARG else
                     (_tensor(d) if od.level is Level.TENSOR else _tile(d)) for k in kinds)
        kw = {k: (d if v == "{dt}" else v) for k, v in case.kw.items() if k in {p.name for p in od.attrs}}
    try:
        return od.infer_type(args, od.normalize_kwargs(kw))
    except OpError:
        return None


def dtypes_of(case: Case | TCase) -> tuple[str, ...]:
    """The dtypes of `DTYPES` (or of the row's `dtypes`) whose operands the op's type rule accepts."""
    return tuple(d for d in case.dtypes or DTYPES if result_type(case, d) is not None)


# rows whose result is not the op's own (the op is wrapped, or yields a scalar / nothing): input dtype
_SAME_DTYPE = {"block.get_block_idx", "block.get_block_num", "block.read", "block.write", "block.load", "tensor.read",
               "tensor.write", "tensor.dim", "tensor.create", "block.cmp_mask", "block.cmps_mask"}


def out_dtype(case: Case | TCase, dt: str) -> str:
    if case.probe and ("left" in case.probe or "gemv_left" in case.probe):  # matmul: the Acc dtype
        return "FP32" if dt in FLOATS else "INT32"
    if case.op in _SAME_DTYPE:
        return dt
    return result_type(case, dt).dtype.name


def block_cases(dt: str) -> list[Case]:
    return [c for c in CASES + cast_cases(dt) if dt in dtypes_of(c)]


def tensor_cases(dt: str) -> list[TCase]:
    return [t for t in TCASES + tensor_cast_cases(dt) if dt in dtypes_of(t)]


# ---------------------------------------------------------------------------------------------
# shards: the rows of a dtype split by op family, one program (and test item) each

# A native build costs about a quarter second of g++ per row and well under a second per program,
# so programs of a few dozen rows keep every test item short without adding much build time.
# A family missing here is a shard of its own (named after the family).
SHARDS = {
    "add_sub": ("add", "sub", "addc", "subc", "addsc", "subsc"),
    "mul_div": ("mul", "div", "rem"),
    "unary": ("abs", "neg", "relu", "lrelu", "prelu", "exp", "log", "recip", "rsqrt", "sqrt"),
    "compare": ("cmp", "cmps", "sel", "sels", "maximum", "minimum", "cmp_mask", "cmps_mask", "sel_mask"),
    "bitwise": ("and_", "or_", "xor", "xors", "not_", "shl", "shr"),
    "math": ("softplus", "tanh", "sin", "cos", "exp2", "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc",
             "rint"),
    "math2": ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "cbrt", "sign",
              "isnan", "isfinite", "signbit", "pow", "atan2", "hypot", "copysign"),
    "int_div": ("fmod", "remainder", "floor_div", "ceil_div", "gcd"),
    "cast": ("cast",),
    "reduce": ("row_sum", "row_max", "row_min", "row_absmax", "col_sum", "col_max", "col_min", "sum", "max", "min"),
    "order": ("row_prod", "col_prod", "row_argmax", "row_argmin", "col_argmax", "col_argmin", "row_cumsum",
              "row_cumprod", "row_topk", "row_topk_idx", "sort32", "mrgsort"),
    "broadcast": ("row_expand", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
                  "row_expand_max", "row_expand_min", "col_expand", "col_expand_add", "col_expand_sub",
                  "col_expand_mul", "col_expand_div", "col_expand_max", "col_expand_min", "expands"),
    "matmul": ("matmul", "matmul_acc", "matmul_bias", "gemv", "gemv_acc", "gemv_bias"),
    "memory": ("load", "store", "move", "fillpad", "full", "ci", "create", "create_tile", "get_block_idx", "get_block_num",
               "read", "write", "dim"),
    "layout": ("view", "assemble", "concat", "reshape", "transpose"),
    "indexing": ("gather", "scatter", "gather_mask", "reinterpret_view"),
}
_SHARD_OF_FAMILY = {f: name for name, fams in SHARDS.items() for f in fams}


def shard_of(case: Case | TCase) -> str:
    family = OPS[case.op].family
    return _SHARD_OF_FAMILY.get(family, family)


def shards(dt: str, static: bool = False) -> list[str]:
    """The shards with rows in `dt`'s program (`static`: its static-valid-shape variant), in table order."""
    rows = block_cases(dt) + [t for t in tensor_cases(dt) if t.static or (t.dynamic and not static)]
    return list(dict.fromkeys(shard_of(c) for c in rows))


# ---------------------------------------------------------------------------------------------
# inputs


SCALAR_KINDS = ("s", "s0", "sf", "sbig", "mode")


def scalar_literal(kind: str, dt: str) -> float | int:
    """The literal written for a scalar operand: `s` 1.75 / 3, `s0` zero, `sf` the float 1.5 whatever
    the dtype, `sbig` a shift count of at least the bit width, `mode` 1."""
    if kind == "mode":
        return 1
    if kind == "s0":
        return 0.0 if dt in FLOATS else 0
    if kind == "sf":
        return 1.5
    if kind == "sbig":
        return {"INT8": 9, "INT32": 33}.get(dt, 9)
    return 1.75 if dt in FLOATS else 3


def scalar_arg(dt: str) -> float | int:
    return -0.625 if dt in FLOATS else -5


def make_inputs(dt: str, m: int = M_ROWS, seed: int = 0) -> dict[str, np.ndarray]:
    """The entry function's inputs: a, b, c, pos, shift, mask [m, 64], row [m, 1], col [1, 64], w [m, WIDE]."""
    rng = np.random.default_rng(seed + DTYPES.index(dt))
    npdt = NP[dt]
    flt = dt in FLOATS
    shape = (m, C)

    def gen(lo, hi, shp=shape):
        if flt:
            return rng.uniform(lo, hi, shp)
        info = np.iinfo(npdt)
        return rng.integers(max(lo, info.min), min(hi, info.max) + 1, shp)

    big = 50000 if dt == "INT32" else 128
    a = gen(-4, 4) if flt else gen(-big, big)
    b = gen(-4, 4) if flt else gen(-big, big)
    ii, jj = np.indices(shape)
    b = np.where((ii + jj) % 5 == 0, a, b)  # ties for compares, max / min, sub
    if not flt:
        b = np.where((ii * 7 + jj) % 11 == 0, 0, b)  # integer x / 0 and x % 0 are 0
    c = gen(-200, 200) if flt else gen(-2**31, 2**31 - 1)
    if flt:
        c[0, :8] = [0.5, -0.5, 1.5, -2.5, 2.5, -3.5, 127.5, -128.5]  # rounding-mode ties
        c[1, :6] = [np.nan, np.inf, -np.inf, 1e6, -1e6, -0.0]  # casts: NaN -> 0, saturation, fp16 overflow
    # special values in the first row block: NaN / inf / -0.0 for floats, the integer range's ends
    if flt:
        a[1, 2], a[2, 5], a[3, 7], a[4, 1] = np.nan, np.inf, -np.inf, -0.0
    else:
        info = np.iinfo(npdt)
        a[1, 2], a[2, 5], a[5, 9] = info.min, info.max, info.min
        b[1, 2], b[5, 9] = -1, info.min  # MIN / -1 wraps
    pos = gen(0.25, 4) if flt else gen(1, 100)
    shift = rng.integers(0, 8, shape)
    mask = rng.integers(0, 2, shape)
    row = gen(-4, 4, (m, 1)) if flt else gen(-big, big, (m, 1))
    if not flt:
        row[3] = 0
    w = gen(-4, 4, (m, WIDE)) if flt else gen(-big, big, (m, WIDE))
    col = gen(0.5, 4, (1, C)) if flt else gen(-big, big, (1, C))
    if not flt:
        col[0, 5] = 0
    out = {}
    with np.errstate(all="ignore"):
        for k, v in zip(INPUTS + ("row", "col", "w"), (a, b, c, pos, shift, mask, row, col, w)):
            out[k] = np.asarray(v).astype(npdt)
    return out


def block_rows(m: int = M_ROWS) -> list[tuple[int, int, int, int, int]]:
    """(j, i0, vr, vc, vk) of each row block of the block rows' kernels at M = m (at most 48)."""
    assert 0 < m <= OUT_ROWS
    return [(j, i0, min(R, m - i0), C - 27 * j, 32 - 7 * j) for j, i0 in enumerate(range(0, m, R))]


def _operand_block(x: dict, kind: str, i0: int, vr: int, vc: int, dt: str):
    if kind in SCALAR_KINDS:
        return scalar_literal(kind, dt)
    if kind == "sv":
        return scalar_arg(dt)
    if kind == "row":
        return x["row"][i0:i0 + vr]
    if kind == "col":
        return x["col"][:, :vc]
    return x[kind][i0:i0 + vr, :vc]


def _region(out: Any, vr: int, vc: int) -> tuple[int, int]:
    if isinstance(out, tuple):
        return out
    if callable(out):
        return out(vr, vc)
    return {"t": (vr, vc), "t16": (vr, min(vc, 16)), "t32": (vr, min(vc, 32)), "tT": (min(vc, 16), vr), "row": (vr, 1), "col": (1, vc), "full": (R, C)}[out]


def _abs_args(args: list) -> list:
    return [np.abs(a.astype(np.float64)) if isinstance(a, np.ndarray) else abs(a) for a in args]


def expected_block(case: Case, dt: str, x: dict) -> tuple[np.ndarray, np.ndarray | None]:
    """The [48, 64] output slot of a block row, and (for sums) the sum of magnitudes it is relative to."""
    odt = out_dtype(case, dt)
    exp = np.full((OUT_ROWS, C), SENTINEL, NP[odt])
    scale = np.zeros((OUT_ROWS, C)) if case.tol != "exact" and case.tol[0] == "sum" else None
    if case.kernel:
        absx = {k: np.abs(v.astype(np.float64)) for k, v in x.items()}
        with np.errstate(all="ignore"):
            for (r0, res), (_, sc) in zip(case.expect(x, dt), case.expect(absx, dt) if scale is not None else
                                          [(0, None)] * OUT_ROWS):
                exp[r0:r0 + res.shape[0], :res.shape[1]] = res.astype(NP[odt])
                if scale is not None:
                    scale[r0:r0 + res.shape[0], :res.shape[1]] = sc
        return exp, scale
    for j, i0, vr, vc, vk in block_rows(len(x["a"]))[:case.blocks]:
        if case.blocks == 1:
            vr, vc = R, C
        rr, rc = _region(case.out, vr, vc)
        with np.errstate(all="ignore"):
            if case.body:
                res = case.expect(x, i0, vr, vc, vk, dt)
                if scale is not None:
                    absx = {k: np.abs(v.astype(np.float64)) for k, v in x.items()}
                    scale[i0:i0 + rr, :rc] = case.expect(absx, i0, vr, vc, vk, dt)
            else:
                args = [_operand_block(x, k, i0, vr, vc, dt) for k in case.operands]
                fn = case.expect or _default_expect(case)
                res = fn(args, vr, vc, dt)
                if scale is not None:
                    scale[i0:i0 + rr, :rc] = np.broadcast_to(fn(_abs_args(args), vr, vc, dt), (rr, rc))
            exp[i0:i0 + rr, :rc] = np.broadcast_to(np.asarray(res), (rr, rc)).astype(NP[odt])
    return exp, scale


def expected_tensor(case: TCase, dt: str, x: dict, dynamic: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The expected result of a tensor row: on [16, 64] windows (placed in a [48, 64] slot with the
    sentinel around it), or on the whole inputs when `dynamic`."""
    rows = len(x["a"]) if dynamic else R
    ops = {k: (v if k == "col" else v[:rows]) for k, v in x.items()}
    ops.update({f"{k}_full": v for k, v in x.items()}, dt=dt, sv=scalar_arg(dt))
    odt = out_dtype(case, dt)
    with np.errstate(all="ignore"):
        res = np.asarray(case.expect(ops, dt))
        scale = None
        if case.tol != "exact" and case.tol[0] == "sum":
            absops = {k: (np.abs(v.astype(np.float64)) if isinstance(v, np.ndarray) else v) for k, v in ops.items()}
            scale = np.asarray(case.expect(absops, dt), np.float64)
        res = res.astype(NP[odt])
    if dynamic:
        return res, scale
    exp = np.full((OUT_ROWS, C), SENTINEL, NP[odt])
    exp[:res.shape[0], :res.shape[1]] = res
    if scale is not None:
        sc = np.zeros((OUT_ROWS, C))
        sc[:res.shape[0], :res.shape[1]] = scale
        scale = sc
    return exp, scale


# ---------------------------------------------------------------------------------------------
# the program


@dataclass
class Entry:
    """One checked result: a block row, a tensor row on windows (both: a [48, 64] slot of output
    `out` at column `col0`) or a tensor row on the dynamic tensors (returned value `ret`)."""

    kind: str  # block / tensor / dynamic
    case: Case | TCase
    dt: str
    out: str = ""
    col0: int = 0
    ret: int = -1

    @property
    def key(self) -> str:
        return f"{self.case.name}-{self.dt}" + ("-dynamic" if self.kind == "dynamic" else "")


@dataclass
class Built:
    name: str
    text: str
    entries: list[Entry]
    out_cols: dict[str, int]  # output dtype -> columns of its output tensor
    returns: list[str]  # dtype of each returned tensor


class _Slots:
    def __init__(self) -> None:
        self.cols: dict[str, int] = {}

    def take(self, odt: str) -> int:
        c = self.cols.get(odt, 0)
        self.cols[odt] = c + C
        return c


def _load_text(kind: str, var: str, i: str, vr: str, vc: str) -> str:
    if kind == "row":
        return f"{var} = pl.load(row, [{i}, 0], [{R}, 1], valid_shapes=[{vr}, 1])"
    if kind == "col":
        return f"{var} = pl.load(col, [0, 0], [1, {C}], valid_shapes=[1, {vc}])"
    return f"{var} = pl.load({kind}, [{i}, 0], [{R}, {C}], valid_shapes=[{vr}, {vc}])"


def _block_body(case: Case, dt: str, i: str, vr: str, vc: str, vk: str) -> list[str]:
    if case.body:
        def cap(n):
            return f"pl.min({n}, {vc})" if not vc.isdigit() else str(min(n, int(vc)))
        lines = [b.format(i=i, vr=vr, vc=vc, vk=vk, dt=dt, vc16=cap(16), vc32=cap(32)) for b in case.body]
        return lines + [case.store.format(i=i)]
    lines, names = [], []
    for n, kind in enumerate(case.operands):
        if kind in SCALAR_KINDS:
            names.append(repr(scalar_literal(kind, dt)))
            continue
        if kind == "sv":
            names.append("sv")
            continue
        names.append(f"t{n}")
        lines.append(_load_text(kind, names[-1], i, vr, vc))
    expr = case.text(names, dt)
    if case.stmt:
        lines.append(expr)
        res = names[0]
    else:
        res = "r"
        lines.append(f"r = {expr}")
    return lines + [f"out = pl.store({res}, [{i}, 0], out)"]


def _kernel_inputs(case: Case) -> list[str]:
    """The entry's values the kernel takes: tensors by name, then `sv`."""
    if case.body or case.kernel:
        text = "\n".join(case.body + case.kernel)
        return [n for n in INPUTS + ("col",) if f"({n}," in text]
    ins = list(dict.fromkeys(k for k in case.operands if k not in SCALAR_KINDS))
    return [k for k in ins if k != "sv"] + (["sv"] if "sv" in ins else [])


def _block_kernel(k: int, case: Case, dt: str, static: bool) -> tuple[str, list[str], list[str]]:
    """(kernel name, its text lines, the entry's argument names)."""
    odt = out_dtype(case, dt)
    ins = _kernel_inputs(case)
    shp = {"row": "[M, 1]", "col": f"[1, {C}]"}
    params = [f"sv: pl.Scalar[pl.{dt}]" if n == "sv" else f"{n}: pl.Tensor[{shp.get(n, f'[M, {C}]')}, pl.{dt}]"
              for n in ins]
    ot = f"pl.Tensor[[{OUT_ROWS}, {C}], pl.{odt}]"
    name = f"k{k}_{case.name}"
    lines = ["    @pl.function(type=pl.FunctionType.InCore)",
             f"    def {name}(self, {', '.join(params + [f'out: pl.Out[{ot}]'])}) -> {ot}:"]
    ind = " " * 8
    if case.kernel:
        lines += [ind + x.format(dt=dt) for x in case.kernel]
    elif case.blocks == 1:
        lines += [ind + x for x in _block_body(case, dt, "0", str(R), str(C), "32")]
    elif static:
        for j, i0, vr, vc, vk in block_rows():
            lines += [ind + x for x in _block_body(case, dt, str(i0), str(vr), str(vc), str(vk))]
    else:
        lines += [f"{ind}for i in pl.range(0, M, {R}):",
                  f"{ind}    j = i // {R}",
                  f"{ind}    vr = pl.min({R}, M - i)",
                  f"{ind}    vc = {C} - 27 * j",
                  f"{ind}    vk = 32 - 7 * j"]
        lines += [ind + "    " + x for x in _block_body(case, dt, "i", "vr", "vc", "vk")]
    lines += [ind + "return out", ""]
    return name, lines, ins


_WINDOW = {"row": "pl.view(row, [16, 1], [0, 0])", "col": "col"}


def _tensor_names(dt: str, dynamic: bool) -> dict[str, str]:
    names = {}
    for n in INPUTS:
        names[n] = f"pl.view({n}, [M, {C}], [0, 0])" if dynamic else f"pl.view({n}, [{R}, {C}], [0, 0])"
    names["row"] = "pl.view(row, [M, 1], [0, 0])" if dynamic else _WINDOW["row"]
    names["w"] = f"pl.view(w, [M, {WIDE}], [0, 0])"
    names["col"] = "col"
    names["sv"] = "sv"
    names["s"] = repr(scalar_literal("s", dt))
    names["dt"] = dt
    return names


def ops_program(dt: str, static: bool = False, shard: str | None = None) -> Built:
    """Every block and tensor row for dtype `dt` in one program (see the module docstring); with
    `shard`, only the rows of that shard."""
    name = f"Ops{dt}{''.join(w.title() for w in (shard or '').split('_'))}{'Static' if static else ''}"

    def mine(cases):
        return [c for c in cases if shard is None or shard_of(c) == shard]

    head = ["import pypto.language as pl", "", 'M = pl.dynamic("M")', "", "", "@pl.program", f"class {name}:"]
    kernels: list[str] = []
    body: list[str] = []
    entries: list[Entry] = []
    slots = _Slots()
    for k, case in enumerate(mine(block_cases(dt))):
        kname, lines, ins = _block_kernel(k, case, dt, static)
        kernels += lines
        odt = out_dtype(case, dt)
        col0 = slots.take(odt)
        args = ins + [f"pl.view(o_{odt}, [{OUT_ROWS}, {C}], [0, {col0}])"]
        body.append(f"self.{kname}({', '.join(args)})")
        entries.append(Entry("block", case, dt, odt, col0))
    returns: list[str] = []
    ret_vars: list[str] = []
    for case in mine(tensor_cases(dt)):
        if not case.static:
            continue
        odt = out_dtype(case, dt)
        col0 = slots.take(odt)
        names = _tensor_names(dt, False)
        names.update(out=f"o_{odt}", col0=col0)
        lines = [p.format(**names) for p in case.pre]
        lines.append(f"r = {case.call.format(**names)}")
        lines.append(f"o_{odt} = pl.assemble(o_{odt}, r, [0, {col0}])")
        lines += [p.format(**names) for p in case.post]
        body += ["with pl.incore():"] + ["    " + x for x in lines] if case.incore else lines
        entries.append(Entry("tensor", case, dt, odt, col0))
    # after the static rows: a dynamic row's op follows its own view statements, so the pipeline
    # scopes it into a kernel of its own (a run of consecutive tensor ops becomes one kernel)
    for t, case in enumerate(mine(tensor_cases(dt))):
        if case.dynamic and not static:
            odt = out_dtype(case, dt)
            body.append(f"y{t} = {case.call.format(**_tensor_names(dt, True))}")
            entries.append(Entry("dynamic", case, dt, odt, ret=len(returns)))
            returns.append(f"pl.Tensor[{case.dyn_shape}, pl.{odt}]")
            ret_vars.append(f"y{t}")
    params = [f"{n}: pl.Tensor[[M, {C}], pl.{dt}]" for n in INPUTS]
    params += [f"row: pl.Tensor[[M, 1], pl.{dt}]", f"col: pl.Tensor[[1, {C}], pl.{dt}]",
               f"w: pl.Tensor[[M, {WIDE}], pl.{dt}]", f"sv: pl.Scalar[pl.{dt}]"]
    params += [f"o_{o}: pl.InOut[pl.Tensor[[{OUT_ROWS}, {w}], pl.{o}]]" for o, w in slots.cols.items()]
    if not ret_vars:
        first = next(iter(slots.cols))
        returns, ret_vars = [f"pl.Tensor[[{OUT_ROWS}, {slots.cols[first]}], pl.{first}]"], [f"o_{first}"]
    rt = returns[0] if len(returns) == 1 else f"pl.Tuple[{', '.join(returns)}]"
    main = ["    @pl.function(type=pl.FunctionType.Orchestration)",
            f"    def main(self, {', '.join(params)}) -> {rt}:"]
    main += ["        " + b for b in body]
    main.append(f"        return {', '.join(ret_vars)}")
    text = "\n".join(head + kernels + main) + "\n"
    return Built(name, text, entries, dict(slots.cols), [r.rsplit("pl.", 1)[1].rstrip("]") for r in returns])


# ---------------------------------------------------------------------------------------------
# comparison


def ulp(x: np.ndarray, dt: str) -> np.ndarray:
    """The spacing of dtype `dt` at |x| (as float64)."""
    a = np.abs(x.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        if dt == "BF16":
            return 2.0 ** (np.floor(np.log2(np.maximum(a, 2.0 ** -126))) - 7)
        return np.spacing(a.astype(NP[dt])).astype(np.float64)


def compare(got: np.ndarray, exp: np.ndarray, tol: Any, dt: str, scale: np.ndarray | None = None) -> str | None:
    """None when `got` matches `exp` within `tol` (see Case), else a description of the difference."""
    if got.shape != exp.shape:
        return f"shape {got.shape}, expected {exp.shape}"
    g, e = got.astype(np.float64), exp.astype(np.float64)
    same = ((g == e) & (np.signbit(g) == np.signbit(e))) | (np.isnan(g) & np.isnan(e))  # -0.0 is not 0.0
    if tol != "exact" and dt in FLOATS:
        kind, n = tol
        lim = n * ulp(e, dt)
        if kind == "sum" and scale is not None:
            lim = lim + C * np.finfo(np.float32).eps * scale
        with np.errstate(invalid="ignore"):
            same |= np.abs(g - e) <= lim
    if same.all():
        return None
    idx = np.argwhere(~same)
    show = [tuple(int(v) for v in i) for i in idx[:4]]
    return (f"{len(idx)} element(s) differ, e.g. at {show}: got {[got[i].item() for i in show]}, "
            f"expected {[exp[i].item() for i in show]}")


# ---------------------------------------------------------------------------------------------
# what is covered


def coverage() -> dict[str, dict[str, set[str]]]:
    """op -> dtype -> how it runs: `block` (a block row), `tensor` (on windows), `dynamic` (on the
    dynamic tensors). Every entry runs on both backends."""
    cov: dict[str, dict[str, set[str]]] = {op: {} for op in OPS}
    for dt in DTYPES:
        for c in block_cases(dt):
            cov[c.op].setdefault(dt, set()).add("block")
        for t in tensor_cases(dt):
            kinds = cov[t.op].setdefault(dt, set())
            if t.static:
                kinds.add("tensor")
            if t.dynamic:
                kinds.add("dynamic")
    return cov


def coverage_table() -> str:
    """The coverage as a markdown table (B block row, T tensor row on windows, D dynamic rows)."""
    short = {"block": "B", "tensor": "T", "dynamic": "D"}
    lines = ["| op | " + " | ".join(DTYPES) + " |", "| --- |" + " --- |" * len(DTYPES)]
    for op, by_dt in sorted(coverage().items()):
        if op in SKIP:
            lines.append(f"| {op} | skipped: {SKIP[op]} |")
            continue
        cells = ["".join(short[k] for k in ("block", "tensor", "dynamic") if k in by_dt.get(dt, ())) or "-"
                 for dt in DTYPES]
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# rows of the ops pl-head §3 added (pypto/ops/catalogue.py), kept in their own module
from . import op_table_catalogue as _catalogue  # noqa: E402

_catalogue.install()
from . import op_table_catalogue2 as _catalogue2  # noqa: E402  (pypto/ops/catalogue2.py)

_catalogue2.install()

# today's gather / scatter / sort forms (pypto/ops/gather_scatter.py)
from . import op_table_catalogue3 as _catalogue3  # noqa: E402

_catalogue3.install()

# batched matmul and the rest of pl-head §3.1-3.6 (op_table_catalogue4.py)
from . import op_table_catalogue4 as _catalogue4  # noqa: E402

_catalogue4.install()


if __name__ == "__main__":
    print(coverage_table())
