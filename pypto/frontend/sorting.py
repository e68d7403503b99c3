"""Sorting along the last dim: `topk`, `argsort` and the primitives `sort32`, `mrgsort`
(reference §1.4 comparison.py), each one registry op (pypto/ops/ordering.py) on the tensor.

Order: stable (ties keep the lower index first), NaN larger than every number, -0.0 == 0.0.
`sort32` / `mrgsort` rows hold interleaved (value, index) pairs sorted descending; the index is
stored as a number of the value dtype (FP32 / FP16), so `pypto.cast(pairs[..., 1::2]...)` reads it.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstInt
from pypto.ops.registry import tensor_ops as T

from . import ops
from .reductions import axis
from .symbolic import SymbolicScalar, as_expr
from .tensor import Tensor
from .trace import FrontendError, user_span


def _last(x: Any, dim: Any, name: str) -> int:
    d = axis(x, dim, name)
    if d != len(x.shape) - 1:
        raise FrontendError(f"pypto.{name}: sorts along the last dim only, got dim {dim} of a rank-{len(x.shape)} "
                            "tensor", user_span(), hint="move the dim last first (pypto.transpose)")
    n = x.shape[-1]
    if not isinstance(n, int):
        raise FrontendError(f"pypto.{name}: the last dim must be static to sort along it, got {n}", user_span())
    if x.dtype is DataType.BOOL:
        raise FrontendError(f"pypto.{name}: a BOOL tensor; cast it to DT_INT32 first", user_span())
    return n


def _rows(x: Tensor, op, args: list, name: str) -> Tensor:
    """`op` along the last dim (a vector as one row)."""
    if len(x.shape) == 1:
        r = ops._emit(op, [ops.reshape(x, [1, x.shape[0]])._value(), *args], hint=name)
        return ops.reshape(r, [r.shape[-1]])
    return ops._emit(op, [x._value(), *args], hint=name)


def _index(v: int) -> ConstInt:
    return ConstInt(int(v))


def topk(input: Tensor, k: int, dim: Any = None, largest: bool = True, algo: Any = None  # noqa: A002
         ) -> tuple[Tensor, Tensor]:
    """(values, INT32 indices) of the k largest (`largest`) or smallest elements along the last dim,
    in order; ties go to the lower index."""
    n = _last(input, dim, "topk")
    if isinstance(k, bool) or not isinstance(k, int):
        raise FrontendError(f"pypto.topk: k must be an int, got {k!r}", user_span())
    if not 1 <= k <= n:
        raise FrontendError(f"pypto.topk: k = {k} is out of range for a dim of {n} elements (1 <= k <= {n})",
                            user_span())
    args = [_index(k), _index(1 if largest else 0)]
    return _rows(input, T.row_topk, args, "topk"), _rows(input, T.row_topk_idx, args, "topk_idx")


def argsort(input: Tensor, dim: Any = None, descending: bool = False) -> Tensor:  # noqa: A002
    """INT32 indices that sort the last dim (stable: equal elements keep their order)."""
    n = _last(input, dim, "argsort")
    return _rows(input, T.row_topk_idx, [_index(n), _index(1 if descending else 0)], "argsort")


def _sort_dtype(x: Tensor, name: str) -> None:
    if x.dtype not in (DataType.FP32, DataType.FP16):
        raise FrontendError(f"pypto.{name}: sorts DT_FP32 or DT_FP16 values, got {x.dtype.name}", user_span(),
                            hint="cast to DT_FP32 first (pypto.cast)")


def sort32(input: Tensor, index: Any = None) -> Tensor:  # noqa: A002
    """Each block of 32 elements of the last dim sorted descending into (value, index) pairs (the last
    dim doubles); indices count from `index` (default 0; an int or a SymbolicScalar)."""
    _last(input, -1, "sort32")
    _sort_dtype(input, "sort32")
    start = index if index is not None else 0
    if isinstance(start, SymbolicScalar):
        s = as_expr(start.expr)
    elif isinstance(start, int) and not isinstance(start, bool):
        s = _index(start)
    else:
        raise FrontendError(f"pypto.sort32: index must be an int or a SymbolicScalar, got {start!r}", user_span())
    return _rows(input, T.sort32, [s], "sort32")


def mrgsort(input: Tensor, mergesize: int) -> Tensor:  # noqa: A002
    """Merge the descending runs of `mergesize` (value, index) pairs of each row (sort32's output, or
    an earlier mrgsort's) into one descending run."""
    n = _last(input, -1, "mrgsort")
    _sort_dtype(input, "mrgsort")
    if isinstance(mergesize, bool) or not isinstance(mergesize, int) or mergesize < 1:
        raise FrontendError(f"pypto.mrgsort: mergesize must be a positive int, got {mergesize!r}", user_span())
    if n % 2:
        raise FrontendError(f"pypto.mrgsort: the last dim holds (value, index) pairs; {n} is odd", user_span())
    return _rows(input, T.mrgsort, [_index(mergesize)], "mrgsort")


__all__ = ["argsort", "mrgsort", "sort32", "topk"]
