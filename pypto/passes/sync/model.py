"""The kernel as InsertSync's planner sees it: a tree of the statements that matter (instructions,
and the loops, ifs and scopes holding some), built by `insert_sync._Kernel`.

Instructions are numbered in program order, so a set of them is a Python int and a loop body's
instructions are one bit range. Positions are numbered in pre-order: each statement of the tree
has a position right before it (`pre`, where a wait goes) and one right after it (`post`, where a
set goes). A statement is named by its `Path`: (i0, key1, i1, key2, i2, ...), the index of each
enclosing statement in its block and the branch key ("body", "then", "else") below it.
"""

from __future__ import annotations

from dataclasses import dataclass

Path = tuple


@dataclass(frozen=True, slots=True, eq=False)
class _Ins:
    """An instruction statement; `i` is its number."""

    pre: int
    post: int
    i: int


@dataclass(frozen=True, slots=True, eq=False)
class _Loop:
    """A for or while loop holding instructions; `trips` is its constant trip count (None: not
    constant)."""

    pre: int
    post: int
    body: tuple[_Node, ...]
    trips: int | None
    path: Path


@dataclass(frozen=True, slots=True, eq=False)
class _If:
    pre: int
    post: int
    then: tuple[_Node, ...]
    other: tuple[_Node, ...]


@dataclass(frozen=True, slots=True, eq=False)
class _Scope:
    pre: int
    post: int
    body: tuple[_Node, ...]


_Node = _Ins | _Loop | _If | _Scope


@dataclass(frozen=True, slots=True)
class _InsInfo:
    """What the walk needs of one instruction at every issue."""

    pipe: int  # its pipe's number in the kernel
    conf: int  # the instructions it conflicts with
    bit: int  # 1 << i
    nbit: int  # ~bit
    sync: bool  # it runs on the scalar pipe: synchronous


@dataclass(frozen=True, slots=True)
class _Placement:
    """Where the flag ordering instruction y before instruction b goes: its set right after statement
    `set_after`, its wait right before statement `wait_before` (the statements holding y and b in
    the innermost block holding both); `loop` is the loop the pair is carried around (None when
    `set_after` comes before `wait_before`)."""

    set_after: Path
    wait_before: Path
    loop: Path | None


__all__: list[str] = []
