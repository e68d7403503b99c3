"""Today's (2026-08) spellings of write modes and performance hints (reference pl-head §0.1, §2).

- `pl.AtomicType.None_ / .Add`: `pl.store(..., atomic=)` / `pl.assemble(..., atomic=)`; Add adds into
  the target (computed as read, add, write back; the runtime orders tasks on the target).
- `pl.split(mode)`, `pl.cross_core_slot(slot_num=N)`: entries of `pl.at(..., optimizations=[...])`,
  cross-core split and ring depth hints of the device. The CPU runs a region as one task: they are
  checked and have no effect. The March form `pl.split(mode, slot_num=N)` still works and warns,
  as it does upstream.
- `pl.func_attr({...})` as a function's first statement (and the March `@pl.function(attrs=...)`,
  which warns): function metadata the device compiler reads ("split", "dual_aiv_dispatch", ...);
  checked to be a dict with string keys, no effect here.
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass
from typing import Any

from pypto.errors import InvalidType


class AtomicType(enum.IntEnum):
    None_ = 0
    Add = 1


class SplitMode(enum.IntEnum):
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


@dataclass(frozen=True)
class Split:
    mode: SplitMode


@dataclass(frozen=True)
class CrossCoreSlot:
    slot_num: int


def split(mode: SplitMode | int, slot_num: int | None = None) -> Split | tuple[Split, CrossCoreSlot]:
    """`optimizations=[pl.split(pl.SplitMode.UP_DOWN)]`: a cross-core split hint (no effect on the CPU)."""
    try:
        m = SplitMode(mode)
    except ValueError:
        raise InvalidType(f"pl.split: mode must be a pl.SplitMode, got {mode!r}") from None
    if slot_num is None:
        return Split(m)
    warnings.warn("pl.split(mode, slot_num=N) is deprecated: write pl.cross_core_slot(slot_num=N) beside "
                  "pl.split(mode)", DeprecationWarning, stacklevel=2)
    return Split(m), cross_core_slot(slot_num)


def cross_core_slot(slot_num: int) -> CrossCoreSlot:
    """`optimizations=[pl.cross_core_slot(slot_num=4)]`: the depth of a cross-core ring (no effect here)."""
    if not isinstance(slot_num, int) or isinstance(slot_num, bool) or slot_num <= 0:
        raise InvalidType(f"pl.cross_core_slot: slot_num must be a positive int, got {slot_num!r}")
    return CrossCoreSlot(slot_num)


def check_optimizations(opts: Any) -> None:
    """Raise TypeError unless every entry of `optimizations=` is a pl.split / pl.cross_core_slot hint."""
    for o in opts:
        items = o if isinstance(o, tuple) else (o,)
        for x in items:
            if not isinstance(x, (Split, CrossCoreSlot)):
                raise InvalidType(f"optimizations= takes pl.split(...) and pl.cross_core_slot(...) entries, got {x!r}")


def check_func_attrs(attrs: Any) -> dict:
    """A `pl.func_attr({...})` / `attrs=` value: a dict with string keys."""
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise InvalidType(f"function attributes must be a dict with string keys, got {attrs!r}")
    return attrs


__all__ = ["AtomicType", "CrossCoreSlot", "Split", "SplitMode", "check_func_attrs", "check_optimizations",
           "cross_core_slot", "split"]
