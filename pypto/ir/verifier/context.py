"""The verifier's frame: numeric codes, the units of IR a rule checks (a function's body, or a bare
statement or expression), the `Rule` base and the `Context` a verification run shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pypto.errors import InvalidType

from ..expr import Expr, Var
from ..function import Function, Program
from ..node import Node
from ..span import Span
from ..stmt import EvalStmt, Stmt
from ..walk import expr_nodes
from .report import Diagnostic

SSA_MULTIPLE_ASSIGNMENT, SSA_NAME_SHADOWING, SSA_MISSING_YIELD = 1, 2, 3
SSA_ITER_RETURN_MISMATCH, SSA_YIELD_COUNT_MISMATCH, SSA_SCOPE_VIOLATION = 4, 5, 6
TYPE_KIND_MISMATCH, TYPE_DTYPE_MISMATCH, TYPE_RANK_MISMATCH, TYPE_DIM_MISMATCH = 101, 102, 103, 104
TYPE_ATTR_MISMATCH, TYPE_CONDITION_NOT_SCALAR, TYPE_RANGE_NOT_SCALAR = 105, 106, 107
USE_BEFORE_DEF, NESTED_CALL, BREAK_OUTSIDE_LOOP = 401, 501, 601
UNSUPPORTED_DTYPE, SIZE_OUT_OF_RANGE = 701, 702


@dataclass
class Unit:
    """One body to check: a function's (strict: every use must be bound) or a bare statement's."""

    function: Function | None
    body: Stmt | None


def units(node: Any) -> list[Unit]:
    if isinstance(node, Program):
        return [Unit(f, f.body) for f in node.functions]
    if isinstance(node, Function):
        return [Unit(node, node.body)]
    if isinstance(node, Stmt):
        return [Unit(None, node)]
    if isinstance(node, Expr):
        return [Unit(None, EvalStmt(node, span=node.span))]
    raise InvalidType(f"verify() takes a Program, Function, Stmt or Expr, got {type(node).__name__}")


class Rule:
    name: ClassVar[str] = ""
    codes: ClassVar[dict[int, str]] = {}
    default: ClassVar[bool] = True

    def check(self, ctx: Context) -> None:
        raise NotImplementedError


class Context:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.program = root if isinstance(root, Program) else None
        self.units = units(root)
        self.diagnostics: list[Diagnostic] = []
        self.shared: dict[tuple[str, int], Any] = {}  # what several rules use, computed once (the scope walk)
        self._nodes: dict[int, tuple[Expr, list[Node]]] = {}

    def expr_nodes(self, e: Expr) -> list[Node]:
        """`walk.expr_nodes(e)`, computed once per expression (the scope walk and TypeCheck both need it)."""
        got = self._nodes.get(id(e))
        if got is None or got[0] is not e:
            got = self._nodes[id(e)] = (e, expr_nodes(e))
        return got[1]

    def report(self, rule: Rule, code: int, message: str, node: Any, stmt: Stmt | None, unit: Unit,
               hint: str | None = None) -> None:
        # a Var's own span is its definition; a fault at a use is located by the statement
        span = getattr(node, "span", None) if not (isinstance(node, Var) and stmt is not None) else None
        if not isinstance(span, Span) or not span.is_known:
            span = stmt.span if stmt is not None else None
        if (span is None or not span.is_known) and unit.function is not None:
            span = unit.function.span
        fn = unit.function.name if unit.function is not None else None
        self.diagnostics.append(Diagnostic(rule.name, code, message, span or Span.unknown(), node, stmt, fn, hint))


__all__ = ["Context", "Rule", "Unit", "units"]
