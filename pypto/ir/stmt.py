"""IR statements.

Invariants (checked by the verifier, not here): a loop with iter_args ends its body with a
YieldStmt of as many values; an IfStmt with return_vars yields that many values in each branch;
SeqStmts are flat (no nested SeqStmts, no single-child SeqStmts once normalized).
"""

from __future__ import annotations

from dataclasses import dataclass

from .enums import ForKind, LoopOrigin, ScopeKind
from .expr import Expr, IterArg, Var
from .node import Node, defines, span_field
from .span import Span


@dataclass(frozen=True, slots=True, eq=False)
class Stmt(Node):
    span: Span = span_field()


@dataclass(frozen=True, slots=True, eq=False)
class AssignStmt(Stmt):
    var: Var = defines()
    value: Expr = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, eq=False)
class EvalStmt(Stmt):
    """An expression evaluated for its effect (a store, a sync, a call returning nothing)."""

    expr: Expr


@dataclass(frozen=True, slots=True, eq=False)
class SeqStmts(Stmt):
    stmts: tuple[Stmt, ...]

    def __post_init__(self):
        if type(self.stmts) is not tuple:
            object.__setattr__(self, "stmts", tuple(self.stmts))


@dataclass(frozen=True, slots=True, eq=False)
class IfStmt(Stmt):
    condition: Expr
    then_body: Stmt
    else_body: Stmt | None = None
    return_vars: tuple[Var, ...] = defines(default=())

    def __post_init__(self):
        if type(self.return_vars) is not tuple:
            object.__setattr__(self, "return_vars", tuple(self.return_vars))


@dataclass(frozen=True, slots=True, eq=False)
class ForStmt(Stmt):
    """`for loop_var in range(start, stop, step)` carrying iter_args; results in return_vars."""

    loop_var: Var = defines()
    start: Expr = None  # type: ignore[assignment]
    stop: Expr = None  # type: ignore[assignment]
    step: Expr = None  # type: ignore[assignment]
    iter_args: tuple[IterArg, ...] = defines(default=())
    body: Stmt = None  # type: ignore[assignment]
    return_vars: tuple[Var, ...] = defines(default=())
    kind: ForKind = ForKind.Sequential
    chunk: int | None = None
    chunk_policy: str = "leading_full"
    origin: LoopOrigin = LoopOrigin.Original

    def __post_init__(self):
        if type(self.iter_args) is not tuple:
            object.__setattr__(self, "iter_args", tuple(self.iter_args))
        if type(self.return_vars) is not tuple:
            object.__setattr__(self, "return_vars", tuple(self.return_vars))


@dataclass(frozen=True, slots=True, eq=False)
class WhileStmt(Stmt):
    """`while condition` carrying iter_args (the condition may read them); results in return_vars.

    A natural `while` written in Python style has no iter_args until ConvertToSSA adds them.
    """

    condition: Expr
    iter_args: tuple[IterArg, ...] = defines(default=())
    body: Stmt = None  # type: ignore[assignment]
    return_vars: tuple[Var, ...] = defines(default=())

    def __post_init__(self):
        if type(self.iter_args) is not tuple:
            object.__setattr__(self, "iter_args", tuple(self.iter_args))
        if type(self.return_vars) is not tuple:
            object.__setattr__(self, "return_vars", tuple(self.return_vars))


@dataclass(frozen=True, slots=True, eq=False)
class ScopeStmt(Stmt):
    """A region (`with pl.incore():`, `with pl.auto_incore():`); `name_hint` (from `pl.at(...,
    name_hint="...")`) names the kernel the region is outlined to."""

    kind: ScopeKind
    body: Stmt
    name_hint: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class YieldStmt(Stmt):
    values: tuple[Expr, ...] = ()

    def __post_init__(self):
        if type(self.values) is not tuple:
            object.__setattr__(self, "values", tuple(self.values))


@dataclass(frozen=True, slots=True, eq=False)
class ReturnStmt(Stmt):
    values: tuple[Expr, ...] = ()

    def __post_init__(self):
        if type(self.values) is not tuple:
            object.__setattr__(self, "values", tuple(self.values))


@dataclass(frozen=True, slots=True, eq=False)
class BreakStmt(Stmt):
    pass


@dataclass(frozen=True, slots=True, eq=False)
class ContinueStmt(Stmt):
    pass


def seq(stmts: list[Stmt] | tuple[Stmt, ...], span: Span | None = None) -> Stmt:
    """A flat statement list: nested SeqStmts are spliced in; one statement is returned as is."""
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, SeqStmts):
            flat.extend(s.stmts)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    kw = {"span": span} if span is not None else {}
    return SeqStmts(tuple(flat), **kw)


def stmt_list(s: Stmt | None) -> list[Stmt]:
    """The statements of a body as a list (a single statement is a list of one)."""
    if s is None:
        return []
    if isinstance(s, SeqStmts):
        return list(s.stmts)
    return [s]


__all__ = [
    "AssignStmt", "BreakStmt", "ContinueStmt", "EvalStmt", "ForStmt", "IfStmt", "Node", "ReturnStmt",
    "ScopeStmt", "SeqStmts", "Stmt", "WhileStmt", "YieldStmt", "seq", "stmt_list",
]
