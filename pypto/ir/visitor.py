"""Generic IR walkers: a read-only visitor and a rebuilding mutator.

Both dispatch on `visit_<ClassName>` found along the node's class MRO (so `visit_BinaryExpr`
catches every binary operator unless a subclass has its own). Variables are leaves where they are
used; where they are defined (DEF fields) `visit_def` / `mutate_def` runs instead, which walks an
IterArg's init value. Types are walked only when `visit_types` is True (shape expressions may
reference variables; most passes do not care).
"""

from __future__ import annotations

from typing import Any

from .expr import IterArg, Var
from .node import FieldKind, Node, node_fields
from .types import Type

_IGNORE = FieldKind.IGNORE
_DEF = FieldKind.DEF


def _dispatch_table(owner: type, node_cls: type, cache: dict) -> Any:
    key = (owner, node_cls)
    fn = cache.get(key)
    if fn is None:
        fn = None
        for c in node_cls.__mro__:
            fn = getattr(owner, "visit_" + c.__name__, None)
            if fn is not None:
                break
        if fn is None:
            fn = owner.generic_visit
        cache[key] = fn
    return fn


_VISIT_CACHE: dict = {}
_MUTATE_CACHE: dict = {}


class IRVisitor:
    visit_types: bool = False

    def visit(self, node: Any) -> Any:
        return _dispatch_table(type(self), type(node), _VISIT_CACHE)(self, node)

    def visit_value(self, v: Any) -> None:
        if isinstance(v, Node):
            if isinstance(v, Type) and not self.visit_types:
                return
            self.visit(v)
        elif type(v) is tuple:
            for x in v:
                self.visit_value(x)

    def visit_def(self, var: Var) -> None:
        """A variable at its binding site."""
        if isinstance(var, IterArg):
            self.visit(var.init_value)
        if self.visit_types and var.type is not None:
            self.visit(var.type)

    def visit_Var(self, var: Var) -> None:  # a use
        return None

    def generic_visit(self, node: Node) -> None:
        for name, kind in node_fields(type(node)):
            if kind is _IGNORE:
                continue
            v = getattr(node, name)
            if kind is _DEF:
                if type(v) is tuple:
                    for x in v:
                        self.visit_def(x)
                elif v is not None:
                    self.visit_def(v)
            else:
                self.visit_value(v)


class IRMutator:
    """Rebuilds a tree bottom-up; a node whose children are unchanged is returned as is.

    `var_map` maps old variables to their replacements; uses are rewritten through it. A mutator
    that redefines a variable (new name or type) records the pair at the definition site.
    """

    visit_types: bool = False

    def __init__(self) -> None:
        self.var_map: dict[Var, Var] = {}

    def visit(self, node: Any) -> Any:
        return _dispatch_table(type(self), type(node), _MUTATE_CACHE)(self, node)

    def mutate_value(self, v: Any) -> Any:
        if isinstance(v, Node):
            if isinstance(v, Type) and not self.visit_types:
                return v
            return self.visit(v)
        if type(v) is tuple:
            out = None
            for i, x in enumerate(v):
                y = self.mutate_value(x)
                if y is not x:
                    if out is None:
                        out = list(v[:i])
                if out is not None:
                    out.append(y)
            return v if out is None else tuple(out)
        return v

    def visit_Var(self, var: Var) -> Var:  # a use
        return self.var_map.get(var, var)

    def mutate_def(self, var: Var) -> Var:
        """A variable at its binding site; returns the variable to bind (maybe a new one)."""
        mapped = self.var_map.get(var)
        if mapped is not None:
            return mapped
        new = var
        if isinstance(var, IterArg):
            init = self.visit(var.init_value)
            if init is not var.init_value:
                new = IterArg(var.name, var.type, init, span=var.span)
        if self.visit_types and var.type is not None:
            t = self.visit(var.type)
            if t is not var.type:
                new = _retype(new, t)
        if new is not var:
            self.var_map[var] = new
        return new

    def generic_visit(self, node: Node) -> Node:
        changes: dict[str, Any] | None = None
        for name, kind in node_fields(type(node)):
            if kind is _IGNORE:
                continue
            v = getattr(node, name)
            if kind is _DEF:
                if type(v) is tuple:
                    nv = tuple(self.mutate_def(x) for x in v)
                    if all(a is b for a, b in zip(nv, v)):
                        nv = v
                else:
                    nv = self.mutate_def(v) if v is not None else None
            else:
                nv = self.mutate_value(v)
            if nv is not v:
                if changes is None:
                    changes = {}
                changes[name] = nv
        if changes is None:
            return node
        return rebuild(node, changes)


def rebuild(node: Node, changes: dict[str, Any]) -> Node:
    cls = type(node)
    kw = {name: changes.get(name, getattr(node, name)) for name, _ in node_fields(cls)}
    return cls(**kw)


def _retype(var: Var, t: Type) -> Var:
    return rebuild(var, {"type": t})  # type: ignore[return-value]


def retype(var: Var, t: Type) -> Var:
    """A new variable like `var` (same class, name and extra fields) with type `t`."""
    return _retype(var, t)


__all__ = ["IRMutator", "IRVisitor", "rebuild", "retype"]
