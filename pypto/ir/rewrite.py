"""Rewriting IR: the statement rewriter base, variable substitution and cloning with fresh
variables.

`StmtRewriter` works statement by statement (replace, delete, expand); `Substitute` (an
`IRMutator`) works on expressions and binding sites. Bodies are rebuilt flat (`walk.make_body`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .expr import DynVar, Expr, GlobalVar, IterArg, Op, Var
from .stmt import ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from .visitor import IRMutator, rebuild
from .walk import body_stmts, flatten_stmts, make_body


class StmtRewriter:
    """Rewrites statement trees one statement at a time.

    Override `rewrite(s)`: it returns the statement(s) replacing `s` (a Stmt, or a list: empty to
    delete, several to expand). The default, `recurse(s)`, rewrites the bodies nested in `s` and
    rebuilds it only if one changed. Bodies are rebuilt flat (`make_body`); an else that becomes
    empty is dropped (None)."""

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        return self.recurse(s)

    def rewrite_stmts(self, stmts: Iterable[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            r = self.rewrite(s)
            out.extend(flatten_stmts([r] if isinstance(r, Stmt) else r))
        return out

    def rewrite_body(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        old = body_stmts(body)
        new = self.rewrite_stmts(old)
        if len(new) == len(old) and all(a is b for a, b in zip(new, old)):
            return body
        return make_body(new)

    def recurse(self, s: Stmt) -> Stmt:
        if isinstance(s, IfStmt):
            t = self.rewrite_body(s.then_body)
            e = self.rewrite_body(s.else_body)
            if e is not None and e is not s.else_body and not body_stmts(e):
                e = None
            if t is s.then_body and e is s.else_body:
                return s
            return rebuild(s, {"then_body": t, "else_body": e})  # type: ignore[return-value]
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            b = self.rewrite_body(s.body)
            return s if b is s.body else rebuild(s, {"body": b})  # type: ignore[return-value]
        if isinstance(s, SeqStmts):
            return make_body(self.rewrite_stmts(s.stmts))
        return s


# ---------------------------------------------------------------------------------------------
# substitution and cloning


class Substitute(IRMutator):
    """Replace variables: a Var -> Var entry renames uses *and* binding sites; a Var -> Expr entry
    replaces uses only. With `types` (default) shape expressions inside types are rewritten too,
    and a variable whose type changes is re-created (its uses follow)."""

    def __init__(self, mapping: Mapping[Var, Expr], types: bool = True) -> None:
        super().__init__()
        self.visit_types = types
        self.exprs: dict[Var, Expr] = {}
        for k, v in mapping.items():
            if isinstance(v, Var):
                self.var_map[k] = v
            else:
                self.exprs[k] = v

    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_GlobalVar(self, g: GlobalVar) -> GlobalVar:
        return g

    def visit_Var(self, var: Var) -> Expr:
        got = self.var_map.get(var)
        if got is not None:
            return got
        return self.exprs.get(var, var)

    def visit_WhileStmt(self, s: WhileStmt) -> Stmt:
        # the iter_args are bound before the condition reads them (field order says otherwise)
        ias = tuple(self.mutate_def(x) for x in s.iter_args)
        cond, body = self.visit(s.condition), self.visit(s.body)
        rvs = tuple(self.mutate_def(x) for x in s.return_vars)
        if cond is s.condition and body is s.body and all(a is b for a, b in zip(ias + rvs, s.iter_args + s.return_vars)):
            return s
        return WhileStmt(cond, ias, body, rvs, span=s.span)


def substitute(node: Any, mapping: Mapping[Var, Expr], *, types: bool = True) -> Any:
    """`node` (expression, statement, type, function) with variables replaced per `mapping`."""
    if not mapping:
        return node
    return Substitute(mapping, types).visit(node)


class _Cloner(Substitute):
    def __init__(self, mapping: Mapping[Var, Expr], keep: set[Var], rename: Callable[[Var], str] | None) -> None:
        super().__init__(mapping)
        self.keep = keep
        self.rename = rename

    def mutate_def(self, var: Var) -> Var:
        got = self.var_map.get(var)
        if got is not None:
            return got
        if var in self.keep or isinstance(var, DynVar):
            return super().mutate_def(var)
        t = self.visit(var.type) if var.type is not None else None
        name = self.rename(var) if self.rename is not None else var.name
        if isinstance(var, IterArg):
            new: Var = IterArg(name, t, self.visit(var.init_value), span=var.span)
        else:
            new = rebuild(var, {"type": t, "name": name})  # type: ignore[assignment]
        self.var_map[var] = new
        return new


def clone_fresh(node: Any, mapping: Mapping[Var, Expr] | None = None, keep: Iterable[Var] = (),
                rename: Callable[[Var], str] | None = None) -> tuple[Any, dict[Var, Var]]:
    """A copy of `node` in which every variable bound inside it (except those in `keep`) is a new
    Var object, used consistently; `mapping` substitutes free variables on the way. Returns the
    copy and the old -> new map of the re-created variables. A variable bound several times (non-SSA)
    maps to one new variable."""
    c = _Cloner(mapping or {}, set(keep), rename)
    out = c.visit(node)
    return out, dict(c.var_map)


__all__ = ["StmtRewriter", "Substitute", "clone_fresh", "substitute"]
