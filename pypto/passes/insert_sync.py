"""InsertSync: order every conflicting pair of instructions of a kernel (docs/sync_model.md).

Pre: HasMemRefs — SSA InCore kernels whose tile variables carry their buffer (`TileType.memref`).
Post: SyncInserted — each kernel has `system.sync_src(set_pipe=S, wait_pipe=D, event_id=e)` right
after a producer and `system.sync_dst(...)` right before its consumer for every cross-pipe conflict
not already ordered, and `system.bar_v()` / `bar_m()` (`bar_all()` for the other pipes) right before
the consumer of a same-pipe conflict. Functions other than kernels, kernels without instructions
and kernels that already contain sync ops (synchronized by hand) are returned unchanged, so the
pass is idempotent. Kernels with `break`/`continue` or an early `return` are rejected (PassError):
the set/wait balance below relies on structured control flow.

Algorithm — a forward dataflow analysis over the structured IR (`sync/dataflow.py`), on bit sets; its
cost is about (statements x loop passes), each step a few big-int operations per pipe:

* The kernel is compiled once (`_Kernel`) into a tree of the statements that matter (instructions,
  and the loops / ifs / scopes holding some). Instructions are numbered in program order, so a set
  of them is a Python int and a loop body's instructions are one bit range. `conf[i]`, the
  instructions that conflict with instruction i, comes from the resources each one reads and
  writes (`pipes.instruction`), computed resource by resource (not pair by pair).
* The state, its transfer functions (which follow the sync model and the interpreter's hazard
  checker) and the joins after an if and at a loop head: `sync/dataflow.py`.
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
* Event ids (eight per pair of pipes; a flag that finds none free becomes `bar_all()`) and the
  emitted statements: `sync/emit.py`.

Calls returned, yielded or used as loop init values are first bound to temporaries
(`pipes.bind_instructions`) so that every instruction is a statement a wait can precede.

Everything is deterministic: statements are walked in order and ties are broken by position.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from pypto.ir.enums import FunctionType, PipeType
from pypto.ir.expr import Call, ConstInt, MemRef, Op
from pypto.ir.function import Function, Program
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
from pypto.ir.walk import body_stmts
from pypto.ops.traits import ShapeClass

from .analysis.overlaps import buffer_pairs, region_pairs
from .analysis.pipes import (
    Buffer,
    Instruction,
    bind_instructions,
    call_instruction,
    is_sync_call,
    tensor_roots,
)
from .base import FunctionPass, IRProperty, PassContext, PassError
from .loop_bounds import range_len
from .sync.dataflow import _Walk
from .sync.emit import InsertedSync, _assign_events, _emit
from .sync.model import Path, _If, _Ins, _InsInfo, _Loop, _Node, _Placement, _Scope
from .sync.plan import _BAR, _WAIT, _Plan, _Sync

NUM_EVENTS = 8  # event ids per (set pipe, wait pipe)
_MAX_ROUNDS = 64
# pruning tries suspects while their walks cost at most this many statement visits, or this many
# walks of the whole kernel if that is more: beyond it, in large kernels, a redundant sync may stay
_PRUNE_VISITS = 20000
_PRUNE_WALKS = 4
_BARRIER_OF = {PipeType.V: PipeType.V, PipeType.M: PipeType.M}

S = PipeType.S


class InsertSync(FunctionPass):
    name = "InsertSync"
    requires = frozenset({IRProperty.HasMemRefs})
    produces = frozenset({IRProperty.SyncInserted})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        return insert_sync(fn, report=False)[0]


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
    while _assign_events(k, plan, NUM_EVENTS):  # a flag became a full barrier: others may be redundant now
        plan = _prune(k, plan, everything=True)
        if _Walk(k, plan, first=True).run().hazards:
            raise PassError(f"InsertSync left a hazard in {fn.name} (internal error)", fn.span)
    return _emit(k, plan, report)


# ---------------------------------------------------------------------------------------------
# the kernel: the statements that matter, instructions as bits


def _static_trips(s: Stmt) -> int | None:
    if isinstance(s, ForStmt) and all(isinstance(e, ConstInt) for e in (s.start, s.stop, s.step)) \
            and s.step.value != 0:
        return range_len(s.start.value, s.stop.value, s.step.value)
    return None


class _Kernel:
    """The kernel compiled for the analysis: the tree of `sync.model` nodes (instructions and the
    loops / ifs / scopes holding some), each instruction's pipe, conflicts and path, and the
    position ids around each statement of the tree."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.body = body_stmts(fn.body)
        self.roots = tensor_roots(fn)
        self.has_syncs = False
        self.stmts: dict[Path, Stmt] = {}  # instructions and the compound statements holding some
        self.pre: dict[Path, int] = {}  # statement -> the position right before it
        self.post: dict[Path, int] = {}  # statement -> the position right after it
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
        self.info = [_InsInfo(q, c, 1 << i, ~(1 << i), q == self.s) for i, (q, c) in enumerate(zip(self.ipipe, self.conf))]
        self.flag_wp: dict[int, int] = {}  # sync idx of a flag -> its wait pipe
        self._placed: dict[tuple[int, int], _Placement] = {}

    def _walk(self, stmts: list[Stmt], prefix: Path) -> tuple[_Node, ...]:
        nodes: list[_Node] = []
        for i, s in enumerate(stmts):
            pre = self.npos
            self.npos += 1
            if isinstance(s, (AssignStmt, EvalStmt)):
                call = s.value if isinstance(s, AssignStmt) else s.expr
                if not isinstance(call, Call) or not isinstance(call.op, Op):
                    continue
                if is_sync_call(call):
                    self.has_syncs = True
                    continue
                if getattr(call.op, "shape_class", None) is ShapeClass.ALLOC:  # (no instruction)
                    continue
                ins = call_instruction(s, call, self.roots)
                if ins is None:
                    continue
                p = prefix + (i,)
                node: _Node = _Ins(pre, self.npos, len(self.paths))
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
                node = _Loop(pre, self.npos, body, self.trips[p], p)
            elif isinstance(s, IfStmt):
                p = prefix + (i,)
                then = self._walk(body_stmts(s.then_body), p + ("then",))
                other = self._walk(body_stmts(s.else_body), p + ("else",))
                if not then and not other:
                    continue
                self.straight = False
                node = _If(pre, self.npos, then, other)
            elif isinstance(s, ScopeStmt):
                p = prefix + (i,)
                body = self._walk(body_stmts(s.body), p + ("body",))
                if not body:
                    continue
                node = _Scope(pre, self.npos, body)
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
            self.npos += 1
            self.nodes += 1
            nodes.append(node)
        return tuple(nodes)

    def place(self, y: int, b: int) -> _Placement:
        """`placement` of the pair of instructions y -> b (memoized)."""
        got = self._placed.get((y, b))
        if got is None:
            got = self._placed[(y, b)] = self.placement(self.paths[y], self.paths[b])
        return got

    def placement(self, a: Path, b: Path) -> _Placement:
        """Set after A, wait before B (A and B in the block containing both a and b); L is the loop
        the pair is carried around (None when A comes before B)."""
        k = 0
        while a[k] == b[k] and k + 1 < min(len(a), len(b)) and a[k + 1] == b[k + 1]:
            k += 2
        A, B = a[:k + 1], b[:k + 1]
        if a[k] < b[k]:
            return _Placement(A, B, None)
        for j in range(k - 2, -1, -2):
            if isinstance(self.stmts[a[:j + 1]], (ForStmt, WhileStmt)):
                return _Placement(A, B, a[:j + 1])
        raise PassError(f"InsertSync: no loop carries the pair {a} -> {b} (internal error)", self.fn.span)


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
    pairs = region_pairs([(r, x) for r, x in enumerate(res) if type(x) is not Buffer])
    spaces = {(m.memory_space, m.id) for _, x in bufs if isinstance(m := x.memref, MemRef) and m.addr < 0}
    if len(spaces) < len(bufs):  # (else every buffer is its own MemRef, none placed: no overlap)
        pairs += buffer_pairs(bufs)
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
# planning


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
    loop = k.place(y, b).loop
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
    waits: list[tuple[int, _Sync]] = []  # (position, sync), sorted by position
    bars: list[tuple[int, _Sync]] = []
    sets: dict[int, list[int]] = {}
    for x in syncs:
        for op in x.ops(k):
            if op.kind == _WAIT:
                waits.append((op.pos, x))
            elif op.kind == _BAR:
                bars.append((op.pos, x))
            else:
                sets.setdefault(id(x), []).append(op.pos)
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
    starts = [node.pre for node in k.tree]
    for s in sorted(cands, key=lambda s: (s.wait_pipe is not PipeType.ALL, -s.idx)):
        if budget <= 0:
            break
        trial = plan.without(s)
        pos = [op.pos for op in s.ops(k)]
        w = _Walk(k, trial, first=True)
        got = w.states(ref, bisect_right(starts, min(pos)) - 1, bisect_right(starts, max(pos)) - 1)
        budget -= w.visits
        if got is not None:
            plan, ref = trial, got
    return plan


__all__ = ["NUM_EVENTS", "InsertSync", "InsertedSync", "insert_sync"]
