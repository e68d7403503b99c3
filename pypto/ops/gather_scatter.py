"""The gather / scatter / sort forms of the public catalogue at its 2026-08 HEAD (pl-head §3.7)
that the row-index ops of indexing.py and the sorts of ordering.py do not cover, and the routers
that give `pl.gather`, `pl.scatter`, `pl.sort32`, `pl.mrgsort`, `pl.scatter_update` today's call
forms (docs/pl_ops.md §3.7).

    gather_flat(src, indices[, tmp])    dst[i, j] = src.flat[indices[i, j]] (row-major over src's
                                        shape; 0 outside it). `pl.tile.gather(src, idx, tmp)`.
    scatter_mask(dst, src, pattern)     dst with the pattern's columns of each row replaced by src's
                                        compact row (the inverse of gather_mask)
    scatter_update(input, index, src)   input with row index.flat[k] replaced by src[k] (rows outside
                                        the input skipped; duplicates: the last k wins)
    sort32_idx(src, idx)                sort32 whose index half holds idx's raw bits (HEAD's
                                        `sort32(src, idx)`; idx has the value's width: UINT32 / INT32
                                        for FP32, UINT16 / INT16 for FP16)
    mrgsort_runs(x, block_len)          format 1: each group of 4 consecutive runs of block_len
                                        columns ((value, index) pairs) merged into one descending run
    mrgsort_lists(a, b[, c[, d]])       format 2: 2 to 4 descending lists merged into one

Merges are stable (the earlier run / list first on ties), so they equal the stable sort of the
pairs by value, NaN first, as ordering.py.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import InvalidValue
from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.expr import ConstInt
from pypto.ir.types import TileType

from . import indexing as _ix
from . import numeric as nm
from .ordering import order
from .registry import OpDef, arg, attr, define
from .traits import LAYOUT, ShapeClass, Traits
from .typing import (
    OpError,
    dim_eq,
    expect_scalar,
    expect_tensor,
    expect_tile,
    result_like,
    static_dim,
    tile_result,
)

V = PipeType.V
_ROW_LAYOUT = Traits(ShapeClass.LAYOUT, row_local=True)
# the interpreter hands these references each tile's valid region as it is (no broadcasting)
_WHOLE = {"whole_operands": True}


def _operand(level: str):
    return expect_tile if level == "block" else expect_tensor


def _result(x, shape, dtype: DataType):
    return tile_result(shape, dtype) if isinstance(x, TileType) else result_like(x, shape, dtype)


def _two_d(name: str, t, what: str) -> None:
    if t.rank != 2:
        raise OpError(f"{name}: {what} must be 2-D, got rank {t.rank}", hint="reshape to [rows, columns] first")


def _pair(name: str, params, rule, ref, pto: str, doc: str, traits: Traits = _ROW_LAYOUT,
          tensor: bool = True, **extra) -> tuple[OpDef, OpDef | None]:
    tile = define(f"block.{name}", params("tile"), rule(f"block.{name}", "block"), traits=traits, reference=ref,
                  pto=pto, pipe=V, doc=doc, dsl=(), **_WHOLE, **extra)
    if not tensor:
        return tile, None
    ten = define(f"tensor.{name}", params("tensor"), rule(f"tensor.{name}", "tensor"), traits=traits, reference=ref,
                 tile_form=tile, doc=doc, dsl=())
    return tile, ten


# ---------------------------------------------------------------------------------------------
# gather_flat: the tile gather of HEAD (a flat index into the whole source tile)


def _gather_flat_rule(name: str, level: str):
    def infer(args, kw):
        src = _operand(level)(name, args[0], "src")
        idx = _operand(level)(name, args[1], "indices")
        _two_d(name, src, "src")
        _two_d(name, idx, "indices")
        if idx.dtype not in (DataType.INT32, DataType.UINT32):
            raise OpError(f"{name}: indices must be INT32 or UINT32, got {idx.dtype.name}")
        if len(args) > 2:
            _operand(level)(name, args[2], "tmp")
        return _result(idx, tuple(idx.shape), src.dtype)
    return infer


def gather_flat_ref(src, indices):
    flat = np.ascontiguousarray(src).reshape(-1)
    idx = np.asarray(indices).astype(np.int64)
    ok = (idx >= 0) & (idx < flat.size)
    return np.where(ok, flat[np.where(ok, idx, 0)], np.zeros((), flat.dtype))


GATHER_FLAT, _ = _pair("gather_flat", lambda k: [arg("src", k), arg("indices", k), arg("tmp", k, optional=True)],
                       _gather_flat_rule, gather_flat_ref, "tgatherflat",
                       "dst[i, j] = src.flat[indices[i, j]] (row-major over src's shape; 0 outside it)",
                       traits=LAYOUT, tensor=False)


# ---------------------------------------------------------------------------------------------
# scatter_mask: gather_mask's inverse


def _scatter_mask_rule(name: str, level: str):
    def infer(args, kw):
        dst = _operand(level)(name, args[0], "dst")
        src = _operand(level)(name, args[1], "src")
        _two_d(name, dst, "dst")
        _two_d(name, src, "src")
        p = kw["mask_pattern"]
        if p not in _ix.MASK_PATTERNS:
            raise OpError(f"{name}: mask_pattern must be 1..7, got {p}")
        if src.dtype is not dst.dtype:
            raise OpError(f"{name}: src dtype {src.dtype.name} differs from dst {dst.dtype.name}")
        stride = _ix.MASK_PATTERNS[p][0]
        cols = static_dim(dst.shape[1])
        if cols is None or cols % stride or dim_eq(src.shape[1], ConstInt(cols // stride)) is False:
            raise OpError(f"{name}: pattern {p} fills one column of each {stride}: src needs dst's columns / "
                          f"{stride} ({dst.shape[1]!r} / {stride}), got {src.shape[1]!r}")
        if dim_eq(src.shape[0], dst.shape[0]) is False:
            raise OpError(f"{name}: src has {src.shape[0]!r} rows, dst {dst.shape[0]!r}")
        return result_like(dst)
    return infer


def scatter_mask_ref(dst, src, *, mask_pattern):
    stride, phase = _ix.MASK_PATTERNS[mask_pattern]
    out = np.array(dst, copy=True)
    cols = out[:, phase::stride]
    n = min(cols.shape[1], np.shape(src)[1])
    out[:, phase::stride][:, :n] = np.asarray(src)[:, :n]
    return out


SCATTER_MASK, T_SCATTER_MASK = _pair(
    "scatter_mask", lambda k: [arg("dst", k), arg("src", k), attr("mask_pattern", "int")],
    _scatter_mask_rule, scatter_mask_ref, "tscattermask",
    "dst with the mask pattern's columns of each row replaced by src's compact row (gather_mask's inverse)",
    pto_attrs=("mask_pattern",))


# ---------------------------------------------------------------------------------------------
# scatter_update: replace whole rows


def _scatter_update_rule(name: str, level: str):
    def infer(args, kw):
        x = _operand(level)(name, args[0], "input")
        idx = _operand(level)(name, args[1], "index")
        src = _operand(level)(name, args[2], "src")
        if x.rank != 2:
            raise OpError(f"{name}: input must be 2-D ([rows, columns]); the 4-D paged form is not supported here, "
                          f"got rank {x.rank}", hint="reshape the paged cache to [blocks * block_size, columns]")
        if not idx.dtype.is_int:
            raise OpError(f"{name}: index must be an integer tensor, got {idx.dtype.name}")
        if src.dtype is not x.dtype:
            raise OpError(f"{name}: src dtype {src.dtype.name} differs from input {x.dtype.name}")
        _two_d(name, src, "src")
        if dim_eq(src.shape[1], x.shape[1]) is False:
            raise OpError(f"{name}: src rows have {src.shape[1]!r} columns, the input {x.shape[1]!r}")
        n_idx = 1
        for d in idx.shape:
            n_idx = None if n_idx is None or static_dim(d) is None else n_idx * static_dim(d)
        if n_idx is not None and static_dim(src.shape[0]) is not None and n_idx > static_dim(src.shape[0]):
            raise OpError(f"{name}: {n_idx} indices but src has only {src.shape[0]!r} rows")
        return result_like(x)
    return infer


def scatter_update_ref(input, index, src):  # noqa: A002
    out = np.array(input, copy=True)
    idx = np.asarray(index).astype(np.int64).reshape(-1)
    src = np.asarray(src)
    for k, r in enumerate(idx[: src.shape[0]]):  # in k order: the last write wins
        if 0 <= r < out.shape[0]:
            out[r, : src.shape[1]] = src[k]
    return out


SCATTER_UPDATE, T_SCATTER_UPDATE = _pair(
    "scatter_update", lambda k: [arg("input", k), arg("index", k), arg("src", k)], _scatter_update_rule,
    scatter_update_ref, "tscatterupdate", "input with row index.flat[k] replaced by src[k] (dim -2)", traits=LAYOUT)


# ---------------------------------------------------------------------------------------------
# sort32 with an index tile, and the two merge formats


def _sort_value(name: str, a) -> None:
    if a.dtype not in (DataType.FP32, DataType.FP16):
        raise OpError(f"{name}: sorts FP32 or FP16 values, got {a.dtype.name}", hint="cast to FP32 first")


def _sort32_idx_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(level)(name, args[0], "src")
        idx = _operand(level)(name, args[1], "idx")
        _two_d(name, a, "src")
        _sort_value(name, a)
        if not idx.dtype.is_int or idx.dtype.itemsize != a.dtype.itemsize:
            raise OpError(f"{name}: idx must be an integer dtype as wide as {a.dtype.name} (its bits are stored "
                          f"next to each value), got {idx.dtype.name}",
                          hint="UINT32 / INT32 indices for FP32 values, UINT16 / INT16 for FP16")
        n = static_dim(a.shape[1])
        if n is None:
            raise OpError(f"{name}: the last axis must be static")
        if dim_eq(idx.shape[1], a.shape[1]) is False or dim_eq(idx.shape[0], a.shape[0]) is False:
            raise OpError(f"{name}: idx {list(idx.shape)!r} must have src's shape {list(a.shape)!r}")
        return _result(a, (a.shape[0], ConstInt(2 * n)), a.dtype)
    return infer


def sort32_idx_ref(src, idx):
    x = np.asarray(src)
    bits = np.asarray(idx).view(x.dtype)  # the index's raw bits in the value dtype
    out = np.empty((x.shape[0], 2 * x.shape[1]), x.dtype)
    for b in range(0, x.shape[1], 32):
        blk = x[:, b:b + 32]
        o = order(nm.up(blk), True)
        out[:, 2 * b:2 * b + 2 * blk.shape[1]:2] = np.take_along_axis(blk, o, axis=-1)
        out[:, 2 * b + 1:2 * b + 2 * blk.shape[1]:2] = np.take_along_axis(bits[:, b:b + 32], o, axis=-1)
    return out


SORT32_IDX, T_SORT32_IDX = _pair(
    "sort32_idx", lambda k: [arg("src", k), arg("idx", k)], _sort32_idx_rule, sort32_idx_ref, "tsort32idx",
    "sort each block of 32 elements of a row descending into (value, idx bits) pairs: last axis doubled",
    traits=Traits(ShapeClass.ROW_WISE, row_local=True))


def _merge(pairs: np.ndarray) -> np.ndarray:
    """The stable descending sort of a row segment of (value, index) pairs (the index lanes moved as bits)."""
    o = order(nm.up(pairs[..., 0::2]), True)
    out = np.empty_like(pairs)
    out[..., 0::2] = np.take_along_axis(pairs[..., 0::2], o, axis=-1)
    out[..., 1::2] = np.take_along_axis(pairs[..., 1::2], o, axis=-1)
    return out


def _mrgsort_runs_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(level)(name, args[0], "src")
        _two_d(name, a, "src")
        _sort_value(name, a)
        bl = expect_scalar(name, args[1], "block_len")
        if not bl.dtype.is_int:
            raise OpError(f"{name}: block_len must be an integer, got {bl.dtype.name}")
        if isinstance(args[1], ConstInt) and (args[1].value < 2 or args[1].value % 2):
            raise OpError(f"{name}: block_len counts the columns of one sorted run ((value, index) pairs): a "
                          f"positive even number, got {args[1].value}")
        n = static_dim(a.shape[1])
        if n is not None and n % 2:
            raise OpError(f"{name}: the last axis holds (value, index) pairs; {n} is odd")
        return result_like(a)
    return infer


def mrgsort_runs_ref(x, block_len):
    x = np.asarray(x)
    out = np.array(x, copy=True)
    group = 4 * int(block_len)
    if group <= 0 or int(block_len) % 2:
        raise InvalidValue(f"mrgsort: block_len must be a positive even number of columns, got {block_len}")
    for b in range(0, x.shape[1], group):
        out[:, b:b + group] = _merge(x[:, b:b + group])
    return out


MRGSORT_RUNS, T_MRGSORT_RUNS = _pair(
    "mrgsort_runs", lambda k: [arg("src", k), arg("block_len", "index")], _mrgsort_runs_rule,
    mrgsort_runs_ref, "tmrgsort1",
    "format 1: each group of 4 sorted runs of block_len columns merged into one descending run",
    traits=Traits(ShapeClass.ROW_WISE, row_local=True))


def _mrgsort_lists_rule(name: str, level: str):
    def infer(args, kw):
        lists = [_operand(level)(name, e, f"src{k}") for k, e in enumerate(args)]
        total = 0
        for k, t in enumerate(lists):
            _two_d(name, t, f"src{k}")
            _sort_value(name, t)
            if t.dtype is not lists[0].dtype:
                raise OpError(f"{name}: src{k} is {t.dtype.name}, src0 {lists[0].dtype.name}")
            if dim_eq(t.shape[0], lists[0].shape[0]) is False:
                raise OpError(f"{name}: src{k} has {t.shape[0]!r} rows, src0 {lists[0].shape[0]!r}")
            c = static_dim(t.shape[1])
            if c is None or c % 2:
                raise OpError(f"{name}: src{k}'s last axis must be a static even number of columns ((value, index) "
                              f"pairs), got {t.shape[1]!r}")
            if isinstance(t, TileType) and t.valid_shape[1] != t.shape[1]:
                raise OpError(f"{name}: src{k} is partially valid; merge whole lists")
            total += c
        return _result(lists[0], (lists[0].shape[0], ConstInt(total)), lists[0].dtype)
    return infer


def mrgsort_lists_ref(*lists):
    return _merge(np.concatenate([np.asarray(x) for x in lists], axis=-1))


MRGSORT_LISTS, T_MRGSORT_LISTS = _pair(
    "mrgsort_lists", lambda k: [arg("src0", k), arg("src1", k), arg("src2", k, optional=True),
                                         arg("src3", k, optional=True)],
    _mrgsort_lists_rule, mrgsort_lists_ref, "tmrgsort2", "format 2: 2 to 4 descending lists merged into one",
    traits=Traits(ShapeClass.ROW_WISE, row_local=True))

__all__ = ["gather_flat_ref", "mrgsort_lists_ref", "mrgsort_runs_ref", "scatter_mask_ref", "scatter_update_ref",
           "sort32_idx_ref"]
