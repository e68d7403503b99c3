"""Fresh, deterministic variable names for passes that create variables.

A name a pass makes is `<base>__<kind>_v<k>` (`x__ssa_v2`, `t__tmp_v1`), unique among the names
already used in the function; `base_name` takes such suffixes off again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .expr import Var
from .span import Span
from .variables import collect_vars

_SUFFIX = re.compile(r"__(ssa|tmp)_v\d+$")


def base_name(name: str) -> str:
    """`x__ssa_v3` -> `x`, `t__tmp_v1` -> `t` (repeatedly)."""
    while True:
        m = _SUFFIX.search(name)
        if m is None or m.start() == 0:
            return name
        name = name[:m.start()]


class NameGen:
    """Fresh, deterministic variable names `<base>__<kind>_v<k>` (k from 1) unique among `taken`."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(taken)
        self.counters: dict[tuple[str, str], int] = {}

    @classmethod
    def for_node(cls, node: Any) -> NameGen:
        uses, defs = collect_vars(node, True)
        return cls([v.name for v in (*defs, *uses)])

    def fresh(self, hint: str, kind: str = "ssa") -> str:
        base = base_name(hint or "v")
        key = (base, kind)
        k = self.counters.get(key, 0)
        while True:
            k += 1
            name = f"{base}__{kind}_v{k}"
            if name not in self.taken:
                break
        self.counters[key] = k
        self.taken.add(name)
        return name

    def unique(self, name: str) -> str:
        """`name` itself if free, else `name_1`, `name_2`, ... (reserved on return)."""
        out, k = name, 0
        while out in self.taken:
            k += 1
            out = f"{name}_{k}"
        self.taken.add(out)
        return out

    def fresh_var(self, like: Var | str, type_: Any = None, kind: str = "ssa", span: Span | None = None) -> Var:
        hint = like if isinstance(like, str) else like.name
        t = type_ if type_ is not None or isinstance(like, str) else like.type
        sp = span if span is not None else (like.span if isinstance(like, Var) else None)
        return Var(self.fresh(hint, kind), t, span=sp) if sp is not None else Var(self.fresh(hint, kind), t)


class LazyNames:
    """Fresh variable names for one function or statement tree, like `NameGen.for_node(node)`; the
    NameGen (a walk over the whole node) is built only when a name is first needed — many functions
    a pass looks at need none."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.gen: NameGen | None = None

    def _gen(self) -> NameGen:
        if self.gen is None:
            self.gen = NameGen.for_node(self.node)
        return self.gen

    def fresh(self, hint: str, kind: str = "ssa") -> str:
        return self._gen().fresh(hint, kind)

    def fresh_var(self, like: Var | str, type_: Any = None, kind: str = "ssa", span: Span | None = None) -> Var:
        return self._gen().fresh_var(like, type_, kind, span)


__all__ = ["LazyNames", "NameGen", "base_name"]
