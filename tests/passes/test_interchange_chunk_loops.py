"""InterchangeChunkLoops: BEFORE/EXPECTED compared structurally (BEFORE goes through ConvertToSSA and
SplitChunkedLoops), outputs verified (SSA), order-independent results checked with the evaluator."""

from __future__ import annotations

import dataclasses

import pypto.language as pl
from pypto import ir
from pypto.ir.evaluate import evaluate
from pypto.ir.stmt import ForStmt, ScopeStmt
from pypto.ir.walk import walk_stmts
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.interchange_chunk_loops import InterchangeChunkLoops
from pypto.passes.split_chunked_loops import SplitChunkedLoops
from tests.programs.roundtrip import roundtrip

OUTER, INNER, REM = pl.LoopOrigin.ChunkOuter, pl.LoopOrigin.ChunkInner, pl.LoopOrigin.ChunkRemainder


def prepare(fn: ir.Function) -> ir.Function:
    return SplitChunkedLoops()(ConvertToSSA()(ir.Program("t", (fn,)))).get_function(fn.name)


def run(fn: ir.Function) -> ir.Function:
    return InterchangeChunkLoops()(ir.Program("t", (fn,))).get_function(fn.name)


def same(after: ir.Function, expected: ir.Function) -> None:
    ir.assert_structural_equal(dataclasses.replace(after, name="f"), dataclasses.replace(expected, name="f"),
                               enable_auto_mapping=True)


def interchange(fn: ir.Function, verified) -> ir.Function:
    out = run(prepare(fn))
    verified(ir.Program("t", (out,)))
    assert not any(isinstance(s, ScopeStmt) and s.kind is pl.ScopeKind.AutoInCore for s in walk_stmts(out.body))
    roundtrip(out)
    return out


def test_single_parallel_chunk_loop_inner_in_incore_and_remainder_too(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        b = pl.mul(a, 2.0)
        with pl.auto_incore():
            c = pl.add(b, a)
            for i in pl.parallel(0, 12, 1, chunk=8):
                t = pl.tensor.read(c, [i])
                pl.tensor.write(o, [i], t)
        return o

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        b = pl.mul(a, 2.0)
        c = pl.add(b, a)
        for i_out in pl.range(1, origin=OUTER):
            with pl.incore():
                for i_in in pl.parallel(8, origin=INNER):
                    i = i_out * 8 + i_in
                    t = pl.tensor.read(c, [i])
                    pl.tensor.write(o, [i], t)
        with pl.incore():
            for i_rem in pl.parallel(4, origin=REM):
                i2 = 8 + i_rem
                t2 = pl.tensor.read(c, [i2])
                pl.tensor.write(o, [i2], t2)
        return o

    same(interchange(before, verified), expected)


def test_two_level_parallel_chain_outers_on_top_with_carried_tensor(verified):
    @pl.function
    def before(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.auto_incore():
            for i in pl.parallel(0, 64, 1, chunk=8):
                for j in pl.parallel(0, 32, 1, chunk=4):
                    t = pl.view(x, [1, 1], [i, j])
                    out = pl.assemble(out, pl.exp(t), [i, j])
        return out

    @pl.function
    def expected(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for i_out, (o1,) in pl.range(8, init_values=(out,), origin=OUTER):
            for j_out, (o2,) in pl.range(8, init_values=(o1,), origin=OUTER):
                with pl.incore():
                    for i_in, (o3,) in pl.parallel(8, init_values=(o2,), origin=INNER):
                        i = i_out * 8 + i_in
                        for j_in, (o4,) in pl.parallel(4, init_values=(o3,), origin=INNER):
                            j = j_out * 4 + j_in
                            t = pl.view(x, [1, 1], [i, j])
                            o5 = pl.assemble(o4, pl.exp(t), [i, j])
                            o6 = pl.yield_(o5)
                        o7 = pl.yield_(o6)
                o8 = pl.yield_(o7)
            o9 = pl.yield_(o8)
        return o9

    same(interchange(before, verified), expected)


def test_sequential_chunk_loops_keep_their_order_and_get_no_scope(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.range(0, 8, 1, chunk=4):
                acc = acc * 2 + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i_out, (a1,) in pl.range(2, init_values=(acc,), origin=OUTER):
            for i_in, (a2,) in pl.range(4, init_values=(a1,), origin=INNER):
                i = i_out * 4 + i_in
                a3 = a2 * 2 + i
                a4 = pl.yield_(a3)
            a5 = pl.yield_(a4)
        return a5

    same(interchange(before, verified), expected)


def test_parallel_chain_below_sequential_loop_is_still_processed(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for b in pl.range(n):
                for i in pl.parallel(0, 8, 1, chunk=4):
                    for j in pl.parallel(0, 4, 1, chunk=2):
                        acc = acc + i * 10 + j
        return acc

    out = interchange(before, verified)
    loop = ir.stmt_list(out.body)[1]
    assert isinstance(loop, ForStmt) and loop.origin is pl.LoopOrigin.Original
    order = [(s.origin, s.kind) for s in walk_stmts(loop.body) if isinstance(s, ForStmt)]
    P, S = pl.ForKind.Parallel, pl.ForKind.Sequential
    assert order == [(OUTER, S), (OUTER, S), (INNER, P), (INNER, P)]
    scopes = [s for s in walk_stmts(loop.body) if isinstance(s, ScopeStmt)]
    assert len(scopes) == 1 and scopes[0].kind is pl.ScopeKind.InCore
    for n in (0, 1, 3):  # a sum: the same in any order
        assert evaluate(out, [2, n]) == evaluate(before, [2, n])


def test_chain_stops_at_a_remainder(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.parallel(0, 8, 1, chunk=4):
                for j in pl.parallel(0, 5, 1, chunk=2):  # remainder 1: not a perfect chain
                    acc = acc + i * 10 + j
        return acc

    out = interchange(before, verified)
    top = ir.stmt_list(out.body)[1]
    assert isinstance(top, ForStmt) and top.origin is OUTER
    scope = ir.stmt_list(top.body)[0]
    assert isinstance(scope, ScopeStmt) and scope.kind is pl.ScopeKind.InCore
    assert evaluate(out, [1, 0]) == evaluate(before, [1, 0])


def test_function_without_auto_incore_is_unchanged():
    @pl.function
    def f(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        y = x + 1
        return y

    assert run(f) is f
