"""MemoryReuse: buffers shared by lifetime; carried tiles in one buffer, with moves where needed."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import Call, MemRef
from pypto.ir.stmt import AssignStmt, ForStmt, stmt_list
from pypto.ir.walk import walk_stmts
from pypto.passes.analysis.tile_liveness import analyze
from pypto.passes.base import PassContext
from pypto.passes.init_memref import InitMemRef
from pypto.passes.memory_reuse import MemoryReuse
from pypto.target import ascend910b
from tests.programs.roundtrip import roundtrip


def reuse(prog, verified):
    ctx = PassContext(target=ascend910b())
    mid = verified(InitMemRef()(prog, ctx))
    return MemoryReuse()(mid, ctx)


def check(after, expected, verified):
    verified(after)
    roundtrip(after)
    ir.assert_structural_equal(after, expected, enable_auto_mapping=True)


def allocs(prog, name="k"):
    return [s.var for s in stmt_list(prog.get_function(name).body) if isinstance(getattr(s, "var", None), MemRef)]


def test_tiles_with_disjoint_lifetimes_share_and_unused_allocs_are_dropped(verified):
    # written as InitMemRef leaves it: one buffer per tile
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 3)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            u: pl.Tile[[64, 64], pl.FP32, m1] = pl.exp(t)       # t is still needed: a second buffer
            v: pl.Tile[[64, 64], pl.FP32, m2] = pl.muls(u, 2.0)  # u dies here: updated in place
            w: pl.Tile[[64, 64], pl.FP32, m3] = pl.add(v, t)     # both die here: back into t's buffer
            o = pl.store(w, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            u: pl.Tile[[64, 64], pl.FP32, m1] = pl.exp(t)
            v: pl.Tile[[64, 64], pl.FP32, m1] = pl.muls(u, 2.0)
            w: pl.Tile[[64, 64], pl.FP32, m0] = pl.add(v, t)
            o = pl.store(w, [0, 0], out)
            return o

    after = MemoryReuse()(verified(Before), PassContext(target=ascend910b()))
    check(after, Expected, verified)
    assert len(allocs(Before)) == 4 and len(allocs(after)) == 2


def test_reuse_across_sizes_takes_the_largest(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
              out1: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
              out2: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            s0 = pl.load(b, [0, 0], [16, 64])
            o0 = pl.store(s0, [0, 0], out2)
            t = pl.load(a, [0, 0], [64, 64])
            s = pl.row_sum(t)
            o1 = pl.store(s, [0, 0], out1)
            x = pl.load(b, [0, 0], [32, 64])
            y = pl.exp(x)
            o2 = pl.store(y, [0, 0], out2)
            return o2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
              out1: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
              out2: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 256, 1)
            s0: pl.Tile[[16, 64], pl.FP32, m0] = pl.load(b, [0, 0], [16, 64])
            o0 = pl.store(s0, [0, 0], out2)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            s: pl.Tile[[64, 1], pl.FP32, m1] = pl.row_sum(t)
            o1 = pl.store(s, [0, 0], out1)
            x: pl.Tile[[32, 64], pl.FP32, m0] = pl.load(b, [0, 0], [32, 64])
            y: pl.Tile[[32, 64], pl.FP32, m0] = pl.exp(x)
            o2 = pl.store(y, [0, 0], out2)
            return o2

    check(reuse(Before, verified), Expected, verified)


def test_k_loop_reuses_operand_buffers_per_space(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            am = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al = pl.move(am, target_memory=pl.MemorySpace.Left)
            br = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c0 = pl.matmul(al, br)
            for kk, (c,) in pl.range(64, 256, 64, init_values=(c0,)):
                ak = pl.load(a, [0, kk], [64, 64], target_memory=pl.MemorySpace.Mat)
                bk = pl.load(b, [kk, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                alk = pl.move(ak, target_memory=pl.MemorySpace.Left)
                brk = pl.move(bk, target_memory=pl.MemorySpace.Right)
                c1 = pl.matmul_acc(c, alk, brk)
                c2 = pl.yield_(c1)
            v = pl.move(c2, target_memory=pl.MemorySpace.Vec)
            o = pl.store(v, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Left, -1, 8192, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Right, -1, 8192, 3)
            m4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Acc, -1, 16384, 4)
            m5: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 5)
            am: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(am, target_memory=pl.MemorySpace.Left)
            br: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c0: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.matmul(al, br)
            for kk, (c,) in pl.range(64, 256, 64, init_values=(c0,)):
                ak: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, kk], [64, 64], target_memory=pl.MemorySpace.Mat)
                bk: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [kk, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                alk: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(ak, target_memory=pl.MemorySpace.Left)
                brk: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bk, target_memory=pl.MemorySpace.Right)
                c1: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.block.matmul_acc(c, alk, brk)
                c2: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.yield_(c1)
            v: pl.Tile[[64, 64], pl.FP32, m5] = pl.move(c2, target_memory=pl.MemorySpace.Vec)
            o = pl.store(v, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_value_used_inside_a_loop_keeps_its_buffer_for_the_whole_loop(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            z = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(4, init_values=(z,)):
                x = pl.exp(t)           # may not overwrite t: the next iteration reads it again
                acc2 = pl.add(acc, x)   # accumulates in place
                acc3 = pl.yield_(acc2)
            o = pl.store(acc3, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            z: pl.Tile[[64, 64], pl.FP32, m1] = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(4, init_values=(z,)):
                x: pl.Tile[[64, 64], pl.FP32, m2] = pl.exp(t)
                acc2: pl.Tile[[64, 64], pl.FP32, m1] = pl.add(acc, x)
                acc3: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(acc2)
            o = pl.store(acc3, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_yielded_value_computed_while_the_iter_arg_is_needed_is_moved(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            z = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            for i, (acc, s) in pl.range(4, init_values=(t, z)):
                n = pl.muls(acc, 2.0)
                s2 = pl.add(s, acc)     # acc is read after n is computed
                acc2, s3 = pl.yield_(n, s2)
            w = pl.add(acc2, s3)
            o = pl.store(w, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            z: pl.Tile[[64, 64], pl.FP32, m1] = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            for i, (acc, s) in pl.range(4, init_values=(t, z)):
                n: pl.Tile[[64, 64], pl.FP32, m2] = pl.muls(acc, 2.0)
                s2: pl.Tile[[64, 64], pl.FP32, m1] = pl.add(s, acc)
                n_mv: pl.Tile[[64, 64], pl.FP32, m0] = pl.move(n, target_memory=pl.MemorySpace.Vec)
                acc2, s3 = pl.yield_(n_mv, s2)
            w: pl.Tile[[64, 64], pl.FP32, m0] = pl.add(acc2, s3)
            o = pl.store(w, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_init_value_used_after_the_loop_is_moved_before_it(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                nx = pl.muls(acc, 2.0)
                w = pl.add(nx, acc)
                nxt = pl.yield_(w)
            s = pl.add(nxt, t)
            o = pl.store(s, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            t_mv: pl.Tile[[64, 64], pl.FP32, m1] = pl.move(t, target_memory=pl.MemorySpace.Vec)
            for i, (acc,) in pl.range(4, init_values=(t_mv,)):
                nx: pl.Tile[[64, 64], pl.FP32, m2] = pl.muls(acc, 2.0)
                w: pl.Tile[[64, 64], pl.FP32, m1] = pl.add(nx, acc)
                nxt: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(w)
            s: pl.Tile[[64, 64], pl.FP32, m0] = pl.add(nxt, t)
            o = pl.store(s, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_swapped_carried_tiles_go_through_one_temporary(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            u = pl.exp(t)
            for i, (x, y) in pl.range(3, init_values=(t, u)):
                x2, y2 = pl.yield_(y, x)
            s = pl.sub(x2, y2)
            o = pl.store(s, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            u: pl.Tile[[64, 64], pl.FP32, m1] = pl.exp(t)
            for i, (x, y) in pl.range(3, init_values=(t, u)):
                y_tmp: pl.Tile[[64, 64], pl.FP32, m2] = pl.move(y, target_memory=pl.MemorySpace.Vec)
                x_mv: pl.Tile[[64, 64], pl.FP32, m1] = pl.move(x, target_memory=pl.MemorySpace.Vec)
                y_mv: pl.Tile[[64, 64], pl.FP32, m0] = pl.move(y_tmp, target_memory=pl.MemorySpace.Vec)
                x2, y2 = pl.yield_(y_mv, x_mv)
            s: pl.Tile[[64, 64], pl.FP32, m0] = pl.sub(x2, y2)
            o = pl.store(s, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_if_branch_yielding_a_tile_that_lives_on_is_moved(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            if n > 0:
                y = pl.yield_(t)        # t is read after the if
            else:
                q = pl.muls(t, 2.0)
                y = pl.yield_(q)
            z = pl.add(y, t)
            o = pl.store(z, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            if n > 0:
                t_mv: pl.Tile[[64, 64], pl.FP32, m1] = pl.move(t, target_memory=pl.MemorySpace.Vec)
                y: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(t_mv)
            else:
                q: pl.Tile[[64, 64], pl.FP32, m1] = pl.muls(t, 2.0)
                y: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(q)
            z: pl.Tile[[64, 64], pl.FP32, m0] = pl.add(y, t)
            o = pl.store(z, [0, 0], out)
            return o

    check(reuse(Before, verified), Expected, verified)


def test_if_inside_a_loop_and_a_while_loop_stay_in_one_buffer(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                if i < n:
                    x = pl.exp(acc)
                    y = pl.yield_(x)
                else:
                    z = pl.add(acc, acc)   # acc is dead in this branch once the other one runs
                    y = pl.yield_(z)
                nxt = pl.yield_(y)
            for (j, w) in pl.while_(init_values=(0, nxt)):
                pl.cond(j < n)
                e = pl.exp(w)
                h = pl.muls(e, 0.5)
                j2, w2 = pl.yield_(j + 1, h)
            o = pl.store(w2, [0, 0], out)
            return o

    after = reuse(Before, verified)
    verified(after)
    roundtrip(after)
    k = after.get_function("k")
    assert len(allocs(after)) == 1
    assert {v.type.memref for v in analyze(k).defs} == set(allocs(after))
    calls = [s.value.op.name for s in walk_stmts(k) if isinstance(s, AssignStmt) and isinstance(s.value, Call)]
    assert "block.move" not in calls


def test_result_is_deterministic(verified):
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            s = pl.load(a, [0, 0], [16, 64])
            t = pl.load(a, [0, 0], [64, 64])
            u = pl.load(a, [0, 0], [32, 64])
            w = pl.add(t, t)
            o1 = pl.store(s, [0, 0], out)
            o2 = pl.store(u, [0, 0], o1)
            o3 = pl.store(w, [0, 0], o2)
            return o3

    first = reuse(Prog, verified)
    second = reuse(Prog, verified)
    assert ir.python_print(first) == ir.python_print(second)
    again = MemoryReuse()(first, PassContext(target=ascend910b()))  # planning a planned kernel changes nothing
    ir.assert_structural_equal(again, first, enable_auto_mapping=True)


def _numeric_program():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def branchy(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                    out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                if i < n:
                    x = pl.muls(acc, 0.5)
                    y = pl.yield_(x)
                else:
                    z = pl.add(acc, acc)
                    y = pl.yield_(z)
                nxt = pl.yield_(y)
            r = pl.store(nxt, [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.InCore)
        def swap(self, a: pl.Tensor[[64, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            u = pl.muls(t, 3.0)
            for i, (x, y) in pl.range(3, init_values=(t, u)):
                x1 = pl.adds(x, 1.0)
                x2, y2 = pl.yield_(y, x1)
            s = pl.sub(x2, y2)
            r = pl.store(s, [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.InCore)
        def live_init(self, a: pl.Tensor[[64, 64], pl.FP32],
                      out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                nx = pl.muls(acc, 2.0)
                w = pl.add(nx, acc)
                q = pl.muls(acc, 0.5)
                w2 = pl.add(w, q)
                nxt = pl.yield_(w2)
            s = pl.add(nxt, t)
            r = pl.store(s, [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
            o1 = pl.create_tensor([64, 64], dtype=pl.FP32)
            r1 = self.branchy(a, n, o1)
            o2 = pl.create_tensor([64, 64], dtype=pl.FP32)
            r2 = self.swap(r1, o2)
            o3 = pl.create_tensor([64, 64], dtype=pl.FP32)
            r3 = self.live_init(r2, o3)
            return r3

    return P


def _numeric_reference(a: np.ndarray, n: int) -> np.ndarray:
    t = a.copy()
    for i in range(4):
        t = t * 0.5 if i < n else t + t
    x, y = t, t * 3
    for _ in range(3):
        x, y = y, x + 1
    t0 = x - y
    acc = t0
    for _ in range(4):
        acc = acc * 2 + acc + acc * 0.5
    return acc + t0


@pytest.mark.native
def test_shared_buffers_compute_the_same_numbers(tmp_path):
    """Compile and run on the CPU: in-place updates, a swap and copies keep the NumPy result."""
    try:
        from pypto.support.native_build import toolchain

        toolchain()
    except Exception as e:  # pragma: no cover - a machine without the C++ toolchain
        pytest.skip(f"no native build available: {e}")
    compiled = ir.compile(_numeric_program(), output_dir=tmp_path)
    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    np.testing.assert_allclose(compiled(a, 2), _numeric_reference(a, 2), rtol=1e-5)
    swap = compiled.program.get_function("swap")
    loop = [s for s in stmt_list(swap.body) if isinstance(s, ForStmt)][0]
    assert loop.iter_args[0].type.memref is loop.return_vars[0].type.memref


def test_a_return_var_that_cannot_share_is_copied_after_the_loop(verified):
    """The defensive path (a return var whose buffer is taken): the loop yields into a fresh variable
    in the carried buffer and the old return var is copied from it right after the loop."""
    from pypto.ir.names import LazyNames
    from pypto.passes.memory_reuse import _ApplyEdits, _Edit

    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                acc2 = pl.exp(acc)
                acc3 = pl.yield_(acc2)
            o = pl.store(acc3, [0, 0], out)
            return o

    k = Prog.get_function("k")
    loop = [s for s in stmt_list(k.body) if isinstance(s, ForStmt)][0]
    edited = _ApplyEdits({id(loop): _Edit(ret={0})}, LazyNames(k)).visit(k)
    verified(ir.Program("P", (edited,)))
    stmts = stmt_list(edited.body)
    new_loop = stmts[1]
    assert isinstance(new_loop, ForStmt) and new_loop.return_vars[0] is not loop.return_vars[0]
    copy = stmts[2]
    assert copy.var is loop.return_vars[0] and copy.value.op.name == "block.move"
    assert copy.value.args[0] is new_loop.return_vars[0]
    planned = MemoryReuse()(verified(InitMemRef()(ir.Program("P", (edited,)), PassContext(target=ascend910b()))),
                            PassContext(target=ascend910b()))
    verified(planned)
    roundtrip(planned)
