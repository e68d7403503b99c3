"""Ops whose result depends on where elements sit along an axis: arg-extrema (`row_argmax`,
`col_argmin`, ...), scans (`row_cumsum`, `row_cumprod`) and sorts (`row_topk`, `row_topk_idx`,
`sort32`, `mrgsort`).

The order conventions, pinned by the NumPy references and followed by every backend:

- ties go to the lower index: argmax / argmin return the first extreme, sorts are stable;
- NaN counts as larger than every number: argmax and argmin both return the first NaN (as NumPy),
  a descending sort (largest top-k, sort32, mrgsort) puts NaNs first, an ascending one last;
  -0.0 and 0.0 are equal (a tie).

`sort32` / `mrgsort` follow pl-head §3.7: rows of interleaved (value, index) pairs, sorted
descending. Here the index half holds the index as a number of the value dtype (exact up to 2^24
in fp32, 2048 in fp16), so `pypto.cast` reads it; the hardware keeps the raw index bits there.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.expr import ConstInt, Mul
from pypto.ir.types import TileType

from . import numeric as nm
from .registry import arg, define, unified
from .traits import COL_REDUCE, ROW_REDUCE, ROW_WISE, Traits
from .typing import OpError, expect_scalar, expect_tensor, expect_tile, result_like, static_dim, tile_result

V = PipeType.V
_ONE = ConstInt(1)
_SORT_DTYPES = (DataType.FP32, DataType.FP16)
_EXACT = {DataType.FP32: 1 << 24, DataType.FP16: 2048}  # indices a value dtype holds exactly


def _operand(name: str, level: str, e, what: str = "input"):
    return expect_tile(name, e, what) if level == "block" else expect_tensor(name, e, what)


def _result(a, shape, dtype: DataType, valid=None):
    if isinstance(a, TileType):
        return tile_result(shape, dtype, valid_shape=valid)
    return result_like(a, shape, dtype)


def _min_rank(name: str, level: str, a) -> None:
    if a.rank < (2 if level == "block" else 1):
        raise OpError(f"{name}: needs a {'2-D tile' if level == 'block' else 'tensor of rank >= 1'}, got rank "
                      f"{a.rank}", hint="reshape to [1, N] first")


def _const(name: str, e, what: str) -> int:
    expect_scalar(name, e, what)
    if not isinstance(e, ConstInt):
        raise OpError(f"{name}: {what} must be a compile-time integer (it fixes the result's shape)")
    return e.value


# ---------------------------------------------------------------------------------------------
# arg-extrema: INT32 indices, [R, C] -> [R, 1] (row) or [1, C] (col)

def _arg_rule(name: str, level: str, axis: str):
    def infer(args, kw):
        a = _operand(name, level, args[0])
        if len(args) > 1:
            expect_tile(name, args[1], "tmp")
        if axis == "col":
            if a.rank != 2:
                raise OpError(f"{name}: needs a 2-D {'tile' if level == 'block' else 'tensor'}, got rank {a.rank}")
            valid = (_ONE, a.valid_shape[1]) if isinstance(a, TileType) else None
            return _result(a, (_ONE, a.shape[1]), DataType.INT32, valid)
        _min_rank(name, level, a)
        valid = (*a.valid_shape[:-1], _ONE) if isinstance(a, TileType) else None
        return _result(a, (*a.shape[:-1], _ONE), DataType.INT32, valid)
    return infer


def _arg_ref(fn, axis: int):
    def ref(x, *tmp):
        # np.argmax / np.argmin: the first extreme, the first NaN where there is one
        return np.expand_dims(fn(nm.up(x), axis=axis), axis).astype(np.int32)
    return ref


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    for _axis, _ax, _traits in (("row", -1, ROW_REDUCE), ("col", 0, COL_REDUCE)):
        _n = f"{_axis}_{_name}"
        _doc = (f"INT32 {'column' if _axis == 'row' else 'row'} index of the first "
                f"{'largest' if _name == 'argmax' else 'smallest'} element of each {_axis} (NaN wins)")
        _tile = define(f"block.{_n}", [arg("input", "tile"), arg("tmp", "tile", optional=True)],
                       _arg_rule(f"block.{_n}", "block", _axis), traits=_traits, reference=_arg_ref(_fn, _ax),
                       pto=f"t{_axis}{_name}", pipe=V, doc=_doc)
        _tensor = define(f"tensor.{_n}", [arg("input", "tensor")], _arg_rule(f"tensor.{_n}", "tensor", _axis),
                         traits=_traits, reference=_arg_ref(_fn, _ax), tile_form=_tile, doc=_doc)
        unified(_n, tensor=_tensor, tile=_tile, doc=_doc)


# ---------------------------------------------------------------------------------------------
# row-wise ops: each result row from the same row of the input

def _both(name: str, params, rule, ref, pto: str, doc: str, traits: Traits = ROW_WISE) -> None:
    tile = define(f"block.{name}", params("tile"), rule(f"block.{name}", "block"), traits=traits, reference=ref,
                  pto=pto, pipe=V, doc=doc)
    tensor = define(f"tensor.{name}", params("tensor"), rule(f"tensor.{name}", "tensor"), traits=traits,
                    reference=ref, tile_form=tile, doc=doc)
    unified(name, tensor=tensor, tile=tile, doc=doc)


def _scan_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(name, level, args[0])
        _min_rank(name, level, a)
        if a.dtype is DataType.BOOL:
            raise OpError(f"{name}: a scan of a BOOL {'tile' if level == 'block' else 'tensor'}",
                          hint="cast it to INT32 first")
        return result_like(a)
    return infer


def _scan_ref(fn):
    def ref(x):
        return fn(nm.up(x), axis=-1)  # (sequential, as the backends; integers wrap in the dtype)
    return ref


_both("row_cumsum", lambda k: [arg("input", k)], _scan_rule, _scan_ref(np.cumsum), "trowcumsum",
      "inclusive prefix sum along the last axis")
_both("row_cumprod", lambda k: [arg("input", k)], _scan_rule, _scan_ref(np.cumprod), "trowcumprod",
      "inclusive prefix product along the last axis")


def order(x: np.ndarray, descending: bool) -> np.ndarray:
    """The stable sorting permutation of each row (last axis) under the conventions above."""
    x = nm.up(np.asarray(x))
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        key = np.where(nan, 0.0, x.astype(np.float64)) + 0.0  # (+ 0.0: -0.0 ties with 0.0)
    else:
        nan = np.zeros(x.shape, bool)
        key = x.astype(np.int64)
    keys = (-key, ~nan) if descending else (key, nan)  # (lexsort: the last key is the primary one)
    return np.lexsort(keys, axis=-1)


def _topk_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(name, level, args[0])
        _min_rank(name, level, a)
        k = _const(name, args[1], "k")
        largest = _const(name, args[2], "largest")
        n = static_dim(a.shape[-1])
        if n is None:
            raise OpError(f"{name}: the last axis must be static (top-k sorts along it)")
        if not 1 <= k <= n:
            raise OpError(f"{name}: k = {k} is out of range for a last axis of {n} elements (1 <= k <= {n})")
        if largest not in (0, 1):
            raise OpError(f"{name}: largest must be 0 or 1, got {largest}")
        dtype = DataType.INT32 if name.endswith("_idx") else a.dtype
        valid = (*a.valid_shape[:-1], ConstInt(k)) if isinstance(a, TileType) else None
        return _result(a, (*a.shape[:-1], ConstInt(k)), dtype, valid)
    return infer


def _topk_ref(indices: bool):
    def ref(x, k, largest):
        idx = order(x, bool(largest))[..., :int(k)]
        return idx.astype(np.int32) if indices else np.take_along_axis(nm.up(x), idx, axis=-1)
    return ref


_TOPK = lambda k: [arg("input", k), arg("k", "index"), arg("largest", "index")]  # noqa: E731
_both("row_topk", _TOPK, _topk_rule, _topk_ref(False), "trowtopk",
      "the k largest (largest=1) or smallest (0) elements of each row, in order (stable: lower index first)")
_both("row_topk_idx", _TOPK, _topk_rule, _topk_ref(True), "trowtopkidx",
      "INT32 column indices of row_topk's elements")


# ---------------------------------------------------------------------------------------------
# the sort primitives: interleaved (value, index) pairs, descending

def _sort_dtype(name: str, a) -> None:
    if a.dtype not in _SORT_DTYPES:
        raise OpError(f"{name}: sorts FP32 or FP16 values, got {a.dtype.name}",
                      hint="cast to FP32 first (pypto.cast)")


def _sort32_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(name, level, args[0])
        _min_rank(name, level, a)
        _sort_dtype(name, a)
        st = expect_scalar(name, args[1], "start index")
        if not st.dtype.is_int:
            raise OpError(f"{name}: the start index must be an integer, got {st.dtype.name}")
        n = static_dim(a.shape[-1])
        if n is not None and n > _EXACT[a.dtype]:
            raise OpError(f"{name}: {n} indices do not fit exactly in {a.dtype.name} values (at most "
                          f"{_EXACT[a.dtype]})", hint="sort FP32 values")
        if n is None:
            raise OpError(f"{name}: the last axis must be static")
        last = ConstInt(2 * n)
        valid = None
        if isinstance(a, TileType):
            vc = a.valid_shape[-1]
            valid = (*a.valid_shape[:-1], ConstInt(2 * vc.value) if isinstance(vc, ConstInt) else Mul(vc, ConstInt(2),
                                                                                                        vc.type.dtype))
        return _result(a, (*a.shape[:-1], last), a.dtype, valid)
    return infer


def _sort32_ref(x, start):
    x = nm.up(np.asarray(x))
    out = np.empty((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)
    for b in range(0, x.shape[-1], 32):
        blk = x[..., b:b + 32]
        idx = order(blk, True)
        out[..., 2 * b:2 * b + 2 * blk.shape[-1]:2] = np.take_along_axis(blk, idx, axis=-1)
        out[..., 2 * b + 1:2 * b + 2 * blk.shape[-1]:2] = idx + b + int(start)
    return out


_both("sort32", lambda k: [arg("input", k), arg("start", "index")], _sort32_rule, _sort32_ref, "tsort32",
      "sort each block of 32 elements of a row descending into (value, start + index) pairs: last axis doubled")


def _mrgsort_rule(name: str, level: str):
    def infer(args, kw):
        a = _operand(name, level, args[0])
        _min_rank(name, level, a)
        _sort_dtype(name, a)
        m = _const(name, args[1], "mergesize")
        n = static_dim(a.shape[-1])
        if n is not None and n % 2:
            raise OpError(f"{name}: the last axis holds (value, index) pairs; {n} is odd")
        if m < 1:
            raise OpError(f"{name}: mergesize must be positive, got {m}")
        return result_like(a)
    return infer


def _mrgsort_ref(x, mergesize):
    # the row's sorted runs of `mergesize` pairs merged into one (a stable merge of sorted runs is the
    # stable sort of their pairs by value; both backends sort, so unsorted runs agree too)
    x = nm.up(np.asarray(x))
    idx = order(x[..., 0::2], True)
    out = np.empty_like(x)
    out[..., 0::2] = np.take_along_axis(x[..., 0::2], idx, axis=-1)
    out[..., 1::2] = np.take_along_axis(x[..., 1::2], idx, axis=-1)
    return out


_both("mrgsort", lambda k: [arg("input", k), arg("mergesize", "index")], _mrgsort_rule, _mrgsort_ref, "tmrgsort",
      "merge a row's descending runs of mergesize (value, index) pairs into one descending run")
