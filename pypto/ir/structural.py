"""Structural equality and hashing: compare trees, ignoring spans and names.

Variables defined inside the compared trees (DEF fields: params, assignment targets, loop vars,
iter_args, return vars) are matched to each other on first sight, so `x = a + b` and
`y = a + b` are equal. Free variables (e.g. dynamic dimensions) compare by identity unless
`enable_auto_mapping` is set, in which case they too are matched one-to-one.
Equal trees have equal hashes.
"""

from __future__ import annotations

from typing import Any

from .expr import Var
from .node import FieldKind, Node, node_fields

_IGNORE = FieldKind.IGNORE
_DEF = FieldKind.DEF


class StructuralMismatch(AssertionError):
    pass


class _Equal:
    def __init__(self, auto: bool, want_path: bool):
        self.auto = auto
        self.lmap: dict[Var, Var] = {}
        self.rmap: dict[Var, Var] = {}
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
        return self.fields(a, b)

    def fields(self, a: Node, b: Node) -> bool:
        for name, kind in node_fields(type(a)):
            if kind is _IGNORE:
                continue
            if self.want_path:
                self.path.append(name)
            ok = self.value(getattr(a, name), getattr(b, name), kind is _DEF)
            if not ok:
                return False
            if self.want_path:
                self.path.pop()
        return True

    def value(self, a: Any, b: Any, defining: bool = False) -> bool:
        if isinstance(a, Var) and isinstance(b, Var):
            return self.var(a, b, defining)
        if isinstance(a, Node):
            if type(a) is not type(b):
                return self.fail(f"{type(a).__name__} vs {type(b).__name__}")
            if a is b and not self.lmap and not self.auto:
                return True
            return self.fields(a, b)
        if type(a) is tuple:
            if type(b) is not tuple or len(a) != len(b):
                return self.fail(f"sequence lengths {len(a)} vs {len(b) if type(b) is tuple else b!r}")
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
        if type(v) is tuple:
            return hash(tuple(self.value(x, defining) for x in v))
        if isinstance(v, float) and v.is_integer():
            return hash(int(v))
        return hash(v)

    def fields(self, n: Node) -> int:
        return hash(tuple(self.value(getattr(n, name), kind is _DEF)
                          for name, kind in node_fields(type(n)) if kind is not _IGNORE))


def structural_hash(node: Any, enable_auto_mapping: bool = False) -> int:
    return _Hasher(enable_auto_mapping).value(node)


__all__ = ["StructuralMismatch", "assert_structural_equal", "structural_equal", "structural_hash"]
