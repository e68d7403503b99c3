"""ScopeTensorOps: BEFORE / EXPECTED programs in `pl`, compared structurally."""

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import rebuild
from pypto.passes.scope_tensor_ops import ScopeTensorOps
from tests.programs.roundtrip import roundtrip


def check(before, expected, verified):
    after = verified(ScopeTensorOps()(before))
    ir.assert_structural_equal(after, expected, enable_auto_mapping=True)
    roundtrip(after)
    return after


def test_plain_function_tensor_example(verified):
    @pl.function
    def before(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result_0: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        result_1: pl.Tensor[[64], pl.FP32] = pl.add(result_0, 1.0)
        return result_1

    @pl.function
    def expected(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.incore():
            result_0: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
            result_1: pl.Tensor[[64], pl.FP32] = pl.add(result_0, 1.0)
        return result_1

    check(_prog(before), _prog(expected), verified)


def _prog(fn):
    """A one-function program (the function renamed `main`, so BEFORE and EXPECTED match by name)."""
    return ir.Program("P", (rebuild(fn, {"name": "main"}),))


def test_sum_16_elements(verified):
    @pl.function
    def before(data: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
        init_sum: pl.Tensor[[1], pl.FP32] = pl.create_tensor([1], dtype=pl.FP32)
        for i, (running_sum,) in pl.range(16, init_values=(init_sum,)):
            chunk: pl.Tensor[[1], pl.FP32] = pl.view(data, [1], [i])
            new_sum: pl.Tensor[[1], pl.FP32] = pl.add(running_sum, chunk)
            sum_out: pl.Tensor[[1], pl.FP32] = pl.yield_(new_sum)
        return sum_out

    @pl.function
    def expected(data: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
        init_sum: pl.Tensor[[1], pl.FP32] = pl.create_tensor([1], dtype=pl.FP32)
        for i, (running_sum,) in pl.range(16, init_values=(init_sum,)):
            chunk: pl.Tensor[[1], pl.FP32] = pl.view(data, [1], [i])
            with pl.incore():
                new_sum: pl.Tensor[[1], pl.FP32] = pl.add(running_sum, chunk)
            sum_out: pl.Tensor[[1], pl.FP32] = pl.yield_(new_sum)
        return sum_out

    check(_prog(before), _prog(expected), verified)


def test_find_max_and_sum(verified):
    @pl.function
    def before(data: pl.Tensor[[4, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
        init_max: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        init_sum: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        for i, (acc_max, acc_sum) in pl.range(4, init_values=(init_max, init_sum)):
            row: pl.Tensor[[1, 64], pl.FP32] = pl.view(data, [1, 64], [i, 0])
            new_max: pl.Tensor[[1, 64], pl.FP32] = pl.maximum(acc_max, row)
            new_sum: pl.Tensor[[1, 64], pl.FP32] = pl.add(acc_sum, row)
            out_max, out_sum = pl.yield_(new_max, new_sum)
        return out_sum

    @pl.function
    def expected(data: pl.Tensor[[4, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
        init_max: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        init_sum: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        for i, (acc_max, acc_sum) in pl.range(4, init_values=(init_max, init_sum)):
            row: pl.Tensor[[1, 64], pl.FP32] = pl.view(data, [1, 64], [i, 0])
            with pl.incore():
                new_max: pl.Tensor[[1, 64], pl.FP32] = pl.maximum(acc_max, row)
                new_sum: pl.Tensor[[1, 64], pl.FP32] = pl.add(acc_sum, row)
            out_max, out_sum = pl.yield_(new_max, new_sum)
        return out_sum

    check(_prog(before), _prog(expected), verified)


def test_conditional_update_scopes_inside_the_branch(verified):
    @pl.function
    def before(a: pl.Tensor[[64], pl.FP32], delta: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        init: pl.Tensor[[64], pl.FP32] = pl.create_tensor([64], dtype=pl.FP32)
        for i, (prev,) in pl.range(4, init_values=(init,)):
            if i == 0:
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(a)
            else:
                updated: pl.Tensor[[64], pl.FP32] = pl.add(prev, delta)
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(updated)
            out: pl.Tensor[[64], pl.FP32] = pl.yield_(result)
        return out

    @pl.function
    def expected(a: pl.Tensor[[64], pl.FP32], delta: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        init: pl.Tensor[[64], pl.FP32] = pl.create_tensor([64], dtype=pl.FP32)
        for i, (prev,) in pl.range(4, init_values=(init,)):
            if i == 0:
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(a)
            else:
                with pl.incore():
                    updated: pl.Tensor[[64], pl.FP32] = pl.add(prev, delta)
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(updated)
            out: pl.Tensor[[64], pl.FP32] = pl.yield_(result)
        return out

    check(_prog(before), _prog(expected), verified)


def test_scalars_join_only_when_they_feed_the_run(verified):
    @pl.function
    def before(x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32], pl.FP32]:
        lead = n * 2  # before the first compute statement: stays outside
        a = pl.add(x, x)
        k = lead + 1  # only feeds the run: joins it
        b = pl.mul(a, k)
        off = n + 3  # used by the view after the run: splits the run
        c = pl.exp(b)
        tail = off + 1  # after the last compute statement: stays outside
        v = pl.view(c, [32], [tail])
        return v

    @pl.function
    def expected(x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32], pl.FP32]:
        lead = n * 2
        with pl.incore():
            a = pl.add(x, x)
            k = lead + 1
            b = pl.mul(a, k)
        off = n + 3
        with pl.incore():
            c = pl.exp(b)
        tail = off + 1
        v = pl.view(c, [32], [tail])
        return v

    check(_prog(before), _prog(expected), verified)


def test_orchestration_ops_and_kernel_calls_break_runs(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [8, 64])
            r = pl.store(pl.exp(t), [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32]) -> pl.Tensor[[4, 64], pl.FP32]:
            a = pl.add(x, x)
            out = pl.create_tensor([8, 64], dtype=pl.FP32)
            b = self.kernel(a, out)
            c = pl.mul(b, 3.0)
            d = pl.reshape(c, [64, 8])
            e = pl.neg(d)
            s = pl.tensor.read(e, [0, 0])
            f = pl.reshape(e, [8, 64])
            g = pl.view(f, [4, 64], [0, 0])
            h = pl.mul(g, s)
            return h

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [8, 64])
            r = pl.store(pl.exp(t), [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32]) -> pl.Tensor[[4, 64], pl.FP32]:
            with pl.incore():
                a = pl.add(x, x)
            out = pl.create_tensor([8, 64], dtype=pl.FP32)
            b = self.kernel(a, out)
            with pl.incore():
                c = pl.mul(b, 3.0)
            d = pl.reshape(c, [64, 8])
            with pl.incore():
                e = pl.neg(d)
            s = pl.tensor.read(e, [0, 0])
            f = pl.reshape(e, [8, 64])
            g = pl.view(f, [4, 64], [0, 0])
            with pl.incore():
                h = pl.mul(g, s)
            return h

    after = check(Before, Expected, verified)
    assert after.get_function("kernel") is Before.get_function("kernel")


def test_nested_loops_existing_scopes_and_tile_code(verified):
    @pl.function
    def before(x: pl.Tensor[[4, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[4, 64], pl.FP32]:
        for i, (acc,) in pl.range(4, init_values=(x,)):
            for j, (acc2,) in pl.range(2, init_values=(acc,)):
                row = pl.view(acc2, [1, 64], [i, 0])
                r2 = pl.exp(row)
                acc3 = pl.assemble(acc2, r2, [i, 0])
                inner = pl.yield_(acc3)
            with pl.incore():
                z = pl.add(inner, inner)
            outer = pl.yield_(z)
        t = pl.load(y, [0, 0], [64, 64])
        t2 = pl.add(t, t)
        out = pl.create_tensor([64, 64], dtype=pl.FP32)
        out2 = pl.store(t2, [0, 0], out)
        return outer

    @pl.function
    def expected(x: pl.Tensor[[4, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[4, 64], pl.FP32]:
        for i, (acc,) in pl.range(4, init_values=(x,)):
            for j, (acc2,) in pl.range(2, init_values=(acc,)):
                row = pl.view(acc2, [1, 64], [i, 0])
                with pl.incore():
                    r2 = pl.exp(row)
                    acc3 = pl.assemble(acc2, r2, [i, 0])
                inner = pl.yield_(acc3)
            with pl.incore():
                z = pl.add(inner, inner)
            outer = pl.yield_(z)
        with pl.incore():
            t = pl.load(y, [0, 0], [64, 64])
            t2 = pl.add(t, t)
        out = pl.create_tensor([64, 64], dtype=pl.FP32)
        with pl.incore():
            out2 = pl.store(t2, [0, 0], out)
        return outer

    check(_prog(before), _prog(expected), verified)


def test_auto_incore_scope_is_dissolved(verified):
    @pl.function
    def before(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        a = pl.exp(x)
        with pl.auto_incore():
            b = pl.add(a, a)
        c = pl.neg(b)
        return c

    @pl.function
    def expected(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.incore():
            a = pl.exp(x)
            b = pl.add(a, a)
            c = pl.neg(b)
        return c

    check(_prog(before), _prog(expected), verified)


def test_nothing_to_scope_returns_the_same_program():
    @pl.program
    class Prog:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            with pl.incore():
                y = pl.add(x, x)
            v = pl.view(y, [32], [0])
            out = pl.create_tensor([64], dtype=pl.FP32)
            return out

    assert ScopeTensorOps()(Prog) is Prog


def test_returned_and_yielded_compute_calls_become_statements(verified):
    @pl.function
    def before(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        for i, (acc,) in pl.range(2, init_values=(x,)):
            r = pl.yield_(pl.add(acc, x))
        return pl.exp(r)

    @pl.function
    def expected(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        for i, (acc,) in pl.range(2, init_values=(x,)):
            with pl.incore():
                add_result = pl.add(acc, x)
            r = pl.yield_(add_result)
        with pl.incore():
            exp_result = pl.exp(r)
        return exp_result

    check(_prog(before), _prog(expected), verified)
