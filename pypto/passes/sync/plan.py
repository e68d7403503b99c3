"""The plan InsertSync builds: the synchronizations decided so far, and their operations by position
(`_Plan.at`), which the dataflow walk applies as it passes each position and the emission turns
into statements.

A sync is a flag (a set on its set pipe, a wait on its wait pipe: `system.sync_src` /
`system.sync_dst`) or a barrier (`system.bar_v`, `bar_m`, `bar_all`). A flag carried around a loop
also has a set before the loop and a wait after it, so that sets and waits balance on every path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pypto.ir.enums import PipeType

from .model import Path

if TYPE_CHECKING:
    from ..insert_sync import _Kernel

# operation kinds
_SET, _WAIT, _BAR = 0, 1, 2


@dataclass(frozen=True, slots=True, eq=False)
class _SyncOp:
    """One statement sync `sync` emits: at position `pos`, `order`-th among the kinds of statements
    there (a set made right before its wait, then waits, barriers, sets after the statement), of
    `kind`. `_Plan.at` lists the operations at each position sorted by (order, sync.idx)."""

    pos: int
    order: int
    kind: int
    sync: _Sync


@dataclass(eq=False, slots=True)
class _Sync:
    """A flag (sp >= 0) or a barrier; `sp`/`wp` are the set and wait pipes' numbers in the kernel
    (`wp` -1: a full barrier), `set_pipe`/`wait_pipe` the pipes (wait_pipe V, M or ALL for a
    barrier)."""

    idx: int
    sp: int
    wp: int
    set_pipe: PipeType | None
    wait_pipe: PipeType
    wait_at: Path  # the wait (or barrier) is emitted before this statement (after it if at_post)
    set_at: Path | None = None  # the set is emitted after this statement (None: right before the wait)
    loop: Path | None = None  # carried: extra set before / wait after this loop
    at_post: bool = False
    round: int = 0
    event_id: int | None = None
    triggers: set[tuple[int, int]] = field(default_factory=set)  # (producer, consumer) it was decided for
    _ops: list[_SyncOp] | None = field(default=None, repr=False)  # `ops()`, made once

    @property
    def key(self) -> tuple:
        """(sp, wp, wait_at, set_at, loop, at_post): what makes two decisions the same sync, the key
        of `_Plan.by_key` (a plain tuple: one is built and looked up for every conflict resolved)."""
        return (self.sp, self.wp, self.wait_at, self.set_at, self.loop, self.at_post)

    def ops(self, k: _Kernel) -> list[_SyncOp]:
        """The statements this sync emits (in kernel `k`, the only one it belongs to)."""
        out = self._ops
        if out is None:
            if self.sp < 0:
                out = [_SyncOp((k.post if self.at_post else k.pre)[self.wait_at], 2, _BAR, self)]
            else:
                out = [_SyncOp(k.pre[self.wait_at], 1, _WAIT, self)]
                out.append(_SyncOp(k.post[self.set_at], 3, _SET, self) if self.set_at is not None
                           else _SyncOp(k.pre[self.wait_at], 0, _SET, self))
                if self.loop is not None:
                    out += [_SyncOp(k.pre[self.loop], 3, _SET, self), _SyncOp(k.post[self.loop], 1, _WAIT, self)]
            self._ops = out
        return out


class _Plan:
    """Syncs, and their operations by position id (sorted by order, then decision)."""

    def __init__(self, k: _Kernel, syncs: list[_Sync] = (), at: dict | None = None) -> None:  # type: ignore[assignment]
        self.k = k
        self.syncs: list[_Sync] = []
        self.by_key: dict[tuple, _Sync] = {}  # `_Sync.key` -> the sync
        self.at: dict[int, list[_SyncOp]] = {}
        self.next_idx = 0
        if at is None:
            for s in syncs:
                self.put(s)
        else:  # (trusted: the index of exactly these syncs)
            self.syncs = list(syncs)
            self.at = at

    def put(self, s: _Sync) -> None:
        self.syncs.append(s)
        self.by_key[s.key] = s
        if s.idx >= self.next_idx:
            self.next_idx = s.idx + 1
        if s.sp >= 0:
            self.k.flag_wp[s.idx] = s.wp
        at = self.at
        for op in s.ops(self.k):
            lst = at.get(op.pos)
            if lst is None:
                at[op.pos] = [op]
            else:
                j = len(lst)
                while j and (lst[j - 1].order, lst[j - 1].sync.idx) > (op.order, s.idx):
                    j -= 1
                lst.insert(j, op)

    def add(self, sp: int, wp: int, wait_at: Path, set_at: Path | None, loop: Path | None,
            rnd: int) -> tuple[_Sync, bool]:
        """The flag sp -> wp (sp -1: a barrier on wp, -1 for all pipes) at these statements, new or not."""
        got = self.by_key.get((sp, wp, wait_at, set_at, loop, False))
        if got is not None:
            return got, False
        pipes = self.k.pipes
        if sp >= 0:
            set_pipe, wait_pipe = pipes[sp], pipes[wp]
        else:
            set_pipe, wait_pipe = None, pipes[wp] if wp >= 0 else PipeType.ALL
        s = _Sync(self.next_idx, sp, wp, set_pipe, wait_pipe, wait_at, set_at, loop, round=rnd)
        self.put(s)
        return s, True

    def without(self, s: _Sync) -> _Plan:
        """This plan less s (its index shared where s has no operation)."""
        at = dict(self.at)
        for op in s.ops(self.k):
            lst = [t for t in at.get(op.pos, ()) if t.sync is not s]
            if lst:
                at[op.pos] = lst
            else:
                at.pop(op.pos, None)
        return _Plan(self.k, [x for x in self.syncs if x is not s], at)


__all__: list[str] = []
