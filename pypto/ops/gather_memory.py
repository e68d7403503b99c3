"""Data-dependent GM access from inside a kernel (pl-head §3.7): `pl.mgather` / `pl.tile.mgather`
reads rows or flat elements of a whole DDR tensor at the addresses an INT32 index tile holds;
`pl.mscatter` / `pl.tile.mscatter` writes a tile's elements into a DDR tensor at flat indices.

    mgather(mem, idx, coalesce="row")   out[k, :] = mem[idx.flat[k], :]  (mem 2-D; idx [1, N] or [N, 1];
                                        out [N, mem columns]; valid rows = idx's valid count)
    mgather(mem, idx, coalesce="elem")  out[i, j] = mem.flat[idx[i, j]]  (out has idx's shape)
    mscatter(src, idx, out)             out.flat[idx[i, j]] = src[i, j] (returns out; duplicates: the
                                        last in row-major order wins)

Indices are read as unsigned 32-bit numbers (as the device does: -1 is 2**32 - 1). An index past
the table follows `gather_oob`: "clamp" (the last row / element), "wrap" (modulo the extent),
"zero" (0), "undefined" (the device reads whatever is there; the CPU gives 0 and never reads
outside the tensor). mscatter skips indices outside `out`. The code generator passes the whole
tensor as one window (pypto/codegen/tile_ops.py), so the runtime's dependency tracking sees the
whole tensor read (mgather) or written (mscatter) by the task.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PipeType
from pypto.ir.expr import ConstInt
from pypto.ir.types import TensorType

from .registry import arg, attr, define
from .traits import WINDOW
from .typing import OpError, dims, expect_tensor, expect_tile, static_dim, tile_result

OOB_MODES = ("undefined", "clamp", "wrap", "zero")
COALESCE = ("row", "elem")


def _mgather_binder(args, kwargs):
    """HEAD's (mem, idx, coalesce="row", *, gather_oob, target_memory, scratch, valid_shape)."""
    if len(args) > 3:
        raise OpError(f"mgather takes at most 3 positional arguments (mem, idx, coalesce), got {len(args)}")
    out = dict(zip(["mem", "idx", "coalesce"], args))
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"mgather got argument {k!r} twice")
        out[k] = v
    # the device stages elem gathers into Mat through a GM scratch buffer; the CPU reads mem directly
    scratch = out.pop("scratch", None)
    if scratch is not None and not isinstance(getattr(scratch, "type", None), TensorType):
        raise OpError("mgather: scratch must be a tensor")
    return out


def _indices(name: str, idx) -> None:
    if idx.rank != 2:
        raise OpError(f"{name}: the index tile must be 2-D, got rank {idx.rank}")
    if idx.dtype not in (DataType.INT32, DataType.UINT32):
        raise OpError(f"{name}: indices must be INT32 (or UINT32), got {idx.dtype.name}")


def _mgather_rule(args, kw):
    mem = expect_tensor("block.mgather", args[0], "mem")
    idx = expect_tile("block.mgather", args[1], "idx")
    _indices("block.mgather", idx)
    mode, oob = kw["coalesce"], kw["gather_oob"]
    if mode not in COALESCE:
        raise OpError(f"block.mgather: coalesce must be 'row' or 'elem', got {mode!r}")
    if oob not in OOB_MODES:
        raise OpError(f"block.mgather: gather_oob must be one of {', '.join(OOB_MODES)}, got {oob!r}")
    if kw["target_memory"] is MemorySpace.DDR:
        raise OpError("block.mgather: target_memory must be on chip (Vec or Mat)")
    if mode == "row":
        if mem.rank != 2:
            raise OpError(f"block.mgather: coalesce='row' gathers rows of a 2-D tensor, got rank {mem.rank}")
        cols = static_dim(mem.shape[1])
        r, c = (static_dim(d) for d in idx.shape)
        if cols is None:
            raise OpError("block.mgather: coalesce='row' needs the tensor's row length to be static")
        if r != 1 and c != 1:
            raise OpError(f"block.mgather: row indices are one row or one column, got [{r}, {c}]")
        vr, vc = idx.valid_shape
        n, vn = (c, vc) if r == 1 else (r, vr)
        shape, valid = (n, cols), (vn, ConstInt(cols))
    else:
        shape, valid = tuple(static_dim(d) for d in idx.shape), tuple(idx.valid_shape)
    if len(args) > 2:
        v = dims("block.mgather", args[2], "valid_shape")
        if len(v) != 2:
            raise OpError(f"block.mgather: valid_shape needs 2 entries, got {len(v)}")
        valid = tuple(v)
    return tile_result(shape, mem.dtype, memory_space=kw["target_memory"], valid_shape=valid)


def oob_index(idx, n: int, oob: str):
    """(positions into a table of n, in-range mask) for the raw index array (read as UINT32)."""
    u = np.asarray(idx).astype(np.int64) & 0xFFFFFFFF
    if oob == "clamp":
        return np.minimum(u, n - 1), np.ones(u.shape, bool)
    if oob == "wrap":
        return u % n, np.ones(u.shape, bool)
    ok = u < n
    return np.where(ok, u, 0), ok


def mgather_ref(mem, idx, valid_shape=None, *, coalesce="row", gather_oob="undefined",
                target_memory=MemorySpace.Vec):
    mem = np.asarray(mem)
    if coalesce == "row":
        flat = np.asarray(idx).reshape(-1)
        pos, ok = oob_index(flat, mem.shape[0], gather_oob)
        out = np.where(ok[:, None], mem[pos], np.zeros((), mem.dtype))
    else:
        table = mem.reshape(-1)
        pos, ok = oob_index(idx, table.size, gather_oob)
        out = np.where(ok, table[pos], np.zeros((), mem.dtype))
    if valid_shape is not None:
        res = np.zeros_like(out)
        region = tuple(slice(0, int(v)) for v in valid_shape)
        res[region] = out[region]
        out = res
    return out


define("block.mgather", [arg("mem", "tensor"), arg("idx", "tile"), arg("valid_shape", "shape", optional=True),
                         attr("coalesce", "str", "row"), attr("gather_oob", "str", "undefined"),
                         attr("target_memory", "memspace", MemorySpace.Vec)],
       _mgather_rule, traits=WINDOW, reference=mgather_ref, pto="tmgather", pipe=PipeType.MTE2,
       binder=_mgather_binder, dsl=("pl.tile.mgather", "pl.block.mgather", "pl.mgather"),
       doc="gather rows (coalesce='row') or flat elements ('elem') of a DDR tensor by an INT32 index tile")


def _mscatter_binder(args, kwargs):
    out = dict(zip(["src", "idx", "output_tensor"], args))
    if len(args) > 3:
        raise OpError(f"mscatter takes 3 arguments (src, idx, output_tensor), got {len(args)}")
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"mscatter got argument {k!r} twice")
        out[k] = v
    return out


def _mscatter_rule(args, kw):
    src = expect_tile("block.mscatter", args[0], "src")
    idx = expect_tile("block.mscatter", args[1], "idx")
    out = expect_tensor("block.mscatter", args[2], "output_tensor")
    _indices("block.mscatter", idx)
    if src.rank != 2 or tuple(src.shape) != tuple(idx.shape):
        raise OpError(f"block.mscatter: src {list(src.shape)} and idx {list(idx.shape)} need one 2-D shape")
    if src.dtype is not out.dtype:
        raise OpError(f"block.mscatter: src dtype {src.dtype.name} differs from the output's {out.dtype.name}",
                      hint="cast the tile first with pl.cast(tile, ...)")
    return out


def mscatter_ref(src, idx, out):
    res = np.array(out, copy=True)
    flat = res.reshape(-1)
    s = np.asarray(src)
    u = np.asarray(idx).astype(np.int64)[: s.shape[0], : s.shape[1]] & 0xFFFFFFFF
    ok = u < flat.size
    flat[u[ok]] = s[ok].astype(res.dtype)  # row-major order: the last duplicate wins
    return res


define("block.mscatter", [arg("src", "tile"), arg("idx", "tile"), arg("output_tensor", "tensor")],
       _mscatter_rule, traits=WINDOW, reference=mscatter_ref, pto="tmscatter", pipe=PipeType.MTE3,
       binder=_mscatter_binder, result_reuses=2, dsl=("pl.tile.mscatter", "pl.block.mscatter", "pl.mscatter"),
       doc="out.flat[idx[i, j]] = src[i, j] into a DDR tensor (indices outside it skipped); returns out")
