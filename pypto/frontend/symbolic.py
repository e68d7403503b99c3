"""`SymbolicScalar`: an integer (or boolean) known only at run time — a dynamic dimension, a loop
index, a value read from an int32 tensor, or arithmetic on those — as the tensor-level frontend
traces a kernel. It wraps an IR scalar expression.

Arithmetic folds what is known while tracing: constants fold, and sums of multiples of variables
are kept in a canonical order, so `(i + 1) * 4 - i * 4` is the constant 4 (a slice
`x[i * 4:(i + 1) * 4]` gets the static extent 4 a tile needs).
"""

from __future__ import annotations

import operator
from typing import Any

from pypto.errors import InvalidType, InvalidValue
from pypto.ir.dtype import DataType
from pypto.ir.expr import (
    Add,
    BinaryExpr,
    ConstBool,
    ConstInt,
    DynVar,
    Eq,
    Expr,
    FloorDiv,
    FloorMod,
    Ge,
    Gt,
    Le,
    Lt,
    Max,
    Min,
    Mul,
    Ne,
    Neg,
    Sub,
    Var,
    const_value,
    scalar_type,
)

_INDEX = DataType.INDEX


def _lin(e: Expr) -> tuple[dict[Var, int], int] | None:
    """`e` as sum(coef * var) + const, or None when it is not of that form."""
    c = const_value(e)
    if isinstance(c, bool):
        return None
    if isinstance(c, int):
        return {}, c
    if isinstance(e, Var):
        return {e: 1}, 0
    if isinstance(e, Neg):
        inner = _lin(e.operand)
        return None if inner is None else ({v: -k for v, k in inner[0].items()}, -inner[1])
    if isinstance(e, (Add, Sub)):
        a, b = _lin(e.lhs), _lin(e.rhs)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, Add) else -1
        terms = dict(a[0])
        for v, k in b[0].items():
            terms[v] = terms.get(v, 0) + sign * k
        return {v: k for v, k in terms.items() if k}, a[1] + sign * b[1]
    if isinstance(e, Mul):
        a, b = _lin(e.lhs), _lin(e.rhs)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:  # var * var: not linear
            return None
        return {v: k * b[1] for v, k in a[0].items() if k * b[1]}, a[1] * b[1]
    return None


def _from_lin(terms: dict[Var, int], const: int) -> Expr:
    out: Expr | None = None
    for v in sorted(terms, key=lambda v: v.name):
        k = terms[v]
        t: Expr = v if abs(k) == 1 else Mul(v, ConstInt(abs(k)), _INDEX)
        if out is None:
            out = t if k > 0 else Neg(t, _INDEX)
        else:
            out = Add(out, t, _INDEX) if k > 0 else Sub(out, t, _INDEX)
    if out is None:
        return ConstInt(const)
    if const:
        out = Add(out, ConstInt(const), _INDEX) if const > 0 else Sub(out, ConstInt(-const), _INDEX)
    return out


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise InvalidValue("division by zero in a symbolic expression")
    return a // b


def _floormod(a: int, b: int) -> int:
    if b == 0:
        raise InvalidValue("modulo by zero in a symbolic expression")
    return a % b


_FOLD = {Add: operator.add, Sub: operator.sub, Mul: operator.mul, FloorDiv: _floordiv, FloorMod: _floormod,
         Min: min, Max: max, Lt: operator.lt, Le: operator.le, Gt: operator.gt, Ge: operator.ge,
         Eq: operator.eq, Ne: operator.ne}
_COMPARE = (Lt, Le, Gt, Ge, Eq, Ne)


def as_expr(v: Any) -> Expr:
    """The IR expression of an int, a bool or a SymbolicScalar."""
    if isinstance(v, SymbolicScalar):
        return v.expr
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return ConstBool(v)
    if isinstance(v, int):
        return ConstInt(int(v))
    if hasattr(v, "__index__") and not isinstance(v, float):
        return ConstInt(operator.index(v))
    raise InvalidType(f"expected an int or a SymbolicScalar, got {type(v).__name__} ({v!r})")


def build(cls: type, a: Any, b: Any) -> Expr:
    """`cls(a, b)` folded where the operands allow."""
    x, y = as_expr(a), as_expr(b)
    cx, cy = const_value(x), const_value(y)
    if cx is not None and cy is not None and cls in _FOLD:
        r = _FOLD[cls](cx, cy)
        return ConstBool(r) if isinstance(r, bool) else ConstInt(r)
    if cls in (Add, Sub, Mul):
        lx, ly = _lin(x), _lin(y)
        if lx is not None and ly is not None:
            e = _lin(cls(x, y, _INDEX))
            if e is not None:
                return _from_lin(*e)
    if cls in (FloorDiv,) and cy == 1:
        return x
    if cls in (Min, Max):
        d = _lin(Sub(x, y, _INDEX))
        if d is not None and not d[0]:  # a constant difference decides it
            return (x if d[1] <= 0 else y) if cls is Min else (x if d[1] >= 0 else y)
    if cls in _COMPARE:
        d = _lin(Sub(x, y, _INDEX))
        if d is not None and not d[0]:
            return ConstBool(_FOLD[cls](d[1], 0))
        return cls(x, y, DataType.BOOL)
    return cls(x, y, _INDEX)


class SymbolicScalar:
    """A run-time integer (see the module docstring). `SymbolicScalar(name)` declares a named one
    (like `pypto.frontend.dynamic`), `SymbolicScalar(5)` a constant."""

    __slots__ = ("expr",)

    def __init__(self, value: Any = None, init: int | None = None):
        if isinstance(value, Expr):
            self.expr = value
        elif isinstance(value, str):
            if not value.isidentifier():
                raise InvalidValue(f"a symbolic scalar needs an identifier name, got {value!r}")
            self.expr = DynVar(value, scalar_type(_INDEX))
        elif value is None:
            self.expr = DynVar("sym", scalar_type(_INDEX))
        else:
            self.expr = as_expr(value)
        if init is not None:
            raise InvalidValue("SymbolicScalar(name, value): a named scalar's value is bound at run time; "
                               "use a plain int for a constant")

    # --- what is known while tracing
    def is_concrete(self) -> bool:
        return const_value(self.expr) is not None

    def concrete(self) -> int | bool:
        c = const_value(self.expr)
        if c is None:
            raise InvalidValue(f"{self} is only known at run time")
        return c

    def is_symbol(self) -> bool:
        return isinstance(self.expr, Var)

    def is_expression(self) -> bool:
        return isinstance(self.expr, BinaryExpr) or isinstance(self.expr, Neg)

    def is_immediate(self) -> bool:
        return self.is_concrete()

    def __int__(self) -> int:
        return int(self.concrete())

    def __index__(self) -> int:
        return int(self.concrete())

    def __bool__(self) -> bool:
        c = const_value(self.expr)
        if c is None:
            raise InvalidType(f"`{self}` is only known at run time, so Python cannot branch on it while "
                              "tracing; write `if pypto.cond(...)` or choose with pypto.min / pypto.max")
        return bool(c)

    def __hash__(self) -> int:
        return id(self)

    # --- arithmetic (Python semantics: // floors, % takes the divisor's sign)
    def __add__(self, o): return SymbolicScalar(build(Add, self, o))
    def __radd__(self, o): return SymbolicScalar(build(Add, o, self))
    def __sub__(self, o): return SymbolicScalar(build(Sub, self, o))
    def __rsub__(self, o): return SymbolicScalar(build(Sub, o, self))
    def __mul__(self, o): return SymbolicScalar(build(Mul, self, o))
    def __rmul__(self, o): return SymbolicScalar(build(Mul, o, self))
    def __floordiv__(self, o): return SymbolicScalar(build(FloorDiv, self, o))
    def __rfloordiv__(self, o): return SymbolicScalar(build(FloorDiv, o, self))
    def __truediv__(self, o): return SymbolicScalar(build(FloorDiv, self, o))  # (integers: as the reference)
    def __mod__(self, o): return SymbolicScalar(build(FloorMod, self, o))
    def __rmod__(self, o): return SymbolicScalar(build(FloorMod, o, self))
    def __neg__(self): return SymbolicScalar(build(Sub, 0, self))
    def __pos__(self): return self

    def __lt__(self, o): return SymbolicScalar(build(Lt, self, o))
    def __le__(self, o): return SymbolicScalar(build(Le, self, o))
    def __gt__(self, o): return SymbolicScalar(build(Gt, self, o))
    def __ge__(self, o): return SymbolicScalar(build(Ge, self, o))
    def __eq__(self, o): return SymbolicScalar(build(Eq, self, o))  # type: ignore[override]
    def __ne__(self, o): return SymbolicScalar(build(Ne, self, o))  # type: ignore[override]

    def min(self, o) -> SymbolicScalar:
        return SymbolicScalar(build(Min, self, o))

    def max(self, o) -> SymbolicScalar:
        return SymbolicScalar(build(Max, self, o))

    def as_variable(self) -> SymbolicScalar:
        """The value as a named run-time variable (computed once where it is written)."""
        from .trace import current

        tr = current("SymbolicScalar.as_variable")
        return SymbolicScalar(tr.let_scalar("sym", self.expr))

    def __repr__(self) -> str:
        from pypto.ir.printer import expr_str

        return f"SymbolicScalar({expr_str(self.expr)})"

    __str__ = __repr__


def sym_min(a: Any, b: Any) -> Any:
    """min of ints and SymbolicScalars (a plain int when both are ints)."""
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        return SymbolicScalar(build(Min, a, b))
    return min(a, b)


def sym_max(a: Any, b: Any) -> Any:
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        return SymbolicScalar(build(Max, a, b))
    return max(a, b)


def ceildiv(a: Any, b: Any) -> Any:
    """ceil(a / b) for ints and SymbolicScalars."""
    return (a + b - 1) // b


def simplify(v: Any) -> Any:
    """An int when the value is known while tracing, else the SymbolicScalar."""
    if isinstance(v, SymbolicScalar) and v.is_concrete():
        return int(v.concrete())
    return v


__all__ = ["SymbolicScalar", "as_expr", "build", "ceildiv", "simplify", "sym_max", "sym_min"]
