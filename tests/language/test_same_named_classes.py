"""Two @pl.program classes with the same name in one file each parse their own body."""

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
