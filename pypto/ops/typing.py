"""Helpers shared by the type rules: operand checks, broadcasting, promotion, result types."""

from __future__ import annotations

from pypto.ir.dtype import DataType, promote
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, Expr, MakeTuple, scalar_type
from pypto.ir.op import OpError
from pypto.ir.structural import structural_equal
from pypto.ir.types import ScalarType, ShapedType, TensorType, TileType, TileView, TupleType, Type, _as_shape

__all__ = [
    "OpError", "broadcast_result", "broadcast_shapes", "dim_eq", "dims", "expect_scalar", "expect_shaped",
    "expect_tensor", "expect_tile", "kind_of", "promote", "result_like", "scalar_type", "static_dim", "static_dims",
    "tile_result",
]


def kind_of(t: Type) -> str:
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, TileType):
        return "tile"
    if isinstance(t, ScalarType):
        return "scalar"
    if isinstance(t, TupleType):
        return "tuple"
    return "unknown"


def _describe(t: Type) -> str:
    from pypto.ir.printer import type_str

    return type_str(t)


def expect_tensor(op: str, e: Expr, what: str = "operand") -> TensorType:
    t = e.type
    if not isinstance(t, TensorType):
        raise OpError(f"{op}: {what} must be a Tensor, got {_describe(t)}")
    return t


def expect_tile(op: str, e: Expr, what: str = "operand") -> TileType:
    t = e.type
    if not isinstance(t, TileType):
        raise OpError(f"{op}: {what} must be a Tile, got {_describe(t)}",
                      hint="load tensors into tiles with pl.load(...) first" if isinstance(t, TensorType) else None)
    return t


def expect_shaped(op: str, e: Expr, what: str = "operand") -> ShapedType:
    t = e.type
    if not isinstance(t, (TensorType, TileType)):
        raise OpError(f"{op}: {what} must be a Tensor or a Tile, got {_describe(t)}")
    return t


def expect_scalar(op: str, e: Expr, what: str = "operand") -> ScalarType:
    t = e.type
    if not isinstance(t, ScalarType):
        raise OpError(f"{op}: {what} must be a scalar, got {_describe(t)}")
    return t


def dims(op: str, e: Expr, what: str) -> tuple[Expr, ...]:
    """The elements of a shape/offset operand (a MakeTuple of scalar expressions)."""
    if isinstance(e, MakeTuple):
        for d in e.elements:
            t = d.type
            if not isinstance(t, ScalarType) or not (t.dtype.is_int or t.dtype is DataType.BOOL):
                raise OpError(f"{op}: {what} entries must be integers, got {_describe(t)}")
        return e.elements
    raise OpError(f"{op}: {what} must be a list of integers")


def static_dim(d: Expr) -> int | None:
    return d.value if isinstance(d, ConstInt) else None


def static_dims(op: str, e: Expr, what: str) -> tuple[int, ...]:
    out = []
    for d in dims(op, e, what):
        v = d.value if isinstance(d, ConstInt) else None
        if v is None:
            raise OpError(f"{op}: {what} must be compile-time constants (tile shapes are static)",
                          hint="use valid_shapes=[...] for a dynamic extent inside a static tile")
        out.append(v)
    return tuple(out)


def dim_eq(a: Expr, b: Expr) -> bool | None:
    """True/False when known, None when it can only be decided at run time."""
    if a is b:
        return True
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return a.value == b.value
    if structural_equal(a, b):
        return True
    return None


def broadcast_shapes(op: str, a: tuple[Expr, ...], b: tuple[Expr, ...]) -> tuple[Expr, ...]:
    """NumPy broadcasting, right-aligned. Dynamic dims must match exactly (or be 1 on one side)."""
    out: list[Expr] = []
    n = max(len(a), len(b))
    pa = (ConstInt(1),) * (n - len(a)) + tuple(a)
    pb = (ConstInt(1),) * (n - len(b)) + tuple(b)
    for x, y in zip(pa, pb):
        if static_dim(x) == 1:
            out.append(y)
        elif static_dim(y) == 1:
            out.append(x)
        elif dim_eq(x, y) is False:
            raise OpError(f"{op}: shapes {_fmt(a)} and {_fmt(b)} do not broadcast")
        else:
            out.append(x)
    return tuple(out)


def _fmt(shape: tuple[Expr, ...]) -> str:
    from pypto.ir.printer import expr_str

    return "[" + ", ".join(expr_str(d) for d in shape) + "]"


def tile_result(shape, dtype: DataType, like: TileType | None = None,
                memory_space: MemorySpace | None = MemorySpace.Vec, valid_shape=None) -> TileType:
    """A result tile. The valid region follows `valid_shape`, else `like`'s when shapes agree."""
    shape = _as_shape(shape)
    valid = None
    if valid_shape is not None:
        valid = _as_shape(valid_shape)
    elif like is not None and like.tile_view is not None and like.tile_view.valid_shape is not None \
            and len(like.shape) == len(shape) and all(dim_eq(x, y) for x, y in zip(like.shape, shape)):
        valid = like.tile_view.valid_shape
    if valid is None or all(dim_eq(x, y) for x, y in zip(valid, shape)):
        return TileType(shape, dtype, memory_space, None, None)
    return TileType(shape, dtype, memory_space, None, TileView(valid_shape=valid))


def broadcast_result(operands: list[ShapedType], shape, dtype: DataType) -> Type:
    """The result of a broadcasting op: a value of the first operand's kind with `shape` and `dtype`.

    For tiles, the valid region along each axis is that of the first operand not broadcast along it
    (a [R, 1] or [1, C] operand's valid region says nothing about the other axis), so
    `sub(row_vector, t)` computes over `t`'s valid region, not over the whole tile.
    """
    a = operands[0]
    if not isinstance(a, TileType):
        return result_like(a, shape, dtype)
    shape = tuple(shape)
    n = len(shape)
    out = [static_dim(d) for d in shape]
    for t in operands:
        padded = [1] * (n - t.rank) + [static_dim(d) for d in t.shape]
        if None in padded or None in out or padded == out:
            continue
        if all(p == 1 for p in padded[:-1]) or (padded[-1] == 1 and padded[:-1] == out[:-1]):
            continue  # a row [1, C], a column [R, 1] or a scalar of the tile seen as rows x last axis
        raise OpError(f"broadcasting {_fmt(t.shape)} to {_fmt(shape)}: tiles broadcast a row, a column or a "
                      "scalar of their 2-D (rows x last axis) form, not along a leading axis",
                      hint="expand the operand to the full shape first (e.g. in the orchestration), or "
                           "reshape both to 2-D")
    valid = []
    for ax, d in enumerate(shape):
        pick = d
        for t in operands:
            k = ax - (n - t.rank)
            if k < 0 or (static_dim(t.shape[k]) == 1 and static_dim(d) != 1):
                continue  # this operand is broadcast along `ax`
            pick = t.valid_shape[k]
            break
        valid.append(pick)
    return tile_result(shape, dtype, valid_shape=valid)


def result_like(t: ShapedType, shape=None, dtype: DataType | None = None) -> Type:
    """A value of the same kind as `t` (Tensor or Tile) with another shape and/or dtype."""
    shape = t.shape if shape is None else tuple(shape)
    dtype = t.dtype if dtype is None else dtype
    if isinstance(t, TensorType):
        return TensorType(shape, dtype, t.layout)
    assert isinstance(t, TileType)
    return tile_result(shape, dtype, like=t)
