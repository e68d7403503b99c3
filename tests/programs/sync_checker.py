"""An independent checker of synchronized kernels, and a random kernel generator (for InsertSync's tests).

`Sim` executes a kernel's IR per docs/sync_model.md (read as the interpreter's hazard checker reads
it: a set publishes what its pipe has completed; a wait on S stalls all issue) with concrete loop
trip counts and branch outcomes: vector clocks per pipe, flags as FIFO queues per (set pipe, wait
pipe, event id), barriers, the synchronous scalar pipe. It reports every conflicting pair of
instruction instances that is not ordered (a hazard), a wait with no set before it (deadlock) and
sets left without a wait. `assert_synchronized` checks that a kernel is hazard-free in every
execution explored and that removing any one inserted synchronization exposes a hazard in some
execution. `KernelGen` builds random kernels (loads, vector/matrix ops, moves, stores, scalar
accesses, loops, ifs over a few buffers).
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict

from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection, PipeType
from pypto.ir.evaluate import EvalError, Evaluator
from pypto.ir.expr import ConstFloat, ConstInt, Gt, MakeTuple, Mul, Var, make_memref, scalar_type
from pypto.ir.function import Function
from pypto.ir.op import create_op_call
from pypto.ir.rewrite import StmtRewriter
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, WhileStmt
from pypto.ir.types import TensorType, TileType
from pypto.ir.walk import body_stmts, make_body, make_else
from pypto.passes.analysis.pipes import PIPES, instruction, is_sync_call, stmt_call, tensor_roots

S, V, M = PipeType.S, PipeType.V, PipeType.M

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
