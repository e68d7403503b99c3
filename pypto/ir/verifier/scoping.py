"""Rules on where variables are defined and visible: SSAVerify (one definition per variable,
yields, iter_args, scopes) and UseAfterDef, over one walk that tracks the visible variables.

Scoping follows the parser: plain loops, ifs without return_vars and `with` scopes leak their
definitions to the enclosing block; loops with iter_args and ifs with return_vars do not (only
their return vars are visible after them); loop variables and iter_args never leave their loop.
"""

from __future__ import annotations

from ..expr import DynVar, Expr, MemRef, Var
from ..node import Node
from ..stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt, YieldStmt
from ..walk import child_bodies, last_stmt, stmt_binders, stmt_exprs, type_vars, walk_stmts
from .context import Context, Rule, Unit


def scope_walk(ctx: Context, unit: Unit) -> ScopeWalk:
    """The scope walk of a unit, made once per verification run (SSAVerify and UseAfterDef share it)."""
    key = ("scopes", id(unit))
    got = ctx.shared.get(key)
    if got is None:
        got = ctx.shared[key] = ScopeWalk(unit, ctx)
    return got


class ScopeWalk:
    """Walks one unit in program order tracking visible variables; shared by SSAVerify and
    UseAfterDef. Results: `redefined` (var, stmt), `out_of_scope` and `undefined` (var, node, stmt, note)."""

    def __init__(self, unit: Unit, ctx: Context) -> None:
        self.ctx = ctx
        self.strict = unit.function is not None
        stmts = list(walk_stmts(unit.body))
        self.allocs = {s.var for s in stmts if isinstance(s, AssignStmt)}
        self.tree_defs: set[Var] = set()
        for s in stmts:
            self.tree_defs.update(stmt_binders(s))
        self.scopes: list[set[Var]] = [set()]
        self.ever: set[Var] = set()
        self.scoped_by: dict[Var, Stmt] = {}
        self.redefined: list[tuple[Var, Stmt | None]] = []
        self.out_of_scope: list[tuple[Var, Node, Stmt | None, str]] = []
        self.undefined: list[tuple[Var, Node, Stmt | None, str]] = []
        self.bound_dyn: set[Var] = set()
        self.reported: set[Var] = set()
        if unit.function is not None:
            for p in unit.function.params:
                self.define(p, None)
                self.bound_dyn.update(v for v in type_vars(p.type) if isinstance(v, DynVar))
        if unit.body is not None:
            self.stmt(unit.body)

    def define(self, v: Var, s: Stmt | None) -> None:
        if v in self.ever:
            self.redefined.append((v, s))
        self.ever.add(v)
        self.scopes[-1].add(v)
        if s is not None:
            for tv in type_vars(v.type):
                if isinstance(tv, (DynVar, MemRef)):
                    self.use(tv, v, s, f"in the type of {v.name}")

    def visible(self, v: Var) -> bool:
        for sc in reversed(self.scopes):
            if v in sc:
                return True
        return False

    def use(self, v: Var, node: Node, s: Stmt | None, note: str = "") -> None:
        """Record a faulty use; each variable is reported once (at its first faulty use)."""
        if self.visible(v) or v in self.reported:
            return
        if isinstance(v, DynVar):
            if v not in self.bound_dyn and self.strict:
                self.undefined.append((v, node, s, "dynamic dimension"))
                self.reported.add(v)
            return
        if isinstance(v, MemRef) and v not in self.allocs:
            return  # a memref without an alloc statement is defined implicitly by its type
        if v in self.ever:
            self.out_of_scope.append((v, node, s, note))
            self.reported.add(v)
        elif self.strict or v in self.tree_defs:
            self.undefined.append((v, node, s, note))
            self.reported.add(v)

    def exprs(self, s: Stmt, exprs: list[Expr]) -> None:
        for e in exprs:
            for n in self.ctx.expr_nodes(e):
                if isinstance(n, Var):
                    self.use(n, n, s)

    def block(self, body: Stmt | None, binders: list[Var], construct: Stmt) -> set[Var]:
        """Walk `body` in a new scope holding `binders`; returns what it defined besides them."""
        self.scopes.append(set())
        for b in binders:
            self.define(b, construct)
        if body is not None:
            self.stmt(body)
        inner = self.scopes.pop()
        for b in binders:
            inner.discard(b)
            self.scoped_by[b] = construct
        return inner

    def close(self, inner: set[Var], construct: Stmt, leak: bool) -> None:
        if leak:
            self.scopes[-1].update(inner)
        else:
            for v in inner:
                self.scoped_by.setdefault(v, construct)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for c in s.stmts:
                self.stmt(c)
        elif isinstance(s, AssignStmt):
            self.exprs(s, [s.value])
            self.define(s.var, s)
        elif isinstance(s, IfStmt):
            self.exprs(s, [s.condition])
            inner = self.block(s.then_body, [], s) | self.block(s.else_body, [], s)
            self.close(inner, s, not s.return_vars)
            for v in s.return_vars:
                self.define(v, s)
        elif isinstance(s, (ForStmt, WhileStmt)):
            self.exprs(s, [ia.init_value for ia in s.iter_args])
            binders: list[Var] = list(s.iter_args)
            if isinstance(s, ForStmt):
                self.exprs(s, [s.start, s.stop, s.step])
                binders.insert(0, s.loop_var)
            else:
                self.scopes.append(set(s.iter_args))  # the condition sees the iter_args
                self.exprs(s, [s.condition])
                self.scopes.pop()
            self.close(self.block(s.body, binders, s), s, not s.iter_args)
            for v in s.return_vars:
                self.define(v, s)
        elif isinstance(s, ScopeStmt):
            self.stmt(s.body)
        else:
            self.exprs(s, stmt_exprs(s))


_CONSTRUCT = {ForStmt: "for loop", WhileStmt: "while loop", IfStmt: "if"}


class SSAVerify(Rule):
    name = "SSAVerify"
    codes = {1: "multiple assignment", 2: "name shadowing (not reported)", 3: "missing yield",
             4: "iter_args/return_vars mismatch", 5: "yield count mismatch", 6: "scope violation"}

    def check(self, ctx: Context) -> None:
        for unit in ctx.units:
            walk = scope_walk(ctx, unit)
            for v, s in walk.redefined:
                ctx.report(self, 1, f"variable {v.name} is defined more than once (SSA: one definition per "
                           f"variable)", s if s is not None else v, s, unit)
            for v, node, s, _ in walk.out_of_scope:
                owner = walk.scoped_by.get(v)
                where = f"the {_CONSTRUCT.get(type(owner), 'block')} at {owner.span}" if owner else "its block"
                hint = ("; pass it out with yield_ and use the return var" if not isinstance(owner, ForStmt)
                        or v is not owner.loop_var else "")
                ctx.report(self, 6, f"variable {v.name} is used outside {where}, which scopes it{hint}",
                           node, s, unit)
            self._structure(ctx, unit, unit.body, [])

    def _structure(self, ctx: Context, unit: Unit, s: Stmt | None, enclosing: list[Stmt]) -> None:
        if s is None:
            return
        if isinstance(s, (ForStmt, WhileStmt)):
            what = _CONSTRUCT[type(s)]
            if len(s.iter_args) != len(s.return_vars):
                ctx.report(self, 4, f"{what} has {len(s.iter_args)} iter_args but {len(s.return_vars)} "
                           f"return vars", s, s, unit)
            if s.iter_args and not isinstance(last_stmt(s.body), YieldStmt):
                ctx.report(self, 3, f"{what} with {len(s.iter_args)} iter_args must end its body with a "
                           f"yield_", s, s, unit)
        elif isinstance(s, IfStmt) and s.return_vars:
            for label, body in (("then", s.then_body), ("else", s.else_body)):
                if body is None:
                    ctx.report(self, 3, f"if with {len(s.return_vars)} return vars has no else branch to "
                               f"yield them", s, s, unit)
                elif not isinstance(last_stmt(body), YieldStmt):
                    ctx.report(self, 3, f"the {label} branch of an if with {len(s.return_vars)} return vars "
                               f"must end with a yield_", s, s, unit)
        elif isinstance(s, YieldStmt):
            owner = enclosing[-1] if enclosing else None
            if owner is None:
                ctx.report(self, 5, "yield_ outside any loop or if", s, s, unit)
            else:
                want = len(owner.return_vars) if isinstance(owner, IfStmt) else len(owner.iter_args)
                if len(s.values) != want:
                    article = "an" if isinstance(owner, IfStmt) else "a"
                    ctx.report(self, 5, f"yield_ of {len(s.values)} value(s) in {article} {_CONSTRUCT[type(owner)]} "
                               f"expecting {want}", s, s, unit)
        inner = enclosing + [s] if isinstance(s, (ForStmt, WhileStmt, IfStmt)) else enclosing
        for c in child_bodies(s):
            self._structure(ctx, unit, c, inner)


class UseAfterDef(Rule):
    name = "UseAfterDef"
    codes = {401: "use before definition"}

    def check(self, ctx: Context) -> None:
        for unit in ctx.units:
            for v, node, s, note in scope_walk(ctx, unit).undefined:
                if note == "dynamic dimension":
                    fn = unit.function.name if unit.function is not None else "?"
                    msg = f"dynamic dimension {v.name} is not bound by any parameter type of function {fn}"
                elif isinstance(v, MemRef):
                    msg = f"memref {v.name} is used {note} before its alloc statement"
                else:
                    msg = f"variable {v.name} is used {note + ' ' if note else ''}before it is defined"
                ctx.report(self, 401, msg, node, s, unit)


__all__ = ["SSAVerify", "ScopeWalk", "UseAfterDef", "scope_walk"]
