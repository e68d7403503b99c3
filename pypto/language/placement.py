"""Placement enums and the argument check of `pl.at` (today's public API, reference pl-head §2).

`with pl.at(level=pl.Level.CORE_GROUP):` marks a region that runs as one device task. On the CPU
every level is a task on one worker: the level, the role and the scheduling hints
(`optimizations`, `allow_early_resolve`, `windowize`, `dumps`) are checked and accepted, and do
not change results.
"""

from __future__ import annotations

import enum
from typing import Any


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


_AT_KEYWORDS = frozenset({"level", "role", "optimizations", "deps", "no_dep_args", "dumps", "allow_early_resolve",
                          "name_hint", "windowize"})


def check_at_arguments(level: Any = None, role: Any = None, **kwargs: Any) -> None:
    """Raise TypeError / ValueError for a `pl.at(...)` call the public API would refuse."""
    unknown = sorted(set(kwargs) - _AT_KEYWORDS)
    if unknown:
        raise TypeError(f"unexpected keyword {unknown[0]!r} (accepted: {', '.join(sorted(_AT_KEYWORDS))})")
    if level is None:
        raise TypeError("missing the level (pl.at(level=pl.Level.CORE_GROUP))")
    if not isinstance(level, (Level, int)) or isinstance(level, bool):
        raise TypeError(f"level must be a pl.Level, got {level!r}")
    if role is not None and not isinstance(role, (Role, int)):
        raise TypeError(f"role must be a pl.Role, got {role!r}")
    opts = kwargs.get("optimizations")
    if opts is not None and not isinstance(opts, (list, tuple)):
        raise TypeError("optimizations= must be a list")
    if opts is not None:
        from .hints import check_optimizations

        check_optimizations(opts)


__all__ = ["Level", "Role", "check_at_arguments"]
