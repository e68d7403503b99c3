"""Which variables a piece of IR reads and binds: uses, definitions, free variables, def-use.

A *variable* is a `Var` object (identity; the name is a hint). Before ConvertToSSA a Var may be
assigned several times (the parser reuses the object for a reassignment of the same type), so
these queries treat a Var as a storage location: "defined" means "has a binding site"
(AssignStmt target, loop var, iter_arg, return var, parameter), "used" means "read by an
expression". Dynamic dimensions (`DynVar`) are bound by parameter types and are never reported as
free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .expr import DynVar, MemRef, Var
from .function import Function
from .stmt import AssignStmt, ForStmt, IfStmt, Stmt, WhileStmt
from .types import TileType, Type, is_constant_type
from .visitor import IRVisitor
from .walk import stmt_binders, stmt_exprs, walk_stmts


def is_tile_var(v: object) -> bool:
    """A variable holding a tile (not a buffer)."""
    return isinstance(v, Var) and not isinstance(v, MemRef) and isinstance(v.type, TileType)


def is_alloc(s: Stmt) -> bool:
    """A statement that defines a buffer (`m = block.alloc(...)`: it binds a MemRef)."""
    return isinstance(s, AssignStmt) and isinstance(s.var, MemRef)


class _VarCollector(IRVisitor):
    def __init__(self, types: bool) -> None:
        self.visit_types = types
        self.uses: dict[Var, None] = {}
        self.defs: dict[Var, None] = {}

    def visit_Var(self, var: Var) -> None:
        self.uses.setdefault(var)

    def visit_def(self, var: Var) -> None:
        self.defs.setdefault(var)
        super().visit_def(var)

    def visit_Type(self, t: Type) -> None:
        if not is_constant_type(t):  # most types mention no variable
            self.generic_visit(t)


def collect_vars(node: Any, types: bool) -> tuple[list[Var], list[Var]]:
    """(the variables read under `node` in first-use order, those bound in program order); `types`:
    also those mentioned in types."""
    c = _VarCollector(types)
    c.visit_value(node) if isinstance(node, tuple) else c.visit(node)
    return list(c.uses), list(c.defs)


def used_vars(node: Any, *, types: bool = False) -> list[Var]:
    """Variables read anywhere under `node` (in first-use order). `types`: also those mentioned
    in types (dynamic shape expressions)."""
    return collect_vars(node, types)[0]


def defined_vars(node: Any) -> list[Var]:
    """Variables bound anywhere under `node` (in program order)."""
    return collect_vars(node, False)[1]


def free_vars(node: Any, *, types: bool = False) -> list[Var]:
    """Variables read under `node` but bound nowhere inside it (DynVars excluded). This is the SSA
    notion; before SSA a variable bound inside may also be read before that (use
    `pypto.passes.analysis.var_liveness.Liveness(node).live_in`)."""
    uses, defs = collect_vars(node, types)
    bound = set(defs)
    return [v for v in uses if v not in bound and not isinstance(v, DynVar)]


def expr_vars(e: Any) -> set[Var]:
    """The set of (non-dynamic) variables an expression reads."""
    return {v for v in collect_vars(e, False)[0] if not isinstance(v, DynVar)}


def assigned_vars(node: Stmt | None) -> list[Var]:
    """What a (non-SSA) statement tree may modify, in program order: assignment targets and the
    return vars of nested ifs and loops (not loop vars or iter_args, which never leave their loop)."""
    out: dict[Var, None] = {}
    for s in walk_stmts(node):
        if isinstance(s, AssignStmt):
            out.setdefault(s.var)
        elif isinstance(s, (IfStmt, ForStmt, WhileStmt)):
            for v in s.return_vars:
                out.setdefault(v)
    return list(out)


@dataclass
class DefUse:
    """Binding sites and reading statements of every variable of a function or statement tree.

    `defs[v]` lists the statements binding v (the Function itself for parameters); `uses[v]` the
    statements whose own expressions read v (a loop reading v in its bounds or init values counts,
    its body's statements are listed separately)."""

    defs: dict[Var, list[Stmt | Function]] = field(default_factory=dict)
    uses: dict[Var, list[Stmt]] = field(default_factory=dict)

    def num_defs(self, v: Var) -> int:
        return len(self.defs.get(v, ()))

    def users(self, v: Var) -> list[Stmt]:
        return self.uses.get(v, [])

    def multiply_defined(self) -> list[Var]:
        return [v for v, d in self.defs.items() if len(d) > 1]


def def_use(node: Function | Stmt) -> DefUse:
    du = DefUse()
    if isinstance(node, Function):
        for p in node.params:
            du.defs.setdefault(p, []).append(node)
    for s in walk_stmts(node):
        for v in stmt_binders(s):
            du.defs.setdefault(v, []).append(s)
        for e in stmt_exprs(s):
            for v in used_vars(e):
                lst = du.uses.setdefault(v, [])
                if not lst or lst[-1] is not s:
                    lst.append(s)
    return du


__all__ = ["DefUse", "assigned_vars", "collect_vars", "def_use", "defined_vars", "expr_vars", "free_vars",
           "is_alloc", "is_tile_var", "used_vars"]
