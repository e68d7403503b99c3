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
import sys
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


def plain(**kw: Any) -> Any:
    """A field of plain values only (numbers, strings, enums, tuples of them): compared and hashed
    like any other, but walkers never look into it for nodes."""
    return dataclasses.field(metadata={"kind": FieldKind.USUAL, "plain": True}, **kw)


def span_field() -> Any:
    return dataclasses.field(default=UNKNOWN_SPAN, kw_only=True, metadata={"kind": FieldKind.IGNORE})


class Node:
    """Base of all IR nodes (types, expressions, statements, functions, programs)."""

    __slots__ = ()

    def __str__(self) -> str:
        from .printer import python_print

        return python_print(self)

    def as_python(self, prefix: str = "pl", concise: bool = False) -> str:
        """This node as `pl` source (`ir.python_print(self, prefix, concise)`), as the public API spells it."""
        from .printer import python_print

        return python_print(self, prefix, concise)


_FIELDS: dict[type, tuple[tuple[str, FieldKind], ...]] = {}


def node_fields(cls: type) -> tuple[tuple[str, FieldKind], ...]:
    """(name, kind) of each dataclass field of a node class, in declaration order (cached)."""
    got = _FIELDS.get(cls)
    if got is None:
        got = tuple((f.name, f.metadata.get("kind", FieldKind.USUAL)) for f in dataclasses.fields(cls))
        _FIELDS[cls] = got
    return got


_PLAIN_NAMES = frozenset({"int", "float", "bool", "str", "None"})
_TYPE_ANNOTATIONS = frozenset({"Type", "tuple[Type, ...]"})
_WALK: dict[bool, dict[type, tuple[tuple[str, FieldKind], ...]]] = {False: {}, True: {}}


def _is_plain(cls: type, field: dataclasses.Field) -> bool:
    """Whether a field can only hold plain values, never a node: a `plain()` field, or one declared
    as a number, a string, an enum or a tuple of one of those (`| None` allowed). Unknown or generic
    annotations are not plain."""
    if field.metadata.get("plain"):
        return True
    annotation = field.type
    if not isinstance(annotation, str):
        return annotation in (int, float, bool, str)
    namespace = vars(sys.modules[cls.__module__])
    if annotation.startswith("tuple[") and annotation.endswith(", ...]"):
        annotation = annotation[len("tuple["):-len(", ...]")]
    for part in annotation.split("|"):
        name = part.strip()
        if name in _PLAIN_NAMES:
            continue
        obj = namespace.get(name)
        if not (isinstance(obj, type) and issubclass(obj, enum.Enum)):
            return False
    return True


def walk_fields(cls: type, types: bool) -> tuple[tuple[str, FieldKind], ...]:
    """The fields of `node_fields(cls)` a walker must look into to reach every node below (cached).
    IGNORE fields and plain-value fields are left out, and so are fields declared as types (`Type`,
    `tuple[Type, ...]`) unless `types` is set."""
    table = _WALK[types]
    got = table.get(cls)
    if got is None:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        got = tuple((name, kind) for name, kind in node_fields(cls)
                    if kind is not FieldKind.IGNORE and not _is_plain(cls, fields[name])
                    and (types or fields[name].type not in _TYPE_ANNOTATIONS))
        table[cls] = got
    return got


def replace(node: Node, **changes: Any) -> Any:
    """A copy of `node` with some fields changed (frozen nodes are never mutated)."""
    return dataclasses.replace(node, **changes)


__all__ = ["FieldKind", "Node", "Span", "defines", "ignored", "node_fields", "plain", "replace", "span_field",
           "walk_fields"]
