"""The printer's dialect for messages: IR rendered short, for diagnostics and error text.

`MessagePrinter` is the `Printer` with the spelling messages use: no module prefix (`tensor.add(x,
x)`, `range(4)`), types as `Tensor[[16], fp32]` / `Tile[[16, 16], fp32, Vec]` / `Scalar[index]`,
variables by their own names, constants of a non-index dtype as `3:int32`, binary operators always
parenthesized (`(a + b)`), unary ones and `min`/`max` as calls (`neg(x)`), keyword values by name
(`target_memory=Left`), and trees deeper than six levels elided (`...`). It never fails: a node it
cannot spell prints as its class name.

`expr_text`, `type_text` and `stmt_text` are what the verifier's messages and IR excerpts use.
"""

from __future__ import annotations

from typing import Any

from .dtype import DataType
from .expr import BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, UnaryExpr, Var
from .printer import Printer
from .stmt import ForStmt, IfStmt, ScopeStmt, Stmt, WhileStmt
from .types import ScalarType, ShapedType, TileType, TupleType

_OPS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "FloatDiv": "/", "Pow": "**",
        "Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "And": "and", "Or": "or",
        "BitAnd": "&", "BitOr": "|", "BitXor": "^", "BitShiftLeft": "<<", "BitShiftRight": ">>"}
_MAX_DEPTH = 6


class MessagePrinter(Printer):
    def __init__(self) -> None:
        super().__init__(prefix="")
        self.depth = 0

    # ---- expressions -------------------------------------------------------------------------

    def expr(self, e: Any, prec: int = 0) -> str:
        if self.depth > _MAX_DEPTH:
            return "..."
        if not isinstance(e, Expr):
            return type(e).__name__
        self.depth += 1
        try:
            return super().expr(e, prec)
        except TypeError:  # an expression kind the printer does not know
            return type(e).__name__
        finally:
            self.depth -= 1

    def _var(self, e: Var, prec: int) -> str:
        return e.name

    def _const_int(self, e: ConstInt, prec: int) -> str:
        return repr(e.value) if e.dtype is DataType.INDEX else f"{e.value}:{e.dtype.text}"

    def _const_float(self, e: ConstFloat, prec: int) -> str:
        return repr(e.value)

    def _const_bool(self, e: ConstBool, prec: int) -> str:
        return repr(e.value)

    def _binary(self, e: BinaryExpr, prec: int) -> str:
        name = type(e).__name__
        sym = _OPS.get(name)
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        return f"({lhs} {sym} {rhs})" if sym else f"{name.lower()}({lhs}, {rhs})"

    def _unary(self, e: UnaryExpr, prec: int) -> str:
        return f"{type(e).__name__.lower()}({self.expr(e.operand)})"

    def call(self, c: Call) -> str:
        parts = [self.expr(a) for a in c.args] + [f"{k}={self.value(v)}" for k, v in c.kwargs]
        return f"{c.op.name}({', '.join(parts)})"

    def value(self, v: Any) -> str:
        return v.name if hasattr(v, "name") and not isinstance(v, str) else repr(v)

    # ---- types -------------------------------------------------------------------------------

    def type(self, t: Any) -> str:
        if t is None:
            return "<no type>"
        if isinstance(t, ScalarType):
            return f"Scalar[{t.dtype.text}]"
        if isinstance(t, ShapedType):
            dims = ", ".join(self.expr(d) for d in t.shape)
            extra = f", {t.memory_space.name}" if isinstance(t, TileType) and t.memory_space is not None else ""
            return f"{'Tile' if isinstance(t, TileType) else 'Tensor'}[[{dims}], {t.dtype.text}{extra}]"
        if isinstance(t, TupleType):
            return "Tuple[" + ", ".join(self.type(x) for x in t.types) + "]"
        return type(t).__name__

    # ---- statements --------------------------------------------------------------------------

    def stmt_text(self, s: Stmt) -> str:
        """One line for a statement: a compound statement's header followed by ` ...`."""
        try:
            if isinstance(s, ForStmt):
                return self.for_head(s) + " ..."
            if isinstance(s, WhileStmt):
                return self.while_head(s) + " ..."
            if isinstance(s, IfStmt):
                return self.if_head(s) + " ..."
            if isinstance(s, ScopeStmt):
                return self.scope_head(s) + " ..."
            self.lines = []
            self.stmt(s, 0)
            return self.lines[0].strip() if self.lines else type(s).__name__
        except (TypeError, KeyError, AttributeError):  # malformed IR is what diagnostics show
            return type(s).__name__


def expr_text(e: Any) -> str:
    """A one-line rendering of an expression for messages."""
    return MessagePrinter().expr(e)


def type_text(t: Any) -> str:
    """A short rendering of a type for messages."""
    return MessagePrinter().type(t)


def stmt_text(s: Stmt) -> str:
    """A one-line summary of a statement for IR excerpts (compound statements show their header)."""
    return MessagePrinter().stmt_text(s)


__all__ = ["MessagePrinter", "expr_text", "stmt_text", "type_text"]
