"""CtrlFlowTransform: break/continue removed; BEFORE/EXPECTED compared structurally, outputs verified
(non-SSA rules), behaviour checked with the reference evaluator (fixed and random programs)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.evaluate import evaluate
from pypto.ir.expr import ConstInt, Var, scalar_type
from pypto.ir.stmt import BreakStmt, ContinueStmt, ForStmt, ReturnStmt
from pypto.ir.walk import make_body, walk_stmts
from pypto.passes import PassError
from pypto.passes.ctrl_flow_transform import CtrlFlowTransform, CtrlFlowTransformOptions, parallel_assign
from tests.programs.random_programs import results, scalar_programs
from tests.programs.roundtrip import roundtrip


def run(fn: ir.Function, options: CtrlFlowTransformOptions | None = None) -> ir.Function:
    return CtrlFlowTransform(options)(ir.Program("t", (fn,))).get_function(fn.name)


def same(after: ir.Function, expected: ir.Function) -> None:
    ir.assert_structural_equal(dataclasses.replace(after, name="f"), dataclasses.replace(expected, name="f"),
                               enable_auto_mapping=True)


def transform(fn: ir.Function, verified, inputs=()) -> ir.Function:
    out = run(fn)
    verified(ir.Program("t", (out,)), ssa=False)
    assert not any(isinstance(s, (BreakStmt, ContinueStmt)) for s in walk_stmts(out.body))
    for args in inputs:
        assert evaluate(out, args) == evaluate(fn, args), args
    roundtrip(out)
    return out


ARGS2 = [(n, x) for n in (-1, 0, 1, 3, 7) for x in (-5, 0, 3, 40)]


def test_continue_moves_rest_into_else(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if i % 2 == 0:
                continue
            acc = acc + i
            acc = acc * 2
        return acc

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if not (i % 2 == 0):
                acc = acc + i
                acc = acc * 2
        return acc

    same(transform(before, verified, ARGS2), expected)


def test_continue_after_work_in_branch_and_else_kept(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if i > 2:
                acc = acc + 100
                continue
            else:
                acc = acc - 1
            acc = acc * 2
        return acc

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if i > 2:
                acc = acc + 100
            else:
                acc = acc - 1
                acc = acc * 2
        return acc

    same(transform(before, verified, ARGS2), expected)


def test_nested_conditional_continue_duplicates_rest(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if i > 1:
                if acc > 10:
                    continue
            acc = acc + i
        return acc

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            if i > 1:
                if not (acc > 10):
                    acc = acc + i
            else:
                acc = acc + i
        return acc

    same(transform(before, verified, ARGS2), expected)


def test_break_in_for_becomes_while_with_flag_and_counter(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(1, n, 2):
            if acc > 100:
                break
            acc = acc * 2 + i
        return acc

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        __break_0 = False
        i__ctr: pl.Scalar[pl.INDEX] = 1
        i__more = i__ctr < n
        while not __break_0 and i__more:
            i = i__ctr
            if acc > 100:
                __break_0 = True
            else:
                acc = acc * 2 + i
            i__next = i__ctr + 2
            i__more = i__next > i__ctr and i__next < n  # a sum that wrapped went past n
            i__ctr = i__next
        return acc

    same(transform(before, verified, ARGS2), expected)


def test_break_with_negative_and_dynamic_step(verified):
    @pl.function
    def neg(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n, -3, -1):
            acc = acc + i
            if acc > 20:
                break
        return acc

    @pl.function
    def neg_expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        __break_0 = False
        i__ctr: pl.Scalar[pl.INDEX] = n
        i__more = i__ctr > -3
        while not __break_0 and i__more:
            i = i__ctr
            acc = acc + i
            if acc > 20:
                __break_0 = True
            i__next = i__ctr + -1
            i__more = i__next < i__ctr and i__next > -3
            i__ctr = i__next
        return acc

    same(transform(neg, verified, ARGS2), neg_expected)

    @pl.function
    def dyn(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        for i in pl.range(0, 10 * x, x):  # step sign known only at run time
            if i == n:
                break
            acc = acc + 1
        return acc

    out = transform(dyn, verified, [(n, x) for n in (-4, 0, 6, 30) for x in (-3, -1, 1, 2, 3)])
    text = ir.python_print(out)
    assert "x > 0 and" in text and "x < 0 and" in text


def test_range_bounds_evaluated_once(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = n
        acc = x
        for i in pl.range(m):
            m = m + 1  # does not change the trip count
            acc = acc + 1
            if acc > 50:
                break
        return acc + m

    out = transform(before, verified, ARGS2)
    assert "i__stop" in ir.python_print(out)


def test_loop_var_reassigned_in_body(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            i = i * 3  # noqa: PLW2901 - Python semantics: the next iteration still gets i + 1
            acc = acc + i
            if acc > 30:
                break
        return acc

    transform(before, verified, ARGS2)


def test_break_in_natural_while(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        while k < n:
            k = k + 1
            if k * x > 12:
                break
        return k

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        __break_0 = False
        while not __break_0 and k < n:
            k = k + 1
            if k * x > 12:
                __break_0 = True
        return k

    same(transform(before, verified, ARGS2), expected)


def test_user_iter_args_with_break_are_written_non_ssa(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i, (a, b) in pl.range(n, init_values=(x, 1)):
            if a > 40:
                break
            a2, b2 = pl.yield_(b + i, a)  # a swap: needs temporaries
        return a2 * 100 + b2

    @pl.function
    def expected(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        a: pl.Scalar[pl.INDEX] = x
        b: pl.Scalar[pl.INDEX] = 1
        __break_0 = False
        i__ctr: pl.Scalar[pl.INDEX] = 0
        i__more = i__ctr < n
        while not __break_0 and i__more:
            i = i__ctr
            if a > 40:
                __break_0 = True
            else:
                a_next = b + i
                b_next = a
                a = a_next
                b = b_next
            i__next = i__ctr + 1
            i__more = i__next > i__ctr and i__next < n
            i__ctr = i__next
        a2 = a
        b2 = b
        return a2 * 100 + b2

    same(transform(before, verified, ARGS2), expected)


def test_while_iter_args_with_continue_and_yielding_if(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = 0
        m = m + 0
        for (s,) in pl.while_(init_values=(x,)):
            pl.cond(m < n)
            m = m + 1  # a non-SSA variable: updated even when the iteration continues
            if m % 3 == 0:
                if s > 20:
                    continue  # keeps the carried value
                r = pl.yield_(s + m)
            else:
                r = pl.yield_(s)
            s2 = pl.yield_(r)
        return s2 + m

    out = transform(before, verified, ARGS2)
    assert not any(isinstance(s, ir.IfStmt) and s.return_vars for s in walk_stmts(out.body))


def test_inner_loop_break_does_not_touch_outer(verified):
    @pl.function
    def before(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = x
        for i in pl.range(n):
            for j in pl.range(n):
                if j > i:
                    break
                acc = acc + j
            if acc > 60:
                continue
            acc = acc + 1
        return acc

    out = transform(before, verified, ARGS2)
    outer = [s for s in ir.stmt_list(out.body) if isinstance(s, ForStmt)]
    assert len(outer) == 1  # the outer loop only continues: it stays a for loop


def test_other_function_types_can_be_skipped():
    @pl.function(type=pl.FunctionType.Orchestration)
    def before(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        for i in pl.range(n):
            if i > 3:
                break
            acc = acc + i
        return acc

    opts = CtrlFlowTransformOptions(function_types=frozenset({pl.FunctionType.InCore}))
    assert run(before, opts) is before
    assert run(before) is not before


def test_function_without_exits_is_returned_as_is():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        for i in pl.range(n):
            acc = acc + i
        return acc

    assert run(f) is f


def test_parallel_assign():
    a, b, c = (Var(n, scalar_type(DataType.INDEX)) for n in "abc")
    plain = parallel_assign([a, b], [c, ConstInt(1)], None)
    assert [s.var for s in plain] == [a, b]
    swap = parallel_assign([a, b], [b, a], None)
    assert len(swap) == 4 and swap[2].var is a and swap[3].var is b
    assert parallel_assign([a], [a], None) == []


# ---------------------------------------------------------------------------------------------
# errors


def test_error_break_in_parallel_loop():
    @pl.function
    def before(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i in pl.parallel(n):
            if i > 2:
                break
        return n

    with pytest.raises(PassError, match="'break' inside a Parallel loop") as ei:
        run(before)
    assert ei.value.lineno is not None


def test_error_continue_inside_with_scope():
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        y = a
        for i in pl.range(n):
            with pl.incore():
                y = pl.add(y, a)
                if i > 2:
                    continue
            y = pl.mul(y, 2.0)
        return y

    with pytest.raises(PassError, match="inside a `with` scope") as ei:
        run(before)
    assert ei.value.hint and "move the break/continue" in ei.value.hint


def test_error_break_in_chunked_loop():
    @pl.function
    def before(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        with pl.auto_incore():
            for i in pl.range(n, chunk=4):
                if i > 2:
                    break
                acc = acc + i
        return acc

    with pytest.raises(PassError, match="chunked loop"):
        run(before)


def test_error_break_outside_loop():
    x = Var("x", scalar_type(DataType.INDEX))
    span = ir.Span("k.py", 3, 4)
    fn = ir.Function("f", (x,), (), (x.type,), make_body([BreakStmt(span=span), ReturnStmt((x,))]))
    with pytest.raises(PassError, match="'break' outside a loop") as ei:
        run(fn)
    assert ei.value.span == span


# ---------------------------------------------------------------------------------------------
# random programs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scalar_programs(exits=True), st.lists(st.tuples(st.integers(-2, 6), st.integers(-2, 6)), min_size=3,
                                             max_size=3))
def test_random_programs_keep_their_behaviour(fn, inputs):
    out = run(fn)
    from pypto.ir.verifier import DEFAULT_RULES, verify

    assert not verify(ir.Program("t", (out,)), [r for r in DEFAULT_RULES if r != "SSAVerify"])
    assert not any(isinstance(s, (BreakStmt, ContinueStmt)) for s in walk_stmts(out.body))
    for args in inputs:
        assert results(out, args) == results(fn, args)
