"""InsertSync: order every conflicting pair of instructions of a kernel (docs/sync_model.md).

Pre: HasMemRefs — SSA InCore kernels whose tile variables carry their buffer (`TileType.memref`).
Post: SyncInserted — each kernel has `system.sync_src(set_pipe=S, wait_pipe=D, event_id=e)` right
after a producer and `system.sync_dst(...)` right before its consumer for every cross-pipe conflict
not already ordered, and `system.bar_v()` / `bar_m()` (`bar_all()` for the other pipes) right before
the consumer of a same-pipe conflict. Functions other than kernels, kernels without instructions
and kernels that already contain sync ops (synchronized by hand) are returned unchanged, so the
pass is idempotent. Kernels with `break`/`continue` or an early `return` are rejected (PassError):
the set/wait balance below relies on structured control flow.

Algorithm — a forward dataflow analysis over the structured IR (`_Walk`), on bit sets; its cost is
about (statements x loop passes), each step a few big-int operations per pipe:

* The kernel is compiled once (`_Kernel`) into a tree of the statements that matter (instructions,
  and the loops / ifs / scopes holding some). Instructions are numbered in program order, so a set
  of them is a Python int and a loop body's instructions are one bit range. `conf[i]`, the
  instructions that conflict with instruction i, comes from the resources each one reads and
  writes (`pipes.instruction`), computed resource by resource (not pair by pair).
* The state, per pipe D the kernel uses: `pend[D]`, the instructions an instance of which may not
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
* Joins (after an if, at a loop head): pend is the union; a flag covers, on each path, also what
  is not pending for its wait pipe there, and a set what is pending for no pipe there, before the
  intersection — so a set or wait after the join orders exactly what it orders on each path (a
  pair ordered through a flag on one path and a full barrier on the other needs no flag of its
  own). A loop runs its first iteration from the state before it, then iterates from join(state
  before the next iteration, state at the end of the body) until that head is stable; checking a
  loop with a constant trip count n >= 2, the later iterations start from the end of the first one
  (nothing leaves after a single iteration); a trip count of one has no carried state, zero skips
  the loop.
* Planning (decide mode): an instruction b on D that conflicts with pending instructions on other
  pipes gets, per pipe P, one flag P -> D for the latest such producer y (latest first: its wait
  may order the rest transitively), placed at the *common block* of y and b: the set right after
  the statement A of that block containing y, the wait right before the statement B containing b.
  The set also covers what, at A's latest visit, was in `done[P]` and has not been issued since
  (and, for a carried flag, what the set before the loop covers): that leaves `pend[D]` on the
  spot — the transitive-ordering check that keeps later consumers from asking for a flag the
  earlier ones imply. If A comes after B (or is B: two branches of one if) the pair is carried
  around the innermost loop L enclosing that block; a set before L and a wait after L then balance
  it, so every execution matches sets and waits one to one. A conflict with a pending instruction
  of D itself left after that gets a barrier right before b (if that is bar_all, it alone: it
  orders what the flags would). While a loop is analysed for the first time, conflicts with
  producers from before it are not resolved yet: the second pass sees them together with the pairs
  carried from the previous iteration, and the latest producer first is then the carried one,
  whose set before the loop orders the producers before the loop too (no separate flag for them).
  Walks repeat, the decided syncs applied where they sit, until a walk with all of them in place
  meets no conflict (a flag that was in place a whole walk and did not suffice is replaced there by
  a set and wait right before b). In a straight-line kernel (no loop, no if) the first walk applies
  every decision exactly as it acts, so it is the check as well.
* Minimality: in a straight-line kernel the plan is irredundant by construction (decided in program
  order, each wait right before its consumer). Elsewhere a sync can be made redundant by one decided
  later in the walk (a carried flag, a barrier, a wait placed before an enclosing statement), so
  `_prune` tries removing *suspects*: a sync decided for (y, b) is a suspect only if some path from
  y to b holds other syncs that may clear y for b's pipe (a chain of flags from y's pipe to b's
  pipe set and waited there, a wait on S, a full barrier, or a barrier on that pipe). A trial
  re-walks from the top-level statement holding the sync and stops when the state is back to the
  current plan's. Full barriers go first, then the latest decisions. The trials share a budget
  (`_PRUNE_VISITS` statement visits or `_PRUNE_WALKS` walks of the kernel): the test kernels,
  straight-line, K loops, row-block loops and if/else come out minimal; in a large kernel with many
  suspects (deep random nests) the last ones may stay, redundant or not — never a missing order.
  The analysis merges paths (the joins above), so in deep nests of ifs and loops it may also keep a
  sync that only a path-by-path enumeration would show redundant.
* Event ids: each flag is live from its set to its wait (a carried one from the set before L to its
  wait, and from its set to the wait after L), measured in the pre-order positions of the body; ids
  0..7 are allocated per (set pipe, wait pipe) greedily in order of first position and reused once
  a flag's wait has passed. A flag that finds all eight ids busy becomes `bar_all()` at its waits
  (and pruning runs again over every sync: that barrier may order what other flags did).

Calls returned, yielded or used as loop init values are first bound to temporaries
(`pipes.bind_instructions`) so that every instruction is a statement a wait can precede.

Everything is deterministic: statements are walked in order and ties are broken by position.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from pypto.ir.enums import FunctionType, PipeType
from pypto.ir.expr import Call, ConstInt, MemRef, Op
from pypto.ir.function import Function, Program
from pypto.ir.op import create_op_call, get_op
from pypto.ir.stmt import (
    AssignStmt,
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
from pypto.ir.walk import body_stmts, make_body, make_else

from .analysis.pipes import (
    _NO_INSTRUCTION,
    Buffer,
    Instruction,
    TensorRegion,
    bind_instructions,
    call_instruction,
    tensor_roots,
)
from .base import FunctionPass, IRProperty, PassContext, PassError
from .loop_bounds import range_len

Path = tuple  # (i0, key1, i1, key2, i2, ...): statement index, branch key ("body"/"then"/"else"), ...

NUM_EVENTS = 8
_MAX_PASSES = 64
_MAX_ROUNDS = 64
# pruning tries suspects while their walks cost at most this many statement visits, or this many
# walks of the whole kernel if that is more: beyond it, in large kernels, a redundant sync may stay
_PRUNE_VISITS = 20000
_PRUNE_WALKS = 4
_BARRIER_OF = {PipeType.V: PipeType.V, PipeType.M: PipeType.M}
_BARRIER_OP = {PipeType.V: "system.bar_v", PipeType.M: "system.bar_m", PipeType.ALL: "system.bar_all"}
_SYNC_NAMES = frozenset({"system.sync_src", "system.sync_dst", "system.bar_v", "system.bar_m", "system.bar_all"})

S = PipeType.S


class InsertSync(FunctionPass):
    name = "InsertSync"
    requires = frozenset({IRProperty.HasMemRefs})
    produces = frozenset({IRProperty.SyncInserted})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        return insert_sync(fn, report=False)[0]


@dataclass(frozen=True)
class InsertedSync:
    """One synchronization InsertSync emitted: a flag (`set_pipe` set) with all its set and wait
    statements (including the balancing ones around a loop), or a barrier (`set_pipe` None)."""

    set_pipe: PipeType | None
    wait_pipe: PipeType
    event_id: int | None
    stmts: tuple[Stmt, ...]


def insert_sync(fn: Function, report: bool = True) -> tuple[Function, list[InsertedSync]]:
    """The function with synchronization inserted, and what was inserted (for tests and tools;
    `report=False`: an empty list)."""
    if fn.func_type is not FunctionType.InCore:
        return fn, []
    k = _Kernel(bind_instructions(fn))
    if k.has_syncs or not k.n:
        return fn, []
    plan = _plan(k)
    if not plan.syncs:
        return fn, []
    plan = _prune(k, plan)  # the planning walks checked the plan; a pruning walk checks each removal
    while _assign_events(k, plan):  # a flag became a full barrier: others may be redundant now
        plan = _prune(k, plan, everything=True)
        if _Walk(k, plan, first=True).run().hazards:
            raise PassError(f"InsertSync left a hazard in {fn.name} (internal error)", fn.span)
    return _emit(k, plan, report)


# ---------------------------------------------------------------------------------------------
# the kernel: the statements that matter, instructions as bits


_INS, _LOOP, _IF, _SCOPE = 0, 1, 2, 3


def _static_trips(s: Stmt) -> int | None:
    if isinstance(s, ForStmt) and all(isinstance(e, ConstInt) for e in (s.start, s.stop, s.step)) \
            and s.step.value != 0:
        return range_len(s.start.value, s.stop.value, s.step.value)
    return None


def _bits(x: int):
    """The positions of the set bits of x, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


class _Kernel:
    """The kernel compiled for the analysis. Nodes are tuples: (_INS, pre, post, i),
    (_LOOP, pre, post, body, trips, path), (_IF, pre, post, then, else), (_SCOPE, pre, post, body),
    where pre/post are position ids (pre-order numbers: where a sync sits before / after it) and i
    numbers the instruction (in program order: a loop body's instructions are one bit range)."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.body = body_stmts(fn.body)
        self.roots = tensor_roots(fn)
        self.has_syncs = False
        self.stmts: dict[Path, Stmt] = {}  # instructions and the compound statements holding some
        self.pre: dict[Path, int] = {}
        self.post: dict[Path, int] = {}
        self.where: dict[int, tuple[bool, Path]] = {}  # position id -> (after?, statement)
        self.npos = 0
        self.paths: list[Path] = []  # instruction number -> its path
        self.instrs: list[Instruction] = []
        self.lmask: dict[Path, int] = {}  # loop -> the instructions of its body
        self.trips: dict[Path, int | None] = {}  # loop -> its constant trip count
        self.nodes = 0  # statements in the tree
        self.visits = 0  # statement visits of the latest whole check walk
        self.straight = True  # no loop, no if
        self.tree = self._walk(self.body, ())
        self.n = n = len(self.paths)
        self.all = (1 << n) - 1
        pipes = sorted({ins.pipe for ins in self.instrs}, key=lambda p: p.value)
        self.pipes: list[PipeType] = pipes
        self.pidx = {p: q for q, p in enumerate(pipes)}
        self.np = len(pipes)
        self.s = self.pidx.get(S, -1)
        self.ipipe = [self.pidx[ins.pipe] for ins in self.instrs]
        self.pmask = [0] * self.np
        for i, q in enumerate(self.ipipe):
            self.pmask[q] |= 1 << i
        self.conf = _conflicts(self.instrs) if n else []
        self.bar = [self.pidx[p] if p in _BARRIER_OF else -1 for p in pipes]  # the barrier of a pipe (-1: bar_all)
        # per instruction: (pipe, conflicts, bit, ~bit, synchronous)
        self.info = [(q, c, 1 << i, ~(1 << i), q == self.s) for i, (q, c) in enumerate(zip(self.ipipe, self.conf))]
        self.flag_wp: dict[int, int] = {}  # sync idx of a flag -> its wait pipe
        self._placed: dict[tuple[int, int], tuple[Path, Path, Path | None]] = {}

    def _walk(self, stmts: list[Stmt], prefix: Path) -> list[tuple]:
        nodes: list[tuple] = []
        for i, s in enumerate(stmts):
            pre = self.npos
            self.npos += 1
            if isinstance(s, (AssignStmt, EvalStmt)):
                call = s.value if isinstance(s, AssignStmt) else s.expr
                if not isinstance(call, Call) or not isinstance(call.op, Op):
                    continue
                name = call.op.name
                if name in _SYNC_NAMES:
                    self.has_syncs = True
                    continue
                if name in _NO_INSTRUCTION:
                    continue
                ins = call_instruction(s, call, self.roots)
                if ins is None:
                    continue
                p = prefix + (i,)
                node = (_INS, pre, self.npos, len(self.paths))
                self.paths.append(p)
                self.instrs.append(ins)
            elif isinstance(s, (ForStmt, WhileStmt)):
                p = prefix + (i,)
                lo = len(self.paths)
                body = self._walk(body_stmts(s.body), p + ("body",))
                if not body:
                    continue
                self.lmask[p] = ((1 << len(self.paths)) - 1) ^ ((1 << lo) - 1)
                self.straight = False
                self.trips[p] = _static_trips(s)
                node = (_LOOP, pre, self.npos, body, self.trips[p], p)
            elif isinstance(s, IfStmt):
                p = prefix + (i,)
                then = self._walk(body_stmts(s.then_body), p + ("then",))
                other = self._walk(body_stmts(s.else_body), p + ("else",))
                if not then and not other:
                    continue
                self.straight = False
                node = (_IF, pre, self.npos, then, other)
            elif isinstance(s, ScopeStmt):
                p = prefix + (i,)
                body = self._walk(body_stmts(s.body), p + ("body",))
                if not body:
                    continue
                node = (_SCOPE, pre, self.npos, body)
            else:
                if isinstance(s, (BreakStmt, ContinueStmt)) or (isinstance(s, ReturnStmt) and prefix):
                    what = "break/continue" if not isinstance(s, ReturnStmt) else "a return inside a loop or if"
                    raise PassError(f"InsertSync: kernel {self.fn.name} uses {what}", s.span,
                                    hint="synchronization needs structured control flow: carry a flag in the "
                                         "loop state (pl.while_) instead")
                continue
            self.stmts[p] = s
            self.pre[p] = pre
            self.post[p] = self.npos
            self.where[pre] = (False, p)
            self.where[self.npos] = (True, p)
            self.npos += 1
            self.nodes += 1
            nodes.append(node)
        return nodes

    def place(self, y: int, b: int) -> tuple[Path, Path, Path | None]:
        """`placement` of the pair of instructions y -> b (memoized)."""
        got = self._placed.get((y, b))
        if got is None:
            got = self._placed[(y, b)] = self.placement(self.paths[y], self.paths[b])
        return got

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


def _buffer_pairs(items: list[tuple[int, Buffer]]) -> list[tuple[int, int]]:
    """The pairs of distinct buffers (by MemRef) that overlap (`Buffer.overlaps`): same memory space
    and id, or assigned addresses whose byte ranges intersect."""
    out = []
    spaces: dict[object, dict[int, list[int]]] = {}
    placed: dict[object, list[tuple[int, int, Buffer]]] = {}
    for r, buf in items:
        m = buf.memref
        if not isinstance(m, MemRef):
            continue  # a tile without a MemRef is its own buffer
        spaces.setdefault(m.memory_space, {}).setdefault(m.id, []).append(r)
        if m.addr >= 0:
            placed.setdefault(m.memory_space, []).append((m.addr, r, buf))
    for ids in spaces.values():
        for rs in ids.values():
            out += [(a, b) for x, a in enumerate(rs) for b in rs[x + 1:]]
    for ranges in placed.values():  # by address: a sweep
        ranges.sort(key=lambda t: t[0])
        for x, (lo, a, buf) in enumerate(ranges):
            hi = lo + buf.memref.size
            for lo2, b, other in ranges[x + 1:]:
                if lo2 > hi:
                    break
                if buf.overlaps(other):
                    out.append((a, b))
    return list(dict.fromkeys((a, b) if a < b else (b, a) for a, b in out))


def _region_pairs(items: list[tuple[int, TensorRegion]]) -> list[tuple[int, int]]:
    """The pairs of distinct tensor regions that overlap (`TensorRegion.overlaps`)."""
    out = []
    wild = [a for a, r in items if r.tensor is None]
    groups: dict[int, list[tuple[int, TensorRegion]]] = {}
    for a, r in items:
        if r.tensor is not None:
            groups.setdefault(id(r.tensor), []).append((a, r))
    for a in wild:  # a region of an unknown tensor overlaps every region
        out += [(a, b) for b, _ in items if b != a]
    for group in groups.values():
        if len(group) <= 48:
            for x, (a, ra) in enumerate(group):
                out += [(a, b) for b, rb in group[x + 1:] if ra.overlaps(rb)]
            continue
        # many windows of one tensor: the whole-tensor ones (and windows of different ranks) against
        # all, windows of one rank by a sweep over dimension 0
        by_rank: dict[int, list[tuple[int, TensorRegion]]] = {}
        for a, r in group:
            by_rank.setdefault(len(r.window) if r.window else 0, []).append((a, r))
        ranks = sorted(by_rank)
        for x, rank in enumerate(ranks):
            for other in ranks[x + 1:]:
                out += [(a, b) for a, _ in by_rank[rank] for b, _ in by_rank[other]]
        for rank, lst in by_rank.items():
            if rank == 0:
                out += [(a, b) for x, (a, _) in enumerate(lst) for b, _ in lst[x + 1:]]
                continue
            lst.sort(key=lambda t: t[1].window[0][0])
            active: list[tuple[int, TensorRegion]] = []
            for b, rb in lst:
                lo = rb.window[0][0]
                active = [(a, ra) for a, ra in active if ra.window[0][1] > lo]
                out += [(a, b) for a, ra in active if ra.overlaps(rb)]
                active.append((b, rb))
    return list(dict.fromkeys((a, b) if a < b else (b, a) for a, b in out))


def _conflicts(instrs: list[Instruction]) -> list[int]:
    """conf[i]: the instructions that conflict with instruction i (RAW, WAR, WAW), as bits —
    computed per resource (a buffer's MemRef, a tensor window), not per pair of instructions."""
    ids: dict[object, int] = {}
    res: list = []
    rd: list[int] = []
    wr: list[int] = []
    refs: list[tuple[list[int], list[int]]] = []
    for i, ins in enumerate(instrs):
        b = 1 << i
        mine: tuple[list[int], list[int]] = ([], [])
        for acc, lst, masks in ((ins.reads, mine[0], rd), (ins.writes, mine[1], wr)):
            for r in acc:
                key = r.memref if type(r) is Buffer else (r.tensor, r.window)
                x = ids.get(key)
                if x is None:
                    x = ids[key] = len(res)
                    res.append(r)
                    rd.append(0)
                    wr.append(0)
                masks[x] |= b
                lst.append(x)
        refs.append(mine)
    touched = [a | b for a, b in zip(rd, wr)]  # r or anything overlapping it accessed
    written = list(wr)  # r or anything overlapping it written
    bufs = [(r, x) for r, x in enumerate(res) if type(x) is Buffer]
    pairs = _region_pairs([(r, x) for r, x in enumerate(res) if type(x) is not Buffer])
    spaces = {(m.memory_space, m.id) for _, x in bufs if isinstance(m := x.memref, MemRef) and m.addr < 0}
    if len(spaces) < len(bufs):  # (else every buffer is its own MemRef, none placed: no overlap)
        pairs += _buffer_pairs(bufs)
    for a, b in pairs:
        touched[a] |= rd[b] | wr[b]
        touched[b] |= rd[a] | wr[a]
        written[a] |= wr[b]
        written[b] |= wr[a]
    conf = []
    for rs, ws in refs:
        c = 0
        for r in ws:
            c |= touched[r]
        for r in rs:
            c |= written[r]
        conf.append(c)
    return conf


# ---------------------------------------------------------------------------------------------
# the plan


_SET, _WAIT, _BAR = 0, 1, 2


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

    @property
    def key(self) -> tuple:
        return (self.sp, self.wp, self.wait_at, self.set_at, self.loop, self.at_post)

    def ops(self, k: _Kernel) -> list[tuple[int, int, int]]:
        """(position id, order within the position, kind) of each statement this sync emits."""
        if self.sp < 0:
            return [((k.post if self.at_post else k.pre)[self.wait_at], 2, _BAR)]
        out = [(k.pre[self.wait_at], 1, _WAIT)]
        out.append((k.post[self.set_at], 3, _SET) if self.set_at is not None else (k.pre[self.wait_at], 0, _SET))
        if self.loop is not None:
            out += [(k.pre[self.loop], 3, _SET), (k.post[self.loop], 1, _WAIT)]
        return out


class _Plan:
    """Syncs, and their operations by position id (sorted by order, then decision)."""

    def __init__(self, k: _Kernel, syncs: list[_Sync] = (), at: dict | None = None) -> None:  # type: ignore[assignment]
        self.k = k
        self.syncs: list[_Sync] = []
        self.by_key: dict[tuple, _Sync] = {}
        self.at: dict[int, list[tuple[int, int, int, _Sync]]] = {}
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
        for pos, order, kind in s.ops(self.k):
            lst = at.get(pos)
            if lst is None:
                at[pos] = [(order, s.idx, kind, s)]
            else:
                j = len(lst)
                while j and (lst[j - 1][0], lst[j - 1][1]) > (order, s.idx):
                    j -= 1
                lst.insert(j, (order, s.idx, kind, s))

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
        for pos, _, _ in s.ops(self.k):
            lst = [t for t in at.get(pos, ()) if t[3] is not s]
            if lst:
                at[pos] = lst
            else:
                at.pop(pos, None)
        return _Plan(self.k, [x for x in self.syncs if x is not s], at)


# ---------------------------------------------------------------------------------------------
# the analysis


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
        self.after: dict[int, tuple[int, list[int]]] = {}  # post position -> (stamp, done) there
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

    def block(self, nodes: list[tuple], st: _St) -> _St:
        at, decide = self.at, self.decide
        self.visits += len(nodes)
        for node in nodes:
            kind = node[0]
            if at:
                ops = at.get(node[1])
                if ops:
                    self.apply(ops, st)
            if kind == _INS:
                self.instr(node[3], st)
            elif kind == _LOOP:
                st = self.loop(node, st)
            elif kind == _IF:
                then = self.block(node[3], st.copy())
                st = then.join(self.block(node[4], st), self.k)
            else:
                st = self.block(node[3], st)
            if at:
                ops = at.get(node[2])
                if ops:
                    self.apply(ops, st)
            if decide:  # (done lists are never changed once a state holds them: no copy)
                self.after[node[2]] = (len(self.log), st.done)
        return st

    def loop(self, node: tuple, st: _St) -> _St:
        """The first iteration from the state before the loop; then, from join(state before the next
        iteration, state at the end of the body), until that head is stable. Checking a loop with a
        constant trip count n >= 2, the next iterations start from the end of the first one (every
        exit follows at least two iterations); otherwise from the state before the loop too."""
        _, _, _, body, trips, path = node
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

    def apply(self, ops: list[tuple[int, int, int, _Sync]], st: _St) -> None:
        for _, i, kind, s in ops:
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
        d, conf, b, nb, sync = self.k.info[i]
        if conf & st.pend[d]:
            self.hazard(i, st)
        if sync:  # synchronous: done before the next issue, after all it was ordered after
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
        flags = []  # (set pipe, wait at, set at, loop, trigger producer)
        while True:
            other = pend & conf & ~own
            if not other:
                break
            y = other.bit_length() - 1 if not other & (other - 1) else max(_bits(other), key=stamp.__getitem__)
            p = k.ipipe[y]
            a_stmt, b_stmt, loop = k.place(y, b)
            got = by_key.get((p, d, b_stmt, a_stmt, loop, False))
            cov = 0
            snap = self.after.get(k.post[a_stmt]) if got is None or got.round == self.round else None
            if snap is not None:  # the set after A covers what was done on P there, not issued since
                t, dn = snap
                cov = pend & dn[p]
                if loop is not None:  # (and, in the first iteration, what the set before L covers)
                    cov &= self.entry_done.get(loop, dn)[p]
                since = 0
                for z in self.log[t:]:
                    since |= 1 << z
                cov &= ~since
            flags.append((p, b_stmt, a_stmt, loop, y))
            if not (cov >> y) & 1:  # in place all along and it did not suffice: set right here
                flags.append((p, k.paths[b], None, None, y))
                cov = pend & st.done[p]
            pend &= ~cov
        bar = k.bar[d]
        if pend & conf & own and bar < 0:
            self.barrier_for(b, -1, st)
            return
        for p, b_stmt, a_stmt, loop, y in flags:
            self.add(p, d, b_stmt, a_stmt, loop).triggers.add((y, b))
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


def _plan(k: _Kernel) -> _Plan:
    """Decide, walk after walk, until a walk with all the decisions in place meets no conflict.
    (In a straight-line kernel the first walk already applied each decision exactly as it acts:
    the wait right before the consumer, the set after a statement already walked.)"""
    plan = _Plan(k)
    for r in range(_MAX_ROUNDS):
        w = _Walk(k, plan, rnd=r).run()
        if not w.hazards or (k.straight and r == 0) or not _Walk(k, plan, first=True).run().hazards:
            return plan
    raise PassError(f"InsertSync: planning did not converge for {k.fn.name} (internal error)", k.fn.span)


# ---------------------------------------------------------------------------------------------
# pruning


def _region(k: _Kernel, y: int, b: int) -> list[tuple[int, int]] | None:
    """Position intervals that hold a path from instruction y to instruction b (a carried pair: around
    the innermost enclosing loop that iterates); None: no such loop (anything may matter)."""
    post_y, pre_b = k.post[k.paths[y]], k.pre[k.paths[b]]
    _, _, loop = k.place(y, b)
    if loop is None:
        return [(post_y, pre_b)]
    while loop is not None and k.trips.get(loop) == 1:
        loop = next((loop[:j + 1] for j in range(len(loop) - 3, -1, -2) if loop[:j + 1] in k.lmask), None)
    if loop is None:
        return None
    return [(k.pre[loop] + 1, pre_b), (post_y, k.post[loop] - 1)]


def _suspects(k: _Kernel, syncs: list[_Sync]) -> list[_Sync]:
    """The syncs that another one might make redundant. A sync decided for the pair (y, b), y on P
    and b on D, is needed unless, on some path from y to b, the other syncs clear y from what D
    waits for: a chain of flags P -> ... -> D set and waited there (a wait on S stalls every pipe),
    a full barrier there, or (P = D) a barrier on D there. When the positions of such a path hold
    none, the sync stays without a trial walk."""
    waits: list[tuple[int, _Sync]] = []
    bars: list[tuple[int, _Sync]] = []
    sets: dict[int, list[int]] = {}
    for x in syncs:
        for pos, _, kind in x.ops(k):
            if kind == _WAIT:
                waits.append((pos, x))
            elif kind == _BAR:
                bars.append((pos, x))
            else:
                sets.setdefault(id(x), []).append(pos)
    waits.sort(key=lambda t: t[0])
    bars.sort(key=lambda t: t[0])
    wpos = [w for w, _ in waits]
    bpos = [w for w, _ in bars]
    return [s for s in syncs if all(_clearable(k, s, y, b, waits, wpos, bars, bpos, sets) for y, b in s.triggers)]


def _clearable(k: _Kernel, s: _Sync, y: int, b: int, waits: list[tuple[int, _Sync]], wpos: list[int],
               bars: list[tuple[int, _Sync]], bpos: list[int], sets: dict[int, list[int]]) -> bool:
    """Whether syncs other than s may order y before b (see `_suspects`)."""
    region = _region(k, y, b)
    if region is None:
        return True
    p, d = k.ipipe[y], k.ipipe[b]
    for lo, hi in region:
        for _, x in bars[bisect_left(bpos, lo):bisect_right(bpos, hi)]:
            if x is not s and (x.wp < 0 or (p == d and x.wp == d)):
                return True
    edges: dict[int, set[int]] = {}
    for lo, hi in region:
        for _, x in waits[bisect_left(wpos, lo):bisect_right(wpos, hi)]:
            if x is not s and any(a <= pos <= z for pos in sets[id(x)] for a, z in region):
                edges.setdefault(x.sp, set()).add(x.wp)
    seen, todo = {p}, [p]  # can a chain of those flags take y from P to D?
    while todo:
        for r in edges.get(todo.pop(), ()):
            if r == d or r == k.s:
                return True
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return False


def _prune(k: _Kernel, plan: _Plan, everything: bool = False) -> _Plan:
    """Drop what the others make redundant (full barriers first, then the latest decisions first),
    trying the suspects only (`everything`: all). A trial re-walks the kernel from the top-level
    statement holding the sync's first operation, from the state the walk of the current plan had
    there, and stops (redundant) once past its last operation the state is the one the current plan
    has there again, or (needed) at the first hazard. The trials share a budget of statement visits
    (`_PRUNE_VISITS`, or `_PRUNE_WALKS` walks of the kernel if more): in a large kernel with many
    suspects the last ones tried may stay, redundant or not."""
    if k.straight and not everything:  # planned in program order, each wait right before its consumer
        return plan
    cands = plan.syncs if everything else _suspects(k, plan.syncs)
    if not cands:
        return plan
    ref = _Walk(k, plan, first=True).states()
    if ref is None:
        raise PassError(f"InsertSync: pruning a plan with a hazard in {k.fn.name} (internal error)", k.fn.span)
    budget = max(_PRUNE_VISITS, _PRUNE_WALKS * k.visits)
    starts = [node[1] for node in k.tree]
    for s in sorted(cands, key=lambda s: (s.wait_pipe is not PipeType.ALL, -s.idx)):
        if budget <= 0:
            break
        trial = plan.without(s)
        pos = [x for x, _, _ in s.ops(k)]
        w = _Walk(k, trial, first=True)
        got = w.states(ref, bisect_right(starts, min(pos)) - 1, bisect_right(starts, max(pos)) - 1)
        budget -= w.visits
        if got is not None:
            plan, ref = trial, got
    return plan


# ---------------------------------------------------------------------------------------------
# event ids


def _intervals(k: _Kernel, s: _Sync) -> list[tuple[int, int]]:
    wait = k.pre[s.wait_at]
    if s.set_at is None:
        return [(wait, wait)]
    if s.loop is None:
        return [(k.post[s.set_at], wait)]
    return [(k.pre[s.loop], wait), (k.post[s.set_at], k.post[s.loop])]


def _assign_events(k: _Kernel, plan: _Plan) -> bool:
    """Give each flag an event id; one that finds none free becomes `bar_all` (then True, and
    `plan` holds the new syncs)."""
    items = []
    for s in plan.syncs:
        if s.sp >= 0:
            mine = _intervals(k, s)
            items.append((mine[0][0], s.idx, s, mine))  # (the first interval starts first)
    items.sort(key=lambda t: (t[0], t[1]))
    busy: dict[tuple[int, int], list[list[tuple[int, int]]]] = {}
    full = []
    for start, _, s, mine in items:
        ids = busy.get((s.sp, s.wp))
        if ids is None:
            ids = busy[(s.sp, s.wp)] = [[] for _ in range(NUM_EVENTS)]
        s.event_id = None
        for e, used in enumerate(ids):
            if used:  # flags are taken by first position: what ended before this one starts is free
                used[:] = [u for u in used if u[1] >= start]
            if not used or not any(a <= d and c <= b for a, b in mine for c, d in used):
                used += mine
                s.event_id = e
                break
        else:
            full.append(s)
    if not full:
        return False
    syncs = [s for s in plan.syncs if s.sp < 0 or s.event_id is not None]
    for s in full:  # all ids busy: a full barrier where it waited
        syncs.append(_Sync(s.idx, -1, -1, None, PipeType.ALL, s.wait_at, triggers=s.triggers))
        if s.loop is not None:
            syncs.append(_Sync(s.idx, -1, -1, None, PipeType.ALL, s.loop, at_post=True, triggers=s.triggers))
    plan.__init__(k, syncs)  # type: ignore[misc]
    return True


# ---------------------------------------------------------------------------------------------
# emission


_NAMES = {_SET: "system.sync_src", _WAIT: "system.sync_dst"}
_CALLS: dict[tuple, Call] = {}


def _template(kind: int, s: _Sync) -> Call:
    """A call of the op a sync statement makes (its span to be replaced)."""
    if kind == _BAR:
        key: tuple = (_BARRIER_OP[s.wait_pipe],)
    else:
        key = (_NAMES[kind], s.set_pipe, s.wait_pipe, s.event_id)
    tmpl = _CALLS.get(key)
    if tmpl is None or tmpl.op is not get_op(key[0]):
        kw = {} if kind == _BAR else {"set_pipe": s.set_pipe, "wait_pipe": s.wait_pipe, "event_id": s.event_id}
        tmpl = _CALLS[key] = create_op_call(key[0], [], kw)
    return tmpl


def _emit(k: _Kernel, plan: _Plan, report: bool = True) -> tuple[Function, list[InsertedSync]]:
    made: dict[int, list[Stmt]] = {s.idx: [] for s in plan.syncs} if report else {}  # sync idx -> statements
    pre: dict[Path, list[Stmt]] = {}
    post: dict[Path, list[Stmt]] = {}
    templates: dict[tuple, Call] = {}
    where, stmts, at = k.where, k.stmts, plan.at
    for pos in sorted(at):
        after, p = where[pos]
        span = stmts[p].span
        out = []
        for _, idx, kind, s in at[pos]:
            key = (kind, s.sp, s.wp, s.event_id)
            tmpl = templates.get(key)
            if tmpl is None:
                tmpl = templates[key] = _template(kind, s)
            stmt = EvalStmt(Call(tmpl.op, (), tmpl.kwargs, tmpl.type, span=span), span=span)
            if report:
                made[idx].append(stmt)
            out.append(stmt)
        (post if after else pre)[p] = out
    dirty = set()  # the compound statements with a sync inside
    for p in (*pre, *post):
        for j in range(1, len(p), 2):
            dirty.add(p[:j])

    def block(stmts: list[Stmt], prefix: Path) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            p = prefix + (i,)
            got = pre.get(p)
            if got:
                out += got
            out.append(rebuild_stmt(s, p) if p in dirty else s)
            got = post.get(p)
            if got:
                out += got
        return out

    def rebuild_stmt(s: Stmt, p: Path) -> Stmt:
        if isinstance(s, IfStmt):
            bodies = [("then", "then_body", s.then_body), ("else", "else_body", s.else_body)]
        else:
            bodies = [("body", "body", s.body)]  # type: ignore[attr-defined]
        changes = {}
        for key, field_name, body in bodies:
            old = body_stmts(body)
            new = block(old, p + (key,))
            if len(new) != len(old) or any(x is not y for x, y in zip(new, old)):
                changes[field_name] = make_else(new) if key == "else" else make_body(new)
        return rebuild(s, changes) if changes else s  # type: ignore[return-value]

    body = make_body(block(k.body, ()), span=getattr(k.fn.body, "span", None))
    fn = rebuild(k.fn, {"body": body})
    if not report:
        return fn, []  # type: ignore[return-value]
    first = {s.idx: s for s in sorted(plan.syncs, key=lambda s: s.at_post, reverse=True)}  # a flag's barriers: one
    done = [InsertedSync(s.set_pipe, s.wait_pipe, s.event_id, tuple(made[i])) for i, s in sorted(first.items())]
    return fn, done  # type: ignore[return-value]


__all__ = ["NUM_EVENTS", "InsertSync", "InsertedSync", "insert_sync"]
