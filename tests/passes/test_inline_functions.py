"""InlineFunctions: BEFORE / EXPECTED programs in `pl`, compared structurally."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import rebuild
from pypto.passes.base import PassError
from pypto.passes.inline_functions import InlineFunctions
from tests.programs.roundtrip import roundtrip

M = pl.dynamic("M")


def run(prog):
    after = InlineFunctions()(prog)
    roundtrip(after)
    return after


def test_inline_decorator_is_already_spliced_by_the_parser():
    @pl.inline
    def normalize(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        return result

    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = normalize(x)
            return y

    assert run(Before) is Before


def test_external_function_call(verified):
    @pl.function
    def softmax(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        e = pl.exp(x)
        return e

    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = softmax(x)
            return y

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            e = pl.exp(x)
            return e

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    assert after.function_names == ["main"]


def test_tuple_results_scalars_and_fresh_copies(verified):
    @pl.program
    class Before:
        @pl.function
        def two(self, x: pl.Tensor[[64], pl.FP32], s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[64], pl.FP32]]:
            a = pl.add(x, x)
            b = pl.mul(a, s)
            return a, b

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], k: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            a, b = self.two(x, k)
            c = pl.add(a, b)
            for i, (acc,) in pl.range(3, init_values=(c,)):
                d, e = self.two(acc, 1.0)
                f = pl.sub(e, d)
                out = pl.yield_(f)
            return out

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], k: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            a = pl.add(x, x)
            b = pl.mul(a, k)
            c = pl.add(a, b)
            for i, (acc,) in pl.range(3, init_values=(c,)):
                a2 = pl.add(acc, acc)
                b2 = pl.mul(a2, 1.0)
                f = pl.sub(b2, a2)
                out = pl.yield_(f)
            return out

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


def test_non_trivial_argument_is_evaluated_once(verified):
    @pl.program
    class Before:
        @pl.function
        def scale(self, x: pl.Tensor[[64], pl.FP32], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = pl.mul(x, s)
            z = pl.add(y, s)
            return z

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], k: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            r = self.scale(x, k * 2.0)
            return r

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], k: pl.Scalar[pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            s: pl.Scalar[pl.FP32] = k * 2.0
            y = pl.mul(x, s)
            z = pl.add(y, s)
            return z

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


def test_orchestration_callee_inlined_kernels_kept(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [64, 64])
            r = pl.store(pl.add(t, t), [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def step(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.kernel(x, out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            y = self.step(x)
            z = self.step(y)
            return z

        @pl.function
        def unused_entry(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            return x

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [64, 64])
            r = pl.store(pl.add(t, t), [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.kernel(x, out)
            out2 = pl.create_tensor([64, 64], dtype=pl.FP32)
            r2 = self.kernel(r, out2)
            return r2

        @pl.function
        def unused_entry(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            return x

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    assert after.function_names == ["kernel", "main", "unused_entry"]


def test_nested_callees_and_statement_calls(verified):
    @pl.program
    class Before:
        @pl.function
        def inner(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            e = pl.exp(x)
            return e

        @pl.function
        def outer(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            a = self.inner(x)
            b = self.inner(a)
            return b

        @pl.function
        def effect(self, x: pl.Tensor[[64], pl.FP32]):
            unused = pl.neg(x)

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            self.effect(x)
            y = self.outer(x)
            return y

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            unused = pl.neg(x)
            a = pl.exp(x)
            b = pl.exp(a)
            return b

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


def test_dynamic_callee_is_specialized_to_the_arguments(verified):
    @pl.program
    class Before:
        @pl.function
        def f(self, y: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
            z = pl.add(y, y)
            return z

        @pl.function
        def main(self, x: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
            w = self.f(x)
            return w

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
            z: pl.Tensor[[128, 64], pl.FP32] = pl.add(x, x)
            return z

    after = verified(run(Before))  # the call's result type mentions the callee's M; the inlined copy does not
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


def test_recursion_is_rejected():
    @pl.program
    class Before:
        @pl.function
        def ping(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = self.pong(x)
            return y

        @pl.function
        def pong(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = self.ping(x)
            return y

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = self.ping(x)
            return y

    with pytest.raises(PassError) as ei:
        run(Before)
    msg = str(ei.value)
    assert "recursive call" in msg and "ping -> pong -> ping" in msg
    assert "y = self.ping(x)" in msg  # located at the call
    assert "pl.range" in msg  # the hint


def test_call_in_a_loop_header_is_rejected():
    @pl.program
    class Before:
        @pl.function
        def count(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            return n + 1

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            for i, (acc,) in pl.range(self.count(n), init_values=(x,)):
                y = pl.add(acc, acc)
                r = pl.yield_(y)
            return r

    with pytest.raises(PassError, match="cannot be inlined"):
        run(Before)


def test_return_inside_a_branch_is_rejected():
    @pl.program
    class Before:
        @pl.function
        def pick(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            if n == 0:
                z = pl.neg(x)
            return x

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = self.pick(x, 0)
            return y

    # the parser refuses an early return; build one by hand (as another frontend might)
    pick = Before.get_function("pick")
    if_, ret = pick.body.stmts
    early = ir.IfStmt(if_.condition, ir.ReturnStmt((pick.params[0],), span=if_.span), None, span=if_.span)
    pick = rebuild(pick, {"body": ir.SeqStmts((early, ret))})
    prog = Before.with_functions([pick, Before.get_function("main")])
    with pytest.raises(PassError, match="returns from inside"):
        run(prog)


def test_scalar_function_result_in_expressions(verified):
    @pl.program
    class Before:
        @pl.function
        def twice(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            m = n * 2
            return m

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            k = self.twice(n)
            for i, (acc,) in pl.range(k, init_values=(x,)):
                y = pl.add(acc, acc)
                r = pl.yield_(y)
            return r

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
            m = n * 2
            for i, (acc,) in pl.range(m, init_values=(x,)):
                y = pl.add(acc, acc)
                r = pl.yield_(y)
            return r

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


def test_returned_expression_is_assigned_to_the_call_variable(verified):
    @pl.program
    class Before:
        @pl.function
        def norm(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
            s = pl.row_sum(x)
            return pl.row_expand_div(x, s)

        @pl.function
        def main(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[8, 64], pl.FP32]:
            a = self.norm(x)
            v = pl.view(a, [8, 64], [0, 0])
            return v

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[8, 64], pl.FP32]:
            s = pl.row_sum(x)
            a = pl.row_expand_div(x, s)  # not substituted into the view: no nested calls
            v = pl.view(a, [8, 64], [0, 0])
            return v

    after = verified(run(Before))
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
