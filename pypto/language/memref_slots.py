"""Declared allocations of today's public `pl`: `pl.MemRef()`, `pl.MemRef(slots=N)[i]` (pl-head §3.1).

On the device a declared allocation pins a tile to a named on-chip region, and `slots=N` splits it
into N equal slots selected per use by an index (possibly a run-time one, e.g. `[i % 2]` for
ping-pong buffers). Placement is a hardware hint: the CPU backend plans every tile's memory itself
and keeps co-live tiles apart, so a slot annotation is checked and then dropped (the tile gets its
own storage; the program computes the same numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _err(msg: str) -> Exception:
    from .annotations import AnnotationError  # (annotations imports this module)

    return AnnotationError(msg)


@dataclass(frozen=True, eq=False)
class MemRefDecl:
    """`pl.MemRef(name=None, slots=N)`: a declared allocation (a placement hint here)."""

    name: str | None = None
    slots: int = 1

    def __getitem__(self, index: Any) -> MemRefSlot:
        if isinstance(index, int) and not isinstance(index, bool) and not 0 <= index < self.slots:
            raise _err(f"pl.MemRef slot {index} is out of range: the allocation has {self.slots} slot(s)")
        return MemRefSlot(self, index)


@dataclass(frozen=True, eq=False)
class MemRefSlot:
    """`decl[i]`: slot i of a declared allocation (the index may be a run-time expression)."""

    decl: MemRefDecl
    index: Any


def declare(name: Any = None, slots: Any = None) -> MemRefDecl:
    if name is not None and not isinstance(name, str):
        raise _err(f"pl.MemRef name must be a string, got {name!r}")
    n = 1 if slots is None else slots
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise _err(f"pl.MemRef slots must be a positive int, got {slots!r}")
    return MemRefDecl(name, n)


def is_placement_hint(x: Any) -> bool:
    return isinstance(x, (MemRefDecl, MemRefSlot))


__all__ = ["MemRefDecl", "MemRefSlot", "declare", "is_placement_hint"]
