"""Tensor operators, methods and indexing (reference §1.2), attached to `Tensor` from one table:
`x + y`, `x += y` (in place: the handle now holds the sum), `x @ w`, `x[i:j, :]` (a view),
`x[b]` on an int32 tensor (a scalar read), `out[i:j] = y` (an assemble), `out[:] = y` / `out.move(y)`.
"""

from __future__ import annotations

from typing import Any

from . import ops
from .symbolic import SymbolicScalar, simplify
from .tensor import Tensor
from .trace import FrontendError, current, user_span


def _reflect(fn):
    return lambda self, other: fn(other, self)


def _inplace(fn):
    def method(self: Tensor, other: Any) -> Tensor:
        r = fn(self, other)
        self._set(r._value(), current().depth)
        return self
    return method


for _name, _fn in (("add", ops.add), ("sub", ops.sub), ("mul", ops.mul), ("truediv", ops.div)):
    setattr(Tensor, f"__{_name}__", _fn)
    setattr(Tensor, f"__r{_name}__", _reflect(_fn))
    setattr(Tensor, f"__i{_name}__", _inplace(_fn))
for _dunder in ("lt", "le", "gt", "ge", "eq", "ne"):  # element-wise: a DT_BOOL mask
    setattr(Tensor, f"__{_dunder}__", getattr(ops, _dunder))
Tensor.__hash__ = object.__hash__  # (handles are compared by identity everywhere in the tracer)
Tensor.__neg__ = ops.neg
Tensor.__pos__ = lambda self: self
Tensor.__matmul__ = lambda self, other: ops.matmul(self, other)

# method forms
for _name in ("add", "sub", "mul", "div", "maximum", "minimum", "exp", "log", "sqrt", "rsqrt", "reciprocal",
              "relu", "abs", "neg", "sigmoid", "softmax", "amax", "amin", "sum", "mean", "matmul", "reshape",
              "transpose", "unsqueeze", "squeeze", "view", "clone", "cast", "clip", "softplus", "tanh", "sin", "cos",
              "exp2", "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc", "round"):
    setattr(Tensor, _name, getattr(ops, _name))
Tensor.assemble = lambda self, offsets, dst: ops.assemble(self, offsets, dst)


def _move(self: Tensor, other: Tensor) -> Tensor:
    """`self` becomes `other`'s value. A parameter keeps its storage: the value is written into it
    (a whole-target assemble, which a kernel stores straight into the caller's array); any other
    handle is rebound."""
    if not isinstance(other, Tensor):
        raise FrontendError(f"move: expected a pypto.Tensor, got {type(other).__name__}", user_span())
    if self._param:
        if other._value().type != self._value().type:
            raise FrontendError(f"move: parameter {self.name} is {self._value().type}, the value "
                                f"{other._value().type}", user_span())
        ops.assemble(other, [0] * len(self.shape), self)
    else:
        self._set(other._value(), current().depth)
    return self


Tensor.move = _move


# ---------------------------------------------------------------------------------------------
# indexing

def _key(t: Tensor, key: Any) -> list[Any]:
    """The key as one entry per dim (slices and ints), `...` expanded, missing dims full."""
    items = list(key) if isinstance(key, tuple) else [key]
    rank = len(t.shape)
    dots = [i for i, k in enumerate(items) if k is Ellipsis]
    if len(dots) > 1:
        raise FrontendError("an index may hold one `...`", user_span())
    if dots:
        i = dots[0]
        items[i:i + 1] = [slice(None)] * (rank - len(items) + 1)
    if len(items) > rank:
        raise FrontendError(f"{len(items)} indices for a rank-{rank} tensor", user_span())
    for k in items:
        if isinstance(k, Tensor):
            raise FrontendError("indexing with a tensor (gather) is not supported yet; use pypto.view", user_span())
        if not isinstance(k, (slice, int, SymbolicScalar)) or isinstance(k, bool):
            raise FrontendError(f"a tensor index entry must be a slice, an int or a SymbolicScalar, got {k!r}",
                                user_span())
    return items + [slice(None)] * (rank - len(items))


def _whole(k: Any) -> bool:
    return isinstance(k, slice) and k.start is None and k.stop is None and k.step is None


def _norm(i: Any, size: Any) -> Any:
    if isinstance(i, int) and i < 0:
        if not isinstance(size, int):
            raise FrontendError("a negative index on a dynamic dim", user_span())
        return size + i
    return i


def _region(t: Tensor, items: list[Any], fill: Tensor | None = None) -> tuple[list, list, list[int]]:
    """(offsets, extents, dims indexed by an int) of a key; open slices take `fill`'s size."""
    offs, sizes, dropped = [], [], []
    for d, (k, size) in enumerate(zip(items, t.shape)):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise FrontendError("strided slices are not supported (step must be 1)", user_span())
            start = 0 if k.start is None else _norm(k.start, size)
            if k.stop is None:
                stop = start + fill.shape[d - len(dropped)] if fill is not None and len(fill.shape) == len(
                    t.shape) - len(dropped) else size
            else:
                stop = _norm(k.stop, size)
            offs.append(simplify(start))
            sizes.append(simplify(stop - start))
        else:
            offs.append(simplify(_norm(k, size)))
            sizes.append(1)
            dropped.append(d)
    return offs, sizes, dropped


def _gathers(key: Any) -> bool:
    """`t[dim:index_tensor]`: the reference's spelling of a gather (read) / scatter (write) along dim."""
    return isinstance(key, slice) and isinstance(key.stop, Tensor) and isinstance(key.start, int) and key.step is None


def _getitem(self: Tensor, key: Any, valid_shape: Any = None) -> Any:
    if _gathers(key):
        from .indexing import gather

        return gather(self, key.start, key.stop)
    items = _key(self, key)
    if all(not isinstance(k, slice) for k in items):  # a scalar read
        return ops.read_scalar(self, [simplify(_norm(k, s)) for k, s in zip(items, self.shape)])
    offs, sizes, dropped = _region(self, items)
    if all(_whole(k) for k in items) and valid_shape is None:
        return self
    v = ops.view(self, sizes, offs, valid_shape=valid_shape)
    if dropped:
        v = ops.reshape(v, [s for d, s in enumerate(sizes) if d not in dropped] or [1])
    return v


def _setitem(self: Tensor, key: Any, value: Any) -> None:
    if _gathers(key):
        from .indexing import scatter_

        scatter_(self, key.start, key.stop, value)
        return
    items = _key(self, key)
    if all(not isinstance(k, slice) for k in items):
        ops.write_scalar(self, [simplify(_norm(k, s)) for k, s in zip(items, self.shape)], value)
        return
    if not isinstance(value, Tensor):
        value = ops.full([s for s in self.shape], value, self.dtype) if all(_whole(k) for k in items) else None
        if value is None:
            raise FrontendError("assigning a scalar to a part of a tensor is not supported; assign a tensor",
                                user_span())
    if all(_whole(k) for k in items):
        _move(self, value)
        return
    offs, sizes, dropped = _region(self, items, fill=value)
    if dropped:
        value = ops.reshape(value, sizes)
    ops.assemble(value, offs, self)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem

__all__: list[str] = []
