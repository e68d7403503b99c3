"""Where the parser reads a kernel from: the right class among same-named ones, compile-time ifs."""

import pypto.language as pl
from pypto import ir


def _program_adding():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[8, 8], pl.FP32],
              out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            t = pl.load(a, [0, 0], [8, 8])
            t2 = pl.add(t, t)
            return pl.store(t2, [0, 0], out)
    return P


def _program_multiplying():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[8, 8], pl.FP32],
              out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            t = pl.load(a, [0, 0], [8, 8])
            t2 = pl.mul(t, t)
            return pl.store(t2, [0, 0], out)
    return P


def test_each_class_gets_its_own_body():
    first, second = ir.python_print(_program_adding()), ir.python_print(_program_multiplying())
    assert "add(" in first and "mul(" not in first
    assert "mul(" in second and "add(" not in second


def test_error_locations_point_into_the_right_class():
    import pytest

    def bad():
        @pl.program
        class P:
            @pl.function
            def k(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
                return undefined_name  # noqa: F821
        return P

    with pytest.raises(pl.UndefinedVariableError) as e:
        bad()
    assert "undefined_name" in str(e.value)
    assert f"{__file__.rsplit('/', 1)[-1]}:{bad.__code__.co_firstlineno + 5}" in str(e.value)


def test_compile_time_if_keeps_the_taken_branch_in_place():
    """A Python-constant `if` inlines its taken branch, so a yield there is the last statement of the
    enclosing loop body (a common way to write variants of one kernel)."""
    for variant in (0, 1):
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(x,)):
                if variant == 0:  # noqa: B023 (read when the decorator parses, inside the iteration)
                    out = pl.yield_(pl.add(acc, 1.0))
                else:
                    out = pl.yield_(pl.mul(acc, 2.0))
            return out

        text = ir.python_print(f)
        assert ("add_scalar(acc, 1.0)" in text) == (variant == 0)
        assert ("mul_scalar(acc, 2.0)" in text) == (variant == 1)
        assert "if " not in text
