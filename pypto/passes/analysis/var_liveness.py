"""Liveness of variables over structured statements (valid before SSA).

Each Var is treated as a storage location: an assignment kills it, a read makes it live. Loops are
solved to a fixpoint. Dynamic dimensions are never live (they are bound by parameter types).
"""

from __future__ import annotations

from collections.abc import Iterable

from pypto.ir.expr import Expr, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, Stmt, WhileStmt
from pypto.ir.variables import expr_vars
from pypto.ir.walk import body_stmts, stmt_exprs


class Liveness:
    """Backward liveness over structured statements, treating each Var as a storage location (so
    it is valid before SSA). `after(s)` is the set of variables live right after statement `s`;
    for loops, `head(loop)` is the set live at the loop head (exit test / next iteration) and
    `body_in(loop)` the set live on entry to the body. Break/continue are not modelled (run
    CtrlFlowTransform first)."""

    def __init__(self, node: Function | Stmt, live_out: Iterable[Var] = ()) -> None:
        self._root = node  # keeps the statements (whose ids are keys) alive
        self._vars: dict[int, set[Var]] = {}  # id(expr) -> expr_vars(expr): loops are walked until stable
        self._after: dict[int, frozenset[Var]] = {}
        self._head: dict[int, frozenset[Var]] = {}
        self._body_in: dict[int, frozenset[Var]] = {}
        body = node.body if isinstance(node, Function) else node
        self.live_in = self.block(body, frozenset(live_out))

    def after(self, s: Stmt) -> frozenset[Var]:
        return self._after.get(id(s), frozenset())

    def head(self, loop: Stmt) -> frozenset[Var]:
        return self._head.get(id(loop), frozenset())

    def body_in(self, loop: Stmt) -> frozenset[Var]:
        return self._body_in.get(id(loop), frozenset())

    def reads(self, e: Expr) -> set[Var]:
        got = self._vars.get(id(e))
        if got is None:
            got = self._vars[id(e)] = expr_vars(e)
        return got

    def block(self, body: Stmt | None, out: frozenset[Var]) -> frozenset[Var]:
        live = out
        for s in reversed(body_stmts(body)):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: Stmt, out: frozenset[Var]) -> frozenset[Var]:
        self._after[id(s)] = out
        if isinstance(s, AssignStmt):
            return (out - {s.var}) | self.reads(s.value)
        if isinstance(s, ScopeStmt):
            return self.block(s.body, out)
        if isinstance(s, IfStmt):
            rest = out - set(s.return_vars)
            t = self.block(s.then_body, rest)
            e = self.block(s.else_body, rest) if s.else_body is not None else rest
            return t | e | self.reads(s.condition)
        if isinstance(s, (ForStmt, WhileStmt)):
            rest = out - set(s.return_vars)
            binders = set(s.iter_args) | ({s.loop_var} if isinstance(s, ForStmt) else set())
            cond = self.reads(s.condition) if isinstance(s, WhileStmt) else frozenset()
            head = rest | (cond - binders)
            while True:
                b = self.block(s.body, head)
                new = rest | ((b | cond) - binders)
                if new == head:
                    break
                head = new
            self._head[id(s)] = head
            self._body_in[id(s)] = b
            pre = set().union(*(self.reads(e) for e in stmt_exprs(s) if e is not getattr(s, "condition", None)))
            return head | pre
        live = out
        for e in stmt_exprs(s):
            live = live | self.reads(e)
        return live


__all__ = ["Liveness"]
