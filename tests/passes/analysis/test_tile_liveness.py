"""Tile liveness: live sets, interference (loop-aware, branch-aware), in-place rules, linear lifetimes."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.expr import Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ForStmt, stmt_list
from pypto.passes.analysis.buffer_sharing import inplace_safe
from pypto.passes.analysis.tile_liveness import analyze, linear_lifetimes, tile_uses


def tiles(fn: Function) -> dict[str, Var]:
    return {v.name: v for v in analyze(fn).defs}


def conflicts(fn: Function) -> set[frozenset[str]]:
    lv = analyze(fn)
    return {frozenset((a.name, b.name)) for a in lv.defs for b in lv.edges.get(a, ())}


def pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def test_straight_line_live_sets_and_interference():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        u = pl.exp(t)
        v = pl.add(u, t)
        r = pl.store(v, [0, 0], out)
        return r

    lv = analyze(k)
    assert [v.name for v in lv.defs] == ["t", "u", "v"]
    stmts = stmt_list(k.body)
    after = {s.var.name: {v.name for v in lv.live_after[id(s)]} for s in stmts if isinstance(s, AssignStmt)}
    assert after == {"t": {"t"}, "u": {"u", "t"}, "v": {"v"}, "r": set()}
    # u is defined while t is still needed; v may take the place of u or t (both die at the add)
    assert conflicts(k) == {pair("t", "u")}


def test_in_place_only_for_elementwise_ops_of_the_same_shape():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        s = pl.row_sum(t)              # a reduction reads a row after writing earlier results
        c = pl.load(a, [0, 0], [64, 64])
        d = pl.row_expand_sub(c, s)    # c has the result's shape: in place; s does not
        e = pl.row_sum(d)
        r = pl.store(e, [0, 0], out)
        return r

    got = conflicts(k)
    assert pair("s", "t") in got
    assert pair("d", "s") in got
    assert pair("c", "d") not in got
    assert pair("d", "e") in got
    v = tiles(k)
    calls = {s.var.name: s.value for s in stmt_list(k.body) if isinstance(s, AssignStmt)}
    assert inplace_safe(calls["d"], v["c"], v["d"].type)
    assert not inplace_safe(calls["d"], v["s"], v["d"].type)
    assert not inplace_safe(calls["s"], v["t"], v["s"].type)


def test_scratch_operands_and_dtype_changes_are_not_in_place():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[16, 16], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        x = pl.load(a, [0, 0], [16, 16])
        y = pl.load(a, [0, 0], [16, 16])
        tmp = pl.block.create_tile([16, 16], dtype=pl.INT32)
        z = pl.block.xor(x, y, tmp)
        h = pl.cast(z, pl.FP16)
        r = pl.store(pl.cast(h, pl.INT32), [0, 0], out)
        return r

    v = tiles(k)
    calls = {s.var.name: s.value for s in stmt_list(k.body) if isinstance(s, AssignStmt)}
    assert inplace_safe(calls["z"], v["x"], v["z"].type)
    assert not inplace_safe(calls["z"], v["tmp"], v["z"].type)
    assert not inplace_safe(calls["h"], v["z"], v["h"].type)  # 4-byte elements into 2-byte ones
    assert pair("tmp", "z") in conflicts(k)


def test_value_defined_before_a_loop_and_used_inside_is_live_across_it():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        z = pl.block.full([64, 64], dtype=pl.FP32, value=0.0)
        for i, (acc,) in pl.range(4, init_values=(z,)):
            x = pl.exp(t)                 # t's last use in the text, but the next iteration reads it again
            acc2 = pl.add(acc, x)
            acc3 = pl.yield_(acc2)
        r = pl.store(acc3, [0, 0], out)
        return r

    got = conflicts(k)
    assert pair("t", "x") in got
    assert pair("t", "acc2") in got
    assert pair("acc", "x") in got          # the iter_arg is still needed when x is computed
    assert pair("acc", "acc2") not in got   # the accumulation may update in place
    assert pair("x", "acc2") not in got
    assert pair("z", "acc") not in got      # the init value becomes the iter_arg


def test_iter_args_and_return_vars_are_defined_together():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        u = pl.exp(t)
        for i, (x, y) in pl.range(4, init_values=(t, u)):
            x2, y2 = pl.yield_(y, x)
        s = pl.add(x2, y2)
        r = pl.store(s, [0, 0], out)
        return r

    got = conflicts(k)
    assert pair("x", "y") in got
    assert pair("x2", "y2") in got


def test_if_branches_merge():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        u = pl.load(a, [0, 0], [64, 64])
        if n > 0:
            p = pl.exp(t)
            y = pl.yield_(p)
        else:
            q = pl.exp(u)
            y = pl.yield_(q)
        r = pl.store(y, [0, 0], out)
        return r

    got = conflicts(k)
    assert pair("t", "u") in got            # both live before the if (either branch may run)
    assert pair("p", "u") not in got        # u is dead once the then-branch runs
    assert pair("q", "t") not in got
    assert pair("p", "q") not in got
    assert tile_uses(stmt_list(k.body)[-2].value) == [tiles(k)["y"]]


def test_linear_lifetimes_extend_over_loops():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])                        # 0
        for i, (acc,) in pl.range(4, init_values=(t,)):        # 1
            x = pl.exp(t)                                       # 2
            acc2 = pl.add(acc, x)                               # 3
            acc3 = pl.yield_(acc2)                              # 4
        r = pl.store(acc3, [0, 0], out)                         # 5
        return r                                                # 6

    lt = linear_lifetimes(k)
    assert len(lt.stmts) == 7 and isinstance(lt.stmts[1], ForStmt)
    got = {v.name: lt.interval(v) for v in lt.order}
    assert got == {"t": (0, 4), "acc": (1, 3), "x": (2, 3), "acc2": (3, 4), "acc3": (4, 5)}
    assert [v.name for v in lt.live_at(3)] == ["t", "acc", "x", "acc2"]
