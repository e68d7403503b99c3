"""Structural equality and hashing: compare trees, ignoring spans and names.

Variables defined inside the compared trees (DEF fields: params, assignment targets, loop vars,
iter_args, return vars) are matched to each other on first sight, so `x = a + b` and
`y = a + b` are equal. Free variables (e.g. dynamic dimensions) compare by identity unless
`enable_auto_mapping` is set, in which case they too are matched one-to-one.
Equal trees have equal hashes.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import Error

from .expr import Expr, Op, Var
from .node import FieldKind, Node, node_fields, walk_fields
from .stmt import Stmt
from .types import Type, is_constant_type

_IGNORE = FieldKind.IGNORE
_DEF = FieldKind.DEF


class StructuralMismatch(Error, AssertionError):
    pass


class _Equal:
    def __init__(self, auto: bool, want_path: bool):
        self.auto = auto
        self.lmap: dict[Var, Var] = {}
        self.rmap: dict[Var, Var] = {}
        self.only_identity = True  # every variable matched so far is matched to itself
        self.want_path = want_path
        self.path: list[str] = []
        self.why = ""

    def fail(self, why: str) -> bool:
        if not self.why:
            self.why = why
        return False

    def var(self, a: Var, b: Var, defining: bool) -> bool:
        if type(a) is not type(b):
            return self.fail(f"{type(a).__name__} vs {type(b).__name__}")
        got = self.lmap.get(a)
        if got is not None:
            return got is b or self.fail(f"variable {a.name} is matched to {got.name}, not {b.name}")
        if b in self.rmap:
            return self.fail(f"variable {b.name} is already matched to {self.rmap[b].name}")
        if not (defining or self.auto):
            return a is b or self.fail(f"free variables {a.name} and {b.name} differ")
        # bind first: a variable's type may mention itself only through other vars
        self.lmap[a] = b
        self.rmap[b] = a
        if a is not b:
            self.only_identity = False
        return self.fields(a, b)

    def fields(self, a: Node, b: Node) -> bool:
        for name, defining in _compared_fields(type(a)):
            x, y = getattr(a, name), getattr(b, name)
            if x is y and not (isinstance(x, tuple) or isinstance(x, Node)):
                continue  # one plain value (a number, a string, an enum member)
            if self.want_path:
                self.path.append(name)
            ok = self.value(x, y, defining)
            if not ok:
                return False
            if self.want_path:
                self.path.pop()
        return True

    def _same(self, a: Node) -> bool:
        """Whether a node is equal to itself here without comparing it field by field.

        Operators, nodes that hold no other node and constant types hold no variables. Comparing
        any other node with itself could fail on a variable already matched to another one, or
        record matches that later comparisons depend on, so the shortcut is taken only while free
        variables are not being matched and every variable matched so far is matched to itself.
        Expressions and types then need nothing more; a statement's binding sites are recorded as
        matched to themselves, as the field-by-field comparison would have done."""
        if isinstance(a, Op) or not walk_fields(type(a), True) or (isinstance(a, Type) and is_constant_type(a)):
            return True
        if self.auto:
            return False
        if not self.lmap:
            return True
        if not self.only_identity:
            return False
        if isinstance(a, (Expr, Type)):
            return True
        if isinstance(a, Stmt):
            self._match_binders(a)
            return True
        return False

    def _match_binders(self, s: Stmt) -> None:
        todo = [s]
        while todo:
            n = todo.pop()
            for name, defining in _compared_fields(type(n)):
                v = getattr(n, name)
                if defining:
                    for x in v if isinstance(v, tuple) else () if v is None else (v,):
                        self.lmap[x] = x
                        self.rmap[x] = x
                elif isinstance(v, Stmt):
                    todo.append(v)
                elif isinstance(v, tuple):
                    todo.extend(x for x in v if isinstance(x, Stmt))

    def value(self, a: Any, b: Any, defining: bool = False) -> bool:
        if isinstance(a, Node):
            if isinstance(a, Var) and isinstance(b, Var):
                return self.var(a, b, defining)
            if type(a) is not type(b):
                return self.fail(f"{type(a).__name__} vs {type(b).__name__}")
            if a is b and self._same(a):
                return True
            return self.fields(a, b)
        if isinstance(a, tuple):
            if not isinstance(b, tuple) or len(a) != len(b):
                return self.fail(f"sequence lengths {len(a)} vs {len(b) if isinstance(b, tuple) else b!r}")
            for i, (x, y) in enumerate(zip(a, b)):
                if self.want_path:
                    self.path.append(f"[{i}]")
                if not self.value(x, y, defining):
                    return False
                if self.want_path:
                    self.path.pop()
            return True
        if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            return self.fail(f"{a!r} vs {b!r}")
        if isinstance(a, float) and a != a and b != b:
            return True
        return a == b or self.fail(f"{a!r} vs {b!r}")


_COMPARED: dict[type, tuple[tuple[str, bool], ...]] = {}


def _compared_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """(name, is a binding site) of the fields equality and hashing look at (cached)."""
    got = _COMPARED.get(cls)
    if got is None:
        got = _COMPARED[cls] = tuple((name, kind is _DEF) for name, kind in node_fields(cls) if kind is not _IGNORE)
    return got


def structural_equal(a: Any, b: Any, enable_auto_mapping: bool = False) -> bool:
    return _Equal(enable_auto_mapping, False).value(a, b)


def assert_structural_equal(a: Any, b: Any, enable_auto_mapping: bool = False) -> None:
    """Raise StructuralMismatch naming the first differing field path."""
    eq = _Equal(enable_auto_mapping, True)
    if not eq.value(a, b):
        where = ".".join(eq.path).replace(".[", "[") or "<root>"
        raise StructuralMismatch(f"IR differs at {where}: {eq.why}")


class _Hasher:
    def __init__(self, auto: bool):
        self.auto = auto
        self.ids: dict[Var, int] = {}

    def value(self, v: Any, defining: bool = False) -> int:
        if isinstance(v, Var):
            got = self.ids.get(v)
            if got is None:
                if not (defining or self.auto):
                    return hash(("free", id(v)))
                got = len(self.ids)
                self.ids[v] = got
                return hash(("var", type(v).__name__, got, self.fields(v)))
            return hash(("ref", got))
        if isinstance(v, Node):
            return hash((type(v).__name__, self.fields(v)))
        if isinstance(v, tuple):
            return hash(tuple(self.value(x, defining) for x in v))
        if isinstance(v, float) and v.is_integer():
            return hash(int(v))
        if isinstance(v, dict):
            return hash(tuple((k, self.value(x, defining)) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))))
        if isinstance(v, list):
            return hash(tuple(self.value(x, defining) for x in v))
        try:
            return hash(v)
        except TypeError:  # an unhashable plain value (an op definition, ...): by what it prints as
            return hash((type(v).__name__, getattr(v, "name", None) or repr(v)))

    def fields(self, n: Node) -> int:
        return hash(tuple(self.value(getattr(n, name), kind is _DEF)
                          for name, kind in node_fields(type(n)) if kind is not _IGNORE))


def structural_hash(node: Any, enable_auto_mapping: bool = False) -> int:
    return _Hasher(enable_auto_mapping).value(node)


__all__ = ["StructuralMismatch", "assert_structural_equal", "structural_equal", "structural_hash"]
