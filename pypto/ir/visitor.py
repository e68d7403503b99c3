"""Generic IR walkers: a read-only visitor and a rebuilding mutator.

Both dispatch on `visit_<ClassName>` found along the node's class MRO (so `visit_BinaryExpr`
catches every binary operator unless a subclass has its own). Variables are leaves where they are
used; where they are defined (DEF fields) `visit_def` / `mutate_def` runs instead, which walks an
IterArg's init value. Types are walked only when `visit_types` is True (shape expressions may
reference variables; most passes do not care).
"""

from __future__ import annotations

from typing import Any

from .expr import ConstBool, ConstFloat, ConstInt, IterArg, MakeTuple, Op, Var
from .node import FieldKind, Node, node_fields, walk_fields
from .types import Type

_DEF = FieldKind.DEF


_CONSTANTS = (ConstInt, ConstFloat, ConstBool)


def _leaf_visit(self: Any, node: Node) -> None:
    return None


def _leaf_mutate(self: Any, node: Node) -> Node:
    return node


def _tuple_visit(self: Any, e: MakeTuple) -> None:
    for x in e.elements:
        if not isinstance(x, _CONSTANTS):
            return IRVisitor.generic_visit(self, e)
    return None


def _tuple_mutate(self: Any, e: MakeTuple) -> Node:
    for x in e.elements:
        if not isinstance(x, _CONSTANTS):
            return IRMutator.generic_visit(self, e)
    return e


def _resolve(owner: type, node_cls: type, base: type, leaf: Any, constants: Any) -> Any:
    """The `visit_<Class>` method of `owner` for the nearest class along `node_cls`'s MRO (cached
    per walker class in `owner._handlers`).

    Where `owner` has no method of its own and `base.generic_visit` would run, two shortcuts do
    the same with less work: a node that holds no other node (a constant, a scalar type, a
    function reference) or an operator (its fields are registry data, never IR) gets `leaf`; a
    list of constants (the shapes and offsets of tile ops: a good part of every kernel) gets
    `constants`, which looks at the elements only when one is not a constant — provided constants
    are leaves for `owner` too."""
    fn = None
    for c in node_cls.__mro__:
        fn = getattr(owner, "visit_" + c.__name__, None)
        if fn is not None:
            break
    if fn is None:
        fn = owner.generic_visit
        if fn is base.generic_visit:
            if not walk_fields(node_cls, True) or issubclass(node_cls, Op):
                fn = leaf
            elif node_cls is MakeTuple and all(_resolve(owner, c, base, leaf, constants) is leaf for c in _CONSTANTS):
                fn = constants
    owner._handlers[node_cls] = fn
    return fn


class IRVisitor:
    visit_types: bool = False
    _handlers: dict[type, Any] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._handlers = {}  # each walker class resolves its own methods

    def visit(self, node: Any) -> Any:
        fn = self._handlers.get(type(node))
        if fn is None:
            fn = _resolve(type(self), type(node), IRVisitor, _leaf_visit, _tuple_visit)
        return fn(self, node)

    def visit_value(self, v: Any) -> None:
        if isinstance(v, Node):
            if isinstance(v, Type) and not self.visit_types:
                return
            self.visit(v)
        elif isinstance(v, tuple):
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
        types = self.visit_types
        for name, kind in walk_fields(type(node), types):
            v = getattr(node, name)
            if kind is _DEF:
                if isinstance(v, tuple):
                    for x in v:
                        self.visit_def(x)
                elif v is not None:
                    self.visit_def(v)
            elif isinstance(v, tuple):
                for x in v:
                    if isinstance(x, Node) and (types or not isinstance(x, Type)):
                        self.visit(x)
                    elif isinstance(x, tuple):
                        self.visit_value(x)
            elif isinstance(v, Node) and (types or not isinstance(v, Type)):
                self.visit(v)


class IRMutator:
    """Rebuilds a tree bottom-up; a node whose children are unchanged is returned as is.

    `var_map` maps old variables to their replacements; uses are rewritten through it. A mutator
    that redefines a variable (new name or type) records the pair at the definition site.
    """

    visit_types: bool = False
    _handlers: dict[type, Any] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._handlers = {}

    def __init__(self) -> None:
        self.var_map: dict[Var, Var] = {}

    def visit(self, node: Any) -> Any:
        fn = self._handlers.get(type(node))
        if fn is None:
            fn = _resolve(type(self), type(node), IRMutator, _leaf_mutate, _tuple_mutate)
        return fn(self, node)

    def mutate_value(self, v: Any) -> Any:
        if isinstance(v, Node):
            if isinstance(v, Type) and not self.visit_types:
                return v
            return self.visit(v)
        if isinstance(v, tuple):
            types = self.visit_types
            out = None
            for i, x in enumerate(v):
                if isinstance(x, Node):  # mutate_value(x), without the extra call per element
                    y = self.visit(x) if types or not isinstance(x, Type) else x
                else:
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
        types = self.visit_types
        changes: dict[str, Any] | None = None
        for name, kind in walk_fields(type(node), types):
            v = getattr(node, name)
            if kind is _DEF:
                if isinstance(v, tuple):
                    nv = tuple([self.mutate_def(x) for x in v])
                    if all(a is b for a, b in zip(nv, v)):
                        continue
                elif v is None:
                    continue
                else:
                    nv = self.mutate_def(v)
            elif isinstance(v, tuple):
                nv = self.mutate_value(v)
            elif isinstance(v, Node) and (types or not isinstance(v, Type)):
                nv = self.visit(v)
            else:
                continue
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
