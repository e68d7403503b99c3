"""Gathers and scatters of the tensor level (reference §1.4 "indexing").

Two costs, by the granularity of the index:

* Inside a row (`dim=-1` of a 2-D tensor; other ranks reshape to rows, dim 0 of a 2-D tensor
  transposes): the registry's `gather` / `scatter` / `gather_mask` ops, computed per tile of rows
  like an elementwise op — a row-tiled kernel costs one pass over the data and the index.
  An index outside the row reads 0 (gather) or is skipped (scatter); no memory outside the row
  is touched.
* Whole rows (`index_select` / `scatter_update` / `index_add_` along dim 0, `index_put_`): a
  run-time loop over the index, one task per index entry reading its row (a scalar read of the
  index, then a region read or write). Suits lookups and updates of a few rows, not bulk data.
  Tasks writing the same row run in index order (the runtime orders tasks by the regions they
  touch), so duplicate indices accumulate in `index_add_` / `index_put_(accumulate=True)`. An
  index outside the tensor fails the run with the kernel's bounds error before any access.

    pypto.gather(x, -1, idx)                  # out[i, k] = x[i, idx[i, k]]
    pypto.scatter_(x, -1, idx, src, reduce="add")
    pypto.index_select(x, 0, ids)             # out[i, :] = x[ids[i], :]
    pypto.scatter_update(cache, -2, idx, kv)  # cache[idx[i], :] = kv[i, :]   (in place)
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ops.registry import tensor_ops as T

from . import ops
from .control import loop
from .methods import _move
from .symbolic import simplify
from .tensor import Tensor
from .trace import FrontendError, user_span

_REDUCE = {None: 0, "none": 0, "add": 1, "multiply": 2, "mul": 2}
_PATTERNS = {1: 2, 2: 2, 3: 4, 4: 4, 5: 4, 6: 4, 7: 1}  # gathermask pattern -> one kept column of each n


def _fail(what: str, msg: str, hint: str | None = None) -> FrontendError:
    return FrontendError(f"pypto.{what}: {msg}", user_span(), hint=hint)


def _index(what: str, index: Any, rank: int | None = None) -> Tensor:
    if not isinstance(index, Tensor):
        raise _fail(what, f"the index must be a pypto.Tensor of int32, got {type(index).__name__}")
    if index.dtype is not DataType.INT32:
        raise _fail(what, f"the index must hold int32 values, got {index.dtype.name}",
                    hint="pass an int32 tensor (or pypto.cast(index, pypto.DT_INT32))")
    if rank is not None and len(index.shape) != rank:
        raise _fail(what, f"the index must have rank {rank}, got rank {len(index.shape)}")
    return index


def _dim(what: str, x: Tensor, dim: int) -> int:
    rank = len(x.shape)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise _fail(what, f"dim {dim} out of range for a rank-{rank} tensor")
    return dim % rank


def _same(a: Any, b: Any) -> bool:
    return simplify(a - b) == 0 if not (isinstance(a, int) and isinstance(b, int)) else a == b


def _fit(what: str, x: Tensor, shape: list[Any], dims: range, name: str) -> Tensor:
    """`x` cut to `shape` along `dims` (torch lets the index be smaller there), checked."""
    for d in dims:
        if _same(x.shape[d], shape[d]):
            continue
        if isinstance(x.shape[d], int) and isinstance(shape[d], int) and shape[d] < x.shape[d]:
            v = ops.view(x, [shape[k] if k in dims else x.shape[k] for k in range(len(shape))])
            return v if len(shape) == 2 else ops.clone(v)  # (a strided window, copied to reshape into rows)
        raise _fail(what, f"the index's dim {d} ({shape[d]}) exceeds {name}'s ({x.shape[d]})")
    return x


def _rows(x: Tensor) -> Tensor:
    return x if len(x.shape) == 2 else ops.reshape(x, [-1, x.shape[-1]])


def _in_rows(what: str, x: Tensor, dim: int, index: Tensor, fn, out_shape: list[Any]) -> Tensor:
    """fn(x2, index2) on 2-D row forms, `dim` moved to the last axis, the result shaped `out_shape`."""
    rank = len(x.shape)
    d = _dim(what, x, dim)
    if len(index.shape) != rank:
        raise _fail(what, f"the index must have the input's rank {rank}, got rank {len(index.shape)}")
    if rank == 2 and d == 0:  # along columns: transpose both, work in rows, transpose back
        return ops.transpose(fn(ops.transpose(x, 0, 1), ops.transpose(index, 0, 1)), 0, 1)
    if d != rank - 1:
        raise _fail(what, f"dim {dim} of a rank-{rank} tensor: the last dim, or dim 0 of a 2-D tensor",
                    hint="pypto.transpose the axis to the end first")
    r = fn(_rows(x), _rows(index))
    return r if rank == 2 else ops.reshape(r, out_shape)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """torch.gather: `out[..., k] = input[..., index[..., k]]` along `dim`; out has the index's shape."""
    _index("gather", index)
    x = input
    if len(input.shape) == len(index.shape) and _dim("gather", input, dim) == len(input.shape) - 1:
        x = _fit("gather", input, list(index.shape), range(len(index.shape) - 1), "the input")
    return _in_rows("gather", x, dim, index, lambda a, i: ops._emit(T.gather, [a._value(), i._value()], hint="gather"),
                    list(index.shape))


def _scatter(what: str, input: Tensor, dim: int, index: Tensor, src: Any, reduce: Any) -> Tensor:  # noqa: A002
    _index(what, index)
    if reduce not in _REDUCE:
        raise _fail(what, f"reduce must be None, 'add' or 'multiply', got {reduce!r}")
    if not isinstance(src, Tensor):
        pass  # a number: one [1, k] row of it serves every row (made below)
    elif src.dtype is not input.dtype:
        raise _fail(what, f"src is {src.dtype.name}, the input {input.dtype.name}")
    elif len(src.shape) != len(index.shape):
        raise _fail(what, f"src must have the index's rank {len(index.shape)}, got rank {len(src.shape)}")
    else:
        src = _fit(what, src, list(index.shape), range(len(index.shape)), "src")
    if len(input.shape) == len(index.shape):
        for d in range(len(index.shape) - 1):
            if d != _dim(what, input, dim) and not _same(input.shape[d], index.shape[d]):
                raise _fail(what, f"the index's dim {d} ({index.shape[d]}) must equal the input's ({input.shape[d]})")
    mode = _REDUCE[reduce]

    def rows(x2: Tensor, i2: Tensor) -> Tensor:
        if not isinstance(src, Tensor):
            s2 = ops.full([1, i2.shape[-1]], src, input.dtype)
        elif len(input.shape) == 2 and _dim(what, input, dim) == 0:
            s2 = ops.transpose(src, 0, 1)
        else:
            s2 = _rows(src)
        return ops._emit(T.scatter, [x2._value(), i2._value(), s2._value()], {"reduce": mode}, hint="scatter")
    return _in_rows(what, input, dim, index, rows, list(input.shape))


def scatter(input: Tensor, dim: int, index: Tensor, src: Any, *, reduce: Any = None) -> Tensor:  # noqa: A002
    """torch.scatter (out of place): `out[..., index[..., k]] = src[..., k]` along `dim` (`src` a tensor
    or a number); `reduce="add"` / `"multiply"` combine duplicates, otherwise the last one (largest k) wins."""
    return _scatter("scatter", input, dim, index, src, reduce)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any, *, reduce: Any = None) -> Tensor:  # noqa: A002
    """`scatter` in place: `input` holds the result (returned)."""
    return _move(input, _scatter("scatter_", input, dim, index, src, reduce))


def gathermask(input: Tensor, pattern_mode: int) -> Tensor:  # noqa: A002
    """The columns of a fixed pattern of the last dim: 1 even, 2 odd, 3..6 column 0..3 of each 4, 7 all."""
    if pattern_mode not in _PATTERNS:
        raise _fail("gathermask", f"pattern_mode must be 1..7, got {pattern_mode!r}")
    n, last = _PATTERNS[pattern_mode], input.shape[-1]
    if not isinstance(last, int) or last % n:
        raise _fail("gathermask", f"pattern {pattern_mode} keeps one of each {n} columns: the last dim ({last}) must "
                    f"be a static multiple of {n}")
    x = ops.reshape(input, [1, last]) if len(input.shape) == 1 else _rows(input)
    r = ops._emit(T.gather_mask, [x._value()], {"mask_pattern": pattern_mode}, hint="gathermask")
    return r if len(input.shape) == 2 else ops.reshape(r, [*input.shape[:-1], last // n])


def _one_row(index: Tensor) -> Tensor:
    """A 1-D index as a [1, k] index, which the registry's gather / scatter apply to every row."""
    return ops.reshape(index, [1, index.shape[0]])


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """`out[i, ...] = input[index[i], ...]` along dim 0 (one task per index entry), or
    `out[..., j] = input[..., index[j]]` along the last dim (a gather in each row)."""
    _index("index_select", index, 1)
    d = _dim("index_select", input, dim)
    if d == len(input.shape) - 1 and d > 0:
        x = _rows(input)
        r = ops._emit(T.gather, [x._value(), _one_row(index)._value()], hint="index_select")
        return r if len(input.shape) == 2 else ops.reshape(r, [*input.shape[:-1], index.shape[0]])
    if d != 0:
        raise _fail("index_select", f"dim {dim}: rows (dim 0) or the last dim")
    n = index.shape[0]
    out = ops.create_tensor([n, *input.shape[1:]], input.dtype)
    for i in loop(0, n, name="index_select"):
        row = index[i]
        out[i:i + 1, ...] = input[row:row + 1, ...]
    return out


def scatter_update(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """`input[index[i], ...] = src[i, ...]` along dim 0 (in place; returns `input`)."""
    _index("scatter_update", index, 1)
    rank = len(input.shape)
    if dim % rank != rank - 2 and dim % rank != 0:
        raise _fail("scatter_update", f"rows only (dim 0, or -2 of a 2-D tensor), got dim {dim}")
    n = index.shape[0]
    if isinstance(simplify(src.shape[0]), int) and isinstance(n, int) and src.shape[0] != n:
        raise _fail("scatter_update", f"src has {src.shape[0]} rows, the index {n}")
    for i in loop(0, n, name="scatter_update"):
        row = index[i]
        input[row:row + 1, ...] = src[i:i + 1, ...]
    return input


from .indexing_rows import index_add, index_add_, index_put_  # noqa: E402  (they build on the helpers above)

for _name in ("gather", "gathermask", "index_add", "index_add_", "index_put_", "index_select", "scatter", "scatter_",
              "scatter_update"):  # method forms (reference §1.2): x.gather(dim, index), ...
    setattr(Tensor, _name, globals()[_name])

__all__ = ["gather", "gathermask", "index_add", "index_add_", "index_put_", "index_select", "scatter", "scatter_",
           "scatter_update"]
