"""InsertSync: BEFORE/EXPECTED kernels written in `pl`, checked by an independent simulator.

The checker (`sync_checker.Sim`) executes a kernel's IR per docs/sync_model.md with concrete trip
counts and branch outcomes. Random kernels (`sync_checker.KernelGen`) must come out hazard-free,
and removing any one inserted synchronization must expose a hazard in some execution (else
InsertSync emitted a redundant one). Kernels planned by the memory passes are also run by the
interpreter on their PTO. The pass's own building blocks (conflict sets, the suspect filter that
spares most syncs a trial removal, the walk count and cost on large kernels) are tested at the end.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, MemorySpace, PipeType
from pypto.ir.expr import Var, make_memref
from pypto.ir.types import TensorType
from pypto.passes import PassError
from pypto.passes import insert_sync as IS
from pypto.passes.analysis.pipes import Buffer, Instruction, TensorRegion, bind_instructions, instruction
from pypto.passes.insert_sync import NUM_EVENTS, InsertSync, insert_sync
from tests.programs.sync_checker import (
    KernelGen,
    SyncError,
    assert_synchronized,
    first_hazard,
    without,
)

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


# ---------------------------------------------------------------------------------------------
# precision of the analysis: orderings that hold on every path need no flag of their own


def _vec(i: int) -> str:
    return f"pl.Tile[[16, 16], pl.FP32, mem_vec_{i}]"


def _alloc(*spaces: tuple[str, int]) -> str:
    return "".join(f"        mem_{sp.lower()}_{i}: pl.MemRefType = pl.block.alloc(pl.MemorySpace.{sp}, -1, 1024, {i})\n"
                   for sp, i in spaces)


def test_an_ordering_made_differently_on_each_path_needs_no_flag(verified):
    """The load t6 (then-branch of the first if) must precede the scalar write of its buffer. After
    the second if, on its then-path t6 precedes the move t9 (MTE2 -> V flag), which the V -> S flag
    covers; on its else-path bar_all has ordered t6 before everything. So the V -> S flag's set,
    right after the if, orders t6 on every path where t6 is still pending: no MTE2 -> S flag."""
    sig = f"    def k(self, a: {TENSOR}, c: {TENSOR}, p: pl.Scalar[pl.INT32]):\n"
    alloc = _alloc(("Vec", 1), ("Vec", 2)) + \
        "        init2: pl.Tile[[16, 16], pl.FP32, mem_vec_1] = pl.block.create_tile([16, 16], dtype=pl.FP32)\n"
    loads = (f"        if p > 0:\n            t6: {_vec(1)} = pl.load(c, [0, 0], [16, 16])\n"
             f"            t7: {_vec(2)} = pl.load(a, [16, 0], [16, 16])\n")
    then = f"        if p > 0:\n            t9: {_vec(2)} = pl.move(init2, target_memory=pl.MemorySpace.Vec)\n"
    other = f"        else:\n            t11: {_vec(2)} = pl.load(a, [0, 0], [16, 16])\n"
    write = "        pl.block.write(init2, [0, 0], 1.0)\n        return\n"
    check_pass(sig + alloc + loads + then + other + write,
               sig + alloc + loads + flags("MTE2", "V") + then
               + other.replace("            t11", "            pl.system.bar_all()\n            t11")
               + flags("V", "S") + write, verified)


def test_a_loop_with_a_constant_trip_count_runs_all_its_iterations(verified):
    """The inner loop always runs twice, so its second matmul t17 follows the first iteration's move
    t18 (FIX -> M), which follows the previous outer iteration's load t22 (MTE2 -> FIX, carried):
    the M -> MTE1 flag before the if then also orders t22 before the next iteration's move t21 (an
    exit after a single inner iteration, which would need an MTE2 -> MTE1 flag, cannot happen)."""
    sig = f"    def k(self, a: {TENSOR}, p: pl.Scalar[pl.INT32], n: pl.Scalar[pl.INDEX]):\n"
    tile = "pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.{0}, mem_{1}_{2}]"
    mat, left, right, acc = (tile.format(sp, sp.lower(), i) for sp, i in (("Mat", 3), ("Left", 5), ("Right", 6),
                                                                          ("Acc", 7)))
    alloc = _alloc(("Vec", 1), ("Mat", 3), ("Left", 5), ("Right", 6), ("Acc", 7)) + "".join(
        f"        {name}: {t} = pl.block.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.{sp})\n"
        for name, t, sp in (("init4", mat, "Mat"), ("init6", left, "Left"), ("init7", right, "Right"),
                            ("init8", acc, "Acc")))
    inner = (f"            for j in pl.range(2):\n{flag('wait', 'FIX', 'M', ind=4)}"
             f"                t17: {acc} = pl.matmul(init6, init7)\n{flags('M', 'FIX', ind=4)}"
             f"                t18: {_vec(1)} = pl.move(init8, target_memory=pl.MemorySpace.Vec)\n"
             f"{flag('set', 'FIX', 'M', ind=4)}")
    branch = (f"            if p > 0:\n                t21: {left} = pl.move(init4, target_memory=pl.MemorySpace.Left)\n"
              "            else:\n{bar}"
              f"                t22: {mat} = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)\n")
    tail = (f"            for m in pl.range(n):\n{{bar}}                t26: {_vec(1)} = pl.load(a, [m * 16, 0], [16, 16])\n")
    bar = "                pl.system.bar_all()\n"
    before = (sig + alloc + "        for i in pl.range(3):\n" + inner.replace(flag("wait", "FIX", "M", ind=4), "")
              .replace(flags("M", "FIX", ind=4), "").replace(flag("set", "FIX", "M", ind=4), "")
              + branch.format(bar="") + tail.format(bar="") + "        return\n")
    expected = (sig + alloc + flag("set", "MTE1", "M") + flag("set", "MTE2", "FIX") + "        for i in pl.range(3):\n"
                + flag("wait", "MTE1", "M", ind=3) + flag("wait", "MTE2", "FIX", ind=3) + flag("set", "FIX", "M", ind=3)
                + inner + flag("wait", "FIX", "M", ind=3) + flags("M", "MTE1", ind=3) + branch.format(bar=bar)
                + flag("set", "MTE1", "M", ind=3) + tail.format(bar=bar) + flag("set", "MTE2", "FIX", ind=3)
                + flag("wait", "MTE1", "M") + flag("wait", "MTE2", "FIX") + "        return\n")
    check_pass(before, expected, verified)


# ---------------------------------------------------------------------------------------------
# the pass's building blocks


def _gen(seed: int, **kw):
    rng = random.Random(seed)
    return KernelGen(lambda n: rng.randrange(n), **kw).kernel()


def _random_resource(rng: random.Random, mems: list, tensors: list, extent: int):
    if rng.random() < 0.5:
        return Buffer(rng.choice(mems))
    k = rng.random()
    t = None if k < 0.05 else rng.choice(tensors)
    if k < 0.15:
        return TensorRegion(t, None if k < 0.1 else ((0, 4),))
    a, b = rng.randrange(extent), rng.randrange(extent)
    return TensorRegion(t, ((a, a + rng.randrange(1, 8)), (b, b + rng.randrange(1, 8))))


def test_conflict_sets_are_the_pairwise_conflicts():
    """`conf[i]`, computed per resource (buffers by MemRef, space and id or address range; tensor
    windows, many of them swept by dimension 0), is exactly the set of j with conflicts_with."""
    rng = random.Random(7)
    tensors = [Var(f"t{i}", TensorType([64, 64], DataType.FP32)) for i in range(2)]
    for trial in range(60):
        mems = [make_memref(rng.choice([MemorySpace.Vec, MemorySpace.Mat]), rng.choice([-1, 16 * rng.randrange(64)]),
                            rng.choice([16, 32, 64]), rng.randrange(5)) for _ in range(rng.randrange(1, 8))]
        extent = rng.choice([3, 60])  # few windows, or many (the sweep)
        instrs = [Instruction(V, tuple(_random_resource(rng, mems, tensors, extent) for _ in range(rng.randrange(3))),
                              tuple(_random_resource(rng, mems, tensors, extent) for _ in range(rng.randrange(3))))
                  for _ in range(rng.randrange(1, 90))]
        conf = IS._conflicts(instrs)
        for i, a in enumerate(instrs):
            assert conf[i] == sum(1 << j for j, b in enumerate(instrs) if a.conflicts_with(b)), (trial, i)


@pytest.mark.parametrize("seed", range(24))
def test_every_sync_pruning_can_remove_is_a_suspect(seed):
    """The suspect filter is sound: a sync that removing-and-rechecking finds redundant is always
    among the suspects (the others are never tried). In a straight-line kernel there is none."""
    straight = seed % 3 == 0
    kw = {"max_depth": 0, "max_stmts": 12} if straight else {"max_depth": 2 + seed % 2, "max_stmts": 3 + seed % 3}
    k = IS._Kernel(bind_instructions(_gen(100 + seed, matmul=seed % 2 == 0, **kw)))
    if not k.n:
        return
    assert k.straight or not straight
    plan = IS._plan(k)
    redundant = {id(s) for s in plan.syncs} - {id(s) for s in IS._prune(k, plan, everything=True).syncs}
    assert redundant <= {id(s) for s in IS._suspects(k, plan.syncs)}
    if k.straight:
        assert not redundant


def _walks(monkeypatch) -> list[tuple[bool, int]]:
    """Record (decide mode?, statement visits) of every walk InsertSync makes."""
    got: list[tuple[bool, int]] = []
    run, states = IS._Walk.run, IS._Walk.states

    def counted_run(self):
        out = run(self)
        got.append((self.decide, self.visits))
        return out

    def counted_states(self, *a, **kw):
        out = states(self, *a, **kw)
        got.append((self.decide, self.visits))
        return out

    monkeypatch.setattr(IS._Walk, "run", counted_run)
    monkeypatch.setattr(IS._Walk, "states", counted_states)
    return got


def test_straight_line_and_k_loop_kernels_take_one_and_two_walks(monkeypatch):
    """A straight-line kernel is planned in one walk (its decisions act exactly where the walk put
    them: nothing to check, nothing to prune); the K loop of Planned.mm in a deciding walk and a
    checking one, its syncs all needed for pairs no other sync can order (no trial walk)."""
    from pypto.passes.pass_manager import OptimizationStrategy, PassManager

    walks = _walks(monkeypatch)
    load = f"        ta: {T0} = pl.load(a, [0, 0], [64, 64])\n        tb: {T1} = pl.load(b, [0, 0], [64, 64])\n"
    fn, done = insert_sync(kernel(SIG3 + ALLOC2 + load + f"        tc: {T0} = pl.add(ta, tb)\n"
                                  + f"        out: {TENSOR} = pl.store(tc, [0, 0], c)\n        return out\n").functions[0])
    assert len(done) == 2 and [d for d, _ in walks] == [True]
    walks.clear()
    prog = PassManager.get_strategy(OptimizationStrategy.PTOAS).run_passes(ir.Program("mm", (Planned.get_function("mm"),)))
    fn, done = insert_sync(prog.functions[0])
    assert len(done) >= 8 and [d for d, _ in walks] == [True, False]


def test_a_large_kernel_costs_a_few_walks(monkeypatch):
    """A random kernel of about 700 instructions in loops nested five deep (the old remove-and-
    re-analyse pruning took tens of seconds on such kernels): planning takes a deciding and a
    checking walk, and pruning stays within its budget (`_PRUNE_WALKS` walks of the kernel, or
    `_PRUNE_VISITS` statement visits), so the whole pass costs a small multiple of one walk."""
    walks = _walks(monkeypatch)
    fn = _gen(11, matmul=True, max_depth=5, max_stmts=10)
    assert IS._Kernel(bind_instructions(fn)).n > 600
    out, done = insert_sync(fn)
    one = next(v for d, v in walks if not d)  # the checking walk
    assert [d for d, _ in walks[:2]] == [True, False] and len(done) > 300
    pruning = sum(v for _, v in walks[3:])  # the trials, after the pruning's reference walk
    assert pruning <= max(IS._PRUNE_VISITS, IS._PRUNE_WALKS * one) + one
    assert sum(v for _, v in walks) <= (IS._PRUNE_WALKS + 6) * one + IS._PRUNE_VISITS


@pytest.mark.xfail(strict=True, reason="known imprecision (module docstring, 'Minimality'): the analysis merges the "
                   "paths of an if, so an ordering that one branch gets from a barrier and the other from a "
                   "chain of flags (V -> MTE2 -> V) is not seen as holding on every path, and the bar_v before "
                   "t8 stays although it is redundant (found by the random property test)")
def test_ordering_by_a_barrier_on_one_branch_and_flags_on_the_other():
    prog = kernel("""    def k(self, a: pl.Tensor[[64, 16], pl.FP32], c: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
          p: pl.Scalar[pl.INT32]):
        mem_vec_0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 1024, 0)
        mem_vec_1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 1024, 1)
        mem_vec_2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 1024, 2)
        init1: pl.Tile[[16, 16], pl.FP32, mem_vec_0] = pl.block.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        init2: pl.Tile[[16, 16], pl.FP32, mem_vec_1] = pl.block.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        init3: pl.Tile[[16, 16], pl.FP32, mem_vec_2] = pl.block.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        t4: pl.Tile[[16, 16], pl.FP32, mem_vec_0] = pl.block.add(init1, init1)
        if p > pl.const(0, pl.INT32):
            t5: pl.Tile[[16, 16], pl.FP32, mem_vec_1] = pl.block.add(init1, init1)
            t6: pl.Tile[[16, 16], pl.FP32, mem_vec_1] = pl.block.add(init2, init2)
        else:
            t7: pl.Tile[[16, 16], pl.FP32, mem_vec_0] = pl.block.load(a, [0, 0], [16, 16], [16, 16], target_memory=pl.MemorySpace.Vec, transpose=False)
        t8: pl.Tile[[16, 16], pl.FP32, mem_vec_0] = pl.block.add(init1, init1)
        o9: pl.Tensor[[64, 16], pl.FP32] = pl.block.store(init1, [0, 0], c)
        return
""")
    fn, done = insert_sync(prog.functions[0])
    assert_synchronized(fn, done)
