"""IR expressions.

Equality (`==`) on expressions is identity, except for constants and `GlobalVar`, which are plain
values. Use `structural_equal` to compare trees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import InvalidType

from .dtype import DataType
from .enums import MemorySpace
from .node import Node, defines, ignored, plain, span_field
from .span import Span
from .types import MemRefType, ScalarType, TupleType, Type

_SCALAR_TYPES = {dt: ScalarType(dt) for dt in DataType}


def scalar_type(dt: DataType) -> ScalarType:
    return _SCALAR_TYPES[dt]


@dataclass(frozen=True, slots=True, eq=False)
class Expr(Node):
    span: Span = span_field()

    @property
    def type(self) -> Type:  # overridden by every concrete expression
        raise NotImplementedError(type(self).__name__)

    # Scalar arithmetic builds the IR expression (the IR-builder API: `ib.let("y", x * x + 1)`);
    # a Python number takes the other operand's dtype. Tensors and tiles have no operators here.
    def _arith(self, cls: str, other: Any, swap: bool = False) -> Any:
        from .dtype import promote

        t = self.type
        if not isinstance(t, ScalarType):
            return NotImplemented
        if isinstance(other, Expr):
            if not isinstance(other.type, ScalarType):
                return NotImplemented
            o = other
        elif isinstance(other, bool) or not isinstance(other, (int, float)):
            return NotImplemented
        elif isinstance(other, float) and not t.dtype.is_float:
            o = ConstFloat(other, DataType.FP32, span=self.span)
        else:
            o = (ConstFloat if isinstance(other, float) else ConstInt)(other, t.dtype, span=self.span)
        a, b = (o, self) if swap else (self, o)
        return globals()[cls](a, b, promote(a.type.dtype, b.type.dtype), span=self.span)

    def __add__(self, o): return self._arith("Add", o)
    def __radd__(self, o): return self._arith("Add", o, True)
    def __sub__(self, o): return self._arith("Sub", o)
    def __rsub__(self, o): return self._arith("Sub", o, True)
    def __mul__(self, o): return self._arith("Mul", o)
    def __rmul__(self, o): return self._arith("Mul", o, True)
    def __floordiv__(self, o): return self._arith("FloorDiv", o)
    def __rfloordiv__(self, o): return self._arith("FloorDiv", o, True)
    def __mod__(self, o): return self._arith("FloorMod", o)
    def __rmod__(self, o): return self._arith("FloorMod", o, True)

    def __neg__(self):
        if not isinstance(self.type, ScalarType):
            return NotImplemented
        return Neg(self, self.type.dtype, span=self.span)


# ---------------------------------------------------------------------------------------------
# variables


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    """A named value. Identity is the object; the name is only a hint for printing."""

    name: str = ignored()
    type: Type = None  # type: ignore[assignment]

    @property
    def name_hint(self) -> str:
        """`name`, as the public IR spells it."""
        return self.name

    def __repr__(self) -> str:
        return f"Var({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class DynVar(Var):
    """A dynamic dimension declared with `pl.dynamic(name)`; bound from argument shapes at run time."""

    def __repr__(self) -> str:
        return f"DynVar({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class IterArg(Var):
    """A loop-carried value: starts as `init_value`, then takes each iteration's yielded value."""

    init_value: Expr = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IterArg({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class MemRef(Var):
    """An on-chip (or DDR) buffer: memory space, address (-1 until allocated), size in bytes, id."""

    memory_space: MemorySpace = MemorySpace.DDR
    addr: int = -1
    size: int = 0
    id: int = 0

    def __repr__(self) -> str:
        return f"MemRef({self.name}, {self.memory_space.name}, addr={self.addr}, size={self.size}, id={self.id})"


def make_memref(memory_space: MemorySpace, addr: int, size: int, id: int, name: str | None = None,
                span: Span | None = None) -> MemRef:
    nm = name or f"mem_{memory_space.name.lower()}_{id}"
    kw = {"span": span} if span is not None else {}
    return MemRef(nm, MemRefType(), memory_space, addr, size, id, **kw)


# ---------------------------------------------------------------------------------------------
# constants (value semantics)


@dataclass(frozen=True, slots=True, eq=False)
class ConstInt(Expr):
    value: int
    dtype: DataType = DataType.INDEX

    @property
    def type(self) -> Type:
        return _SCALAR_TYPES[self.dtype]

    def __eq__(self, other: object) -> bool:
        return type(other) is ConstInt and other.value == self.value and other.dtype is self.dtype

    def __hash__(self) -> int:
        return hash((ConstInt, self.value, self.dtype))

    def __repr__(self) -> str:
        return str(self.value) if self.dtype is DataType.INDEX else f"ConstInt({self.value}, {self.dtype.name})"


@dataclass(frozen=True, slots=True, eq=False)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32

    @property
    def type(self) -> Type:
        return _SCALAR_TYPES[self.dtype]

    def __eq__(self, other: object) -> bool:
        return (type(other) is ConstFloat and self.dtype is other.dtype
                and (other.value == self.value or (other.value != other.value and self.value != self.value)))

    def __hash__(self) -> int:
        return hash((ConstFloat, self.value, self.dtype))

    def __repr__(self) -> str:
        return f"ConstFloat({self.value}, {self.dtype.name})"


@dataclass(frozen=True, slots=True, eq=False)
class ConstBool(Expr):
    value: bool

    @property
    def type(self) -> Type:
        return _SCALAR_TYPES[DataType.BOOL]

    def __eq__(self, other: object) -> bool:
        return type(other) is ConstBool and other.value == self.value

    def __hash__(self) -> int:
        return hash((ConstBool, self.value))

    def __repr__(self) -> str:
        return str(self.value)


# ---------------------------------------------------------------------------------------------
# scalar arithmetic


@dataclass(frozen=True, slots=True, eq=False)
class BinaryExpr(Expr):
    lhs: Expr
    rhs: Expr
    dtype: DataType

    @property
    def type(self) -> Type:
        return _SCALAR_TYPES[self.dtype]


@dataclass(frozen=True, slots=True, eq=False)
class UnaryExpr(Expr):
    operand: Expr
    dtype: DataType

    @property
    def type(self) -> Type:
        return _SCALAR_TYPES[self.dtype]


def _binary(name: str, doc: str) -> type:
    cls = type(name, (BinaryExpr,), {"__doc__": doc})
    cls.__module__ = __name__
    return dataclass(frozen=True, slots=True, eq=False)(cls)


def _unary(name: str, doc: str) -> type:
    cls = type(name, (UnaryExpr,), {"__doc__": doc})
    cls.__module__ = __name__
    return dataclass(frozen=True, slots=True, eq=False)(cls)


Add = _binary("Add", "lhs + rhs")
Sub = _binary("Sub", "lhs - rhs")
Mul = _binary("Mul", "lhs * rhs")
FloorDiv = _binary("FloorDiv", "lhs // rhs (integer)")
FloorMod = _binary("FloorMod", "lhs % rhs (integer, sign of rhs)")
FloatDiv = _binary("FloatDiv", "lhs / rhs")
Min = _binary("Min", "min(lhs, rhs)")
Max = _binary("Max", "max(lhs, rhs)")
Pow = _binary("Pow", "lhs ** rhs")
Eq = _binary("Eq", "lhs == rhs")
Ne = _binary("Ne", "lhs != rhs")
Lt = _binary("Lt", "lhs < rhs")
Le = _binary("Le", "lhs <= rhs")
Gt = _binary("Gt", "lhs > rhs")
Ge = _binary("Ge", "lhs >= rhs")
And = _binary("And", "logical and")
Or = _binary("Or", "logical or")
Xor = _binary("Xor", "logical xor")
BitAnd = _binary("BitAnd", "lhs & rhs")
BitOr = _binary("BitOr", "lhs | rhs")
BitXor = _binary("BitXor", "lhs ^ rhs")
BitShiftLeft = _binary("BitShiftLeft", "lhs << rhs")
BitShiftRight = _binary("BitShiftRight", "lhs >> rhs")

Abs = _unary("Abs", "abs(x)")
Neg = _unary("Neg", "-x")
Not = _unary("Not", "logical not")
BitNot = _unary("BitNot", "~x")
Cast = _unary("Cast", "convert x to dtype")

BINARY_EXPRS: tuple[type, ...] = (Add, Sub, Mul, FloorDiv, FloorMod, FloatDiv, Min, Max, Pow, Eq, Ne, Lt,
                                  Le, Gt, Ge, And, Or, Xor, BitAnd, BitOr, BitXor, BitShiftLeft,
                                  BitShiftRight)
UNARY_EXPRS: tuple[type, ...] = (Abs, Neg, Not, BitNot, Cast)
COMPARISONS: tuple[type, ...] = (Eq, Ne, Lt, Le, Gt, Ge)


# ---------------------------------------------------------------------------------------------
# callees, calls, tuples


@dataclass(frozen=True, slots=True, eq=False)
class Op(Node):
    """A registered operator (callee of a Call). One object per op name; see `pypto.ir.op`."""

    name: str

    def __repr__(self) -> str:
        return f"Op({self.name})"


@dataclass(frozen=True, slots=True)
class GlobalVar(Node):
    """A reference to a function of the enclosing program, by name."""

    name: str

    def __repr__(self) -> str:
        return f"GlobalVar({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class Call(Expr):
    """`op(*args, **kwargs)`. kwargs are ordered (name, value) pairs of plain values."""

    op: Op | GlobalVar
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Any], ...] = plain(default=())
    type: Type = None  # type: ignore[assignment]

    def __post_init__(self):
        if type(self.args) is not tuple:
            object.__setattr__(self, "args", tuple(self.args))
        if isinstance(self.kwargs, dict):
            object.__setattr__(self, "kwargs", tuple(self.kwargs.items()))

    def kwarg(self, name: str, default: Any = None) -> Any:
        for k, v in self.kwargs:
            if k == name:
                return v
        return default

    @property
    def kw(self) -> dict[str, Any]:
        return dict(self.kwargs)

    @property
    def op_name(self) -> str:
        return self.op.name

    def __repr__(self) -> str:
        return f"Call({self.op.name}, {len(self.args)} args)"


@dataclass(frozen=True, slots=True, eq=False)
class MakeTuple(Expr):
    elements: tuple[Expr, ...]

    def __post_init__(self):
        if type(self.elements) is not tuple:
            object.__setattr__(self, "elements", tuple(self.elements))

    @property
    def type(self) -> Type:
        return TupleType(tuple(e.type for e in self.elements))


@dataclass(frozen=True, slots=True, eq=False)
class TupleGetItem(Expr):
    tuple: Expr
    index: int

    @property
    def type(self) -> Type:
        t = self.tuple.type
        if isinstance(t, TupleType) and 0 <= self.index < len(t.types):
            return t.types[self.index]
        raise InvalidType(f"TupleGetItem index {self.index} out of range for {t}")


def const_value(e: Expr) -> int | float | bool | None:
    """The Python value of a constant expression, else None."""
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return e.value
    return None


__all__ = [
    "Abs", "Add", "And", "BINARY_EXPRS", "BinaryExpr", "BitAnd", "BitNot", "BitOr", "BitShiftLeft",
    "BitShiftRight", "BitXor", "COMPARISONS", "Call", "Cast", "ConstBool", "ConstFloat", "ConstInt",
    "DynVar", "Eq", "Expr", "FloatDiv", "FloorDiv", "FloorMod", "Ge", "GlobalVar", "Gt", "IterArg", "Le",
    "Lt", "MakeTuple", "Max", "MemRef", "Min", "Mul", "Ne", "Neg", "Not", "Op", "Or", "Pow", "Sub",
    "TupleGetItem", "UNARY_EXPRS", "UnaryExpr", "Var", "Xor", "const_value", "defines", "make_memref",
    "scalar_type",
]
