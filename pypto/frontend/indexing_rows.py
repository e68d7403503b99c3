"""index_add_ / index_add / index_put_ (reference §1.4 "indexing"): the row-granular scatters.

Along the last dim `index_add_` is a scatter-add inside each row (one registry
`scatter` per tile, see indexing.py). Along dim 0, and for `index_put_`, it is a run-time loop over
the index: each entry is a task that reads its region of the target, combines and writes it back.
Tasks touching the same region run in index order (the runtime orders them by the regions they
read and write), so duplicate indices accumulate.
"""

from __future__ import annotations

from typing import Any

from pypto.ops.registry import tensor_ops as T

from . import ops
from .control import loop
from .indexing import _dim, _fail, _index, _one_row, _rows, _same
from .methods import _move
from .tensor import Tensor


def _storage_copy(x: Tensor) -> Tensor:
    """A new tensor holding x (the out-of-place forms update it in place)."""
    out = ops.create_tensor(list(x.shape), x.dtype)
    ops.assemble(x, [0] * len(x.shape), out)
    return out


def _scaled(v: Tensor, alpha: Any) -> Tensor:
    return v if alpha == 1 else ops.mul(v, alpha)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """`input[..., index[i], ...] += alpha * source[..., i, ...]` along `dim` (in place; returns input)."""
    _index("index_add_", index, 1)
    if not isinstance(source, Tensor) or source.dtype is not input.dtype:
        raise _fail("index_add_", "source must be a tensor of the input's dtype")
    rank = len(input.shape)
    d = _dim("index_add_", input, dim)
    if len(source.shape) != rank or not _same(source.shape[d], index.shape[0]) or not all(
            _same(source.shape[k], input.shape[k]) for k in range(rank) if k != d):
        raise _fail("index_add_", f"source must be shaped like the input with dim {dim} of the index's length; "
                    f"got {source.shape} for input {input.shape} and {index.shape[0]} indices")
    if d == rank - 1 and rank > 1:  # inside each row: one scatter-add per tile
        x, src = _rows(input), _rows(_scaled(source, alpha))
        r = ops._emit(T.scatter, [x._value(), _one_row(index)._value(), src._value()], {"reduce": 1}, hint="index_add")
        return _move(input, r if rank == 2 else ops.reshape(r, list(input.shape)))
    if d != 0:
        raise _fail("index_add_", f"dim {dim} of a rank-{rank} tensor: dim 0 or the last dim")
    for i in loop(0, index.shape[0], name="index_add"):
        row = index[i]
        input[row:row + 1, ...] = ops.add(input[row:row + 1, ...], _scaled(source[i:i + 1, ...], alpha))
    return input


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """`index_add_` on a copy of input."""
    return index_add_(_storage_copy(input), dim, index, source, alpha=alpha)


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:  # noqa: A002
    """`input[indices[0][i], indices[1][i], ...] = values[i]` (`+=` with accumulate), in place. With k
    index tensors on a rank-r input, values[i] is the [input.shape[k:]] block (a number fills)."""
    if not isinstance(indices, (tuple, list)) or not indices:
        raise _fail("index_put_", "indices must be a non-empty tuple of 1-D int32 tensors")
    rank, k = len(input.shape), len(indices)
    if k > rank:
        raise _fail("index_put_", f"{k} index tensors for a rank-{rank} tensor")
    for t in indices:
        _index("index_put_", t, 1)
        if not _same(t.shape[0], indices[0].shape[0]):
            raise _fail("index_put_", f"the index tensors differ in length ({t.shape[0]} and {indices[0].shape[0]})")
    n, rest = indices[0].shape[0], list(input.shape[k:])
    if isinstance(values, Tensor):
        if values.dtype is not input.dtype:
            raise _fail("index_put_", f"values are {values.dtype.name}, the input {input.dtype.name}")
        if list(values.shape) != [n, *rest] and not (len(values.shape) == len(rest) + 1 and all(
                _same(a, b) for a, b in zip(values.shape, [n, *rest]))):
            raise _fail("index_put_", f"values must be shaped [{n}, *{rest}], got {values.shape}")
    for i in loop(0, n, name="index_put"):
        offs = [t[i] for t in indices] + [0] * (rank - k)
        region = [1] * k + rest
        if isinstance(values, Tensor):
            v = ops.reshape(values[i:i + 1, ...], region)
        else:
            v = ops.full(region, values, input.dtype)
        if accumulate:
            v = ops.add(ops.view(input, region, offs), v)
        ops.assemble(v, offs, input)
    return input


__all__ = ["index_add", "index_add_", "index_put_"]
