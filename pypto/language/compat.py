"""Which generation of the public `pl` language a program is read as (`pl.compat`).

Programs written for the seed guide, for the March 2026 release and for today's (2026-08) API all
parse. Most changed constructs are told apart by their call form (`pl.load`'s 4th positional
argument is a memory space in March and a valid shape today, `sel` takes a scratch tile today,
...); those are decided per call (docs/compat.md lists every rule). Where the same spelling means
different things — a tile `cmp` gives a same-dtype 0/1 tile in March and a packed predicate mask
today; a tensor-only keyword on a tile `matmul` was dropped in March and is a TypeError today —
today's meaning wins, and a setting selects the older one:

    pl.compat.set_generation("march")      # for the rest of the process
    with pl.compat.generation("march"):    # for the programs parsed inside
        ...
    PYPTO_PL_GENERATION=march              # the default of a process

"seed" behaves like "march" for these forms (the seed guide's spellings are all accepted in any
generation). The setting is read when a program is parsed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from pypto.errors import InvalidValue

GENERATIONS = ("seed", "march", "head")
_ENV = "PYPTO_PL_GENERATION"


def _check(name: str) -> str:
    if name not in GENERATIONS:
        raise InvalidValue(f"unknown pl generation {name!r}: one of {', '.join(GENERATIONS)}")
    return name


_current: list[str] = [_check(os.environ.get(_ENV, "head") or "head")]


def current() -> str:
    """The generation programs are parsed as now: "head" (default), "march" or "seed"."""
    return _current[-1]


def set_generation(name: str) -> None:
    """Read programs parsed from now on as generation `name` ("head", "march" or "seed")."""
    _current[-1] = _check(name)


@contextlib.contextmanager
def generation(name: str) -> Iterator[None]:
    """`with pl.compat.generation("march"):` — programs parsed inside are read as that generation."""
    _current.append(_check(name))
    try:
        yield
    finally:
        _current.pop()


def legacy() -> bool:
    """Whether the older meaning of an ambiguous form applies (generation "march" or "seed")."""
    return current() != "head"


__all__ = ["GENERATIONS", "current", "generation", "legacy", "set_generation"]
