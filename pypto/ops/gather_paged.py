"""`pl.paged_gather` (pl-head §3.7): rows of a paged KV pool, looked up through a block table, into
an on-chip buffer of `max_indices` rows.

    paged_gather(src, indices, block_table, block_size, size, max_indices, *, space=Mat, col_off=0,
                 is_trans=False, is_b_matrix=False)
      phys(i) = block_table.flat[indices[i] // block_size] * block_size + indices[i] % block_size
      out[k, :] = src[phys(k), col_off : col_off + size]   for k < len(indices); 0 for the rows past
      is_trans: out is [size, max_indices], row k of the gather as its column k

Indices and table entries are read as unsigned 32-bit numbers (as the device does); a lookup that
falls outside the block table or the pool gives a row of 0 (the device reads whatever is there; the
CPU never reads outside the tensors). `space` and `is_b_matrix` place the buffer on the device (L1 /
UB, the matmul B layout); the CPU keeps it in a plain tile.

The tensor op is the DSL's (`pl.paged_gather` = `pl.tensor.paged_gather`; a 1-D index becomes
[1, n]); inside a kernel it lowers to the tile op `block.paged_gather`, which reads the pool and
the block table as whole kernel-parameter tensors (the task's In windows, as mgather's), see
pypto/passes/tiling_gather.py.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PipeType
from pypto.ir.types import TensorType

from .registry import NAMESPACES, OpError, Router, arg, attr, define
from .traits import WINDOW
from .typing import expect_tensor, expect_tile, result_like, static_dim, tile_result

_ATTRS = ("block_size", "size", "max_indices")
_INDEX = (DataType.INT32, DataType.UINT32)


def _rule(name: str, level: str):
    def infer(args, kw):
        src = expect_tensor(name, args[0], "src")
        idx = (expect_tile if level == "block" else expect_tensor)(name, args[1], "indices")
        bt = expect_tensor(name, args[2], "block_table")
        if src.rank != 2:
            raise OpError(f"{name}: src (the paged pool) must be 2-D [rows, columns], got rank {src.rank}")
        if idx.dtype not in _INDEX or bt.dtype not in _INDEX:
            raise OpError(f"{name}: indices and block_table must be INT32, got {idx.dtype.name} and {bt.dtype.name}")
        if idx.rank != 2 or static_dim(idx.shape[0]) != 1:
            raise OpError(f"{name}: indices must be [n] or [1, n], got shape {list(idx.shape)}")
        n = static_dim(idx.shape[1])
        bs, size, m, off = kw["block_size"], kw["size"], kw["max_indices"], kw["col_off"]
        if bs <= 0 or size <= 0 or m <= 0 or off < 0:
            raise OpError(f"{name}: block_size, size, max_indices must be positive and col_off >= 0, "
                          f"got {bs}, {size}, {m}, {off}")
        if n is None or n > m:
            raise OpError(f"{name}: {idx.shape[1]!r} indices for max_indices={m}: the count must be static and "
                          "at most max_indices")
        cols = static_dim(src.shape[1])
        if cols is not None and off + size > cols:
            raise OpError(f"{name}: columns col_off + size = {off + size} exceed the pool's {cols}")
        shape = (size, m) if kw["is_trans"] else (m, size)
        if kw["space"] not in (MemorySpace.Mat, MemorySpace.Vec):
            raise OpError(f"{name}: space must be pl.MemorySpace.Mat or Vec, got {kw['space']!r}")
        if level == "block":
            return tile_result(shape, src.dtype)  # (the CPU keeps the buffer in Vec whatever the space)
        return result_like(src, shape, src.dtype)
    return infer


def paged_gather_ref(src, indices, block_table, *, block_size, size, max_indices, col_off=0, is_trans=False,
                     space=MemorySpace.Mat, is_b_matrix=False):
    src = np.asarray(src)
    table = np.asarray(block_table).reshape(-1).astype(np.int64) & 0xFFFFFFFF
    idx = np.asarray(indices).reshape(-1).astype(np.int64) & 0xFFFFFFFF
    out = np.zeros((max_indices, size), src.dtype)
    for k, i in enumerate(idx[:max_indices]):
        b = i // block_size
        if b >= table.size:
            continue
        phys = table[b] * block_size + i % block_size
        if phys < src.shape[0]:
            out[k] = src[phys, col_off: col_off + size]
    return out.T.copy() if is_trans else out


def _params(level: str):
    return [arg("src", "tensor"), arg("indices", "tile" if level == "block" else "tensor"),
            arg("block_table", "tensor"), attr("block_size", "int"), attr("size", "int"),
            attr("max_indices", "int"), attr("space", "memspace", MemorySpace.Mat), attr("col_off", "int", 0),
            attr("is_trans", "bool", False), attr("is_b_matrix", "bool", False)]


def _binder(args, kwargs):
    """The public positional order: (src, indices, block_table, block_size, size, max_indices)."""
    names = ("src", "indices", "block_table", *_ATTRS)
    if len(args) > len(names):
        raise OpError(f"paged_gather takes at most {len(names)} positional arguments, got {len(args)}")
    out = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"paged_gather got argument {k!r} twice")
        out[k] = v
    return out


_DOC = "rows src[block_table[i // bs] * bs + i % bs, col_off:+size] of a paged pool into [max_indices, size]"
PAGED_GATHER = define("block.paged_gather", _params("block"), _rule("block.paged_gather", "block"), traits=WINDOW,
                      reference=paged_gather_ref, pto="tpagedgather", pipe=PipeType.MTE2, binder=_binder, dsl=(),
                      doc=_DOC)
T_PAGED_GATHER = define("tensor.paged_gather", _params("tensor"), _rule("tensor.paged_gather", "tensor"),
                        traits=WINDOW, reference=paged_gather_ref, binder=_binder, dsl=(), doc=_DOC)


def _route(args: list, kw: dict, build):
    """A 1-D index tensor is viewed as [1, n] (the tile op's index is a row)."""
    args = list(args)
    idx = args[1] if len(args) > 1 else kw.get("indices")
    if isinstance(getattr(idx, "type", None), TensorType) and idx.type.rank == 1:
        from .registry import lookup_dsl

        idx = build(lookup_dsl("pl.tensor", "reshape"), [idx, [1, idx.type.shape[0]]], {})
        if len(args) > 1:
            args[1] = idx
        else:
            kw = {**kw, "indices": idx}
    return build(T_PAGED_GATHER, args, kw)


for _ns in ("pl", "pl.tensor"):
    NAMESPACES[_ns]["paged_gather"] = Router("paged_gather", _route, doc=_DOC)
