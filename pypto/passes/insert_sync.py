"""InsertSync: order every conflicting pair of instructions of a kernel (docs/sync_model.md).

Pre: HasMemRefs — SSA InCore kernels whose tile variables carry their buffer (`TileType.memref`).
Post: SyncInserted — each kernel has `system.sync_src(set_pipe=S, wait_pipe=D, event_id=e)` right
after a producer and `system.sync_dst(...)` right before its consumer for every cross-pipe conflict
not already ordered, and `system.bar_v()` / `bar_m()` (`bar_all()` for the other pipes) right before
the consumer of a same-pipe conflict. Functions other than kernels, kernels without instructions
and kernels that already contain sync ops (synchronized by hand) are returned unchanged, so the
pass is idempotent. Kernels with `break`/`continue` or an early `return` are rejected (PassError):
the set/wait balance below relies on structured control flow.

Algorithm — a forward dataflow analysis over the structured IR (`_Analysis`):

* Instructions (`pipes.instruction`) are identified by their statement *path* (indices and branch
  keys from the function body down). The abstract state holds, for each pipe D, the *pending*
  instructions — those not yet known to be ordered before the next instruction issued on D — each
  with the stamp of its latest issue and, per kind of path that reached here, the in-flight flags
  (set executed, wait not yet) whose wait will order it and the pipes whose sets would cover it.
  Transfer functions follow the sync model (and the interpreter's hazard checker): issuing an
  instruction on P makes it pending for every pipe, and lets a later set on P cover everything that
  was ordered before it (an S instruction is synchronous: never pending itself, it orders
  everything it was ordered after before everything later; so does a wait whose wait pipe is S); a
  set of P -> D marks the pending[D] instructions it covers (this is where transitive orderings
  come in); its wait drops them (on the paths where it covers them); a barrier on P drops P's own
  instructions from pending[P]; `bar_all` drops everything. Branches are analysed from the same
  state and joined (pending: union, path alternatives kept apart; in-flight flags: intersection).
  A loop body is re-analysed from join(state before the loop, state at the end of the body) until
  that head state is stable (twice when anything is carried); a loop with a constant trip count of
  one has no carried state and one of zero is skipped.
* Planning (decide mode): an instruction b on D that conflicts with pending instructions on other
  pipes gets, per pipe P, one flag P -> D for the latest such producer y (latest first: its wait
  may order the rest transitively), placed at the *common block* of y and b: the set right after
  the statement A of that block containing y, the wait right before the statement B containing b.
  The set also covers every earlier P instruction. If A comes after B (or is B: two branches of one
  if) the pair is carried around the innermost loop L enclosing that block; a set before L and a
  wait after L then balance it, so every execution matches sets and waits one to one. A conflict
  with a pending instruction of D itself left after that gets a barrier right before b. The
  planning walk repeats, the decided syncs applied where they sit, until a walk meets no conflict
  (a flag that was in place for a whole walk and still did not suffice is replaced there by a set
  and wait right before b).
* Pruning: a sync whose removal leaves the analysis hazard-free is dropped (full barriers first,
  then the latest decisions first), so an ordering already implied transitively costs nothing.
* Event ids: each flag is live from its set to its wait (a carried one from the set before L to its
  wait, and from its set to the wait after L), measured in the pre-order positions of the body; ids
  0..7 are allocated per (set pipe, wait pipe) greedily in order of first position and reused once
  a flag's wait has passed. A flag that finds all eight ids busy becomes `bar_all()` at its waits
  (and pruning runs again: that barrier may order what other flags did).

Calls returned, yielded or used as loop init values are first bound to temporaries
(`pipes.bind_instructions`) so that every instruction is a statement a wait can precede.

Everything is deterministic: statements are walked in order and ties are broken by path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.enums import FunctionType, PipeType
from pypto.ir.expr import ConstInt
from pypto.ir.function import Function, Program
from pypto.ir.op import create_op_call
from pypto.ir.stmt import (
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
)
from pypto.ir.visitor import rebuild

from .base import FunctionPass, IRProperty, PassContext, PassError
from .ir_utils import body_stmts, make_body, make_else
from .pipes import PIPES, Instruction, bind_instructions, instruction, is_sync_call, stmt_call, tensor_roots

Path = tuple  # (i0, key1, i1, key2, i2, ...): statement index, branch key ("body"/"then"/"else"), ...
Pos = tuple  # ("pre" | "post", path)

NUM_EVENTS = 8
_MAX_PASSES = 64
_MAX_ROUNDS = 64
_BARRIER_OF = {PipeType.V: PipeType.V, PipeType.M: PipeType.M}
_BARRIER_OP = {PipeType.V: "system.bar_v", PipeType.M: "system.bar_m", PipeType.ALL: "system.bar_all"}

S = PipeType.S


class InsertSync(FunctionPass):
    name = "InsertSync"
    requires = frozenset({IRProperty.HasMemRefs})
    produces = frozenset({IRProperty.SyncInserted})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        return insert_sync(fn)[0]


@dataclass(frozen=True)
class InsertedSync:
    """One synchronization InsertSync emitted: a flag (`set_pipe` set) with all its set and wait
    statements (including the balancing ones around a loop), or a barrier (`set_pipe` None)."""

    set_pipe: PipeType | None
    wait_pipe: PipeType
    event_id: int | None
    stmts: tuple[Stmt, ...]


def insert_sync(fn: Function) -> tuple[Function, list[InsertedSync]]:
    """The function with synchronization inserted, and what was inserted (for tests and tools)."""
    if fn.func_type is not FunctionType.InCore:
        return fn, []
    k = _Kernel(bind_instructions(fn))
    if k.has_syncs or not k.instrs:
        return fn, []
    syncs = _prune(k, _plan(k))
    if not syncs:
        return fn, []
    if _Analysis(k, syncs, decide=False).run().hazards:
        raise PassError(f"InsertSync left a hazard in {fn.name} (internal error)", fn.span)
    while _assign_events(k, syncs):  # a flag became a full barrier: others may be redundant now
        syncs = _prune(k, syncs)
    return _emit(k, syncs)


# ---------------------------------------------------------------------------------------------
# the kernel: statements and instructions by path


def _children(s: Stmt) -> list[tuple[str, Stmt | None]]:
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [("body", s.body)]
    if isinstance(s, IfStmt):
        return [("then", s.then_body), ("else", s.else_body)]
    return []


class _Kernel:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.body = body_stmts(fn.body)
        self.stmts: dict[Path, Stmt] = {}
        self.instrs: dict[Path, Instruction] = {}
        self.roots = tensor_roots(fn)
        self.has_syncs = False
        self.pos: dict[Pos, int] = {}
        self._conf: dict[tuple[Path, Path], bool] = {}
        self._pno: dict[Path, int] = {}
        self._walk(self.body, ())

    def _walk(self, stmts: list[Stmt], prefix: Path) -> None:
        for i, s in enumerate(stmts):
            p = prefix + (i,)
            self.stmts[p] = s
            self.pos[("pre", p)] = len(self.pos)
            if isinstance(s, (BreakStmt, ContinueStmt)) or (isinstance(s, ReturnStmt) and prefix):
                what = "break/continue" if not isinstance(s, ReturnStmt) else "a return inside a loop or if"
                raise PassError(f"InsertSync: kernel {self.fn.name} uses {what}", s.span,
                                hint="synchronization needs structured control flow: carry a flag in the "
                                     "loop state (pl.while_) instead")
            call = stmt_call(s)
            if call is not None and is_sync_call(call):
                self.has_syncs = True
            for key, body in _children(s):
                self._walk(body_stmts(body), p + (key,))
            ins = instruction(s, self.roots)
            if ins is not None:
                self.instrs[p] = ins
                self._pno[p] = ins.pipe.value
            self.pos[("post", p)] = len(self.pos)

    def conflict(self, a: Path, b: Path) -> bool:
        got = self._conf.get((a, b))
        if got is None:
            got = self._conf[(a, b)] = self.instrs[a].conflicts_with(self.instrs[b])
        return got

    def pipe(self, p: Path) -> PipeType:
        return self.instrs[p].pipe

    def pno(self, p: Path) -> int:
        return self._pno[p]

    def placement(self, a: Path, b: Path) -> tuple[Path, Path, Path | None]:
        """(A, B, L): set after A, wait before B (A and B in the block containing both a and b);
        L is the loop the pair is carried around (None when A comes before B)."""
        k = 0
        while a[k] == b[k] and k + 1 < min(len(a), len(b)) and a[k + 1] == b[k + 1]:
            k += 2
        A, B = a[:k + 1], b[:k + 1]
        if a[k] < b[k]:
            return A, B, None
        for j in range(k - 2, -1, -2):
            if isinstance(self.stmts[a[:j + 1]], (ForStmt, WhileStmt)):
                return A, B, a[:j + 1]
        raise PassError(f"InsertSync: no loop carries the pair {a} -> {b} (internal error)", self.fn.span)


def _static_trips(s: Stmt) -> int | None:
    if isinstance(s, ForStmt) and all(isinstance(e, ConstInt) for e in (s.start, s.stop, s.step)) \
            and s.step.value != 0:
        return len(range(s.start.value, s.stop.value, s.step.value))
    return None


# ---------------------------------------------------------------------------------------------
# the plan


@dataclass(eq=False)
class _Sync:
    """A flag (set_pipe set) or a barrier on `wait_pipe` (V, M or ALL)."""

    idx: int
    set_pipe: PipeType | None
    wait_pipe: PipeType
    wait_at: Path  # the wait (or barrier) is emitted before this statement (after it if at_post)
    set_at: Path | None = None  # the set is emitted after this statement (None: right before the wait)
    loop: Path | None = None  # carried: extra set before / wait after this loop
    at_post: bool = False
    round: int = 0
    event_id: int | None = None

    @property
    def key(self) -> tuple:
        return (self.set_pipe, self.wait_pipe, self.wait_at, self.set_at, self.loop, self.at_post)

    def ops(self) -> list[tuple[Pos, int, str]]:
        """(position, order within the position, op) of each statement this sync emits."""
        if self.set_pipe is None:
            return [(("post" if self.at_post else "pre", self.wait_at), 2, "bar")]
        out = [(("pre", self.wait_at), 1, "wait")]
        out.append((("post", self.set_at), 3, "set") if self.set_at is not None else (("pre", self.wait_at), 0, "set"))
        if self.loop is not None:
            out += [(("pre", self.loop), 3, "set"), (("post", self.loop), 1, "wait")]
        return out


def _index(syncs: list[_Sync]) -> dict[Pos, list[tuple[str, _Sync]]]:
    got: dict[Pos, list[tuple[int, int, str, _Sync]]] = {}
    for s in syncs:
        for pos, order, op in s.ops():
            got.setdefault(pos, []).append((order, s.idx, op, s))
    return {pos: [(op, s) for _, _, op, s in sorted(lst, key=lambda t: t[:2])] for pos, lst in got.items()}


# ---------------------------------------------------------------------------------------------
# the analysis


_NONE: frozenset = frozenset()
_NP = 1 + max(p.value for p in PIPES)  # pipes are numbered by their enum value
_S = S.value


def _minimal(alts) -> frozenset:
    """The alternatives no other one is worse than (fewer flags and pipes cover it): keeping only
    those decides the same waits."""
    alts = set(alts)
    if len(alts) < 2:
        return frozenset(alts)
    return frozenset(a for a in alts if not any(b != a and b[0] <= a[0] and b[1] <= a[1] for b in alts))


@dataclass
class _State:
    """pending[D][y] = (stamp of y's latest issue, alternatives), D by pipe number. Each alternative
    (one per kind of path that reached here) is (flags in flight whose wait orders y before D, pipe
    numbers P such that y happened before an instruction issued on P since: what a set on P covers).
    `flags`: the flags whose set was executed and whose wait was not."""

    pending: list[dict[Path, tuple[int, frozenset]]] = field(default_factory=lambda: [{} for _ in range(_NP)])
    flags: frozenset = _NONE

    def copy(self) -> _State:
        return _State([dict(d) for d in self.pending], self.flags)

    def join(self, other: _State) -> _State:
        pending = []
        for q in range(_NP):
            d = dict(self.pending[q])
            for y, v in other.pending[q].items():
                mine = d.get(y)
                if mine is None:
                    d[y] = v
                else:
                    d[y] = (max(v[0], mine[0]), v[1] if v[1] == mine[1] else _minimal(v[1] | mine[1]))
            pending.append(d)
        return _State(pending, self.flags & other.flags)

    def same(self, other: _State) -> bool:
        return self.flags == other.flags and all(
            a.keys() == b.keys() and all(v[1] == b[y][1] for y, v in a.items())
            for a, b in zip(self.pending, other.pending))


class _Found(Exception):
    """Check mode, first hazard wanted: stop the walk."""


class _Analysis:
    """One walk over a kernel with a fixed (check mode) or growing (decide mode) list of syncs."""

    def __init__(self, k: _Kernel, syncs: list[_Sync], decide: bool, rnd: int = 0, first: bool = False) -> None:
        self.k = k
        self.syncs = syncs
        self.decide = decide
        self.first = first
        self.round = rnd
        self.stamp = 0
        self.after: dict[Path, tuple[int, list[dict]]] = {}  # decide mode: (stamp, pending) after each stmt
        self.hazards: list[tuple[Path, Path]] = []
        self.by_key = {s.key: s for s in syncs}
        self.index = _index(syncs)

    def run(self) -> _Analysis:
        try:
            self.block(self.k.body, (), _State())
        except _Found:
            pass
        return self

    def block(self, stmts: list[Stmt], prefix: Path, st: _State) -> _State:
        for i, s in enumerate(stmts):
            st = self.stmt(s, prefix + (i,), st)
        return st

    def stmt(self, s: Stmt, path: Path, st: _State) -> _State:
        self.apply(("pre", path), st)
        if isinstance(s, (ForStmt, WhileStmt)):
            st = self.loop(s, path, st)
        elif isinstance(s, IfStmt):
            then = self.block(body_stmts(s.then_body), path + ("then",), st.copy())
            other = self.block(body_stmts(s.else_body), path + ("else",), st)
            st = then.join(other)
        elif isinstance(s, ScopeStmt):
            st = self.block(body_stmts(s.body), path + ("body",), st)
        elif path in self.k.instrs:
            self.instr(path, st)
        self.apply(("post", path), st)
        if self.decide:
            self.after[path] = (self.stamp, [dict(d) for d in st.pending])
        return st

    def loop(self, s: ForStmt | WhileStmt, path: Path, st: _State) -> _State:
        trips = _static_trips(s)
        if trips == 0:
            return st
        body, bp = body_stmts(s.body), path + ("body",)
        head = st
        for _ in range(_MAX_PASSES):
            end = self.block(body, bp, head.copy())
            nxt = st.join(end)
            if trips == 1 or nxt.same(head):
                break
            head = nxt
        else:
            if not self.decide:
                raise PassError(f"InsertSync: loop analysis did not converge in {self.k.fn.name} (internal error)",
                                s.span)
        return end if trips is not None else st.join(end)

    # ---- transfer functions ------------------------------------------------------------------

    def apply(self, pos: Pos, st: _State) -> None:
        for op, s in self.index.get(pos, ()):
            if op == "bar":
                self.barrier(s.wait_pipe, st)
            elif op == "set":  # orders what P has issued, and what happened before it, before the wait
                p, d, i = s.set_pipe.value, s.wait_pipe.value, s.idx
                st.flags = st.flags | {i}
                st.pending[d] = {y: (t, frozenset((cov | {i}, pubs) if p in pubs else (cov, pubs)
                                                  for cov, pubs in alts))
                                 for y, (t, alts) in st.pending[d].items()}
            elif s.idx in st.flags:  # what the set covered, on every path, is ordered before D now
                d, i = s.wait_pipe.value, s.idx
                st.flags = st.flags - {i}
                left = {}
                for y, (t, alts) in st.pending[d].items():
                    rest = [a for a in alts if i not in a[0]]
                    if rest:
                        left[y] = (t, alts if len(rest) == len(alts) else frozenset(rest))
                st.pending[d] = left
                if d == _S:  # the scalar unit stalls: everything after it waits
                    self.scalar_done(st)

    def scalar_done(self, st: _State) -> None:
        """What is ordered before the scalar pipe's next instruction is ordered before everything."""
        keep = st.pending[_S]
        st.pending = [{y: v for y, v in q.items() if y in keep} for q in st.pending]

    def barrier(self, pipe: PipeType, st: _State) -> None:
        if pipe is PipeType.ALL:
            st.pending = [{} for _ in range(_NP)]
        else:
            q, pno = pipe.value, self.k.pno
            st.pending[q] = {y: v for y, v in st.pending[q].items() if pno(y) != q}

    def instr(self, path: Path, st: _State) -> None:
        d = self.k.pno(path)
        conf = [y for y in st.pending[d] if self.k.conflict(y, path)]
        if conf:
            self.hazards += [(y, path) for y in conf]
            if self.first:
                raise _Found()
            if self.decide:
                self.resolve(path, self.k.pipe(path), st)
        if d == _S:  # synchronous: done before the next issue, after all it was ordered after
            self.scalar_done(st)
            return
        self.stamp += 1
        src = st.pending[d]
        for q in st.pending:  # what is ordered before this instruction is published by a set on its pipe
            for y, (t, alts) in q.items():
                if y not in src and any(d not in pubs for _, pubs in alts):
                    q[y] = (t, frozenset((cov, pubs | {d}) for cov, pubs in alts))
        entry = (self.stamp, frozenset(((_NONE, frozenset((d,))),)))
        for q in st.pending:
            q[path] = entry

    # ---- decisions ---------------------------------------------------------------------------

    def resolve(self, b: Path, d: PipeType, st: _State) -> None:
        """Order b after its conflicting pending instructions: flags from other pipes first (the
        latest producer first: its wait may order the others transitively), then a barrier."""
        pend = st.pending[d.value]
        while True:
            conf = [y for y in pend if self.k.pipe(y) is not d and self.k.conflict(y, b)]
            if not conf:
                break
            y = max(conf, key=lambda y: (pend[y][0], y))
            p = self.k.pipe(y)
            a_stmt, b_stmt, loop = self.k.placement(y, b)
            s = self.add(p, d, b_stmt, a_stmt, loop)
            # the set after A covers what, at A's latest visit, was on P or had happened before an
            # instruction on P (on every path) ...
            t, snap = self.after.get(a_stmt, (-1, None)) if s.round == self.round else (-1, None)
            covered = [z for z, (tz, _) in pend.items() if tz <= t and z in snap[d.value]
                       and all(p.value in pubs for _, pubs in snap[d.value][z][1])]
            if y not in covered:  # ... unless it was in place all along and did not suffice: set right here
                self.add(p, d, b)
                covered = [z for z in pend if self.k.pipe(z) is p]
            for z in covered:
                del pend[z]
        if any(self.k.pipe(y) is d and self.k.conflict(y, b) for y in pend):
            self.add(None, _BARRIER_OF.get(d, PipeType.ALL), b)
            self.barrier(_BARRIER_OF.get(d, PipeType.ALL), st)

    def add(self, set_pipe: PipeType | None, wait_pipe: PipeType, wait_at: Path, set_at: Path | None = None,
            loop: Path | None = None) -> _Sync:
        s = _Sync(len(self.syncs), set_pipe, wait_pipe, wait_at, set_at, loop, round=self.round)
        got = self.by_key.get(s.key)
        if got is not None:
            return got
        self.syncs.append(s)
        self.by_key[s.key] = s
        self.index = _index(self.syncs)
        return s


def _plan(k: _Kernel) -> list[_Sync]:
    syncs: list[_Sync] = []
    for r in range(_MAX_ROUNDS):
        if not _Analysis(k, syncs, decide=True, rnd=r).run().hazards:
            return syncs
    raise PassError(f"InsertSync: planning did not converge for {k.fn.name} (internal error)", k.fn.span)


def _prune(k: _Kernel, syncs: list[_Sync]) -> list[_Sync]:
    """Drop what the others make redundant: full barriers first, then the latest decisions first."""
    keep = list(syncs)
    for s in sorted(syncs, key=lambda s: (s.wait_pipe is not PipeType.ALL, -s.idx)):
        trial = [x for x in keep if x is not s]
        if not _Analysis(k, trial, decide=False, first=True).run().hazards:
            keep = trial
    return keep


# ---------------------------------------------------------------------------------------------
# event ids


def _intervals(k: _Kernel, s: _Sync) -> list[tuple[int, int]]:
    pos = k.pos
    wait = pos[("pre", s.wait_at)]
    if s.set_at is None:
        return [(wait, wait)]
    if s.loop is None:
        return [(pos[("post", s.set_at)], wait)]
    return [(pos[("pre", s.loop)], wait), (pos[("post", s.set_at)], pos[("post", s.loop)])]


def _assign_events(k: _Kernel, syncs: list[_Sync]) -> bool:
    """Give each flag an event id; one that finds none free becomes `bar_all` (then True)."""
    busy: dict[tuple[PipeType, PipeType, int], list[tuple[int, int]]] = {}
    flags = [s for s in syncs if s.set_pipe is not None]
    spans = {s.idx: _intervals(k, s) for s in flags}
    for s in sorted(flags, key=lambda s: (min(a for a, _ in spans[s.idx]), s.idx)):
        s.event_id = None
        for e in range(NUM_EVENTS):
            used = busy.setdefault((s.set_pipe, s.wait_pipe, e), [])
            if not any(a <= d and c <= b for a, b in spans[s.idx] for c, d in used):
                used += spans[s.idx]
                s.event_id = e
                break
    full = [s for s in flags if s.event_id is None]
    for s in full:  # all ids busy: a full barrier where it waited
        syncs.remove(s)
        syncs.append(_Sync(s.idx, None, PipeType.ALL, s.wait_at))
        if s.loop is not None:
            syncs.append(_Sync(s.idx, None, PipeType.ALL, s.loop, at_post=True))
    return bool(full)


# ---------------------------------------------------------------------------------------------
# emission


def _emit(k: _Kernel, syncs: list[_Sync]) -> tuple[Function, list[InsertedSync]]:
    made: dict[int, list[Stmt]] = {}  # sync idx -> its statements
    by_pos: dict[Pos, list[Stmt]] = {}
    for pos, ops in _index(syncs).items():
        for op, s in ops:
            stmt = _sync_stmt(op, s, k.stmts[pos[1]])
            made.setdefault(s.idx, []).append(stmt)
            by_pos.setdefault(pos, []).append(stmt)

    def block(stmts: list[Stmt], prefix: Path) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            p = prefix + (i,)
            out += by_pos.get(("pre", p), [])
            out.append(rebuild_stmt(s, p))
            out += by_pos.get(("post", p), [])
        return out

    def rebuild_stmt(s: Stmt, p: Path) -> Stmt:
        changes = {}
        for key, body in _children(s):
            old = body_stmts(body)
            new = block(old, p + (key,))
            if len(new) != len(old) or any(x is not y for x, y in zip(new, old)):
                field_name = {"then": "then_body", "else": "else_body"}.get(key, "body")
                changes[field_name] = make_else(new) if key == "else" else make_body(new)
        return rebuild(s, changes) if changes else s  # type: ignore[return-value]

    body = make_body(block(k.body, ()), span=getattr(k.fn.body, "span", None))
    fn = rebuild(k.fn, {"body": body})
    first = {s.idx: s for s in sorted(syncs, key=lambda s: s.at_post, reverse=True)}  # a flag's barriers: one
    done = [InsertedSync(s.set_pipe, s.wait_pipe, s.event_id, tuple(made[i])) for i, s in sorted(first.items())]
    return fn, done  # type: ignore[return-value]


def _sync_stmt(op: str, s: _Sync, at: Stmt) -> Stmt:
    if op == "bar":
        call = create_op_call(_BARRIER_OP[s.wait_pipe], [], {}, at.span)
    else:
        kw = {"set_pipe": s.set_pipe, "wait_pipe": s.wait_pipe, "event_id": s.event_id}
        call = create_op_call("system.sync_src" if op == "set" else "system.sync_dst", [], kw, at.span)
    return EvalStmt(call, span=at.span)


__all__ = ["NUM_EVENTS", "InsertSync", "InsertedSync", "insert_sync"]
