"""FlattenCallExpr: BEFORE/EXPECTED compared structurally, outputs verified with the NoNestedCall rule
on, while-condition behaviour checked with the reference evaluator."""

from __future__ import annotations

import dataclasses

import pypto.language as pl
from pypto import ir
from pypto.ir.evaluate import evaluate
from pypto.ir.stmt import AssignStmt, WhileStmt
from pypto.ir.verifier import DEFAULT_RULES, verify
from pypto.ir.walk import walk_stmts
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.flatten_call_expr import FlattenCallExpr
from tests.programs.roundtrip import roundtrip

RULES = [*DEFAULT_RULES, "NoNestedCall"]


def run(fn: ir.Function) -> ir.Function:
    return FlattenCallExpr()(ir.Program("t", (fn,))).get_function(fn.name)


def same(after: ir.Function, expected: ir.Function) -> None:
    ir.assert_structural_equal(dataclasses.replace(after, name="f"), dataclasses.replace(expected, name="f"),
                               enable_auto_mapping=True)


def flat(fn: ir.Function, verified) -> ir.Function:
    out = run(fn)
    verified(ir.Program("t", (out,)))
    diags = verify(ir.Program("t", (out,)), RULES)
    assert not diags, "\n".join(map(str, diags))
    assert run(out) is out  # nothing left to do
    roundtrip(out)
    return out


def test_nested_call_arguments_innermost_first_left_to_right(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = pl.add(pl.exp(pl.mul(a, 2.0)), pl.exp(b))
        return y

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        t1 = pl.mul(a, 2.0)
        t2 = pl.exp(t1)
        t3 = pl.exp(b)
        y = pl.add(t2, t3)
        return y

    out = flat(before, verified)
    same(out, expected)
    names = [s.var.name for s in ir.stmt_list(out.body) if isinstance(s, AssignStmt)]
    assert names == ["mul_scalar__tmp_v1", "exp__tmp_v1", "exp__tmp_v2", "y"]


def test_calls_in_scalar_expressions_shapes_returns_and_evals(verified):
    @pl.function
    def before(a: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        n = pl.tensor.dim(a, 0) * 2
        v = pl.view(a, [pl.tensor.dim(a, 0), 16], [0, 0])
        pl.tensor.write(o, [0, 0], pl.tensor.read(a, [0, pl.tensor.dim(a, 1) - 1]))
        return pl.add(pl.exp(a), a)

    @pl.function
    def expected(a: pl.Tensor[[64, 32], pl.FP32], o: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        d0 = pl.tensor.dim(a, 0)
        n = d0 * 2
        d1 = pl.tensor.dim(a, 0)
        v = pl.view(a, [d1, 16], [0, 0])
        d2 = pl.tensor.dim(a, 1)
        r = pl.tensor.read(a, [0, d2 - 1])
        pl.tensor.write(o, [0, 0], r)
        e = pl.exp(a)
        return pl.add(e, a)

    same(flat(before, verified), expected)


def test_if_condition_for_bounds_and_init_values(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        if pl.tensor.dim(a, 0) > n:
            r = pl.yield_(a)
        else:
            r = pl.yield_(pl.exp(pl.exp(a)))
        for i, (acc,) in pl.range(pl.tensor.dim(a, 0) // 16, init_values=(pl.add(pl.exp(r), r),)):
            acc2 = pl.yield_(pl.add(acc, r))
        return acc2

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        d = pl.tensor.dim(a, 0)
        if d > n:
            r = pl.yield_(a)
        else:
            e = pl.exp(a)
            r = pl.yield_(pl.exp(e))
        d1 = pl.tensor.dim(a, 0)
        e1 = pl.exp(r)
        a1 = pl.add(e1, r)  # an init value is a plain value: outlining sees the op as a statement
        for i, (acc,) in pl.range(d1 // 16, init_values=(a1,)):
            acc2 = pl.yield_(pl.add(acc, r))
        return acc2

    same(flat(before, verified), expected)


def test_loop_invariant_while_condition_is_hoisted(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        for (k,) in pl.while_(init_values=(0,)):
            pl.cond(k < pl.tensor.dim(a, 0))
            k2 = pl.yield_(k + 1)
        return k2

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        d = pl.tensor.dim(a, 0)
        for (k,) in pl.while_(init_values=(0,)):
            pl.cond(k < d)
            k2 = pl.yield_(k + 1)
        return k2

    same(flat(before, verified), expected)


@pl.program
class Squares:
    @pl.function
    def sq(self, x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return x * x

    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        steps = 0
        while self.sq(k) < n:
            k = k + self.sq(1)
            steps = steps + 1
        return steps * 1000 + k


def _calls(prog: ir.Program):
    return lambda c, args: evaluate(prog, args, name=c.op.name, calls=_calls(prog))[0]


def test_while_condition_reading_the_state_is_carried(verified):
    ssa = ConvertToSSA()(Squares)
    out = FlattenCallExpr()(ssa)
    verified(out)
    assert not verify(out, RULES)
    main = out.get_function("main")
    loop = next(s for s in walk_stmts(main.body) if isinstance(s, WhileStmt))
    assert isinstance(loop.condition, ir.Var) and loop.condition in loop.iter_args  # the carried condition
    for n in (-1, 0, 1, 5, 17, 100):
        got = evaluate(out, [n], name="main", calls=_calls(out))
        assert got == evaluate(Squares, [n], name="main", calls=_calls(Squares))
    # written out: the condition is computed before the loop and at the end of each iteration
    text = ir.python_print(main)
    assert text.count("self.sq(") == 1 or text.count("sq(") >= 3


def test_while_condition_with_call_init_and_call_yield(verified):
    @pl.program
    class P:
        @pl.function
        def sq(self, x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            return x * x

        @pl.function
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for (k,) in pl.while_(init_values=(self.sq(1),)):
                pl.cond(self.sq(k) < n)
                k2 = pl.yield_(self.sq(k + 1))
            return k2

    out = FlattenCallExpr()(P)
    verified(out)
    assert not verify(out, RULES)
    calls = []

    def count(c, args):
        calls.append(args)
        return args[0] * args[0]

    for n in (0, 2, 50, 1000):
        calls.clear()
        want = evaluate(P, [n], name="main", calls=count)
        n_before = len(calls)
        calls.clear()
        assert evaluate(out, [n], name="main", calls=count) == want
        assert len(calls) == n_before  # every call runs exactly as often as before


def test_flat_program_is_unchanged():
    @pl.function
    def f(a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        e = pl.exp(a)
        y = pl.add(e, a)
        m = n * 2 + 1
        return y

    assert run(f) is f
