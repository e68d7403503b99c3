"""Reductions over any dim (`sum amax amin mean prod argmax argmin`) and scans (`cumsum cumprod`).

How a dim `d` of a rank-r tensor is reduced:

- the last dim: the registry's row op (`row_sum`, `row_argmax`, ...) on the tensor as it is;
- dim 0 of a 2-D tensor: the column op (`col_sum`, `col_argmax`, ...);
- any other dim (rank >= 3): a fold over the dim's slices `x[..., j:j+1, ...]` with elementwise ops
  (`add`, `maximum`, `mul`; argmax / argmin keep the running extreme and its index with `where`).
  Every op stays row-local, so dynamic leading dims and ragged row blocks tile as usual; the dim
  must be static (the fold is unrolled while tracing, at most `MAX_FOLD` slices).

argmax / argmin give INT32 indices of the first extreme; NaN counts as the extreme (NumPy).
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ops.registry import tensor_ops as T

from . import ops
from .tensor import Tensor
from .trace import FrontendError, user_span

MAX_FOLD = 256  # slices a non-trailing dim may have (each is a few ops of the kernel)
_ROW = {"sum": T.row_sum, "amax": T.row_max, "amin": T.row_min, "prod": T.row_prod, "argmax": T.row_argmax,
        "argmin": T.row_argmin}
_COL = {"sum": T.col_sum, "amax": T.col_max, "amin": T.col_min, "prod": T.col_prod, "argmax": T.col_argmax,
        "argmin": T.col_argmin}


def axis(x: Any, dim: Any, name: str) -> int:
    """`dim` (an int, or a one-element list) as an index into x's dims; a FrontendError names the op."""
    if not isinstance(x, Tensor):
        raise FrontendError(f"pypto.{name}: expected a pypto.Tensor, got {type(x).__name__}", user_span())
    rank = len(x.shape)
    d = -1 if dim is None else dim
    if isinstance(d, (list, tuple)):
        if len(d) != 1:
            raise FrontendError(f"pypto.{name}: one dim at a time, got {list(d)}", user_span())
        d = d[0]
    if isinstance(d, bool) or not isinstance(d, int):
        raise FrontendError(f"pypto.{name}: dim must be an int, got {d!r}", user_span())
    if not -rank <= d < rank:
        raise FrontendError(f"pypto.{name}: dim {d} out of range for rank {rank}", user_span())
    return d % rank


def _drop(x: Tensor, r: Tensor, d: int, keepdim: bool) -> Tensor:
    if keepdim:
        return r
    dims = list(x.shape)
    del dims[d]
    return ops._emit(T.reshape, [r._value(), ops._tuple(dims or [1])], hint="reshape")  # (dims may be symbolic)


def reduce_dim(x: Any, dim: Any, keepdim: bool, name: str) -> Tensor:
    d = axis(x, dim, name)
    rank = len(x.shape)
    if name in ("argmax", "argmin", "prod") and x.dtype is DataType.BOOL:
        raise FrontendError(f"pypto.{name}: a BOOL tensor; cast it first", user_span())
    if d == rank - 1:
        return _drop(x, ops._emit(_ROW[name], [x._value()], hint=name), d, keepdim)
    if rank == 2 and d == 0:  # [R, C] -> [1, C]
        return _drop(x, ops._emit(_COL[name], [x._value()], hint=name), d, keepdim)
    n = x.shape[d]
    if not isinstance(n, int):
        raise FrontendError(f"pypto.{name}: reducing dim {d} of a rank-{rank} tensor needs it static, got {n}",
                            user_span(), hint="make that dim static, or move it last (pypto.transpose)")
    if n > MAX_FOLD:
        raise FrontendError(f"pypto.{name}: dim {d} has {n} elements; a non-trailing dim is reduced by a fold of "
                            f"at most {MAX_FOLD} slices", user_span(), hint="move the dim last (pypto.transpose)")
    return _drop(x, _fold(x, d, n, name), d, keepdim)


def _slice(x: Tensor, d: int, j: int) -> Tensor:
    shape = list(x.shape)
    shape[d] = 1
    offs = [0] * len(shape)
    offs[d] = j
    return ops.view(x, shape, offs)


def _fold(x: Tensor, d: int, n: int, name: str) -> Tensor:
    acc = _slice(x, d, 0)
    if name in ("argmax", "argmin"):
        return _arg_fold(x, d, n, acc, name == "argmax")
    step = {"sum": ops.add, "amax": ops.maximum, "amin": ops.minimum, "prod": ops.mul}[name]
    for j in range(1, n):
        acc = step(acc, _slice(x, d, j))
    return acc


def _arg_fold(x: Tensor, d: int, n: int, best: Tensor, largest: bool) -> Tensor:
    """The running extreme `best` and its index (held in fp32: exact for any static dim here)."""
    vals = best if x.dtype is DataType.FP32 or not x.dtype.is_float else ops.cast(best, DataType.FP32)
    idx = ops.cast(ops.mul(ops.eq(best, best), 0), DataType.FP32) if x.dtype.is_float else \
        ops.cast(ops.mul(best, 0), DataType.FP32)
    for j in range(1, n):
        v = _slice(x, d, j)
        if x.dtype.is_float and x.dtype is not DataType.FP32:
            v = ops.cast(v, DataType.FP32)
        take = ops.gt(v, vals) if largest else ops.lt(v, vals)  # (strict: the first extreme stays)
        if x.dtype.is_float:  # a NaN takes over unless one is held already: the first NaN wins
            fresh_nan = ops.minimum(ops.ne(v, v), ops.eq(vals, vals))
            take = ops.minimum(ops.maximum(take, fresh_nan), ops.eq(vals, vals))
        idx = ops.where(take if x.dtype.is_float else ops.cast(take, DataType.FP32), float(j), idx)
        vals = ops.where(take, v, vals)
    return ops.cast(idx, DataType.INT32)


def prod(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The product along `dim` (fp16 / bf16 computed in fp32; integers wrap)."""
    return reduce_dim(input, dim, keepdim, "prod")


def argmax(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """INT32 index of the first largest element along `dim` (the first NaN where there is one)."""
    return reduce_dim(input, dim, keepdim, "argmax")


def argmin(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """INT32 index of the first smallest element along `dim` (the first NaN where there is one)."""
    return reduce_dim(input, dim, keepdim, "argmin")


# ---------------------------------------------------------------------------------------------
# scans

def _scan(x: Any, dim: Any, op, name: str) -> Tensor:
    d = axis(x, dim, name)
    rank = len(x.shape)
    if x.dtype is DataType.BOOL:
        raise FrontendError(f"pypto.{name}: a BOOL tensor; cast it to DT_INT32 first", user_span())
    if d == rank - 1:
        if rank == 1:  # a vector scans as one row
            return ops.reshape(ops._emit(op, [ops.reshape(x, [1, x.shape[0]])._value()], hint=name), [x.shape[0]])
        return ops._emit(op, [x._value()], hint=name)
    if rank == 2 and all(isinstance(s, int) for s in x.shape):  # dim 0: along the rows of the transpose
        t = ops.transpose(x, 0, 1)
        return ops.transpose(ops._emit(op, [t._value()], hint=name), 0, 1)
    raise FrontendError(f"pypto.{name}: scanning dim {d} of a rank-{rank} tensor"
                        f"{' with a dynamic shape' if rank == 2 else ''}; scans run along the last dim "
                        "(and dim 0 of a static 2-D tensor)", user_span(),
                        hint="move the dim last first (pypto.transpose)")


def cumsum(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """Inclusive prefix sum along `dim` (fp16 / bf16 accumulate in fp32; integers wrap)."""
    return _scan(input, dim, T.row_cumsum, "cumsum")


def cumprod(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """Inclusive prefix product along `dim`."""
    return _scan(input, dim, T.row_cumprod, "cumprod")


__all__ = ["argmax", "argmin", "axis", "cumprod", "cumsum", "prod", "reduce_dim"]
