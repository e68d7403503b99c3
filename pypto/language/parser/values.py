"""Conversions between Python values and IR expressions, and annotation/type compatibility."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from pypto.errors import InvalidType
from pypto.ir.dtype import DataType, promote
from pypto.ir.expr import (
    COMPARISONS,
    BinaryExpr,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    FloatDiv,
    MakeTuple,
)
from pypto.ir.node import Node
from pypto.ir.printer import type_str
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, ShapedType, TileType, TupleType, Type

from ..errors import ParserTypeError


def is_number(v: Any) -> bool:
    t = type(v)
    if t is int or t is float or t is bool:
        return True
    if t is list or t is tuple or isinstance(v, Node):  # the usual non-numbers, without the ABC check
        return False
    return isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, (complex, np.complexfloating))


def const_for(v: Any, like: DataType | None = None) -> Expr:
    """A constant for a Python number; `like` is the dtype of the other operand (weak literals take it)."""
    if isinstance(v, (bool, np.bool_)):
        return ConstBool(bool(v))
    if isinstance(v, (int, np.integer)):
        if like is not None and like.is_float:
            return ConstFloat(float(v), like)
        if like is not None and like.is_int:
            return ConstInt(int(v), like)
        return ConstInt(int(v), DataType.INDEX)
    if isinstance(v, (float, np.floating)):
        if like is not None and like.is_float:
            return ConstFloat(float(v), like)
        return ConstFloat(float(v), DataType.FP32)
    raise InvalidType(f"not a number: {v!r}")


def to_expr(v: Any, span: Span, what: str = "value", like: DataType | None = None) -> Expr:
    if isinstance(v, Expr):
        return v
    if is_number(v):
        return const_for(v, like)
    if isinstance(v, (list, tuple)):
        return MakeTuple(tuple(to_expr(x, span, what) for x in v), span=span)
    raise ParserTypeError(f"{what} must be a pl value (tensor, tile, scalar or number), got {_pyname(v)}", span)


def _pyname(v: Any) -> str:
    if isinstance(v, type):
        return f"the Python class {v.__name__}"
    r = repr(v)
    return f"{type(v).__name__} {r[:60]}"


def scalar_dtype(e: Expr) -> DataType | None:
    t = e.type
    return t.dtype if isinstance(t, ScalarType) else None


def scalar_binop(cls: type, a: Any, b: Any, span: Span) -> Expr:
    """An IR scalar expression `a <op> b`; Python numbers on either side become weak literals."""
    da = scalar_dtype(a) if isinstance(a, Expr) else None
    db = scalar_dtype(b) if isinstance(b, Expr) else None
    ea = a if isinstance(a, Expr) else const_for(a, db)
    eb = b if isinstance(b, Expr) else const_for(b, da)
    ta, tb = scalar_dtype(ea), scalar_dtype(eb)
    if ta is None or tb is None:
        raise ParserTypeError("scalar operators need scalar operands", span)
    if cls in COMPARISONS:
        dt = DataType.BOOL
    elif cls is FloatDiv:
        dt = promote(ta, tb)
        if not dt.is_float:
            dt = DataType.FP32
    else:
        dt = promote(ta, tb)
    out: BinaryExpr = cls(ea, eb, dt, span=span)
    return out


def check_compatible(declared: Type, actual: Type, span: Span, what: str) -> None:
    """A declared type (annotation, callee parameter) accepts the actual type of a value."""
    if isinstance(declared, ScalarType) and isinstance(actual, ScalarType):
        return  # scalars convert implicitly
    if type(declared) is not type(actual):
        raise ParserTypeError(f"{what}: declared {type_str(declared)} but the value is {type_str(actual)}", span)
    if isinstance(declared, TupleType):
        assert isinstance(actual, TupleType)
        if len(declared.types) != len(actual.types):
            raise ParserTypeError(f"{what}: declared {len(declared.types)} values, got {len(actual.types)}", span)
        for d, a in zip(declared.types, actual.types):
            check_compatible(d, a, span, what)
        return
    if isinstance(declared, ShapedType):
        assert isinstance(actual, ShapedType)
        if declared.dtype is not actual.dtype:
            raise ParserTypeError(f"{what}: declared dtype {declared.dtype.name} but the value is "
                                  f"{actual.dtype.name}", span, hint="convert with pl.cast(x, ...)")
        if len(declared.shape) != len(actual.shape):
            raise ParserTypeError(f"{what}: declared {type_str(declared)} but the value is {type_str(actual)} "
                                  "(rank differs)", span)
        for i, (d, a) in enumerate(zip(declared.shape, actual.shape)):
            if _dims_conflict(d, a):
                raise ParserTypeError(f"{what}: declared {type_str(declared)} but the value is {type_str(actual)} "
                                      f"(dimension {i} differs)", span)
        if isinstance(declared, TileType) and isinstance(actual, TileType):
            if declared.memory_space is not None and actual.memory_space is not None \
                    and declared.memory_space is not actual.memory_space:
                raise ParserTypeError(f"{what}: declared a tile in {declared.memory_space.name} but the value lives "
                                      f"in {actual.memory_space.name}", span)
            dv = declared.tile_view.valid_shape if declared.tile_view is not None else None
            if dv is not None:
                for d, a in zip(dv, actual.valid_shape):
                    if _dims_conflict(d, a):
                        raise ParserTypeError(f"{what}: declared valid shape differs from the value's "
                                              f"({type_str(actual)})", span)
        # layouts are not compared: the public parser accepts a DN tensor where ND is declared (the
        # layout is how the data is read, a kernel's load says how it reads it)


def _dims_conflict(d: Expr, a: Expr) -> bool:
    """Only two different constants conflict; a dynamic size on either side is checked at run time."""
    return isinstance(d, ConstInt) and isinstance(a, ConstInt) and d.value != a.value


def python_value(e: Any) -> Any:
    """The Python value of a constant expression (else the input)."""
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return e.value
    return e
