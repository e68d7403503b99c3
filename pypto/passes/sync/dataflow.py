"""The forward dataflow walk of InsertSync over the kernel tree (`model`), on bit sets: check mode
counts the conflicts a plan leaves unordered, decide mode grows the plan where it meets them
(`_Walk.resolve`); its cost is about (statements x loop passes), each step a few big-int operations
per pipe.

The state, per pipe D the kernel uses: `pend[D]`, the instructions an instance of which may not
be ordered yet before the next instruction issued on D (a *may* set); `done[D]`, those every
issued instance of which is ordered before (or is) an instruction already issued on D — what a
set on D issued now covers (a *must* set; not issued yet counts as covered); the flags in flight
(set executed, wait not yet), each with what its set covered. Transfer functions follow the sync
model and the interpreter's hazard checker: issuing i on P reports `conf[i] & pend[P]` as
hazards, adds to `done[P]` what is ordered before it (`~pend[P]`) and i, makes i pending for
every pipe and uncovered by the other pipes and the flags in flight; an S instruction is
synchronous (never pending; `pend[q] &= pend[S]` everywhere: what it was ordered after is ordered
before everything — so does a wait whose wait pipe is S); a set P -> D records `done[P]`, its
wait clears that from `pend[D]`; a barrier on P clears P's instructions from `pend[P]`, bar_all
clears everything.

Joins (after an if, at a loop head): pend is the union; a flag covers, on each path, also what
is not pending for its wait pipe there, and a set what is pending for no pipe there, before the
intersection — so a set or wait after the join orders exactly what it orders on each path (a
pair ordered through a flag on one path and a full barrier on the other needs no flag of its
own). A loop runs its first iteration from the state before it, then iterates from join(state
before the next iteration, state at the end of the body) until that head is stable; checking a
loop with a constant trip count n >= 2, the later iterations start from the end of the first one
(nothing leaves after a single iteration); a trip count of one has no carried state, zero skips
the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base import PassError
from .model import Path, _If, _Ins, _Loop, _Node
from .plan import _SET, _WAIT, _Plan, _Sync, _SyncOp

if TYPE_CHECKING:
    from ..insert_sync import _Kernel

_MAX_PASSES = 64


def _bits(x: int):
    """The positions of the set bits of x, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


@dataclass(frozen=True, slots=True)
class _Flag:
    """A flag `resolve` decides: set on pipe `sp` after statement `set_after` (None: right before the
    wait), wait before statement `wait_before`, carried around `loop`; for producer `producer`."""

    sp: int
    wait_before: Path
    set_after: Path | None
    loop: Path | None
    producer: int


class _St:
    """pend[q] (may), done[q] (must), flags in flight: sync idx -> what its set covered (must).
    `pend` lists and `flags` dicts are updated in place; a `done` list never is once a state holds
    it (an issue makes a new one), so the walk keeps references to them as snapshots."""

    __slots__ = ("pend", "done", "flags")

    def __init__(self, pend: list[int], done: list[int], flags: dict[int, int]) -> None:
        self.pend = pend
        self.done = done
        self.flags = flags

    def copy(self) -> _St:
        return _St(self.pend[:], self.done, dict(self.flags) if self.flags else {})

    def join(self, o: _St, k: _Kernel) -> _St:
        """Paths merge. What a path has ordered before every pipe counts as covered there by any
        set (nothing will wait for it on that path), and what is not pending for a flag's wait
        pipe on a path counts as covered there by that flag: a set or wait after the join then
        orders exactly what it orders on each path."""
        p1, p2, full = self.pend, o.pend, k.all
        any1 = any2 = 0
        for x in p1:
            any1 |= x
        for x in p2:
            any2 |= x
        f, g = self.flags, o.flags
        if f and g:
            wp_of = k.flag_wp
            flags = {i: (c | ~p1[wp_of[i]]) & (g[i] | ~p2[wp_of[i]]) & full for i, c in f.items() if i in g}
        else:
            flags = {}
        return _St([a | b for a, b in zip(p1, p2)],
                   [(a | ~any1) & (b | ~any2) & full for a, b in zip(self.done, o.done)], flags)

    def same(self, o: _St) -> bool:
        return self.pend == o.pend and self.done == o.done and self.flags == o.flags


class _Found(Exception):
    """Check mode, first hazard wanted: stop the walk."""


class _Walk:
    """One walk over a kernel: check mode (`hazards` counts them; `first`: stop at the first) or
    decide mode (`rnd` given: the plan grows where hazards are met)."""

    def __init__(self, k: _Kernel, plan: _Plan, rnd: int | None = None, first: bool = False) -> None:
        self.k = k
        self.plan = plan
        self.at = plan.at
        self.decide = rnd is not None
        self.first = first
        self.round = rnd
        self.hazards = 0
        self.visits = 0
        # decide mode
        self.log: list[int] = []  # instructions in order of issue (a stamp is an index here)
        self.stamp = [0] * k.n if self.decide else []
        self.after_done: dict[int, list[int]] = {}  # post position -> `done` there at its latest visit
        self.after_stamp: dict[int, int] = {}  # post position -> how many instructions had issued then
        self.entry_done: dict[Path, list[int]] = {}  # loop -> done at its latest entry
        self.keep = k.all  # conflicts resolved now (the others wait for the loop's second pass)
        self.deferred = 0

    def run(self) -> _Walk:
        k = self.k
        try:
            self.block(k.tree, _St([0] * k.np, [k.all] * k.np, {}))
        except _Found:
            pass
        return self

    def states(self, ref: list[_St] | None = None, start: int = 0, last: int = 0) -> list[_St] | None:
        """Check-walk the top-level statements, recording the state before each one (and at the end):
        the list, or None at a hazard. With `ref`, the states of another plan that differs from this
        one only in statements start..last: begin with ref[start] and stop once the state after
        statement last or a later one is the same as ref's there (the rest is ref's)."""
        k = self.k
        tree = k.tree
        out = list(ref) if ref is not None else [_St([0] * k.np, [k.all] * k.np, {})]
        st = out[start].copy()
        try:
            for j in range(start, len(tree)):
                st = self.block(tree[j:j + 1], st)
                if ref is None:
                    out.append(st.copy())
                    continue
                out[j + 1] = st.copy()
                if j >= last and st.same(ref[j + 1]):
                    break
        except _Found:
            return None
        if ref is None:
            k.visits = self.visits
        return out

    def block(self, nodes: tuple[_Node, ...], st: _St) -> _St:
        at, decide = self.at, self.decide
        self.visits += len(nodes)
        for node in nodes:
            kind = type(node)
            if at:
                ops = at.get(node.pre)
                if ops:
                    self.apply(ops, st)
            if kind is _Ins:
                self.instr(node.i, st)
            elif kind is _Loop:
                st = self.loop(node, st)
            elif kind is _If:
                then = self.block(node.then, st.copy())
                st = then.join(self.block(node.other, st), self.k)
            else:
                st = self.block(node.body, st)
            if at:
                ops = at.get(node.post)
                if ops:
                    self.apply(ops, st)
            if decide:  # (done lists are never changed once a state holds them: no copy)
                self.after_done[node.post] = st.done
                self.after_stamp[node.post] = len(self.log)
        return st

    def loop(self, node: _Loop, st: _St) -> _St:
        """The first iteration from the state before the loop; then, from join(state before the next
        iteration, state at the end of the body), until that head is stable. Checking a loop with a
        constant trip count n >= 2, the next iterations start from the end of the first one (every
        exit follows at least two iterations); otherwise from the state before the loop too."""
        body, trips, path = node.body, node.trips, node.path
        if trips == 0:
            return st
        decide = self.decide
        again = False
        if decide:
            self.entry_done[path] = st.done
            saved, deferred = self.keep, self.deferred
            self.keep = self.k.lmask[path]
        end = self.block(body, st.copy())
        if decide:
            self.keep = saved
            again = self.deferred != deferred
        if trips == 1:
            return self.block(body, st.copy()) if again else end
        peel = trips is not None and not decide  # (decisions see the first iteration's exit too: safe)
        base = end if peel else st
        head = None if peel else st
        for _ in range(_MAX_PASSES):
            nxt = base if head is None else base.join(end, self.k)
            if not again and head is not None and nxt.same(head):
                break
            again = False
            head = nxt
            end = self.block(body, head.copy())
        else:
            if not decide:
                raise PassError(f"InsertSync: loop analysis did not converge in {self.k.fn.name} (internal error)",
                                self.k.fn.span)
        return end if trips is not None else st.join(end, self.k)

    # ---- transfer functions ------------------------------------------------------------------

    def apply(self, ops: list[_SyncOp], st: _St) -> None:
        for op in ops:
            s, kind = op.sync, op.kind
            i = s.idx
            if kind == _SET:  # orders what is done on its pipe before the wait
                c = st.done[s.sp]
                f = st.flags
                f[i] = f[i] & c if i in f else c
            elif kind == _WAIT:
                cov = st.flags.pop(i, None)
                if cov is not None:  # what the set covered, on every path, is ordered before D now
                    d = s.wp
                    st.pend[d] &= ~cov
                    if d == self.k.s:
                        self.scalar_done(st)
            else:
                self.barrier(s.wp, st)

    def scalar_done(self, st: _St) -> None:
        """What is ordered before the scalar pipe's next instruction is ordered before everything."""
        keep = st.pend[self.k.s]
        st.pend = [x & keep for x in st.pend]

    def barrier(self, wp: int, st: _St) -> None:
        if wp < 0:
            st.pend = [0] * len(st.pend)
        else:
            st.pend[wp] &= ~self.k.pmask[wp]

    def instr(self, i: int, st: _St) -> None:
        info = self.k.info[i]
        d, b, nb = info.pipe, info.bit, info.nbit
        if info.conf & st.pend[d]:
            self.hazard(i, st)
        if info.sync:  # synchronous: done before the next issue, after all it was ordered after
            self.scalar_done(st)
            return
        pend, done = st.pend, st.done
        mine = done[d] | (self.k.all & ~pend[d]) | b  # a later set on d covers what this one is after
        st.pend = [x | b for x in pend]
        done = st.done = [x & nb for x in done]
        done[d] = mine
        f = st.flags
        if f:
            for x in f:
                f[x] &= nb
        if self.decide:
            self.stamp[i] = len(self.log)
            self.log.append(i)

    # ---- decisions ---------------------------------------------------------------------------

    def hazard(self, b: int, st: _St) -> None:
        self.hazards += 1
        if self.first:
            raise _Found()
        if self.decide:
            c = self.k.conf[b] & st.pend[self.k.ipipe[b]]
            if c & ~self.keep:
                self.deferred += 1
            if c & self.keep:
                self.resolve(b, st)

    def resolve(self, b: int, st: _St) -> None:
        """Order b after its conflicting pending instructions: flags from other pipes first (the
        latest producer first: its wait may order the others transitively), then a barrier (a full
        barrier alone when one is needed: it orders everything the flags would)."""
        k = self.k
        d = k.ipipe[b]
        own = k.pmask[d]
        conf = k.conf[b] & self.keep
        stamp, by_key = self.stamp, self.plan.by_key
        pend = st.pend[d]
        flags: list[_Flag] = []
        while True:
            other = pend & conf & ~own
            if not other:
                break
            y = other.bit_length() - 1 if not other & (other - 1) else max(_bits(other), key=stamp.__getitem__)
            p = k.ipipe[y]
            place = k.place(y, b)
            a_stmt, b_stmt, loop = place.set_after, place.wait_before, place.loop
            got = by_key.get((p, d, b_stmt, a_stmt, loop, False))  # a `_Sync.key`
            cov = 0
            a_post = k.post[a_stmt]
            dn = self.after_done.get(a_post) if got is None or got.round == self.round else None
            if dn is not None:  # the set after A covers what was done on P there, not issued since
                t = self.after_stamp[a_post]
                cov = pend & dn[p]
                if loop is not None:  # (and, in the first iteration, what the set before L covers)
                    cov &= self.entry_done.get(loop, dn)[p]
                since = 0
                for z in self.log[t:]:
                    since |= 1 << z
                cov &= ~since
            flags.append(_Flag(p, b_stmt, a_stmt, loop, y))
            if not (cov >> y) & 1:  # in place all along and it did not suffice: set right here
                flags.append(_Flag(p, k.paths[b], None, None, y))
                cov = pend & st.done[p]
            pend &= ~cov
        bar = k.bar[d]
        if pend & conf & own and bar < 0:
            self.barrier_for(b, -1, st)
            return
        for f in flags:
            self.add(f.sp, d, f.wait_before, f.set_after, f.loop).triggers.add((f.producer, b))
        st.pend[d] = pend
        if pend & conf & own:
            self.barrier_for(b, bar, st)

    def barrier_for(self, b: int, wp: int, st: _St) -> None:
        """A barrier (on b's pipe wp, or a full one: -1) right before b."""
        k = self.k
        d = k.ipipe[b]
        y = max(_bits(st.pend[d] & k.conf[b] & self.keep & k.pmask[d]), key=self.stamp.__getitem__)
        s = self.add(-1, wp, k.paths[b])
        s.triggers.add((y, b))
        self.barrier(wp, st)

    def add(self, sp: int, wp: int, wait_at: Path, set_at: Path | None = None, loop: Path | None = None) -> _Sync:
        return self.plan.add(sp, wp, wait_at, set_at, loop, self.round)[0]  # type: ignore[arg-type]


__all__: list[str] = []
