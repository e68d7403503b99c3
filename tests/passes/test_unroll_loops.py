"""UnrollLoops: BEFORE/EXPECTED compared structurally, outputs verified, behaviour checked with the
reference evaluator."""

from __future__ import annotations

import dataclasses

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.evaluate import evaluate
from pypto.ir.expr import Add, ConstInt, IterArg, Var, scalar_type
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, YieldStmt
from pypto.ir.walk import make_body, walk_stmts
from pypto.passes import PassError
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.unroll_loops import UnrollLoops, UnrollLoopsOptions
from tests.programs.roundtrip import roundtrip

IDX = DataType.INDEX


def run(fn: ir.Function, options: UnrollLoopsOptions | None = None) -> ir.Function:
    return UnrollLoops(options)(ir.Program("t", (fn,))).get_function(fn.name)


def same(after: ir.Function, expected: ir.Function) -> None:
    ir.assert_structural_equal(dataclasses.replace(after, name="f"), dataclasses.replace(expected, name="f"),
                               enable_auto_mapping=True)


def unroll(fn: ir.Function, verified, inputs=()) -> ir.Function:
    out = run(fn)
    verified(ir.Program("t", (out,)), ssa=False)
    assert not any(isinstance(s, ForStmt) and s.kind is ir.ForKind.Unroll and s.chunk is None
                   for s in walk_stmts(out.body))
    for args in inputs:
        assert evaluate(out, args) == evaluate(fn, args)
    roundtrip(out)
    return out


def test_loop_var_becomes_constants_and_reassignment_keeps_the_variable(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(3):
            acc = acc + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        acc = acc + 0
        acc = acc + 1
        acc = acc + 2
        return acc

    same(unroll(before, verified, [(5,)]), expected)


def test_body_locals_get_fresh_variables_per_copy(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(1, 7, 3):
            t = x * i
            acc = acc + t
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        t0 = x * 1
        acc = acc + t0
        t1 = x * 4
        acc = acc + t1
        return acc

    out = unroll(before, verified, [(3,)])
    same(out, expected)
    t_vars = [s.var for s in ir.stmt_list(out.body) if isinstance(s, AssignStmt) and s.var.name == "t"]
    assert len(t_vars) == 2 and t_vars[0] is not t_vars[1]


def test_variable_used_after_the_loop_keeps_identity(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i in pl.unroll(2):
            last = x + i
        return last

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        last = x + 0
        last = x + 1
        return last

    same(unroll(before, verified, [(4,)]), expected)


def test_nested_unroll_and_inner_range_loop(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(2):
            for j in pl.unroll(2):
                acc = acc + i * 10 + j
            for k in pl.range(n):
                acc = acc + k
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        acc = acc + 0 * 10 + 0
        acc = acc + 0 * 10 + 1
        for k in pl.range(n):
            acc = acc + k
        acc = acc + 1 * 10 + 0
        acc = acc + 1 * 10 + 1
        for k2 in pl.range(n):
            acc = acc + k2
        return acc

    out = unroll(before, verified, [(1, 3), (2, 0)])
    same(out, expected)  # constant subexpressions are folded, as the parser folds them
    loops = [s for s in ir.stmt_list(out.body) if isinstance(s, ForStmt)]
    assert len(loops) == 2 and loops[0].loop_var is not loops[1].loop_var


def test_loop_var_reassigned_in_body(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(2):
            i = i + 10  # noqa: PLW2901
            acc = acc + i
        return acc

    @pl.function
    def expected(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        i0: pl.Scalar[pl.INDEX] = 0
        i0 = i0 + 10
        acc = acc + i0
        i1: pl.Scalar[pl.INDEX] = 1
        i1 = i1 + 10
        acc = acc + i1
        return acc

    same(unroll(before, verified, [(2,)]), expected)


def test_tensor_body_and_zero_trip_unroll(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = a
        for i in pl.unroll(2):
            t = pl.mul(a, 2.0)
            y = pl.add(y, t)
        for i in pl.unroll(5, 5):
            y = pl.add(y, y)
        return y

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = a
        t0 = pl.mul(a, 2.0)
        y = pl.add(y, t0)
        t1 = pl.mul(a, 2.0)
        y = pl.add(y, t1)
        return y

    same(unroll(before, verified), expected)


def test_then_ssa(verified):
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(3):
            if acc > 4:
                acc = acc - i
            else:
                acc = acc * 2
        return acc

    out = ConvertToSSA()(UnrollLoops()(ir.Program("t", (before,))))
    verified(out)
    for x in range(-3, 9):
        assert evaluate(out, [x]) == evaluate(before, [x])


def test_iter_args_are_threaded(verified):
    # the parser has no unroll with init_values; the pass still handles SSA-form iter_args
    x, i, r = Var("x", scalar_type(IDX)), Var("i", scalar_type(IDX)), Var("r", scalar_type(IDX))
    acc = IterArg("acc", scalar_type(IDX), x)
    nxt = Var("nxt", scalar_type(IDX))
    body = make_body([AssignStmt(nxt, Add(acc, i, IDX)), YieldStmt((nxt,))])
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (acc,), body, (r,), ir.ForKind.Unroll)
    fn = ir.Function("f", (x,), (), (scalar_type(IDX),), make_body([loop, ReturnStmt((r,))]))
    out = run(fn)
    verified(ir.Program("t", (out,)))
    assert evaluate(out, [10]) == (16,)
    nxts = [s.var for s in walk_stmts(out.body) if isinstance(s, AssignStmt) and s.var.name == "nxt"]
    assert len(set(nxts)) == 4  # SSA stays SSA


def test_chunked_unroll_is_left_alone():
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = a
        with pl.auto_incore():
            for i in pl.unroll(8, chunk=4):
                y = pl.add(y, a)
        return y

    assert run(before) is before


# ---------------------------------------------------------------------------------------------
# errors


def test_error_break_in_unroll():
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(4):
            if acc > 3:
                break
            acc = acc + 1
        return acc

    with pytest.raises(PassError, match="'break' inside a pl.unroll loop") as ei:
        run(before)
    assert ei.value.lineno is not None and "pl.range" in ei.value.hint


def test_error_too_many_copies():
    @pl.function
    def before(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.unroll(100):
            acc = acc + i
        return acc

    with pytest.raises(PassError, match="100 iterations exceeds the limit of 10"):
        run(before, UnrollLoopsOptions(max_copies=10))


def test_error_non_constant_bounds_and_zero_step():
    x, i = Var("x", scalar_type(IDX)), Var("i", scalar_type(IDX))
    span = ir.Span("k.py", 2, 4)
    loop = ForStmt(i, ConstInt(0), x, ConstInt(1), (), AssignStmt(Var("t", scalar_type(IDX)), i), (),
                   ir.ForKind.Unroll, span=span)
    fn = ir.Function("f", (x,), (), (), loop)
    with pytest.raises(PassError, match="constant bounds; its stop") as ei:
        run(fn)
    assert ei.value.span == span
    zero = dataclasses.replace(loop, stop=ConstInt(4), step=ConstInt(0))
    with pytest.raises(PassError, match="step cannot be zero"):
        run(dataclasses.replace(fn, body=zero))
    huge = dataclasses.replace(loop, start=ConstInt(-(2**63)), stop=ConstInt(2**63 - 1), step=ConstInt(1))
    with pytest.raises(PassError, match="18446744073709551615 iterations exceeds"):  # (len() would overflow)
        run(dataclasses.replace(fn, body=huge))
