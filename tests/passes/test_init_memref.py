"""InitMemRef: every tile gets a MemRef; reshape / in-place ops / carried tiles share from the start."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import MemRef
from pypto.ir.stmt import AssignStmt, ForStmt, stmt_list
from pypto.passes.analysis.tile_liveness import analyze
from pypto.passes.base import PassContext
from pypto.passes.init_memref import InitMemRef
from pypto.target import ascend910b, ascend950, cpu
from tests.programs.roundtrip import roundtrip

Vec, Mat, Left, Right, Acc = (pl.MemorySpace.Vec, pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)


def run(prog, target=None):
    return InitMemRef()(prog, PassContext(target=target or ascend910b()))


def check(after, expected, verified):
    verified(after)
    roundtrip(after)
    ir.assert_structural_equal(after, expected, enable_auto_mapping=True)


def test_every_tile_gets_its_own_buffer_numbered_by_first_definition(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            u = pl.exp(t)
            v = pl.add(u, t)
            o = pl.store(v, [0, 0], out)
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
            v: pl.Tile[[64, 64], pl.FP32, m2] = pl.add(u, t)
            o = pl.store(v, [0, 0], out)
            return o

    after = run(Before)
    check(after, Expected, verified)
    k = after.get_function("k")
    for v in analyze(k).defs:  # uses see the retyped variables: every memref is one of the allocs
        assert isinstance(v.type.memref, MemRef)
    allocs = [s.var for s in stmt_list(k.body) if isinstance(getattr(s, "var", None), MemRef)]
    assert [m.name for m in allocs] == ["mem_vec_0", "mem_vec_1", "mem_vec_2"]
    store = stmt_list(k.body)[-2]
    assert store.value.args[0] is stmt_list(k.body)[-3].var
    assert store.var.type.memref is None  # tensors get no buffer


def test_memory_spaces_and_sizes_follow_the_tiles(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[32, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            am = pl.load(a, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            al = pl.move(am, target_memory=pl.MemorySpace.Left)
            br = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c = pl.matmul(al, br)
            o = pl.store(c, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[32, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 4096, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 4096, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Left, -1, 4096, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Right, -1, 4096, 3)
            m4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Acc, -1, 16384, 4)
            am: pl.Tile[[64, 32], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[32, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            al: pl.Tile[[64, 32], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(am, target_memory=pl.MemorySpace.Left)
            br: pl.Tile[[32, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.matmul(al, br)
            o = pl.store(c, [0, 0], out)
            return o

    for target in (ascend910b(), ascend950(), cpu()):
        check(run(Before, target), Expected, verified)


def test_reshape_shares_its_input_buffer(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            r = pl.reshape(t, [32, 128])
            e = pl.exp(r)
            o = pl.store(e, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            r: pl.Tile[[32, 128], pl.FP32, m0] = pl.reshape(t, [32, 128])
            e: pl.Tile[[32, 128], pl.FP32, m1] = pl.exp(r)
            o = pl.store(e, [0, 0], out)
            return o

    check(run(Before), Expected, verified)


def test_in_place_update_of_an_operand_still_needed_copies_it_first(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
              out1: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
              out2: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            am = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al = pl.move(am, target_memory=pl.MemorySpace.Left)
            br = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c0 = pl.matmul(al, br)
            c1 = pl.matmul_acc(c0, al, br)   # c0 is stored afterwards: update a copy
            o1 = pl.store(c0, [0, 0], out1)
            o2 = pl.store(c1, [0, 0], out2)
            return o2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
              out1: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
              out2: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Left, -1, 8192, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Right, -1, 8192, 3)
            m4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Acc, -1, 16384, 4)
            m5: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Acc, -1, 16384, 5)
            am: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(am, target_memory=pl.MemorySpace.Left)
            br: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c0: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.matmul(al, br)
            c0_copy: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m5] = pl.move(c0, target_memory=pl.MemorySpace.Acc)
            c1: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m5] = pl.block.matmul_acc(c0_copy, al, br)
            o1 = pl.store(c0, [0, 0], out1)
            o2 = pl.store(c1, [0, 0], out2)
            return o2

    check(run(Before), Expected, verified)


def test_assemble_updates_its_target_in_place(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            big = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            top = pl.load(a, [0, 0], [16, 64])
            big1 = pl.assemble(big, top, [0, 0])     # big is read again below: copy it
            bot = pl.load(a, [48, 0], [16, 64])
            big2 = pl.assemble(big1, bot, [48, 0])   # big1 dies here: in place
            s = pl.add(big2, big)
            o = pl.store(s, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 4096, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 4096, 3)
            m4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 4)
            big: pl.Tile[[64, 64], pl.FP32, m0] = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            top: pl.Tile[[16, 64], pl.FP32, m1] = pl.load(a, [0, 0], [16, 64])
            big_copy: pl.Tile[[64, 64], pl.FP32, m2] = pl.move(big, target_memory=pl.MemorySpace.Vec)
            big1: pl.Tile[[64, 64], pl.FP32, m2] = pl.assemble(big_copy, top, [0, 0])
            bot: pl.Tile[[16, 64], pl.FP32, m3] = pl.load(a, [48, 0], [16, 64])
            big2: pl.Tile[[64, 64], pl.FP32, m2] = pl.assemble(big1, bot, [48, 0])
            s: pl.Tile[[64, 64], pl.FP32, m4] = pl.add(big2, big)
            o = pl.store(s, [0, 0], out)
            return o

    after = run(Before)
    check(after, Expected, verified)
    big2 = [s for s in stmt_list(after.get_function("k").body) if isinstance(s, AssignStmt) and s.var.name == "big2"][0]
    assert big2.value.type.memref is big2.var.type.memref  # call result types are inferred again


def test_k_loop_accumulates_in_one_acc_buffer_and_nested_tiles_get_variables(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            am = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            c0 = pl.matmul(pl.move(am, target_memory=pl.MemorySpace.Left), pl.move(bm, target_memory=pl.MemorySpace.Right))
            for kk, (c,) in pl.range(64, 256, 64, init_values=(c0,)):
                ak = pl.load(a, [0, kk], [64, 64], target_memory=pl.MemorySpace.Mat)
                bk = pl.load(b, [kk, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                al = pl.move(ak, target_memory=pl.MemorySpace.Left)
                br = pl.move(bk, target_memory=pl.MemorySpace.Right)
                c2 = pl.yield_(pl.matmul_acc(c, al, br))   # tile expressions are bound to variables first
            o = pl.store(c2, [0, 0], out)
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
            m5: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 5)
            m6: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, -1, 8192, 6)
            m7: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Left, -1, 8192, 7)
            m8: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Right, -1, 8192, 8)
            am: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            a0: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(am, target_memory=pl.MemorySpace.Left)
            b0: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c0: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.matmul(a0, b0)
            for kk, (c,) in pl.range(64, 256, 64, init_values=(c0,)):
                ak: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m5] = pl.load(a, [0, kk], [64, 64], target_memory=pl.MemorySpace.Mat)
                bk: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m6] = pl.load(b, [kk, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                al: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m7] = pl.move(ak, target_memory=pl.MemorySpace.Left)
                br: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m8] = pl.move(bk, target_memory=pl.MemorySpace.Right)
                acc: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.block.matmul_acc(c, al, br)
                c2: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m2] = pl.yield_(acc)
            o = pl.store(c2, [0, 0], out)
            return o

    check(run(Before), Expected, verified)


def test_carried_tiles_share_one_buffer_and_a_live_init_is_copied(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(4, init_values=(t,)):
                x = pl.exp(acc)
                acc2 = pl.add(x, acc)
                acc3 = pl.yield_(acc2)
            s = pl.sub(acc3, t)          # t is still needed after the loop
            o = pl.store(s, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 3)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            t_init: pl.Tile[[64, 64], pl.FP32, m1] = pl.move(t, target_memory=pl.MemorySpace.Vec)
            for i, (acc,) in pl.range(4, init_values=(t_init,)):
                x: pl.Tile[[64, 64], pl.FP32, m2] = pl.exp(acc)
                acc2: pl.Tile[[64, 64], pl.FP32, m1] = pl.add(x, acc)
                acc3: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(acc2)
            s: pl.Tile[[64, 64], pl.FP32, m3] = pl.sub(acc3, t)
            o = pl.store(s, [0, 0], out)
            return o

    after = run(Before)
    check(after, Expected, verified)
    loop = [s for s in stmt_list(after.get_function("k").body) if isinstance(s, ForStmt)][0]
    m = loop.iter_args[0].type.memref
    assert loop.iter_args[0].init_value.type.memref is m and loop.return_vars[0].type.memref is m


def test_if_result_shares_the_buffer_of_both_yielded_tiles(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            if n > 0:
                p = pl.exp(t)
                y = pl.yield_(p)
            else:
                q = pl.muls(t, 2.0)
                y = pl.yield_(q)
            o = pl.store(y, [0, 0], out)
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
                p: pl.Tile[[64, 64], pl.FP32, m1] = pl.exp(t)
                y: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(p)
            else:
                q: pl.Tile[[64, 64], pl.FP32, m1] = pl.muls(t, 2.0)
                y: pl.Tile[[64, 64], pl.FP32, m1] = pl.yield_(q)
            o = pl.store(y, [0, 0], out)
            return o

    check(run(Before), Expected, verified)


def test_only_kernels_get_buffers_and_planned_kernels_are_left_alone():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            o = pl.store(t, [0, 0], out)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.k(a, out)
            return r

    after = run(Prog)
    assert after.get_function("main") is Prog.get_function("main")
    assert after.get_function("k") is not Prog.get_function("k")
    assert run(after) is after  # a kernel that has MemRefs already is not planned again


def test_in_place_update_through_a_reshape_alias_copies_when_the_original_lives_on(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            r = pl.reshape(t, [32, 128])      # r dies at the assemble, but t (same bytes) is read later
            p = pl.load(a, [0, 0], [8, 128])
            r2 = pl.assemble(r, p, [0, 0])
            s = pl.reshape(t, [32, 128])
            d = pl.sub(r2, s)
            o = pl.store(d, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 4096, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, -1, 16384, 3)
            t: pl.Tile[[64, 64], pl.FP32, m0] = pl.load(a, [0, 0], [64, 64])
            r: pl.Tile[[32, 128], pl.FP32, m0] = pl.reshape(t, [32, 128])
            p: pl.Tile[[8, 128], pl.FP32, m1] = pl.load(a, [0, 0], [8, 128])
            r_copy: pl.Tile[[32, 128], pl.FP32, m2] = pl.move(r, target_memory=pl.MemorySpace.Vec)
            r2: pl.Tile[[32, 128], pl.FP32, m2] = pl.assemble(r_copy, p, [0, 0])
            s: pl.Tile[[32, 128], pl.FP32, m0] = pl.reshape(t, [32, 128])
            d: pl.Tile[[32, 128], pl.FP32, m3] = pl.sub(r2, s)
            o = pl.store(d, [0, 0], out)
            return o

    check(run(Before), Expected, verified)
