"""Type annotations of the `pl` language: `pl.Tensor[...]`, `pl.Tile[...]`, `pl.Scalar[...]`,
`pl.Out[...]`, `pl.InOut[...]`, `pl.Tuple[...]`, and `pl.dynamic`.

Annotations are ordinary Python values (so a module that defines kernels imports cleanly); the
parser turns them into IR types with `to_ir_type`, which also refuses what no target can build
(`pypto.ir.limits`: element types without a backend, dimensions outside [1, 2**63 - 1]). That
check waits for the parser, not the `pl.Tensor[...]` subscript, because Python evaluates eager
annotations while the class body runs, where an error could not point at the annotation.
"""

from __future__ import annotations

import types as _pytypes
from dataclasses import dataclass
from typing import Any

from pypto.errors import Error
from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, ParamDirection, TensorLayout
from pypto.ir.expr import DynVar, Expr, MemRef, make_memref, scalar_type
from pypto.ir.limits import type_problem
from pypto.ir.types import (
    MemRefType,
    ScalarType,
    TensorType,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)

from .memref_slots import MemRefDecl, declare, is_placement_hint


class AnnotationError(Error, TypeError):
    """A malformed annotation; the parser re-raises it with the source location (and `hint`)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def dynamic(name: str) -> DynVar:
    """A dynamic dimension: its size is bound from the argument shapes at call time."""
    if not isinstance(name, str) or not name.isidentifier():
        raise AnnotationError(f"pl.dynamic needs an identifier name, got {name!r}")
    return DynVar(name, scalar_type(DataType.INDEX))


def _shape(items: Any, what: str) -> tuple:
    if isinstance(items, (list, tuple)):
        out = []
        for d in items:
            if isinstance(d, bool) or not isinstance(d, (int, Expr)):
                raise AnnotationError(f"{what} dimensions must be ints or pl.dynamic(...) names, got {d!r}")
            out.append(d)
        return tuple(out)
    raise AnnotationError(f"{what} shape must be a list like [64, 128], got {items!r}")


@dataclass(frozen=True)
class TensorAnn:
    shape: tuple
    dtype: DataType
    layout: TensorLayout = TensorLayout.ND
    memref: MemRef | None = None
    view: Any = None  # the pl.TensorView it was written with (@pl.jit refuses one)

    def to_type(self) -> Type:
        return TensorType(self.shape, self.dtype, self.layout, self.memref)


@dataclass(frozen=True)
class TileAnn:
    shape: tuple
    dtype: DataType
    memory_space: MemorySpace | None = None
    memref: MemRef | None = None
    tile_view: TileView | None = None

    def to_type(self) -> Type:
        space = self.memory_space
        if space is None:
            space = self.memref.memory_space if self.memref is not None else MemorySpace.Vec
        m = self.memref
        if m is not None and m.memory_space is MemorySpace.DDR and space is not MemorySpace.DDR:
            # the public MemRef(addr, size, id) names no space: it is the tile's
            m = make_memref(space, m.addr, m.size, m.id)
        return TileType(self.shape, self.dtype, space, m, self.tile_view)


@dataclass(frozen=True)
class ScalarAnn:
    dtype: DataType

    def to_type(self) -> Type:
        return scalar_type(self.dtype)


@dataclass(frozen=True)
class DirectionAnn:
    direction: ParamDirection
    inner: Any


@dataclass(frozen=True)
class TupleAnn:
    items: tuple

    def to_type(self) -> Type:
        return TupleType(tuple(to_ir_type(x) for x in self.items))


class TensorView:
    """`pl.TensorView(stride=, layout=, valid_shape=, pad=)`: the third item of a `pl.Tensor[...]`
    parameter annotation of a `@pl.function` (the public API; `@pl.jit` refuses it).

    `layout` becomes the tensor's layout. `stride`, when given, must be the packed strides of that
    layout (the CPU backend addresses tensors packed). `valid_shape` and `pad` describe the part of
    the tensor that holds data; they are kept here for printing and checks but do not change the
    tensor's type: a kernel masks the rest itself with `pl.load(..., valid_shape=...)` and
    `pl.tile.fillpad`, as the public examples do."""

    def __init__(self, stride=None, layout: TensorLayout | None = None, valid_shape=None, pad=None):
        if layout is None:
            if stride is not None or valid_shape is not None or getattr(pad, "name", "null") != "null":
                raise AnnotationError("pl.TensorView: layout is required when stride, valid_shape or pad is given",
                                      hint="pl.TensorView(stride=[...], layout=pl.TensorLayout.ND)")
            layout = TensorLayout.ND
        if not isinstance(layout, TensorLayout):
            raise AnnotationError(f"pl.TensorView layout must be a pl.TensorLayout, got {layout!r}")
        self.layout = layout
        self.stride = None if stride is None else _shape(stride, "pl.TensorView stride")
        self.valid_shape = None if valid_shape is None else _shape(valid_shape, "pl.TensorView valid_shape")
        self.pad = pad

    def check(self, shape: tuple) -> None:
        if self.valid_shape is not None and len(self.valid_shape) != len(shape):
            raise AnnotationError(f"pl.TensorView valid_shape has {len(self.valid_shape)} dims, the tensor "
                                  f"{len(shape)}")
        if self.stride is None:
            return
        if len(self.stride) != len(shape):
            raise AnnotationError(f"pl.TensorView stride has {len(self.stride)} dims, the tensor {len(shape)}")
        if not all(isinstance(d, int) for d in (*shape, *self.stride)):
            return  # (symbolic strides: checked against the shape when the data arrives)
        dims = list(shape)
        order = list(range(len(dims)))
        if self.layout is TensorLayout.DN and len(dims) >= 2:
            order[-2], order[-1] = order[-1], order[-2]  # column-major in the last two dims
        packed, step = [0] * len(dims), 1
        for ax in reversed(order):
            packed[ax], step = step, step * dims[ax]
        if tuple(packed) != tuple(self.stride):
            raise AnnotationError(f"pl.TensorView stride {list(self.stride)} is not the packed stride {packed} of "
                                  f"a {self.layout.name} tensor of shape {dims}; the CPU backend addresses "
                                  "tensors packed")

    def __repr__(self) -> str:
        return (f"pl.TensorView(stride={self.stride}, layout=pl.TensorLayout.{self.layout.name}, "
                f"valid_shape={self.valid_shape}, pad={self.pad})")


def _items(item) -> tuple:
    return item if isinstance(item, tuple) else (item,)


class Tensor:
    """`pl.Tensor[[shape], dtype]`, `pl.Tensor[[shape], dtype, layout]`; legacy `pl.Tensor(shape, dtype)`."""

    def __new__(cls, shape=None, dtype=None, layout=TensorLayout.ND, memref=None):  # type: ignore[misc]
        return cls._make((shape, dtype, layout, memref) if memref is not None else (shape, dtype, layout))

    def __class_getitem__(cls, item) -> TensorAnn:
        return cls._make(_items(item))

    @staticmethod
    def _make(items: tuple) -> TensorAnn:
        if len(items) < 2:
            raise AnnotationError("pl.Tensor needs a shape and a dtype: pl.Tensor[[64, 128], pl.FP32]")
        shape, dtype, *extra = items
        if not isinstance(dtype, DataType):
            raise AnnotationError(f"pl.Tensor dtype must be a pl data type like pl.FP32, got {dtype!r}")
        layout, memref, view = TensorLayout.ND, None, None
        dims = _shape(shape, "pl.Tensor")
        for x in extra:
            if isinstance(x, TensorLayout):
                layout = x
            elif isinstance(x, TensorView):
                x.check(dims)
                layout, view = x.layout, x
            elif isinstance(x, MemRef):
                memref = x
            else:
                raise AnnotationError(f"unexpected pl.Tensor argument {x!r} (expected a layout such as pl.NZ "
                                      "or a pl.TensorView)")
        return TensorAnn(dims, dtype, layout, memref, view)


class Tile:
    """`pl.Tile[[shape], dtype]` with optional memory space, MemRef and `pl.TileView(...)`."""

    def __new__(cls, shape=None, dtype=None, *extra):  # type: ignore[misc]
        return cls._make((shape, dtype, *extra))

    def __class_getitem__(cls, item) -> TileAnn:
        return cls._make(_items(item))

    @staticmethod
    def _make(items: tuple) -> TileAnn:
        if len(items) < 2:
            raise AnnotationError("pl.Tile needs a shape and a dtype: pl.Tile[[64, 64], pl.FP32]")
        shape, dtype, *extra = items
        if not isinstance(dtype, DataType):
            raise AnnotationError(f"pl.Tile dtype must be a pl data type like pl.FP32, got {dtype!r}")
        space = memref = view = None
        for x in extra:
            if isinstance(x, MemorySpace):
                space = x
            elif isinstance(x, MemRef):
                memref = x
            elif isinstance(x, TileView):
                view = x
            elif is_placement_hint(x):
                pass  # pl.MemRef(slots=N)[i]: placement only; the CPU plans the tile's storage
            else:
                raise AnnotationError(f"unexpected pl.Tile argument {x!r} "
                                      "(expected a pl.MemorySpace, a MemRef or a pl.TileView)")
        dims = _shape(shape, "pl.Tile")
        for d in dims:
            if not isinstance(d, int):
                raise AnnotationError("pl.Tile shapes are static; put a dynamic extent in "
                                      "pl.TileView(valid_shape=[...])")
        return TileAnn(dims, dtype, space, memref, view)


class Scalar:
    """`pl.Scalar[dtype]`."""

    def __new__(cls, dtype=None):  # type: ignore[misc]
        return cls._make(dtype)

    def __class_getitem__(cls, item) -> ScalarAnn:
        return cls._make(item)

    @staticmethod
    def _make(dtype) -> ScalarAnn:
        if not isinstance(dtype, DataType):
            raise AnnotationError(f"pl.Scalar needs a pl data type like pl.INDEX, got {dtype!r}")
        return ScalarAnn(dtype)


class Out:
    """`pl.Out[pl.Tensor[...]]`: a parameter the function writes (write-only)."""

    def __class_getitem__(cls, item) -> DirectionAnn:
        return DirectionAnn(ParamDirection.Out, item)


class InOut:
    """`pl.InOut[pl.Tensor[...]]`: a parameter the function reads and writes."""

    def __class_getitem__(cls, item) -> DirectionAnn:
        return DirectionAnn(ParamDirection.InOut, item)


class Tuple:
    """`pl.Tuple[A, B]` (also Python's `tuple[A, B]`) for multi-value returns."""

    def __class_getitem__(cls, item) -> TupleAnn:
        return TupleAnn(_items(item))


def MemRefAnn(memory_space=None, addr: int = -1, size: int = 0, id: int = 0, *,  # noqa: N802
              slots: int | None = None) -> MemRef | MemRefDecl:
    """`pl.MemRef(space, addr, size, id)` inside a type annotation; `pl.MemRef()`,
    `pl.MemRef("name", slots=N)` declare an allocation (memref_slots.py)."""
    if memory_space is None or isinstance(memory_space, str) or slots is not None:
        if addr != -1 or size or id:
            raise AnnotationError("a declared pl.MemRef takes only a name and slots=N")
        return declare(memory_space, slots)
    if not isinstance(memory_space, MemorySpace):
        # public 3-argument form MemRef(addr, size, id): DDR unless the tile annotation names a space
        return make_memref(MemorySpace.DDR, int(memory_space), int(addr), int(size))
    return make_memref(memory_space, addr, size, id)


Unknown = UnknownType()


def to_ir_type(ann: Any) -> Type:
    """Turn an annotation value into an IR type the targets can build (raises AnnotationError)."""
    t = _ir_type(ann)
    p = type_problem(t)
    if p is not None:
        raise AnnotationError(p.message, p.hint)
    return t


def _ir_type(ann: Any) -> Type:
    if isinstance(ann, (TensorAnn, TileAnn, ScalarAnn, TupleAnn)):
        return ann.to_type()
    if isinstance(ann, DataType):
        return scalar_type(ann)  # shorthand `x: pl.INDEX`
    if ann is Tensor or ann is Tile:
        raise AnnotationError(f"{ann.__name__} needs a shape and dtype: pl.{ann.__name__}[[64, 64], pl.FP32]")
    if ann is Scalar:
        raise AnnotationError("pl.Scalar needs a dtype: pl.Scalar[pl.INDEX]")
    if ann is MemRefType or isinstance(ann, MemRefType):
        return MemRefType()
    if ann is int:
        return scalar_type(DataType.INDEX)
    if ann is float:
        return scalar_type(DataType.FP32)
    if ann is bool:
        return scalar_type(DataType.BOOL)
    if isinstance(ann, _pytypes.GenericAlias) and ann.__origin__ is tuple:
        return TupleType(tuple(to_ir_type(a) for a in ann.__args__))
    if isinstance(ann, tuple):
        return TupleType(tuple(to_ir_type(a) for a in ann))
    if isinstance(ann, (Type, UnknownType)):
        return ann
    if isinstance(ann, DirectionAnn):
        raise AnnotationError("pl.Out / pl.InOut are only allowed on function parameters")
    raise AnnotationError(f"not a pl type annotation: {ann!r}")


def is_scalar_type(t: Type) -> bool:
    return isinstance(t, ScalarType)


__all__ = [
    "AnnotationError", "DirectionAnn", "InOut", "MemRefAnn", "Out", "Scalar", "ScalarAnn", "Tensor", "TensorAnn",
    "Tile", "TileAnn", "Tuple", "TupleAnn", "Unknown", "dynamic", "to_ir_type",
]
