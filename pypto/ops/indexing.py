"""Gathers and scatters inside a row (pl-head §3.7 index and mask forms), computed per tile.

    gather(src, indices)              out[i, k] = src[i, indices[i, k]]     ([src rows, index columns])
    scatter(input, indices, src)      out = input; out[i, indices[i, k]] (=|+=|*=) src[i, k]
    gather_mask(src, mask_pattern)    the columns of a fixed pattern of each row (1: even, 2: odd,
                                      3..6: column 0..3 of each group of 4, 7: all)

An index (and a scatter's src) of one row serves every row. All three are row-local: row i of the result needs only row i of the operands, so tensor-level
kernels over them are tiled over rows like elementwise ones. Indices are INT32 and count within
the row's valid columns. An index outside [0, valid columns) touches no memory: a gather reads 0
for it and a scatter skips it. Duplicate indices in a scatter: `reduce=0` keeps the last write (the
highest k), 1 adds all of them, 2 multiplies all of them (ScatterMode NONE / ADD / MULTIPLY).
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.expr import Add, ConstInt, FloorDiv, Mul
from pypto.ir.types import TileType

from .registry import arg, attr, define, unified
from .traits import ShapeClass, Traits
from .typing import OpError, dim_eq, expect_tensor, expect_tile, result_like, static_dim, tile_result

ROW_LAYOUT = Traits(ShapeClass.LAYOUT, row_local=True)  # (moves elements within their row only)
SCATTER_MODES = {0: "none", 1: "add", 2: "multiply"}
# mask pattern -> (stride, phase): the columns j with j % stride == phase are kept
MASK_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


def _operand(level: str):
    return expect_tile if level == "block" else expect_tensor


def _rows_match(name: str, t, rows, what: str) -> None:
    if t.rank != 2:
        raise OpError(f"{name}: {what} must be 2-D ([rows, k]), got rank {t.rank}")
    if static_dim(t.shape[0]) != 1 and dim_eq(t.shape[0], rows) is False:
        raise OpError(f"{name}: {what} has {t.shape[0]!r} rows, the data {rows!r} (or 1: the same for every row)")


def _index_operand(name: str, level: str, e, rows, what: str = "indices"):
    t = _operand(level)(name, e, what)
    if t.dtype is not DataType.INT32:
        raise OpError(f"{name}: {what} must be INT32, got {t.dtype.name}", hint="cast the index with pl.cast(..., pl.INT32)")
    _rows_match(name, t, rows, what)
    return t


def _data(name: str, level: str, e, what: str):
    t = _operand(level)(name, e, what)
    if t.rank != 2:
        raise OpError(f"{name}: {what} must be 2-D (index within each row), got rank {t.rank}",
                      hint="reshape to [rows, columns] first")
    return t


def _gather_rule(name: str, level: str):
    def infer(args, kw):
        src = _data(name, level, args[0], "src")
        idx = _index_operand(name, level, args[1], src.shape[0])
        shape = (src.shape[0], idx.shape[1])  # (an index of one row serves every row)
        if isinstance(idx, TileType):
            return tile_result(shape, src.dtype, valid_shape=(src.valid_shape[0], idx.valid_shape[1]))
        return result_like(idx, shape, src.dtype)
    return infer


def _scatter_rule(name: str, level: str):
    def infer(args, kw):
        x = _data(name, level, args[0], "input")
        idx = _index_operand(name, level, args[1], x.shape[0])
        src = _operand(level)(name, args[2], "src")
        if src.dtype is not x.dtype:
            raise OpError(f"{name}: src dtype {src.dtype.name} differs from input {x.dtype.name}")
        _rows_match(name, src, x.shape[0], "src")
        if dim_eq(src.shape[1], idx.shape[1]) is False:
            raise OpError(f"{name}: src must have the indices' {idx.shape[1]!r} columns, got {src.shape[1]!r}")
        if kw["reduce"] not in SCATTER_MODES:
            raise OpError(f"{name}: reduce must be 0 (none), 1 (add) or 2 (multiply), got {kw['reduce']}")
        return result_like(x)
    return infer


def _gather_mask_rule(name: str, level: str):
    def infer(args, kw):
        src = _data(name, level, args[0], "src")
        p = kw["mask_pattern"]
        if p not in MASK_PATTERNS:
            raise OpError(f"{name}: mask_pattern must be 1..7, got {p}")
        stride, phase = MASK_PATTERNS[p]
        dt = kw.get("output_dtype") or src.dtype
        if dt.itemsize != src.dtype.itemsize:
            raise OpError(f"{name}: output_dtype {dt.name} must have {src.dtype.name}'s width (a bitcast of the "
                          f"kept elements)")
        cols = static_dim(src.shape[1])
        if cols is None or cols % stride:
            raise OpError(f"{name}: pattern {p} keeps one column of each {stride}; the row length "
                          f"{src.shape[1]!r} must be a static multiple of {stride}")
        shape = (src.shape[0], ConstInt(cols // stride))
        if isinstance(src, TileType):
            vc = src.valid_shape[1]
            kept = ConstInt((vc.value + stride - 1 - phase) // stride) if isinstance(vc, ConstInt) else \
                FloorDiv(Add(vc, ConstInt(stride - 1 - phase), DataType.INDEX), ConstInt(stride), DataType.INDEX)
            return tile_result(shape, dt, valid_shape=(src.valid_shape[0], kept))
        return result_like(src, shape, dt)
    return infer


def gather_ref(src, indices):
    idx = np.broadcast_to(np.asarray(indices).astype(np.int64), (src.shape[0], np.shape(indices)[1]))
    ok = (idx >= 0) & (idx < src.shape[-1])
    got = np.take_along_axis(src, np.where(ok, idx, 0), axis=-1)
    return np.where(ok, got, np.zeros((), src.dtype))


def scatter_ref(input, indices, src, *, reduce=0):  # noqa: A002
    out = np.array(input, copy=True)
    idx = np.broadcast_to(np.asarray(indices).astype(np.int64), (out.shape[0], np.shape(indices)[1]))
    src = np.broadcast_to(src, idx.shape)
    rows = np.arange(out.shape[0])
    for k in range(idx.shape[1]):  # in k order: the last write wins, sums and products accumulate
        ok = (idx[:, k] >= 0) & (idx[:, k] < out.shape[1])
        r, c, v = rows[ok], idx[ok, k], src[ok, k].astype(out.dtype)
        if reduce == 1:
            np.add.at(out, (r, c), v)
        elif reduce == 2:
            np.multiply.at(out, (r, c), v)
        else:
            out[r, c] = v
    return out


def gather_mask_ref(src, *, mask_pattern, output_dtype=None):
    stride, phase = MASK_PATTERNS[mask_pattern]
    out = np.ascontiguousarray(src[:, phase::stride])
    return out.view(output_dtype.to_numpy()) if output_dtype is not None else out


def _both(name: str, params, rule, ref, pto: str, doc: str, int_attrs: tuple[str, ...] = ()) -> None:
    tile = define(f"block.{name}", params("tile"), rule(f"block.{name}", "block"), traits=ROW_LAYOUT, reference=ref,
                  pto=pto, pipe=PipeType.V, doc=doc, pto_attrs=int_attrs)
    tensor = define(f"tensor.{name}", params("tensor"), rule(f"tensor.{name}", "tensor"), traits=ROW_LAYOUT,
                    reference=ref, tile_form=tile, doc=doc)
    unified(name, tensor=tensor, tile=tile, doc=doc)


_both("gather", lambda k: [arg("src", k), arg("indices", k)], _gather_rule, gather_ref, "tgather",
      "out[i, k] = src[i, indices[i, k]] (0 where the index is outside the row)")
_both("scatter", lambda k: [arg("input", k), arg("indices", k), arg("src", k), attr("reduce", "int", 0)],
      _scatter_rule, scatter_ref, "tscatter",
      "out = input; out[i, indices[i, k]] = / += / *= src[i, k] (reduce 0 / 1 / 2; indices outside the row skipped)",
      ("reduce",))
_both("gather_mask", lambda k: [arg("src", k), attr("mask_pattern", "int"), attr("output_dtype", "dtype", None)],
      _gather_mask_rule, gather_mask_ref, "tgathermask",
      "the columns of a fixed pattern of each row (1 even, 2 odd, 3-6 one of each 4, 7 all); output_dtype: a "
      "same-width bitcast",
      ("mask_pattern",))


# ---------------------------------------------------------------------------------------------
# reinterpret_view: the same bytes as another dtype (the last dim scaled by the byte ratio)


def _reinterpret_rule(name: str, level: str):
    def infer(args, kw):
        x = _operand(level)(name, args[0], "input")
        dt = kw["target_type"]
        a, b = x.dtype.itemsize, dt.itemsize
        if not a or not b:
            raise OpError(f"{name}: {x.dtype.name} -> {dt.name}: sub-byte dtypes cannot be reinterpreted")
        cols = static_dim(x.shape[-1])
        if cols is None or (cols * a) % b:
            raise OpError(f"{name}: a last dim of {x.shape[-1]!r} {x.dtype.name} elements ({cols and cols * a} bytes) "
                          f"is not a static whole number of {dt.name} elements")
        shape = (*x.shape[:-1], ConstInt(cols * a // b))
        if isinstance(x, TileType):
            vc = x.valid_shape[-1]
            new_vc = ConstInt(vc.value * a // b) if isinstance(vc, ConstInt) else \
                FloorDiv(Mul(vc, ConstInt(a), DataType.INDEX), ConstInt(b), DataType.INDEX)
            return tile_result(shape, dt, valid_shape=(*x.valid_shape[:-1], new_vc))
        return result_like(x, shape, dt)
    return infer


def reinterpret_ref(x, *, target_type):
    return np.ascontiguousarray(x).view(target_type.to_numpy())


_both("reinterpret_view", lambda k: [arg("input", k), attr("target_type", "dtype")], _reinterpret_rule, reinterpret_ref,
      "treinterpret", "the same bytes as another dtype; the last dim scaled by the byte ratio")
