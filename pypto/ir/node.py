"""The IR node base and field reflection.

Every IR node is a frozen dataclass. Each field has a kind that generic algorithms (structural
equality and hashing, visitors, mutators, serialization) read instead of knowing each class:

- USUAL: compared, hashed, visited;
- DEF: a binding site (a Var defined here); equality maps the two sides' vars onto each other;
- IGNORE: spans and name hints; skipped by equality and hashing.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from .span import UNKNOWN_SPAN, Span


class FieldKind(enum.IntEnum):
    USUAL = 0
    DEF = 1
    IGNORE = 2


def ignored(**kw: Any) -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.IGNORE}, **kw)


def defines(**kw: Any) -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.DEF}, **kw)


def span_field() -> Any:
    return dataclasses.field(default=UNKNOWN_SPAN, kw_only=True, metadata={"kind": FieldKind.IGNORE})


class Node:
    """Base of all IR nodes (types, expressions, statements, functions, programs)."""

    __slots__ = ()

    def __str__(self) -> str:
        from .printer import python_print

        return python_print(self)


_FIELDS: dict[type, tuple[tuple[str, FieldKind], ...]] = {}


def node_fields(cls: type) -> tuple[tuple[str, FieldKind], ...]:
    """(name, kind) of each dataclass field of a node class, in declaration order (cached)."""
    got = _FIELDS.get(cls)
    if got is None:
        got = tuple((f.name, f.metadata.get("kind", FieldKind.USUAL)) for f in dataclasses.fields(cls))
        _FIELDS[cls] = got
    return got


def replace(node: Node, **changes: Any) -> Any:
    """A copy of `node` with some fields changed (frozen nodes are never mutated)."""
    return dataclasses.replace(node, **changes)


__all__ = ["FieldKind", "Node", "Span", "defines", "ignored", "node_fields", "replace", "span_field"]
