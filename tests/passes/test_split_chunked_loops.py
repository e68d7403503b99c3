"""SplitChunkedLoops: BEFORE/EXPECTED compared structurally, outputs verified (SSA), behaviour checked
with the reference evaluator on random bounds, steps and chunk sizes (static and dynamic)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.evaluate import evaluate
from pypto.ir.expr import Add, ConstInt, Var, scalar_type
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, ScopeStmt
from pypto.ir.verifier import verify
from pypto.ir.walk import make_body, walk_stmts
from pypto.passes import PassError
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.loop_bounds import range_len
from pypto.passes.split_chunked_loops import SplitChunkedLoops, trip_count
from tests.programs.roundtrip import roundtrip

IDX = DataType.INDEX
OUTER, INNER, REM = pl.LoopOrigin.ChunkOuter, pl.LoopOrigin.ChunkInner, pl.LoopOrigin.ChunkRemainder


def run(fn: ir.Function) -> ir.Function:
    return SplitChunkedLoops()(ir.Program("t", (fn,))).get_function(fn.name)


def same(after: ir.Function, expected: ir.Function) -> None:
    ir.assert_structural_equal(dataclasses.replace(after, name="f"), dataclasses.replace(expected, name="f"),
                               enable_auto_mapping=True)


def split(fn: ir.Function, verified) -> ir.Function:
    ssa = ConvertToSSA()(ir.Program("t", (fn,))).get_function(fn.name)
    out = run(ssa)
    verified(ir.Program("t", (out,)))
    assert not any(isinstance(s, ForStmt) and s.chunk is not None for s in walk_stmts(out.body))
    roundtrip(out)
    return out


def test_static_without_remainder(verified):
    @pl.function
    def before(a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.auto_incore():
            for i in pl.parallel(0, 64, 1, chunk=8):
                row = pl.view(a, [1, 16], [i, 0])
                out = pl.assemble(out, pl.exp(row), [i, 0])
        return out

    @pl.function
    def expected(a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.auto_incore():
            for i_out, (o1,) in pl.range(8, init_values=(out,), origin=OUTER):
                for i_in, (o2,) in pl.parallel(8, init_values=(o1,), origin=INNER):
                    i = i_out * 8 + i_in
                    row = pl.view(a, [1, 16], [i, 0])
                    o3 = pl.assemble(o2, pl.exp(row), [i, 0])
                    o4 = pl.yield_(o3)
                o5 = pl.yield_(o4)
        return o5

    same(split(before, verified), expected)


def test_static_with_remainder_and_start_step(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.range(2, 24, 2, chunk=4):  # 11 iterations: 2 chunks of 4, remainder 3
                acc = acc * 3 + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i_out, (a1,) in pl.range(2, init_values=(acc,), origin=OUTER):
                for i_in, (a2,) in pl.range(4, init_values=(a1,), origin=INNER):
                    i = 2 + (i_out * 4 + i_in) * 2
                    a3 = a2 * 3 + i
                    a4 = pl.yield_(a3)
                a5 = pl.yield_(a4)
            for i_rem, (a6,) in pl.range(3, init_values=(a5,), origin=REM):
                i2 = 2 + (8 + i_rem) * 2
                a7 = a6 * 3 + i2
                a8 = pl.yield_(a7)
        return a8

    out = split(before, verified)
    same(out, expected)
    assert evaluate(out, [5]) == evaluate(before, [5])


def test_static_shorter_than_one_chunk(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.range(3, chunk=4):
                acc = acc + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i_rem, (a1,) in pl.range(3, init_values=(acc,), origin=REM):
                i = i_rem
                a2 = a1 + i
                a3 = pl.yield_(a2)
        return a3

    same(split(before, verified), expected)


def test_dynamic_trip_count(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.range(n, chunk=4):
                acc = acc + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            i__trips = pl.max(0, n)
            for i_out, (a1,) in pl.range(i__trips // 4, init_values=(acc,), origin=OUTER):
                for i_in, (a2,) in pl.range(4, init_values=(a1,), origin=INNER):
                    i = i_out * 4 + i_in
                    a3 = a2 + i
                    a4 = pl.yield_(a3)
                a5 = pl.yield_(a4)
            for i_rem, (a6,) in pl.range(i__trips % 4, init_values=(a5,), origin=REM):
                i2 = i__trips // 4 * 4 + i_rem
                a7 = a6 + i2
                a8 = pl.yield_(a7)
        return a8

    same(split(before, verified), expected)


def test_no_carried_values_and_zero_trips(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.auto_incore():
            for i in pl.parallel(0, 12, 1, chunk=8):
                t = pl.tensor.read(a, [i])
                pl.tensor.write(o, [i], t)
            for j in pl.parallel(5, 5, 1, chunk=8):
                t2 = pl.tensor.read(a, [j])
        return o

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.auto_incore():
            for i_out in pl.range(1, origin=OUTER):
                for i_in in pl.parallel(8, origin=INNER):
                    i = i_out * 8 + i_in
                    t = pl.tensor.read(a, [i])
                    pl.tensor.write(o, [i], t)
            for i_rem in pl.parallel(4, origin=REM):
                i2 = 8 + i_rem
                t3 = pl.tensor.read(a, [i2])
                pl.tensor.write(o, [i2], t3)
        return o

    same(split(before, verified), expected)


def test_nested_chunked_loops(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.parallel(0, 6, 1, chunk=4):
                for j in pl.parallel(0, n, 1, chunk=2):
                    acc = acc + i * 10 + j
        return acc

    out = split(before, verified)
    origins = [s.origin for s in walk_stmts(out.body) if isinstance(s, ForStmt)]
    # i: outer, inner{ j: trips, outer, inner, remainder }, remainder{ j again, fresh copy }
    assert origins == [OUTER, INNER, OUTER, INNER, REM, REM, OUTER, INNER, REM]
    for n in (-1, 0, 1, 2, 5):
        assert evaluate(out, [3, n]) == evaluate(before, [3, n])


def test_unroll_kind_inner_and_dynamic_remainder(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        with pl.auto_incore():
            for i in pl.unroll(0, 8, 1, chunk=4):
                acc = acc + i
            for k in pl.unroll(0, 10, 1, chunk=4):
                acc = acc * 2 + k
        return acc

    out = split(before, verified)
    kinds = [(s.origin, s.kind) for s in walk_stmts(out.body) if isinstance(s, ForStmt)]
    # the unroll inner loops (and the constant remainder of k) are expanded at once
    assert kinds == [(OUTER, pl.ForKind.Sequential), (OUTER, pl.ForKind.Sequential)]
    for x in (0, 1, 5):
        assert evaluate(out, [x, 0]) == evaluate(before, [x, 0])

    # pl.unroll needs constant bounds, so a run-time remainder only comes from IR built otherwise
    x, n, i, acc = (Var(v, scalar_type(IDX)) for v in ("x", "n", "i", "acc"))
    body = AssignStmt(acc, Add(ir.Mul(acc, ConstInt(2), IDX), i, IDX))
    loop = ForStmt(i, ConstInt(0), n, ConstInt(1), (), body, (), pl.ForKind.Unroll, chunk=4)
    fn = ir.Function("f", (x, n), (), (scalar_type(IDX),),
                     make_body([AssignStmt(acc, x), ScopeStmt(pl.ScopeKind.AutoInCore, loop), ReturnStmt((acc,))]))
    out = split(fn, verified)
    kinds = [(s.origin, s.kind) for s in walk_stmts(out.body) if isinstance(s, ForStmt)]
    assert kinds == [(OUTER, pl.ForKind.Sequential), (REM, pl.ForKind.Sequential)]
    for n_ in (0, 3, 4, 9):
        assert evaluate(out, [1, n_]) == evaluate(fn, [1, n_])


def test_trip_count_expressions():
    n = Var("n", scalar_type(IDX))
    assert trip_count(ConstInt(3), ConstInt(20), ConstInt(4)) == ConstInt(5)
    assert trip_count(ConstInt(20), ConstInt(3), ConstInt(-4)) == ConstInt(5)
    for step in (1, 3, -1, -2):
        e = trip_count(ConstInt(2), n, ConstInt(step))
        for v in range(-8, 9):
            got = evaluate(ir.Function("f", (n,), (), (scalar_type(IDX),), ReturnStmt((e,))), [v])[0]
            assert got == len(range(2, v, step)), (step, v)
    # all at run time, bounds at the int64 edges (counts past INT64_MAX saturate); the backends
    # compute the UINT64 differences wrapping, test_loop_bounds.py runs them
    a, b, c = (Var(k, scalar_type(IDX)) for k in "abc")
    f = ir.Function("f", (a, b, c), (), (scalar_type(IDX),), ReturnStmt((trip_count(a, b, c),)))
    lo, hi = -(2**63), 2**63 - 1
    for args in [(0, 10, 3), (10, 0, -3), (0, 10, -1), (lo, hi, 1), (hi, lo, -1), (lo, hi, 2), (hi, lo, lo),
                 (0, hi, 2**62), (5, lo, -(2**62)), (hi - 5, hi, 2), (3, 3, 1), (lo, hi, hi)]:
        assert evaluate(f, list(args))[0] == min(range_len(*args), hi), args
    assert trip_count(ConstInt(lo), ConstInt(hi), ConstInt(1)) == ConstInt(hi)


# ---------------------------------------------------------------------------------------------
# errors


def _chunked(chunk: int = 4, policy: str = "leading_full", in_scope: bool = True) -> ir.Function:
    x, i, y = Var("x", scalar_type(IDX)), Var("i", scalar_type(IDX)), Var("y", scalar_type(IDX))
    span = ir.Span("k.py", 5, 8)
    loop = ForStmt(i, ConstInt(0), x, ConstInt(1), (), AssignStmt(y, Add(i, x, IDX)), (), chunk=chunk,
                   chunk_policy=policy, span=span)
    body = ScopeStmt(pl.ScopeKind.AutoInCore, loop) if in_scope else loop
    return ir.Function("f", (x,), (), (scalar_type(IDX),), make_body([body, ReturnStmt((x,))]))


def test_error_chunk_outside_auto_incore():
    with pytest.raises(PassError, match="must be inside `with pl.auto_incore\\(\\):`") as ei:
        run(_chunked(in_scope=False))
    assert ei.value.span.begin_line == 5


def test_error_bad_chunk_and_policy():
    with pytest.raises(PassError, match="chunk must be a positive integer"):
        run(_chunked(chunk=0))
    with pytest.raises(PassError, match="unknown chunk policy 'round_robin'"):
        run(_chunked(policy="round_robin"))


# ---------------------------------------------------------------------------------------------
# behaviour


@st.composite
def chunk_cases(draw):
    start = draw(st.integers(-5, 5))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    return start, step, draw(st.integers(1, 5)), draw(st.sampled_from(["const", "dyn_stop", "dyn_all"]))


@settings(max_examples=60, deadline=None)
@given(chunk_cases(), st.lists(st.tuples(st.integers(-12, 12), st.integers(-6, 6)), min_size=4, max_size=4))
def test_random_bounds_keep_the_iteration_sequence(case, inputs):
    start, step, chunk, mode = case
    x, n, s = Var("x", scalar_type(IDX)), Var("n", scalar_type(IDX)), Var("s", scalar_type(IDX))
    i, acc = Var("i", scalar_type(IDX)), Var("acc", scalar_type(IDX))
    stop = n if mode != "const" else ConstInt(7, IDX)
    stp = s if mode == "dyn_all" else ConstInt(step, IDX)
    # acc = acc * 3 + i (order-sensitive), then a sentinel: the result encodes the exact sequence
    body = AssignStmt(acc, Add(ir.Mul(acc, ConstInt(3, IDX), IDX), i, IDX))
    loop = ForStmt(i, ConstInt(start, IDX), stop, stp, (), body, (), chunk=chunk)
    fn = ir.Function("f", (x, n, s), (), (scalar_type(IDX),),
                     make_body([AssignStmt(acc, x), ScopeStmt(pl.ScopeKind.AutoInCore, loop), ReturnStmt((acc,))]))
    out = run(ConvertToSSA()(ir.Program("t", (fn,))).get_function("f"))
    assert not verify(ir.Program("t", (out,)))
    for stop_v, step_v in inputs:
        if mode == "dyn_all" and step_v == 0:
            continue
        args = [1, stop_v, step_v if mode == "dyn_all" else step]
        assert evaluate(out, args) == evaluate(fn, args), (case, args)
