"""InsertSync: BEFORE/EXPECTED kernels written in `pl`, and an independent checker.

The checker (`Sim`) executes a kernel's IR per docs/sync_model.md (read as the interpreter's hazard
checker reads it: a set publishes what its pipe has completed; a wait on S stalls all issue) with
concrete loop trip counts and branch outcomes: vector clocks per pipe, flags as FIFO queues per
(set pipe, wait pipe, event id), barriers, the synchronous scalar pipe. It reports every conflicting
pair of instruction instances that is not ordered (a hazard), a wait with no set before it
(deadlock) and sets left without a wait. Random kernels (loads, vector/matrix ops, moves, stores,
scalar accesses, loops, ifs over a few buffers) must come out hazard-free, and removing any one
inserted synchronization must expose a hazard in some execution (else InsertSync emitted a
redundant one). Kernels planned by the memory passes are also run by the interpreter on their PTO.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection, PipeType
from pypto.ir.expr import ConstFloat, ConstInt, Gt, MakeTuple, Mul, Var, make_memref, scalar_type
from pypto.ir.function import Function
from pypto.ir.op import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, WhileStmt
from pypto.ir.types import TensorType, TileType
from pypto.passes import PassError
from pypto.passes.insert_sync import NUM_EVENTS, InsertSync, insert_sync
from pypto.passes.ir_utils import EvalError, Evaluator, StmtRewriter, body_stmts, make_body, make_else
from pypto.passes.pipes import PIPES, instruction, is_sync_call, stmt_call, tensor_roots

S, V, M = PipeType.S, PipeType.V, PipeType.M

# ---------------------------------------------------------------------------------------------
# BEFORE / EXPECTED helpers


HEADER = "import pypto.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def kernel(body: str) -> ir.Program:
    return pl.parse(HEADER + body)


def check_pass(before: str, expected: str, verified) -> None:
    """InsertSync turns `before` into `expected` (structurally), a valid program whose kernel the
    checker finds hazard-free and minimally synchronized."""
    prog = kernel(before)
    after = InsertSync()(prog)
    verified(after)
    ir.assert_structural_equal(after, kernel(expected), enable_auto_mapping=True)
    fn, done = insert_sync(prog.functions[0])
    ir.assert_structural_equal(fn, after.functions[0])  # deterministic
    assert_synchronized(fn, done)


# ---------------------------------------------------------------------------------------------
# the independent checker


class SyncError(AssertionError):
    pass


def _join(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if out.get(k, 0) < v:
            out[k] = v
    return out


class Chooser:
    """Outcomes of branches and unknown trip counts: `prefix` first, then 0 (depth-first) or random."""

    def __init__(self, prefix: list[int], rng: random.Random | None = None) -> None:
        self.prefix, self.rng = prefix, rng
        self.trace: list[tuple[int, int]] = []

    def choose(self, n: int) -> int:
        i = len(self.trace)
        c = self.prefix[i] if i < len(self.prefix) else self.rng.randrange(n) if self.rng else 0
        self.trace.append((c, n))
        return c


def executions(limit: int, dfs: int = 200, seed: int = 0):
    """Choosers: depth-first over the choice tree (all of it when small), then random, `limit` in all."""
    prefix: list[int] = []
    for _ in range(min(dfs, limit)):
        ch = Chooser(prefix)
        yield ch
        t = ch.trace
        while t and t[-1][0] + 1 >= t[-1][1]:
            t.pop()
        if not t:
            return
        prefix = [c for c, _ in t[:-1]] + [t[-1][0] + 1]
    rng = random.Random(seed)
    for _ in range(limit - dfs):
        yield Chooser([], rng)


class Sim:
    """Runs a kernel per docs/sync_model.md: instruction instances get vector clocks (per pipe, how
    many of its instructions happen before); an unordered conflicting earlier instance is a hazard."""

    def __init__(self, fn: Function, chooser, max_trips: int = 3) -> None:
        self.fn, self.ch, self.max_trips = fn, chooser, max_trips
        self.roots = tensor_roots(fn)
        self.count = {p: 0 for p in PIPES}
        self.frontier: dict = {p: {} for p in PIPES}  # what every later instruction on p is after
        self.done: dict = {p: {} for p in PIPES}  # what the instructions issued on p so far are after
        self.queues: dict = defaultdict(list)
        self.history: list = []
        self.hazards: list = []
        self.evaluator = Evaluator()

    def run(self) -> list:
        self.block(self.fn.body, {})
        left = {k: len(v) for k, v in self.queues.items() if v}
        if left:
            raise SyncError(f"sets without a matching wait at the end: {left}")
        return self.hazards

    def block(self, body, env) -> None:
        for s in body_stmts(body):
            self.stmt(s, env)

    def value(self, e, env):
        try:
            return self.evaluator.expr(e, env)
        except EvalError:
            return None  # depends on a kernel parameter: a free choice

    def stmt(self, s, env) -> None:
        if isinstance(s, ForStmt):
            b = [self.value(e, env) for e in (s.start, s.stop, s.step)]
            for i in range(*b) if None not in b else range(self.ch.choose(self.max_trips + 1)):
                env[s.loop_var] = i
                self.block(s.body, env)
        elif isinstance(s, WhileStmt):
            for _ in range(self.ch.choose(self.max_trips + 1)):
                self.block(s.body, env)
        elif isinstance(s, IfStmt):
            c = self.value(s.condition, env)
            self.block(s.then_body if (c if c is not None else self.ch.choose(2)) else s.else_body, env)
        elif isinstance(s, ScopeStmt):
            self.block(s.body, env)
        else:
            call = stmt_call(s)
            if call is not None and is_sync_call(call):
                self.sync(call)
            elif (ins := instruction(s, self.roots)) is not None:
                self.issue(ins, s)

    def issue(self, ins, s) -> None:
        p = ins.pipe
        vc = dict(self.frontier[p])
        for a, ap, ai, astmt in self.history:
            if vc.get(ap, 0) < ai and a.conflicts_with(ins):
                self.hazards.append((astmt, s))
        self.count[p] += 1
        done = {**vc, p: self.count[p]}
        self.done[p] = _join(self.done[p], done)
        self.history.append((ins, p, self.count[p], s))
        if p is S:  # synchronous: complete before the next instruction issues
            for q in PIPES:
                self.frontier[q] = _join(self.frontier[q], done)
        if len(self.history) > 32:  # forget instances ordered before everything to come
            self.history = [h for h in self.history if any(self.frontier[q].get(h[1], 0) < h[2] for q in PIPES)]

    def sync(self, call) -> None:
        name = call.op.name
        if name in ("system.sync_src", "system.sync_dst"):
            key = (call.kwarg("set_pipe"), call.kwarg("wait_pipe"), call.kwarg("event_id"))
            if name == "system.sync_src":  # fires once every earlier instruction on the set pipe is done
                self.queues[key].append(dict(self.done[key[0]]))
            elif not self.queues[key]:
                raise SyncError(f"wait_flag{key} with no set before it (deadlock)")
            else:
                self.frontier[key[1]] = _join(self.frontier[key[1]], self.queues[key].pop(0))
                if key[1] is S:  # the scalar unit stalls: it issues everything after
                    for q in PIPES:
                        self.frontier[q] = _join(self.frontier[q], self.frontier[S])
        elif name == "system.bar_all":
            j: dict = {}
            for q in PIPES:
                j = _join(j, self.done[q])
            self.frontier = {q: _join(f, j) for q, f in self.frontier.items()}
        else:
            p = V if name == "system.bar_v" else M
            self.frontier[p] = _join(self.frontier[p], self.done[p])


def first_hazard(fn: Function, limit: int = 1500):
    """(hazards, choices) of the first execution found with a hazard, else None."""
    for ch in executions(limit):
        hz = Sim(fn, ch).run()
        if hz:
            return hz, [c for c, _ in ch.trace]
    return None


class _Remove(StmtRewriter):
    def __init__(self, stmts) -> None:
        self.ids = {id(s) for s in stmts}

    def rewrite(self, s):
        return [] if id(s) in self.ids else self.recurse(s)


def without(fn: Function, stmts) -> Function:
    return dataclasses.replace(fn, body=_Remove(stmts).rewrite_body(fn.body))


def assert_synchronized(fn: Function, done) -> None:
    """`fn`, a kernel after InsertSync, is hazard-free, and removing any one of the syncs `done`
    that InsertSync reported inserting exposes a hazard (none is redundant)."""
    hz = first_hazard(fn)
    assert hz is None, f"hazard {hz[0][0]} with choices {hz[1]}:\n{ir.python_print(fn)}"
    for s in done:
        assert first_hazard(without(fn, s.stmts), limit=3000) is not None, \
            f"redundant {s.set_pipe} -> {s.wait_pipe} (event {s.event_id}):\n{ir.python_print(fn)}"


# ---------------------------------------------------------------------------------------------
# BEFORE / EXPECTED

ALLOC2 = """        mem_vec_0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
        mem_vec_1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
"""
T0 = "pl.Tile[[64, 64], pl.FP32, mem_vec_0]"
T1 = "pl.Tile[[64, 64], pl.FP32, mem_vec_1]"
TENSOR = "pl.Tensor[[64, 64], pl.FP32]"
SIG3 = f"    def k(self, a: {TENSOR}, b: {TENSOR}, c: pl.Out[{TENSOR}]) -> {TENSOR}:\n"


def flag(kind: str, s: str, d: str, e: int = 0, ind: int = 2) -> str:
    op = "sync_src" if kind == "set" else "sync_dst"
    return f"{'    ' * ind}pl.system.{op}(set_pipe=pl.PipeType.{s}, wait_pipe=pl.PipeType.{d}, event_id={e})\n"


def flags(s: str, d: str, e: int = 0, ind: int = 2) -> str:
    return flag("set", s, d, e, ind) + flag("wait", s, d, e, ind)


def test_load_add_store(verified):
    """The reference example: MTE2 -> V before the add, V -> MTE3 before the store."""
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    add = f"        tc: {T0} = pl.add(ta, tb)\n"
    store = f"        out: {TENSOR} = pl.store(tc, [0, 0], c)\n        return out\n"
    check_pass(SIG3 + ALLOC2 + load + add + store,
               SIG3 + ALLOC2 + load + flags("MTE2", "V") + add + flags("V", "MTE3") + store, verified)


def test_dependent_vector_ops_get_bar_v(verified):
    head = SIG3 + ALLOC2 + f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    add = f"        tc: {T0} = pl.add(ta, tb)\n"
    mul = f"        td: {T1} = pl.mul(tc, tc)\n"
    store = f"        out: {TENSOR} = pl.store(td, [0, 0], c)\n        return out\n"
    check_pass(head + add + mul + store,
               head + flags("MTE2", "V") + add + "        pl.system.bar_v()\n" + mul + flags("V", "MTE3") + store,
               verified)


ALLOC4 = ALLOC2 + """        mem_vec_2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
        mem_vec_3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 3)
"""
T2 = "pl.Tile[[64, 64], pl.FP32, mem_vec_2]"
T3 = "pl.Tile[[64, 64], pl.FP32, mem_vec_3]"
TALL = "pl.Tensor[[128, 64], pl.FP32]"


def test_independent_ops_get_nothing(verified):
    """Two loads into different buffers, two vector ops that only share what they read, two stores
    into disjoint constant windows: nothing among themselves. One flag after the later producer
    covers every earlier one on its pipe."""
    sig = f"    def k(self, a: {TENSOR}, b: {TENSOR}, c: pl.Out[{TALL}]) -> {TALL}:\n"
    loads = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    ops = f"        tc: {T2} = pl.add(ta, tb)\n        td: {T3} = pl.mul(ta, tb)\n"
    stores = (f"        o1: {TALL} = pl.store(td, [64, 0], c)\n        o2: {TALL} = pl.store(tc, [0, 0], o1)\n"
              "        return o2\n")
    check_pass(sig + ALLOC4 + loads + ops + stores,
               sig + ALLOC4 + loads + flags("MTE2", "V") + ops + flags("V", "MTE3") + stores, verified)


def test_matmul_path(verified):
    """MTE2 -> MTE1 -> M -> FIX: Mat loads, moves to Left/Right, matmul, store from Acc (one flag
    per pipe pair: each set follows the later producer)."""
    sig = f"    def k(self, a: {TENSOR}, b: {TENSOR}, c: pl.Out[{TENSOR}]) -> {TENSOR}:\n"
    alloc = "".join(f"        mem_{sp.lower()}_{i}: pl.MemRefType = pl.block.alloc(pl.MemorySpace.{sp}, -1, 16384, {i})\n"
                    for i, sp in enumerate(["Mat", "Mat", "Left", "Right", "Acc"]))

    def tile(i, sp):
        return f"pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.{sp}, mem_{sp.lower()}_{i}]"

    loads = (f"        mb: {tile(1, 'Mat')} = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)\n"
             f"        ma: {tile(0, 'Mat')} = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)\n")
    moves = (f"        la: {tile(2, 'Left')} = pl.move(ma, target_memory=pl.MemorySpace.Left)\n"
             f"        rb: {tile(3, 'Right')} = pl.move(mb, target_memory=pl.MemorySpace.Right)\n")
    mm = f"        acc: {tile(4, 'Acc')} = pl.matmul(la, rb)\n"
    store = f"        out: {TENSOR} = pl.store(acc, [0, 0], c)\n        return out\n"
    check_pass(sig + alloc + loads + moves + mm + store,
               sig + alloc + loads + flags("MTE2", "MTE1") + moves + flags("MTE1", "M") + mm + flags("M", "FIX")
               + store, verified)


TROWS = "pl.Tensor[[256, 64], pl.FP32]"


def test_loop_with_reused_load_buffer(verified):
    """Carried WARs: the next load overwrites what exp still reads (V -> MTE2) and the next exp
    overwrites what the store still reads (MTE3 -> V); each is balanced by a set before the loop
    and a wait after it."""
    sig = f"    def k(self, a: {TROWS}, c: pl.Out[{TROWS}]) -> {TROWS}:\n"
    loop = "        for i, (acc,) in pl.range(4, init_values=(c,)):\n"
    load = f"            t: {T0} = pl.load(a, [i * 64, 0], [64, 64])\n"
    op = f"            u: {T1} = pl.exp(t)\n"
    store = f"            o: {TROWS} = pl.store(u, [i * 64, 0], acc)\n"
    end = f"            r: {TROWS} = pl.yield_(o)\n        return r\n"
    expected = (sig + ALLOC2 + flag("set", "V", "MTE2") + flag("set", "MTE3", "V") + loop
                + flag("wait", "V", "MTE2", ind=3) + load + flags("MTE2", "V", ind=3) + flag("wait", "MTE3", "V", ind=3)
                + op + flag("set", "V", "MTE3", ind=3) + flag("set", "V", "MTE2", ind=3)
                + flag("wait", "V", "MTE3", ind=3) + store + flag("set", "MTE3", "V", ind=3) + end.split("\n")[0] + "\n"
                + flag("wait", "V", "MTE2") + flag("wait", "MTE3", "V") + "        return r\n")
    check_pass(sig + ALLOC2 + loop + load + op + store + end, expected, verified)


def test_accumulation_into_inout_tensor(verified):
    """A store, then the next iteration's load of the same InOut tensor: MTE3 -> MTE2 carried; the
    buffer WARs it implies need nothing more."""
    sig = f"    def k(self, c: pl.InOut[{TENSOR}]) -> {TENSOR}:\n"
    loop = "        for i, (acc,) in pl.range(4, init_values=(c,)):\n"
    load = f"            t: {T0} = pl.load(acc, [0, 0], [64, 64])\n"
    op = f"            u: {T1} = pl.add(t, t)\n"
    store = f"            o: {TENSOR} = pl.store(u, [0, 0], acc)\n"
    yld = f"            r: {TENSOR} = pl.yield_(o)\n"
    expected = (sig + ALLOC2 + flag("set", "MTE3", "MTE2") + loop + flag("wait", "MTE3", "MTE2", ind=3) + load
                + flags("MTE2", "V", ind=3) + op + flags("V", "MTE3", ind=3) + store + flag("set", "MTE3", "MTE2", ind=3)
                + yld + flag("wait", "MTE3", "MTE2") + "        return r\n")
    check_pass(sig + ALLOC2 + loop + load + op + store + yld + "        return r\n", expected, verified)


def test_if_else_branches(verified):
    """Producer before the if, consumers in both branches: wait before the if; producers in the
    branches, consumer after: set after the if."""
    sig = f"    def k(self, a: {TENSOR}, c: pl.Out[{TENSOR}], p: pl.Scalar[pl.INT32]) -> {TENSOR}:\n"
    load = f"        t: {T0} = pl.load(a, [0, 0], [64, 64])\n"
    branch = (f"        if p > 0:\n            u: {T1} = pl.exp(t)\n            r: {T1} = pl.yield_(u)\n"
              f"        else:\n            v: {T1} = pl.neg(t)\n            r: {T1} = pl.yield_(v)\n")
    store = f"        out: {TENSOR} = pl.store(r, [0, 0], c)\n        return out\n"
    check_pass(sig + ALLOC2 + load + branch + store,
               sig + ALLOC2 + load + flags("MTE2", "V") + branch + flags("V", "MTE3") + store, verified)


def test_nested_loops(verified):
    """An inner accumulation (same-pipe carried: bar_v), flags at the inner loop's boundaries, and a
    WAR carried around the outer loop (the next load overwrites what the store reads)."""
    sig = f"    def k(self, a: {TROWS}, c: pl.Out[{TROWS}]) -> {TROWS}:\n"
    outer = "        for i, (acc,) in pl.range(2, init_values=(c,)):\n"
    load = f"            t: {T0} = pl.load(a, [i * 64, 0], [64, 64])\n"
    inner = (f"            for j, (s,) in pl.range(3, init_values=(t,)):\n                s2: {T0} = pl.add(s, s)\n"
             f"                s3: {T0} = pl.yield_(s2)\n")
    inner_synced = (f"            for j, (s,) in pl.range(3, init_values=(t,)):\n                pl.system.bar_v()\n"
                    f"                s2: {T0} = pl.add(s, s)\n                s3: {T0} = pl.yield_(s2)\n")
    store = f"            o: {TROWS} = pl.store(s3, [i * 64, 0], acc)\n"
    yld = f"            r: {TROWS} = pl.yield_(o)\n"
    expected = (sig + ALLOC2 + flag("set", "MTE3", "MTE2") + outer + flag("wait", "MTE3", "MTE2", ind=3) + load
                + flags("MTE2", "V", ind=3) + inner_synced + flags("V", "MTE3", ind=3) + store
                + flag("set", "MTE3", "MTE2", ind=3) + yld + flag("wait", "MTE3", "MTE2") + "        return r\n")
    check_pass(sig + ALLOC2 + outer + load + inner + store + yld + "        return r\n", expected, verified)


def test_event_ids_are_reused_once_the_wait_has_passed(verified):
    """Two MTE2 -> V flags in flight at once get ids 0 and 1; a later one reuses 0."""
    sig = f"    def k(self, a: {TENSOR}, b: {TENSOR}, c: pl.Out[{TENSOR}]) -> {TENSOR}:\n"
    alloc = ALLOC4 + "        mem_vec_4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 4)\n"
    la = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n"
    lb = f"        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    ea = f"        tc: {T2} = pl.exp(ta)\n"
    eb = f"        td: {T3} = pl.exp(tb)\n"
    lf = f"        tf: {T0} = pl.load(b, [0, 0], [64, 64])\n"
    eg = "        tg: pl.Tile[[64, 64], pl.FP32, mem_vec_4] = pl.exp(tf)\n"
    store = f"        out: {TENSOR} = pl.store(tg, [0, 0], c)\n        return out\n"
    check_pass(sig + alloc + la + lb + ea + eb + lf + eg + store,
               sig + alloc + la + flag("set", "MTE2", "V", 0) + lb + flag("set", "MTE2", "V", 1)
               + flag("wait", "MTE2", "V", 0) + ea + flag("set", "V", "MTE2") + flag("wait", "MTE2", "V", 1) + eb
               + flag("wait", "V", "MTE2") + lf + flags("MTE2", "V", 0) + eg + flags("V", "MTE3") + store, verified)


def test_scalar_pipe(verified):
    """A scalar read of a tile waits for its producer (MTE2 -> S); being synchronous, it then orders
    that producer before everything later, so the vector op needs no flag of its own; scalar code
    needs nothing."""
    sig = f"    def k(self, a: {TENSOR}, c: pl.Out[{TENSOR}]) -> {TENSOR}:\n"
    load = f"        t: {T0} = pl.load(a, [0, 0], [64, 64])\n"
    read = "        s: pl.Scalar[pl.FP32] = pl.block.read(t, [0, 0])\n        x: pl.Scalar[pl.FP32] = s * 2.0\n"
    op = f"        u: {T1} = pl.adds(t, x)\n"
    store = f"        out: {TENSOR} = pl.store(u, [0, 0], c)\n        return out\n"
    check_pass(sig + ALLOC2 + load + read + op + store,
               sig + ALLOC2 + load + flags("MTE2", "S") + read + op + flags("V", "MTE3") + store, verified)


def test_transitive_ordering_needs_no_new_flag(verified):
    """The flag set after the second load, waited before the first vector op, also orders the first
    load before the second vector op; likewise for the stores."""
    sig = f"    def k(self, a: {TENSOR}, b: {TENSOR}, c: pl.Out[{TALL}]) -> {TALL}:\n"
    loads = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    ops = f"        tc: {T2} = pl.exp(tb)\n        td: {T3} = pl.exp(ta)\n"
    stores = (f"        o1: {TALL} = pl.store(td, [0, 0], c)\n        o2: {TALL} = pl.store(tc, [64, 0], o1)\n"
              "        return o2\n")
    check_pass(sig + ALLOC4 + loads + ops + stores,
               sig + ALLOC4 + loads + flags("MTE2", "V") + ops + flags("V", "MTE3") + stores, verified)


def test_more_flags_in_flight_than_event_ids_become_bar_all(verified):
    n = NUM_EVENTS + 1
    sig = f"    def k(self, a: {TENSOR}) -> {TENSOR}:\n"
    alloc = "".join(f"        mem_vec_{i}: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, {i})\n"
                    for i in range(2 * n))

    def t(i):
        return f"pl.Tile[[64, 64], pl.FP32, mem_vec_{i}]"

    loads = [f"        l{i}: {t(i)} = pl.load(a, [0, 0], [64, 64])\n" for i in range(n)]
    ops = [f"        e{i}: {t(n + i)} = pl.exp(l{i})\n" for i in range(n)]
    before = sig + alloc + "".join(loads) + "".join(ops) + "        return a\n"
    expected = sig + alloc + "".join(ld + (flag("set", "MTE2", "V", i) if i < NUM_EVENTS else "")
                                     for i, ld in enumerate(loads))
    expected += "".join((flag("wait", "MTE2", "V", i) if i < NUM_EVENTS else "        pl.system.bar_all()\n") + op
                        for i, op in enumerate(ops)) + "        return a\n"
    check_pass(before, expected, verified)


def test_a_store_in_a_return_is_an_instruction_too(verified):
    """A call returned (or yielded) directly is first bound to a temporary, so a wait can precede it."""
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    add = f"        tc: {T0} = pl.add(ta, tb)\n"
    check_pass(SIG3 + ALLOC2 + load + add + "        return pl.store(tc, [0, 0], c)\n",
               SIG3 + ALLOC2 + load + flags("MTE2", "V") + add + flags("V", "MTE3")
               + f"        store__tmp_v1: {TENSOR} = pl.store(tc, [0, 0], c)\n        return store__tmp_v1\n", verified)


def test_carried_flags_beyond_the_event_ids_become_full_barriers(verified):
    """Nine buffers loaded at the end of each iteration and read at the start of the next: the ninth
    flag of each direction becomes bar_all, which then orders everything the others did."""
    n = NUM_EVENTS + 1
    sig = f"    def k(self, a: {TENSOR}) -> {TENSOR}:\n"
    alloc = "".join(f"        mem_vec_{i}: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, {i})\n"
                    for i in range(2 * n))

    def t(i):
        return f"pl.Tile[[64, 64], pl.FP32, mem_vec_{i}]"

    init = "".join(f"        l{i}: {t(i)} = pl.block.create_tile([64, 64], dtype=pl.FP32)\n" for i in range(n))
    ops = "".join(f"            e{i}: {t(n + i)} = pl.exp(l{i})\n" for i in range(n))
    loads = "".join(f"            m{i}: {t(i)} = pl.load(a, [0, 0], [64, 64])\n" for i in range(n))
    bar = "            pl.system.bar_all()\n"
    head = sig + alloc + init + "        for i in pl.range(4):\n"
    check_pass(head + ops + loads + "        return a\n",
               head + ops.replace("            e8", bar + "            e8") + loads.replace("            m8", bar + "            m8")
               + "        return a\n", verified)


# ---------------------------------------------------------------------------------------------
# kernels planned by the memory passes


@pl.program
class Planned:
    @pl.function(type=pl.FunctionType.InCore)
    def axpy(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             c: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        tb = pl.load(b, [0, 0], [64, 64])
        for i in pl.range(4):
            ta = pl.load(a, [i * 64, 0], [64, 64])
            tc = pl.load(c, [0, 0], [64, 64])
            td = pl.add(pl.mul(ta, tb), tc)
            c = pl.store(td, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[64, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
           c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ma = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        mb = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(ma, target_memory=pl.MemorySpace.Left), pl.move(mb, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 4):
            ma2 = pl.load(a, [0, k * 64], [64, 64], target_memory=pl.MemorySpace.Mat)
            mb2 = pl.load(b, [k * 64, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            la2 = pl.move(ma2, target_memory=pl.MemorySpace.Left)
            rb2 = pl.move(mb2, target_memory=pl.MemorySpace.Right)
            acc = pl.block.matmul_acc(acc, la2, rb2)
        return pl.store(acc, [0, 0], c)

    @pl.function(type=pl.FunctionType.InCore)
    def softmax(self, x: pl.Tensor[[64, 64], pl.FP32],
                y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        tmp = pl.block.create_tile([64, 64], dtype=pl.FP32)
        mx = pl.block.row_max(t, tmp)
        e = pl.exp(pl.block.row_expand_sub(t, mx))
        s = pl.block.row_sum(e, tmp)
        return pl.store(pl.block.row_expand_div(e, s), [0, 0], y)


@pytest.mark.parametrize("name", ["axpy", "mm", "softmax"])
def test_kernels_planned_by_the_memory_passes(name, verified):
    """Through the pipeline without sync (PTOAS), then InsertSync: the checker here and the
    interpreter's hazard checker on the generated PTO agree that the kernel is hazard-free and that
    every inserted sync is needed."""
    import numpy as np

    from pypto.backend.interp import HazardError, run_program
    from pypto.codegen import generate
    from pypto.passes.pass_manager import OptimizationStrategy, PassManager

    prog = PassManager.get_strategy(OptimizationStrategy.PTOAS).run_passes(
        ir.Program(name, (Planned.get_function(name),)))
    fn, done = insert_sync(prog.functions[0])
    assert done
    verified(InsertSync()(prog))
    assert_synchronized(fn, done)
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [d.value for d in p.type.shape]).astype(p.type.dtype.to_numpy()) for p in fn.params]

    def run(f):
        res = generate(prog.with_functions([f]))
        run_program(res.kernels, res.orchestration, res.entry, [a.copy() for a in args])

    run(fn)
    for s in done:
        with pytest.raises(HazardError):
            run(without(fn, s.stmts))


# ---------------------------------------------------------------------------------------------
# what the pass leaves alone, and what it rejects


def test_idempotent_and_hand_synchronized_kernels_are_kept():
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    prog = kernel(SIG3 + ALLOC2 + load + f"        tc: {T0} = pl.add(ta, tb)\n"
                  + f"        out: {TENSOR} = pl.store(tc, [0, 0], c)\n        return out\n")
    once = InsertSync()(prog)
    assert InsertSync()(once) is once
    no_work = kernel(SIG3 + ALLOC2 + f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        return c\n")
    assert InsertSync()(no_work) is no_work


def test_only_kernels_are_touched():
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    prog = kernel(SIG3 + ALLOC2 + load + f"        tc: {T0} = pl.add(ta, tb)\n"
                  + f"        out: {TENSOR} = pl.store(tc, [0, 0], c)\n        return out\n")
    fn = dataclasses.replace(prog.functions[0], func_type=FunctionType.Orchestration)
    assert insert_sync(fn) == (fn, [])


def test_break_is_rejected():
    sig = f"    def k(self, a: {TENSOR}, c: pl.Out[{TENSOR}], p: pl.Scalar[pl.INT32]) -> {TENSOR}:\n"
    body = (f"        for i in pl.range(4):\n            t: {T0} = pl.load(a, [0, 0], [64, 64])\n"
            "            if p > 0:\n                break\n"
            f"            u: {T1} = pl.exp(t)\n        return c\n")
    with pytest.raises(PassError, match="break/continue"):
        InsertSync()(kernel(sig + ALLOC2 + body))


# ---------------------------------------------------------------------------------------------
# the checker itself


def test_checker_finds_the_hazards_of_an_unsynchronized_kernel():
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    fn = kernel(SIG3 + ALLOC2 + load + f"        tc: {T0} = pl.add(ta, tb)\n"
                + f"        out: {TENSOR} = pl.store(tc, [0, 0], c)\n        return out\n").functions[0]
    hz, _ = first_hazard(fn)
    got = {(instruction(a).pipe, instruction(b).pipe) for a, b in hz}
    assert got == {(PipeType.MTE2, V), (V, PipeType.MTE3), (PipeType.MTE2, PipeType.MTE3)}


def test_checker_reports_unmatched_flags():
    sig = f"    def k(self, a: {TENSOR}) -> {TENSOR}:\n"
    wait_only = kernel(sig + ALLOC2 + flag("wait", "MTE2", "V") + "        return a\n").functions[0]
    with pytest.raises(SyncError, match="deadlock"):
        first_hazard(wait_only)
    set_only = kernel(sig + ALLOC2 + flag("set", "MTE2", "V") + "        return a\n").functions[0]
    with pytest.raises(SyncError, match="without a matching wait"):
        first_hazard(set_only)


def test_checker_follows_flags_transitively():
    """load -> (MTE2 -> V) -> exp -> (V -> MTE3) -> store orders the load before the store too."""
    sig = f"    def k(self, a: {TENSOR}, c: pl.InOut[{TENSOR}]) -> {TENSOR}:\n"
    body = (f"        t: {T0} = pl.load(c, [0, 0], [64, 64])\n" + flags("MTE2", "V") + f"        u: {T1} = pl.exp(t)\n"
            + flags("V", "MTE3") + f"        o: {TENSOR} = pl.store(u, [0, 0], c)\n        return o\n")
    assert first_hazard(kernel(sig + ALLOC2 + body).functions[0]) is None


# ---------------------------------------------------------------------------------------------
# random kernels

FP32, INDEX, INT32 = DataType.FP32, DataType.INDEX, DataType.INT32
VEC, MAT, LEFT, RIGHT, ACC = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc


def _tup(*xs):
    return MakeTuple(tuple(ConstInt(x, INDEX) for x in xs))


class KernelGen:
    """A random kernel over a few buffers, driven by `pick(n) -> 0..n-1`: loads (constant or
    loop-dependent windows of an In and an InOut tensor), vector ops, moves, stores, scalar reads
    and writes, the matmul family, loops (constant or unknown trip counts) and ifs (unknown
    conditions), nested up to `max_depth`."""

    def __init__(self, pick, matmul: bool = True, max_depth: int = 2, max_stmts: int = 4) -> None:
        self.pick, self.matmul, self.max_depth, self.max_stmts = pick, matmul, max_depth, max_stmts
        self.n = 0
        self.a = Var("a", TensorType([64, 16], FP32))
        self.c = Var("c", TensorType([64, 16], FP32))
        self.p = Var("p", scalar_type(INT32))
        self.trips = Var("n", scalar_type(INDEX))
        spaces = [VEC, VEC, VEC] + ([MAT, MAT, LEFT, RIGHT, ACC] if matmul else [])
        self.mems = [make_memref(sp, -1, 1024, i) for i, sp in enumerate(spaces)]
        self.tiles: dict = {}
        self.prologue = [AssignStmt(m, create_op_call("block.alloc", [], {"memory_space": m.memory_space, "addr": -1,
                                                                      "size": 1024, "id": m.id})) for m in self.mems]
        for m in self.mems:
            v = self.fresh("init", TileType([16, 16], FP32, m.memory_space, m))
            self.prologue.append(AssignStmt(v, create_op_call("block.create_tile", [_tup(16, 16)],
                                                              {"dtype": FP32, "target_memory": m.memory_space})))
            self.tiles[m] = v

    def fresh(self, name, t):
        self.n += 1
        return Var(f"{name}{self.n}", t)

    def buf(self, space):
        ms = [m for m in self.mems if m.memory_space is space]
        return ms[self.pick(len(ms))]

    def tile(self, space):
        return self.tiles[self.buf(space)]

    def result(self, space):
        m = self.buf(space)
        return self.fresh("t", TileType([16, 16], FP32, m.memory_space, m))

    def window(self, loop_vars):
        k = self.pick(3)
        if k < 2:
            return _tup(16 * k, 0)
        row = Mul(loop_vars[-1], ConstInt(16, INDEX), INDEX) if loop_vars else ConstInt(32, INDEX)
        return MakeTuple((row, ConstInt(0, INDEX)))

    def load(self, space, loop_vars):
        src = [self.a, self.c][self.pick(2)] if space is VEC else self.a
        return AssignStmt(self.result(space), create_op_call("block.load", [src, self.window(loop_vars), _tup(16, 16),
                                                                            _tup(16, 16)], {"target_memory": space}))

    def store(self, space, loop_vars):
        return AssignStmt(self.fresh("o", self.c.type),
                          create_op_call("block.store", [self.tile(space), self.window(loop_vars), self.c]))

    def op(self, loop_vars):
        kinds = ["load", "load", "vbin", "vun", "store", "read", "write", "movevv"]
        if self.matmul:
            kinds += ["loadmat", "movemat", "matmul", "matmul_acc", "storeacc", "moveacc"]
        k = kinds[self.pick(len(kinds))]
        call = {
            "vbin": lambda: ("block.add", [self.tile(VEC), self.tile(VEC)], {}, VEC),
            "vun": lambda: ("block.exp", [self.tile(VEC)], {}, VEC),
            "movevv": lambda: ("block.move", [self.tile(VEC)], {"target_memory": VEC}, VEC),
            "matmul": lambda: ("block.matmul", [self.tile(LEFT), self.tile(RIGHT)], {}, ACC),
            "moveacc": lambda: ("block.move", [self.tile(ACC)], {"target_memory": VEC}, VEC),
        }
        if k in call:
            name, args, kw, space = call[k]()
            return AssignStmt(self.result(space), create_op_call(name, args, kw))
        if k in ("load", "loadmat"):
            return self.load(VEC if k == "load" else MAT, loop_vars)
        if k in ("store", "storeacc"):
            return self.store(VEC if k == "store" else ACC, loop_vars)
        if k == "read":
            return AssignStmt(self.fresh("s", scalar_type(FP32)), create_op_call("block.read", [self.tile(VEC),
                                                                                               _tup(0, 0)]))
        if k == "write":
            return EvalStmt(create_op_call("block.write", [self.tile(VEC), _tup(0, 0), ConstFloat(1.0, FP32)]))
        if k == "movemat":
            dst = [LEFT, RIGHT][self.pick(2)]
            return AssignStmt(self.result(dst), create_op_call("block.move", [self.tile(MAT)], {"target_memory": dst}))
        acc = self.buf(ACC)  # matmul_acc: in place on the accumulator
        return AssignStmt(self.fresh("t", self.tiles[acc].type),
                          create_op_call("block.matmul_acc", [self.tiles[acc], self.tile(LEFT), self.tile(RIGHT)]))

    def block(self, depth, loop_vars):
        out = []
        for _ in range(1 + self.pick(self.max_stmts)):
            k = self.pick(6) if depth < self.max_depth else 0
            if k == 4:
                lv = self.fresh("i", scalar_type(INDEX))
                trips = self.pick(4)
                stop = self.trips if trips == 0 else ConstInt(trips, INDEX)
                body = self.block(depth + 1, loop_vars + [lv])
                out.append(ForStmt(lv, ConstInt(0, INDEX), stop, ConstInt(1, INDEX), body=make_body(body)))
            elif k == 5:
                then = self.block(depth + 1, loop_vars)
                other = self.block(depth + 1, loop_vars) if self.pick(2) else []
                out.append(IfStmt(Gt(self.p, ConstInt(0, INT32), DataType.BOOL), make_body(then), make_else(other)))
            else:
                out.append(self.op(loop_vars))
        return out

    def kernel(self) -> Function:
        body = self.block(0, [])
        dirs = (ParamDirection.In, ParamDirection.InOut, ParamDirection.In, ParamDirection.In)
        return Function("k", (self.a, self.c, self.p, self.trips), dirs, (),
                        make_body(self.prologue + body + [ReturnStmt(())]), FunctionType.InCore)


def _check_random(pick, **kw) -> None:
    from pypto.ir.verifier import verify

    fn, done = insert_sync(KernelGen(pick, **kw).kernel())
    assert not verify(ir.Program("p", (fn,)))
    assert_synchronized(fn, done)


_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.data_too_large])


@_SETTINGS
@given(st.data())
def test_random_vector_kernels_are_synchronized_minimally(data):
    _check_random(lambda n: data.draw(st.integers(0, n - 1)), matmul=False)


@_SETTINGS
@given(st.data())
def test_random_mixed_kernels_are_synchronized_minimally(data):
    _check_random(lambda n: data.draw(st.integers(0, n - 1)), matmul=True, max_depth=3, max_stmts=3)


@pytest.mark.parametrize("seed", range(40))
def test_random_kernels_fixed_seeds(seed):
    rng = random.Random(seed)
    _check_random(lambda n: rng.randrange(n), matmul=seed % 2 == 0, max_depth=2 + seed % 2)
