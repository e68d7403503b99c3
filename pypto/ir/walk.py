"""Statement lists and walks over statement trees: the one set of walkers the verifier, the passes
and the analyses share.

Statement bodies built by passes should go through `make_body` (flat, one statement unwrapped,
like the parser builds them) and `make_else` (an empty else is `None`), so that pass outputs are
structurally equal to the same program written in `pl`. (`stmt.seq` / `stmt.stmt_list`, the node
level's own constructor and accessor, look one level deep; the functions here flatten any depth.)

Expression-level walks (`IRVisitor`, `IRMutator`) are in `visitor.py`; `expr_nodes` and
`type_vars` here are the flat, allocation-light walks rules run over every expression.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .expr import (
    BinaryExpr,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    MakeTuple,
    Op,
    TupleGetItem,
    UnaryExpr,
    Var,
)
from .function import Function
from .node import Node, walk_fields
from .span import Span
from .stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from .types import Type, is_constant_type

CONSTANTS = (ConstInt, ConstFloat, ConstBool)

# ---------------------------------------------------------------------------------------------
# statement lists


def flatten_stmts(stmts: Iterable[Stmt | None]) -> list[Stmt]:
    """The statements of `stmts` with nested SeqStmts spliced in and Nones dropped."""
    out: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmts):
            out.extend(flatten_stmts(s.stmts))
        else:
            out.append(s)
    return out


def body_stmts(body: Stmt | None) -> list[Stmt]:
    """A body as a flat list of statements (empty for None)."""
    return flatten_stmts([body])


def make_body(stmts: Iterable[Stmt | None], span: Span | None = None) -> Stmt:
    """A body the way the parser builds it: flat; a single statement is returned unwrapped."""
    flat = flatten_stmts(stmts)
    if len(flat) == 1:
        return flat[0]
    return SeqStmts(tuple(flat), span=span) if span is not None else SeqStmts(tuple(flat))


def make_else(stmts: Iterable[Stmt | None]) -> Stmt | None:
    """An else body: None when there is nothing in it (the printer drops empty else branches)."""
    flat = flatten_stmts(stmts)
    return make_body(flat) if flat else None


def last_stmt(body: Stmt | None) -> Stmt | None:
    stmts = body_stmts(body)
    return stmts[-1] if stmts else None


def split_yield(body: Stmt | None) -> tuple[list[Stmt], YieldStmt | None]:
    """(the statements before a trailing yield, the yield) — the yield is None if there is none."""
    stmts = body_stmts(body)
    if stmts and isinstance(stmts[-1], YieldStmt):
        return stmts[:-1], stmts[-1]
    return stmts, None


# ---------------------------------------------------------------------------------------------
# walking statement trees


def child_bodies(s: Stmt) -> list[Stmt]:
    """The bodies directly nested in a statement (then/else, loop body, scope body)."""
    if isinstance(s, SeqStmts):
        return list(s.stmts)
    if isinstance(s, IfStmt):
        return [s.then_body] + ([s.else_body] if s.else_body is not None else [])
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body] if s.body is not None else []
    return []


def walk_stmts(node: Stmt | Function | None, *, into_loops: bool = True) -> Iterator[Stmt]:
    """Every statement under `node` in program order (pre-order; SeqStmts are not yielded, their
    statements are). With `into_loops=False` loop bodies are not entered (the loops themselves are
    yielded) — pass a loop's *body* to walk what belongs to that loop alone."""
    if isinstance(node, Function):
        node = node.body
    if node is None:
        return
    todo = [node]
    while todo:
        s = todo.pop()
        if not isinstance(s, SeqStmts):
            yield s
        if not into_loops and isinstance(s, (ForStmt, WhileStmt)):
            continue
        todo.extend(reversed(child_bodies(s)))


def contains_stmt(node: Stmt | None, cls: type | tuple[type, ...], *, into_loops: bool = True) -> bool:
    return any(isinstance(s, cls) for s in walk_stmts(node, into_loops=into_loops))


def stmt_exprs(s: Stmt) -> list[Expr]:
    """The expressions a statement evaluates itself (not those of nested statements)."""
    if isinstance(s, AssignStmt):
        return [s.value]
    if isinstance(s, EvalStmt):
        return [s.expr]
    if isinstance(s, IfStmt):
        return [s.condition]
    if isinstance(s, ForStmt):
        return [s.start, s.stop, s.step, *(ia.init_value for ia in s.iter_args)]
    if isinstance(s, WhileStmt):
        return [*(ia.init_value for ia in s.iter_args), s.condition]
    if isinstance(s, (YieldStmt, ReturnStmt)):
        return list(s.values)
    return []


def stmt_binders(s: Stmt) -> list[Var]:
    """The variables a statement binds itself (assignment target, loop var, iter_args, return vars)."""
    if isinstance(s, AssignStmt):
        return [s.var]
    if isinstance(s, ForStmt):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, WhileStmt):
        return [*s.iter_args, *s.return_vars]
    if isinstance(s, IfStmt):
        return list(s.return_vars)
    return []


# ---------------------------------------------------------------------------------------------
# walking expressions and types


def expr_nodes(e: Any) -> list[Node]:
    """Every node of an expression tree in post-order, but the constants; variables are leaves,
    types are skipped."""
    out: list[Node] = []
    todo = [e]
    while todo:  # pre-order with the children pushed left to right, reversed at the end
        v = todo.pop()
        if type(v) is tuple:
            todo.extend(v)
        elif isinstance(v, Expr) and not isinstance(v, CONSTANTS):
            out.append(v)
            if not isinstance(v, Var):
                for name, _ in walk_fields(type(v), False):
                    todo.append(getattr(v, name))
    out.reverse()
    return out


def type_vars(t: Any) -> list[Var]:
    """Variables a type mentions (dynamic dims, memrefs, shape expressions)."""
    if isinstance(t, Type) and is_constant_type(t):
        return []
    out: list[Var] = []
    todo = [t]
    while todo:
        v = todo.pop()
        if isinstance(v, Var):
            out.append(v)
        elif type(v) is tuple:
            todo.extend(v)
        elif isinstance(v, Node) and not isinstance(v, Op):
            todo.extend([getattr(v, n) for n, _ in walk_fields(type(v), True)])
    return out


def has_call(e: Expr) -> bool:
    """Whether an expression contains a Call (types are not looked into)."""
    if isinstance(e, Call):
        return True
    if isinstance(e, BinaryExpr):
        return has_call(e.lhs) or has_call(e.rhs)
    if isinstance(e, UnaryExpr):
        return has_call(e.operand)
    if isinstance(e, MakeTuple):
        return any(has_call(x) for x in e.elements)
    if isinstance(e, TupleGetItem):
        return has_call(e.tuple)
    return False


__all__ = [
    "CONSTANTS", "body_stmts", "child_bodies", "contains_stmt", "expr_nodes", "flatten_stmts", "has_call",
    "last_stmt", "make_body", "make_else", "split_yield", "stmt_binders", "stmt_exprs", "type_vars", "walk_stmts",
]
