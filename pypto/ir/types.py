"""IR types. Types have value semantics: two types are `==` when their fields are.

Shape dimensions are expressions: `ConstInt` for static sizes (compared by value), `DynVar` or
other scalar expressions for dynamic ones (compared by identity; `structural_equal` maps them).
Plain Python ints given to a constructor are turned into `ConstInt(v, INDEX)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pypto.errors import InvalidType

from .dtype import DataType
from .enums import MemorySpace, PadValue, TensorLayout, TileLayout
from .node import Node

if TYPE_CHECKING:
    from .expr import Expr, MemRef


_EXPR_CLASSES: tuple[type, type] | None = None  # (Expr, ConstInt); expr.py imports this module


def _expr_classes() -> tuple[type, type]:
    global _EXPR_CLASSES
    if _EXPR_CLASSES is None:
        from .expr import ConstInt, Expr

        _EXPR_CLASSES = (Expr, ConstInt)
    return _EXPR_CLASSES


def _as_dim(d) -> Expr:
    expr_cls, const_int = _EXPR_CLASSES or _expr_classes()
    if isinstance(d, expr_cls):
        return d
    if isinstance(d, bool) or not isinstance(d, int):
        raise InvalidType(f"shape dimension must be an int or a scalar expression, got {d!r}")
    return const_int(d, DataType.INDEX)


def _as_shape(shape) -> tuple:
    expr_cls = (_EXPR_CLASSES or _expr_classes())[0]
    dims = shape if type(shape) is tuple else tuple(shape)
    for d in dims:
        if not isinstance(d, expr_cls):
            return tuple(_as_dim(d) for d in dims)
    return dims


@dataclass(frozen=True, slots=True)
class Type(Node):
    pass


@dataclass(frozen=True, slots=True)
class UnknownType(Type):
    pass


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    dtype: DataType


@dataclass(frozen=True, slots=True)
class MemRefType(Type):
    pass


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    types: tuple[Type, ...]

    def __post_init__(self):
        object.__setattr__(self, "types", tuple(self.types))


@dataclass(frozen=True, slots=True)
class ShapedType(Type):
    """Common part of tensors and tiles: a shape of scalar expressions and an element type."""

    shape: tuple[Expr, ...]
    dtype: DataType

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as ints, or None if any dimension is dynamic."""
        const_int = (_EXPR_CLASSES or _expr_classes())[1]
        out = []
        for d in self.shape:
            if not isinstance(d, const_int):
                return None
            out.append(d.value)
        return tuple(out)

    @property
    def is_static(self) -> bool:
        return self.static_shape() is not None

    def num_elements(self) -> int | None:
        s = self.static_shape()
        if s is None:
            return None
        n = 1
        for d in s:
            n *= d
        return n

    def nbytes(self) -> int | None:
        """Bytes as stored (`dtype.itemsize` per element), or None if a dimension is dynamic."""
        n = self.num_elements()
        return None if n is None else n * self.dtype.itemsize


@dataclass(frozen=True, slots=True)
class TensorType(ShapedType):
    """A DDR tensor. `memref` is attached by InitMemRef (always in DDR)."""

    layout: TensorLayout = TensorLayout.ND
    memref: MemRef | None = None

    def __post_init__(self):
        object.__setattr__(self, "shape", _as_shape(self.shape))


@dataclass(frozen=True, slots=True)
class TileView(Node):
    """How a tile's buffer is viewed: the valid region and the fractal box layout."""

    valid_shape: tuple[Expr, ...] | None = None
    blayout: TileLayout = TileLayout.row_major
    slayout: TileLayout = TileLayout.none_box
    fractal: int = 512
    pad: PadValue = PadValue.null

    def __post_init__(self):
        if self.valid_shape is not None:
            object.__setattr__(self, "valid_shape", _as_shape(self.valid_shape))


@dataclass(frozen=True, slots=True)
class TileType(ShapedType):
    """An on-chip tile. `memory_space` None means not yet inferred (Vec by default)."""

    memory_space: MemorySpace | None = None
    memref: MemRef | None = None
    tile_view: TileView | None = field(default=None)

    def __post_init__(self):
        object.__setattr__(self, "shape", _as_shape(self.shape))

    @property
    def space(self) -> MemorySpace:
        return self.memory_space if self.memory_space is not None else MemorySpace.Vec

    @property
    def valid_shape(self) -> tuple[Expr, ...]:
        """The valid region (the full shape unless a TileView says otherwise)."""
        if self.tile_view is not None and self.tile_view.valid_shape is not None:
            return self.tile_view.valid_shape
        return self.shape


def _constant_dims(dims: tuple | None) -> bool:
    if dims is not None:
        const_int = (_EXPR_CLASSES or _expr_classes())[1]
        for d in dims:
            if not isinstance(d, const_int):
                return False
    return True


def constant_dims(t: Type) -> bool:
    """Whether every dimension `t` mentions (shape, valid shape, tuple elements' dimensions) is an
    integer constant: walking such a type finds no expression but constants, except its memref."""
    if isinstance(t, ShapedType):
        if not _constant_dims(t.shape):
            return False
        view = t.tile_view if isinstance(t, TileType) else None
        return view is None or _constant_dims(view.valid_shape)
    if isinstance(t, TupleType):
        return all(constant_dims(x) for x in t.types)
    return isinstance(t, (ScalarType, MemRefType, UnknownType))


def is_constant_type(t: Type) -> bool:
    """Whether `t` mentions no variable and no expression but integer constants (no dynamic
    dimension, no memref): a walk over it can find nothing to rename, collect or rewrite."""
    if isinstance(t, ShapedType):
        return t.memref is None and constant_dims(t)
    if isinstance(t, TupleType):
        return all(is_constant_type(x) for x in t.types)
    return isinstance(t, (ScalarType, MemRefType, UnknownType))


def is_tensor(t: Type) -> bool:
    return isinstance(t, TensorType)


def is_tile(t: Type) -> bool:
    return isinstance(t, TileType)


def is_scalar(t: Type) -> bool:
    return isinstance(t, ScalarType)


__all__ = [
    "MemRefType", "ScalarType", "ShapedType", "TensorType", "TileType", "TileView", "TupleType",
    "Type", "UnknownType", "constant_dims", "is_constant_type", "is_scalar", "is_tensor", "is_tile",
]
