"""AllocateMemoryAddr: addresses per space from 0 in id order, aligned; MemRefs rewritten; report."""

from __future__ import annotations

import dataclasses
import json
import os

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import Call, MemRef, Var
from pypto.ir.stmt import AssignStmt, ForStmt, stmt_list
from pypto.ir.types import TileType
from pypto.ir.walk import walk_stmts
from pypto.passes.allocate_memory_addr import AllocateMemoryAddr
from pypto.passes.base import PassContext
from pypto.passes.init_memref import InitMemRef
from pypto.passes.memory_reuse import MemoryReuse
from pypto.target import ascend910b, cpu
from tests.programs.roundtrip import roundtrip


def plan(prog, target=None, output_dir=None):
    ctx = PassContext(target=target or ascend910b(), output_dir=output_dir)
    out = AllocateMemoryAddr()(MemoryReuse()(InitMemRef()(prog, ctx), ctx), ctx)
    return out, ctx


def check(after, expected, verified):
    verified(after)
    roundtrip(after)
    ir.assert_structural_equal(after, expected, enable_auto_mapping=True)


def test_each_space_is_laid_out_from_zero_in_id_order(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            am = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al = pl.move(am, target_memory=pl.MemorySpace.Left)
            br = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c = pl.matmul(al, br)
            v = pl.move(c, target_memory=pl.MemorySpace.Vec)
            w = pl.exp(v)
            u = pl.add(w, v)
            o = pl.store(u, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, 0, 8192, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Mat, 8192, 8192, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Left, 0, 8192, 2)
            m3: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Right, 0, 8192, 3)
            m4: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Acc, 0, 16384, 4)
            m5: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 16384, 5)
            m6: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 16384, 16384, 6)
            am: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m0] = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            bm: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Mat, m1] = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Left, m2] = pl.move(am, target_memory=pl.MemorySpace.Left)
            br: pl.Tile[[64, 64], pl.FP16, pl.MemorySpace.Right, m3] = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc, m4] = pl.matmul(al, br)
            v: pl.Tile[[64, 64], pl.FP32, m5] = pl.move(c, target_memory=pl.MemorySpace.Vec)
            w: pl.Tile[[64, 64], pl.FP32, m6] = pl.exp(v)
            u: pl.Tile[[64, 64], pl.FP32, m5] = pl.add(w, v)
            o = pl.store(u, [0, 0], out)
            return o

    check(plan(Before)[0], Expected, verified)


def test_addresses_are_aligned_as_the_target_says(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[1, 3], pl.FP32]]) -> pl.Tensor[[1, 3], pl.FP32]:
            x = pl.load(a, [0, 0], [1, 3])
            y = pl.load(a, [1, 0], [1, 3])
            z = pl.load(a, [2, 0], [1, 3])
            s = pl.add(pl.add(x, y), z)
            o = pl.store(s, [0, 0], out)
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[1, 3], pl.FP32]]) -> pl.Tensor[[1, 3], pl.FP32]:
            m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 12, 0)
            m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 32, 12, 1)
            m2: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 64, 12, 2)
            x: pl.Tile[[1, 3], pl.FP32, m0] = pl.load(a, [0, 0], [1, 3])
            y: pl.Tile[[1, 3], pl.FP32, m1] = pl.load(a, [1, 0], [1, 3])
            z: pl.Tile[[1, 3], pl.FP32, m2] = pl.load(a, [2, 0], [1, 3])
            t: pl.Tile[[1, 3], pl.FP32, m0] = pl.add(x, y)
            s: pl.Tile[[1, 3], pl.FP32, m0] = pl.add(t, z)
            o = pl.store(s, [0, 0], out)
            return o

    check(plan(Before)[0], Expected, verified)
    wide = dataclasses.replace(ascend910b(), alloc_alignment=128)
    after, _ = plan(Before, wide)
    allocs = [s.var for s in stmt_list(after.get_function("k").body) if isinstance(getattr(s, "var", None), MemRef)]
    assert [(m.addr, m.size) for m in allocs] == [(0, 12), (128, 12), (256, 12)]


def test_every_memref_reference_is_the_allocated_object(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            big = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(4, init_values=(big,)):
                part = pl.load(a, [0, 0], [16, 64])
                acc2 = pl.assemble(acc, part, [16, 0])
                if i < n:
                    y = pl.yield_(acc2)
                else:
                    e = pl.exp(acc2)
                    y = pl.yield_(e)
                acc3 = pl.yield_(y)
            o = pl.store(acc3, [0, 0], out)
            return o

    after, _ = plan(Before)
    verified(after)
    roundtrip(after)
    k = after.get_function("k")
    allocated = {s.var for s in stmt_list(k.body) if isinstance(getattr(s, "var", None), MemRef)}
    assert all(m.addr >= 0 and m.addr % 32 == 0 for m in allocated)
    seen: list[MemRef] = []
    for s in walk_stmts(k):
        vars_: list[Var] = []
        if isinstance(s, AssignStmt):
            vars_.append(s.var)
            if isinstance(s.value, Call) and isinstance(s.value.type, TileType) and s.value.type.memref is not None:
                seen.append(s.value.type.memref)  # assemble's result type names its target's buffer
        if isinstance(s, ForStmt):
            vars_ += [*s.iter_args, *s.return_vars, *(a.init_value for a in s.iter_args)]
        if hasattr(s, "return_vars") and not isinstance(s, ForStmt):
            vars_ += list(s.return_vars)
        seen += [v.type.memref for v in vars_ if isinstance(v.type, TileType)]
    assert seen and all(m in allocated for m in seen)
    assert len({id(m) for m in seen}) == len(allocated) == 2


def test_memory_report_lists_buffers_tiles_and_lifetimes(tmp_path, verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            s = pl.row_sum(t)
            for i, (acc,) in pl.range(4, init_values=(t,)):
                x = pl.row_expand_sub(acc, s)
                acc2 = pl.yield_(x)
            o = pl.store(acc2, [0, 0], out)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.k(a, out)
            return r

    after, ctx = plan(Before, output_dir=tmp_path)
    verified(after)
    rep = ctx.reports["memory"]
    assert json.loads((tmp_path / "report" / "memory.json").read_text()) == rep
    assert json.loads(json.dumps(rep)) == rep
    assert (rep["version"], rep["target"], rep["alignment"]) == (1, "Ascend910B", 32)
    (kern,) = rep["kernels"]  # orchestration functions get no buffers
    line = Before.get_function("k").span.begin_line
    assert kern["function"] == "k" and kern["source"] == f"{os.path.basename(__file__)}:{line}"
    assert [(s["index"], s["kind"], s["line"] - line) for s in kern["statements"]] == [
        (0, "assign", 1), (1, "assign", 2), (2, "for", 3), (3, "assign", 4), (4, "yield", 5), (5, "assign", 6),
        (6, "return", 7)]
    assert kern["statements"][3]["text"] == "x = pl.block.row_expand_sub(acc, s)"
    (vec,) = kern["spaces"]
    assert {k: vec[k] for k in ("space", "capacity", "used", "peak_live", "peak_at", "fits")} == {
        "space": "Vec", "capacity": 196608, "used": 16640, "peak_live": 16640, "peak_at": 1, "fits": True}
    b0, b1 = vec["buffers"]
    assert {k: b0[k] for k in ("id", "name", "addr", "size", "end", "lifetime")} == {
        "id": 0, "name": "mem_vec_0", "addr": 0, "size": 16384, "end": 16384,
        "lifetime": {"start": 0, "end": 5, "intervals": [[0, 5]]}}
    assert [(t["name"], t["shape"], t["dtype"], t["bytes"], t["lifetime"], t["line"] - line) for t in b0["tiles"]] == [
        ("t", [64, 64], "FP32", 16384, [0, 2], 1), ("acc", [64, 64], "FP32", 16384, [2, 3], 3),
        ("x", [64, 64], "FP32", 16384, [3, 4], 4), ("acc2", [64, 64], "FP32", 16384, [4, 5], 5)]
    assert b0["tiles"][0]["source"] == f"{os.path.basename(__file__)}:{line + 1}"
    assert (b1["addr"], b1["size"], b1["lifetime"]["intervals"]) == (16384, 256, [[1, 4]])  # s: live across the loop
    assert [t["name"] for t in b1["tiles"]] == ["s"]


def test_functions_without_tiles_and_second_runs_change_nothing():
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

    after, ctx = plan(Prog, cpu())
    assert after.get_function("main") is Prog.get_function("main")
    assert AllocateMemoryAddr()(after, ctx) is after
    assert ctx.reports["memory"]["target"] == "CPU"
