"""Placement enums and the argument checks of `pl.at` / `pl.spmd` (today's public API, reference
pl-head §2).

`with pl.at(level=pl.Level.CORE_GROUP):` marks a region that runs as one device task. On the CPU
every level is a task on one worker (there is no core / chip / host hierarchy to place it in: a
HOST or CHIP region is the same task as a CORE_GROUP one); the level, the role and the scheduling
hints (`optimizations`, `allow_early_resolve`, `windowize`, `dumps`, `name_hint`) are checked and
accepted, and do not change results. `deps=`, `no_dep_args=` and `as tid` are honoured (docs/tasks.md).
"""

from __future__ import annotations

import enum
from typing import Any

from pypto.errors import InvalidType
from pypto.language.hints import CrossCoreSlot, Split, SplitMode, check_optimizations, cross_core_slot, split  # noqa: F401  (re-exported)


class Level(enum.IntEnum):
    """Where a region runs (public numbering; the aliases name the same levels)."""

    AIV = 0
    AIC = 1
    CORE_GROUP = 2
    CHIP_DIE = 3
    CHIP = 4
    HOST = 5
    CLUSTER_0 = 6
    CLUSTER_1 = 7
    CLUSTER_2 = 8
    GLOBAL = 9
    L2CACHE = 3
    PROCESSOR = 4
    UMA = 4
    NODE = 5
    POD = 6
    CLOS1 = 7
    CLOS2 = 8


class Role(enum.IntEnum):
    Orchestrator = 0
    SubWorker = 1
    Worker = 1  # the March spelling of SubWorker


class ScopeMode(enum.IntEnum):
    """`pl.scope(mode=...)`: AUTO (dependencies inferred) or MANUAL (only explicit deps order tasks)."""

    AUTO = 0
    MANUAL = 1


def _check_optimizations(opts: Any) -> None:
    if opts is None:
        return
    if not isinstance(opts, (list, tuple)):
        raise InvalidType("optimizations= must be a list")
    check_optimizations(opts)


_AT_KEYWORDS = frozenset({"level", "role", "optimizations", "deps", "no_dep_args", "dumps", "allow_early_resolve",
                          "name_hint", "windowize"})


def check_at_arguments(level: Any = None, role: Any = None, **kwargs: Any) -> None:
    """Raise TypeError / ValueError for a `pl.at(...)` call the public API would refuse."""
    unknown = sorted(set(kwargs) - _AT_KEYWORDS)
    if unknown:
        raise InvalidType(f"unexpected keyword {unknown[0]!r} (accepted: {', '.join(sorted(_AT_KEYWORDS))})")
    if level is None:
        raise InvalidType("missing the level (pl.at(level=pl.Level.CORE_GROUP))")
    if not isinstance(level, (Level, int)) or isinstance(level, bool):
        raise InvalidType(f"level must be a pl.Level, got {level!r}")
    if role is not None and not isinstance(role, (Role, int)):
        raise InvalidType(f"role must be a pl.Role, got {role!r}")
    _check_optimizations(kwargs.get("optimizations"))


_SPMD_KEYWORDS = frozenset({"core_num", "sync_start", "name_hint", "optimizations", "deps", "allow_early_resolve",
                            "predicate"})


def check_spmd_arguments(*args: Any, **kwargs: Any) -> None:
    """Raise TypeError for a `pl.spmd(...)` call the public API would refuse (core_num is checked by
    the parser, which also accepts an integer expression)."""
    unknown = sorted(set(kwargs) - _SPMD_KEYWORDS)
    if unknown:
        raise InvalidType(f"unexpected keyword {unknown[0]!r} (accepted: {', '.join(sorted(_SPMD_KEYWORDS))})")
    if len(args) > 1 or (args and "core_num" in kwargs):
        raise InvalidType("pl.spmd takes one positional argument, core_num")
    _check_optimizations(kwargs.get("optimizations"))


__all__ = ["CrossCoreSlot", "Level", "Role", "ScopeMode", "Split", "SplitMode", "check_at_arguments",
           "check_spmd_arguments", "cross_core_slot", "split"]
