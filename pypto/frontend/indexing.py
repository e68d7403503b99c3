"""Row gathers and scatters of the tensor level (reference §1.4 "indexing"), built from what the
tracer already has: a run-time loop over the index tensor, a scalar read of each index, and a
region read or write of that row. Each row is a task of its own, so these suit the model
operators' uses (embedding lookups, KV-cache updates of a few rows), not bulk data movement.

    pypto.index_select(x, 0, idx)            # out[i, :] = x[idx[i], :]
    pypto.scatter_update(cache, -2, idx, kv) # cache[idx[i], :] = kv[i, :]   (in place)
"""

from __future__ import annotations

from .control import loop
from .ops import create_tensor
from .symbolic import simplify
from .tensor import Tensor
from .trace import FrontendError, user_span


def _rows(what: str, x: Tensor, dim: int, index: Tensor) -> int:
    rank = len(x.shape)
    if not isinstance(index, Tensor) or len(index.shape) != 1:
        raise FrontendError(f"pypto.{what}: the index must be a 1-D int32 tensor", user_span())
    if index.dtype.name not in ("INT32", "INT64"):
        raise FrontendError(f"pypto.{what}: the index must hold int32 values, got {index.dtype.name}", user_span())
    if dim % rank != rank - 2 and not (rank >= 1 and dim % rank == 0):
        raise FrontendError(f"pypto.{what}: rows only (dim 0, or -2 of a 2-D tensor), got dim {dim}", user_span())
    return index.shape[0]


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """`out[i, ...] = input[index[i], ...]` along dim 0 (a 1-D int32 index)."""
    n = _rows("index_select", input, dim, index)
    out = create_tensor([n, *input.shape[1:]], input.dtype)
    for i in loop(0, n, name="index_select"):
        row = index[i]
        out[i:i + 1, ...] = input[row:row + 1, ...]
    return out


def scatter_update(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """`input[index[i], ...] = src[i, ...]` along dim 0 (in place; returns `input`)."""
    n = _rows("scatter_update", input, dim, index)
    if isinstance(simplify(src.shape[0]), int) and isinstance(n, int) and src.shape[0] != n:
        raise FrontendError(f"pypto.scatter_update: src has {src.shape[0]} rows, the index {n}", user_span())
    for i in loop(0, n, name="scatter_update"):
        row = index[i]
        input[row:row + 1, ...] = src[i:i + 1, ...]
    return input


__all__ = ["index_select", "scatter_update"]
