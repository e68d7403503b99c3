"""The byte-block gather and the flat scatter of the tile catalogue (pl-head §3.7):

    gatherb(src, offset, *, output_dtype=None)   dst[i, j*E : (j+1)*E] = the 32 bytes of src at byte
                                                 offset[i, j] (row-major over src's shape), read as
                                                 output_dtype (default src's): E = 32 / its size.
                                                 A block that does not fit in src reads 0.
    scatter_flat(dst, src, indexes)              dst.flat[indexes[i, j]] = src[i, j] (row-major over
                                                 dst's shape; indices outside skipped; duplicates:
                                                 the last in row-major order wins). HEAD's
                                                 `pl.tile.scatter(dst, src, indexes)`.

`pl.tile.scatter` with three tiles is also our row scatter `(input, indices, src)`: the router
(below) takes the flat form when the second operand has dst's dtype and the third is an integer
index; when both readings fit (INT32 data), the row form stays (docs/pl_ops.md §3.7).
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.types import TileType

from . import gather_routes  # noqa: F401  (first: it makes pl.block.scatter the router wrapped below)
from .registry import NAMESPACES, OpError, Router, arg, attr, define
from .traits import LAYOUT
from .typing import expect_tile, result_like, static_dim, tile_result

_INDEX = (DataType.INT32, DataType.UINT32, DataType.INT16, DataType.UINT16)
_WHOLE = {"whole_operands": True}


def _two_d(name: str, t, what: str) -> None:
    if t.rank != 2:
        raise OpError(f"{name}: {what} must be 2-D, got rank {t.rank}", hint="reshape to [rows, columns] first")


def _gatherb_rule(args, kw):
    name = "block.gatherb"
    src = expect_tile(name, args[0], "src")
    off = expect_tile(name, args[1], "offset")
    _two_d(name, src, "src")
    _two_d(name, off, "offset")
    if off.dtype not in (DataType.UINT32, DataType.INT32):
        raise OpError(f"{name}: offset must be UINT32 byte offsets, got {off.dtype.name}")
    out = kw["output_dtype"] or src.dtype
    size = out.bits // 8 if out.bits >= 8 else 0
    if size == 0 or 32 % size:
        raise OpError(f"{name}: output_dtype {out.name} does not divide a 32-byte block")
    cols = static_dim(off.shape[1])
    if cols is None or static_dim(off.shape[0]) is None:
        raise OpError(f"{name}: the offset tile needs a static shape")
    return tile_result((static_dim(off.shape[0]), cols * (32 // size)), out)


def gatherb_ref(src, offset, *, output_dtype=None):
    src = np.ascontiguousarray(src)
    data = src.reshape(-1).view(np.uint8)
    out_dt = np.dtype(output_dtype.to_numpy()) if output_dtype is not None else src.dtype
    per = 32 // out_dt.itemsize
    off = np.asarray(offset).astype(np.int64) & 0xFFFFFFFF
    out = np.zeros((off.shape[0], off.shape[1] * per), out_dt)
    for i in range(off.shape[0]):
        for j in range(off.shape[1]):
            b = int(off[i, j])
            if b + 32 <= data.size:
                out[i, j * per:(j + 1) * per] = data[b:b + 32].view(out_dt)
    return out


GATHERB = define("block.gatherb", [arg("src", "tile"), arg("offset", "tile"),
                                   attr("output_dtype", "dtype", None)],
                 _gatherb_rule, traits=LAYOUT, reference=gatherb_ref, pto="tgatherb", pipe=PipeType.V,
                 dsl=("pl.tile.gatherb", "pl.block.gatherb", "pl.gatherb"), **_WHOLE,
                 doc="gather 32-byte blocks of src by byte offsets (each offset column gives 32 / size elements)")


def _scatter_flat_rule(args, kw):
    name = "block.scatter_flat"
    dst = expect_tile(name, args[0], "dst")
    src = expect_tile(name, args[1], "src")
    idx = expect_tile(name, args[2], "indexes")
    for t, what in ((dst, "dst"), (src, "src"), (idx, "indexes")):
        _two_d(name, t, what)
    if src.dtype is not dst.dtype:
        raise OpError(f"{name}: src dtype {src.dtype.name} differs from dst {dst.dtype.name}")
    if idx.dtype not in _INDEX:
        raise OpError(f"{name}: indexes must be INT16 / INT32, got {idx.dtype.name}")
    if tuple(static_dim(d) for d in idx.shape) != tuple(static_dim(d) for d in src.shape):
        raise OpError(f"{name}: indexes {list(idx.shape)} must have src's shape {list(src.shape)}")
    return result_like(dst)


def scatter_flat_ref(dst, src, indexes):
    out = np.array(dst, copy=True)
    flat = out.reshape(-1)
    s = np.asarray(src)
    u = np.asarray(indexes).astype(np.int64)[: s.shape[0], : s.shape[1]]
    ok = (u >= 0) & (u < flat.size)
    flat[u[ok]] = s[ok]  # row-major order: the last duplicate wins
    return out


SCATTER_FLAT = define("block.scatter_flat", [arg("dst", "tile"), arg("src", "tile"), arg("indexes", "tile")],
                      _scatter_flat_rule, traits=LAYOUT, reference=scatter_flat_ref, pto="tscatterflat",
                      pipe=PipeType.V, dsl=(), **_WHOLE,
                      doc="dst.flat[indexes[i, j]] = src[i, j] (outside skipped; the last duplicate wins)")


def _is_tile(v) -> bool:
    return isinstance(getattr(v, "type", None), TileType)


def _route_tile_scatter(prev):
    def route(args: list, kw: dict, build):
        if len(args) == 3 and not kw and all(_is_tile(a) for a in args):
            d, s, i = (a.type.dtype for a in args)
            row_form = s is DataType.INT32 and i is d
            if s is d and i.is_int and not row_form:
                return build(SCATTER_FLAT, args, {})
        return build(prev, args, kw)
    return route


_prev = NAMESPACES["pl.block"]["scatter"]
NAMESPACES["pl.block"]["scatter"] = Router("scatter", _route_tile_scatter(_prev), doc=getattr(_prev, "doc", ""))
