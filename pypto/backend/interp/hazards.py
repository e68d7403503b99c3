"""The pipe hazard checker (docs/sync_model.md).

Every executed instruction is an instance `(pipe, seq)`: the `seq`-th instruction issued on its
pipe. Happens-before is tracked with vector clocks over the pipes. Each way of ordering in the
model orders a *prefix* of a pipe (a barrier orders all earlier instructions of its pipe, a flag
fires once every earlier instruction of the set pipe has completed, scalar instructions complete
in issue order), so "a happens before b" is exactly `a.seq <= clock(b)[a.pipe]`.

- `front[P]`: the clock every instruction issued on `P` from now on starts with (grown by
  barriers on `P`, waits with wait pipe `P`, and completed scalar instructions).

Scalar work without memory accesses (arith, loop control) needs no bookkeeping: what it could
order is already propagated when it happens (a completed scalar instruction with accesses, or a
`wait_flag` whose wait pipe is `S`, joins its clock into every pipe's front, since the scalar unit
issues everything after it).
- `done[P]`: the join of the clocks of all instructions issued on `P`, themselves included (what a
  `set_flag` on `P` or a barrier on `P` publishes).

Accesses are byte ranges per memory space ("vec", "mat", ..., and "ddr" for the absolute addresses
of tensor data, so views of one array alias). Each space keeps a history of accesses sorted by
start address; a new access is checked against every overlapping record where either side writes,
then the records it dominates are dropped (see `_dominates`), which keeps the history bounded in
loops that reuse buffers. Only records whose span can reach the access are visited, so loops that
walk over many disjoint DDR windows stay cheap.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np

from pypto.pto.model import Op

from .engine import short_op
from .errors import HazardError, InterpError

PIPES = ("MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
S = PIPE_INDEX["S"]
NP = len(PIPES)


class Ranges:
    """A set of disjoint, sorted, non-adjacent byte intervals [start, end)."""

    __slots__ = ("starts", "ends", "lo", "hi")

    def __init__(self, starts: np.ndarray, ends: np.ndarray):
        self.starts, self.ends = starts, ends
        self.lo = int(starts[0]) if starts.size else 0
        self.hi = int(ends[-1]) if ends.size else 0

    @staticmethod
    def one(lo: int, hi: int) -> Ranges:
        return Ranges(np.array([lo], dtype=np.int64), np.array([hi], dtype=np.int64))

    @staticmethod
    def of_array(a: np.ndarray) -> Ranges:
        """The bytes an array's elements occupy (absolute addresses), merged into runs."""
        if a.size == 0:
            e = np.zeros(0, dtype=np.int64)
            return Ranges(e, e)
        base = a.__array_interface__["data"][0]
        shape, strides = list(a.shape), list(a.strides)
        run = a.itemsize
        # fold the innermost axes that are contiguous into one run
        while shape and strides[-1] == run:
            run *= shape.pop()
            strides.pop()
        starts = np.array([base], dtype=np.int64)
        for n, s in zip(shape, strides):
            starts = (starts[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).reshape(-1)
        starts = np.sort(starts)
        ends = starts + run
        # merge touching or overlapping runs
        keep = np.ones(starts.size, dtype=bool)
        keep[1:] = starts[1:] > np.maximum.accumulate(ends)[:-1]
        grp = np.cumsum(keep) - 1
        m_starts = starts[keep]
        m_ends = np.zeros(m_starts.size, dtype=np.int64)
        np.maximum.at(m_ends, grp, ends)
        return Ranges(m_starts, m_ends)

    def empty(self) -> bool:
        return self.starts.size == 0

    def overlaps(self, o: Ranges) -> bool:
        if self.empty() or o.empty() or self.hi <= o.lo or o.hi <= self.lo:
            return False
        if self.starts.size == 1 and o.starts.size == 1:
            return True
        idx = np.searchsorted(o.ends, self.starts, side="right")
        ok = idx < o.starts.size
        return bool(np.any(o.starts[np.minimum(idx, o.starts.size - 1)][ok] < self.ends[ok]))

    def contains(self, o: Ranges) -> bool:
        if o.empty():
            return True
        if self.empty() or o.lo < self.lo or o.hi > self.hi:
            return False
        if self.starts.size == 1:
            return True
        idx = np.searchsorted(self.ends, o.starts, side="right")
        if np.any(idx >= self.starts.size):
            return False
        return bool(np.all((self.starts[idx] <= o.starts) & (o.ends <= self.ends[idx])))


@dataclass(frozen=True)
class Access:
    space: str
    ranges: Ranges
    write: bool
    label: str


class Instr:
    """An executed instruction instance, described lazily (only when a hazard is reported):
    the op, its index in the kernel, the iteration of each enclosing loop, and its pipe."""

    __slots__ = ("op", "index", "loops", "pipe")

    def __init__(self, op: Op, index: int, loops: tuple, pipe: str):
        self.op, self.index, self.loops, self.pipe = op, index, loops, pipe

    def __str__(self) -> str:
        s = f"`{short_op(self.op)}` on {self.pipe} (op #{self.index}"
        if self.op.loc is not None:
            s += f", line {self.op.loc[0]}"
        if self.loops:
            s += ", iteration " + " ".join(f"{n}={i}" for n, i in self.loops)
        return s + ")"


class _Record:
    __slots__ = ("pipe", "seq", "write", "ranges", "label", "instr")

    def __init__(self, pipe: int, seq: int, acc: Access, instr: Instr):
        self.pipe, self.seq, self.write = pipe, seq, acc.write
        self.ranges, self.label, self.instr = acc.ranges, acc.label, instr


class _History:
    """The access records of one memory space, sorted by start address (`los` mirrors `recs`)."""

    __slots__ = ("los", "recs", "span")

    def __init__(self) -> None:
        self.los: list[int] = []
        self.recs: list[_Record] = []
        self.span = 0  # the longest [lo, hi) of any record so far

    def near(self, lo: int, hi: int) -> list[_Record]:
        """Records whose [lo, hi) may intersect [lo, hi)."""
        return self.recs[bisect_left(self.los, lo - self.span):bisect_left(self.los, hi)]

    def replace_within(self, lo: int, hi: int, drop) -> None:
        """Drop the records starting in [lo, hi) for which `drop(record)` holds."""
        i, j = bisect_left(self.los, lo), bisect_left(self.los, hi)
        keep = [r for r in self.recs[i:j] if not drop(r)]
        if len(keep) != j - i:
            self.recs[i:j] = keep
            self.los[i:j] = [r.ranges.lo for r in keep]

    def add(self, r: _Record) -> None:
        k = bisect_right(self.los, r.ranges.lo)
        self.los.insert(k, r.ranges.lo)
        self.recs.insert(k, r)
        self.span = max(self.span, r.ranges.hi - r.ranges.lo)


def _join(a: list[int], b: list[int]) -> None:
    for i in range(NP):
        if b[i] > a[i]:
            a[i] = b[i]


class HazardChecker:
    """Happens-before bookkeeping and conflict checks for one kernel run."""

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.seq = [0] * NP
        self.front = [[0] * NP for _ in range(NP)]
        self.done = [[0] * NP for _ in range(NP)]
        self.flags: dict[tuple[str, str, int], list[tuple[list[int], Instr]]] = {}
        self.history: dict[str, _History] = {}
        self.instructions = 0

    # ---- ordering ----------------------------------------------------------------------------

    def _scalar_complete(self, clock: list[int]) -> None:
        """A scalar instruction completed before anything later issues: everything that happened
        before it (and it) happens before every later instruction."""
        for p in range(NP):
            _join(self.front[p], clock)
        _join(self.done[S], clock)

    def barrier(self, pipe: str) -> None:
        if pipe == "ALL":
            j = [0] * NP
            for p in range(NP):
                _join(j, self.done[p])
            for p in range(NP):
                _join(self.front[p], j)
            return
        p = self._pipe(pipe)
        _join(self.front[p], self.done[p])

    def set_flag(self, src: str, dst: str, event: int, instr: Instr) -> None:
        clock = list(self.done[self._pipe(src)])
        self._pipe(dst)
        self.flags.setdefault((src, dst, event), []).append((clock, instr))

    def wait_flag(self, src: str, dst: str, event: int, instr: Instr) -> None:
        q = self.flags.get((src, dst, event))
        if not q:
            raise HazardError("deadlock", self.kernel, None, str(instr), None,
                              hint=f"add `pto.set_flag {{set_pipe = PIPE_{src}, wait_pipe = PIPE_{dst}, "
                                   f"event_id = {event}}}` on every path before this wait")
        clock, _ = q.pop(0)
        d = self._pipe(dst)
        _join(self.front[d], clock)
        if d == S:  # the scalar unit stalls, and it issues everything after: all later work waits
            self._scalar_complete(list(self.front[S]))

    def pending_flags(self) -> list[str]:
        """Flags set but never waited (not an error in the model; reported by `run_kernel` stats)."""
        return [f"{k}: {str(i)}" for k, q in self.flags.items() for _, i in q]

    def _pipe(self, pipe: str) -> int:
        p = PIPE_INDEX.get(pipe)
        if p is None:
            raise InterpError(f"unknown pipe PIPE_{pipe} (pipes: {', '.join(PIPES)}, ALL)")
        return p

    # ---- instructions ------------------------------------------------------------------------

    def issue(self, pipe: str, instr: Instr, accesses: list[Access]) -> None:
        """Issue one instruction on `pipe`; raise HazardError on an unordered conflict."""
        p = self._pipe(pipe)
        self.instructions += 1
        self.seq[p] += 1
        seq = self.seq[p]
        clock = self.front[p]
        accesses = [a for a in accesses if not a.ranges.empty()]
        for a in accesses:
            h = self.history.get(a.space)
            if h is None:
                continue
            for r in h.near(a.ranges.lo, a.ranges.hi):
                if (r.write or a.write) and r.seq > clock[r.pipe] and r.ranges.overlaps(a.ranges):
                    self._report(r, a, instr, p)
        for a in accesses:
            h = self.history.get(a.space)
            if h is None:
                h = self.history[a.space] = _History()
            h.replace_within(a.ranges.lo, a.ranges.hi, lambda r, a=a: self._dominates(a, p, clock, r))
            h.add(_Record(p, seq, a, instr))
        own = list(clock)
        own[p] = seq
        _join(self.done[p], own)
        if p == S:
            self._scalar_complete(own)

    @staticmethod
    def _dominates(a: Access, p: int, clock: list[int], r: _Record) -> bool:
        """Whether new access `a` (pipe p) makes record `r` redundant: every later access that
        conflicts with `r` conflicts with `a`, and anything ordered after `a` is ordered after `r`."""
        if r.write and not a.write:
            return False
        if not (r.pipe == p or r.seq <= clock[r.pipe]):
            return False
        return a.ranges.contains(r.ranges)

    def _report(self, r: _Record, a: Access, instr: Instr, p: int) -> None:
        kind = "WAW" if (r.write and a.write) else ("RAW" if r.write else "WAR")
        buf = a.label if a.label == r.label else f"{a.label} / {r.label}"
        src, dst = PIPES[r.pipe], PIPES[p]
        if r.pipe == p:
            hint = f"insert `pto.pipe_barrier {{pipe = PIPE_{dst}}}` before the second instruction"
        else:
            hint = (f"insert `pto.set_flag {{set_pipe = PIPE_{src}, wait_pipe = PIPE_{dst}, event_id = N}}` "
                    f"after the first instruction and the matching `pto.wait_flag` before the second")
        raise HazardError(kind, self.kernel, str(r.instr), str(instr), buf, hint=hint)


__all__ = ["PIPES", "Access", "HazardChecker", "Instr", "Ranges"]
