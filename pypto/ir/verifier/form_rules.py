"""Rules on where statements and calls may appear: BreakContinue (break/continue only in
sequential and while loops) and NoNestedCall (the flat form FlattenCallExpr produces; off by
default).
"""

from __future__ import annotations

from typing import Any

from ..enums import ForKind
from ..expr import BinaryExpr, Call, Expr, MakeTuple, TupleGetItem, UnaryExpr, Var
from ..stmt import BreakStmt, ContinueStmt, ForStmt, IfStmt, Stmt, WhileStmt
from ..walk import child_bodies, stmt_exprs, walk_stmts
from .context import Context, Rule, Unit


class BreakContinue(Rule):
    name = "BreakContinue"
    codes = {601: "break/continue outside a sequential or while loop"}

    def check(self, ctx: Context) -> None:
        for unit in ctx.units:
            self._walk(ctx, unit, unit.body, None)

    def _walk(self, ctx: Context, unit: Unit, s: Stmt | None, loop: Stmt | None) -> None:
        if isinstance(s, (BreakStmt, ContinueStmt)):
            word = "break" if isinstance(s, BreakStmt) else "continue"
            if loop is None:
                ctx.report(self, 601, f"{word} outside a loop", s, s, unit)
            elif isinstance(loop, ForStmt) and loop.kind is not ForKind.Sequential:
                ctx.report(self, 601, f"{word} inside a {loop.kind.name} loop (only sequential for loops and "
                           f"while loops can break or continue)", s, s, unit)
            return
        inner = s if isinstance(s, (ForStmt, WhileStmt)) else loop
        for c in child_bodies(s) if s is not None else []:
            self._walk(ctx, unit, c, inner)


class NoNestedCall(Rule):
    name = "NoNestedCall"
    codes = {501: "nested call"}
    default = False

    def check(self, ctx: Context) -> None:
        for unit in ctx.units:
            for s in walk_stmts(unit.body):
                if isinstance(s, IfStmt):
                    self._expr(ctx, unit, s, s.condition, "an if condition")
                elif isinstance(s, WhileStmt):
                    self._expr(ctx, unit, s, s.condition, "a while condition")
                elif isinstance(s, ForStmt):
                    for b in (s.start, s.stop, s.step):
                        self._expr(ctx, unit, s, b, "a for-loop bound")
                if isinstance(s, (ForStmt, WhileStmt)):
                    for ia in s.iter_args:
                        self._expr(ctx, unit, s, ia.init_value, None)
                elif not isinstance(s, IfStmt):
                    for e in stmt_exprs(s):
                        self._expr(ctx, unit, s, e, None)

    def _expr(self, ctx: Context, unit: Unit, s: Stmt, e: Any, where: str | None) -> None:
        stack: list[tuple[Any, str | None]] = [(e, where)]
        while stack:
            v, w = stack.pop()
            if type(v) is tuple:
                stack.extend((x, w) for x in v)
                continue
            if not isinstance(v, Expr) or isinstance(v, Var):
                continue
            if isinstance(v, Call):
                if w is not None:
                    ctx.report(self, 501, f"call of {v.op.name} inside {w}; bind it to a variable first "
                               f"(FlattenCallExpr)", v, s, unit)
                stack.extend((a, f"the arguments of {v.op.name}") for a in v.args)
            elif isinstance(v, (BinaryExpr, UnaryExpr)):
                kids = (v.lhs, v.rhs) if isinstance(v, BinaryExpr) else (v.operand,)
                stack.extend((k, "a scalar expression") for k in kids)
            elif isinstance(v, (MakeTuple, TupleGetItem)):
                stack.append((v.elements if isinstance(v, MakeTuple) else v.tuple, w))


__all__ = ["BreakContinue", "NoNestedCall"]
