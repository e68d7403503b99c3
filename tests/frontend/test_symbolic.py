"""SymbolicScalar: what is known while tracing folds (constants, sums of multiples of variables),
comparisons of known differences decide, and Python cannot branch on a run-time value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pypto
from pypto.frontend import SymbolicScalar
from pypto.frontend.symbolic import simplify


def test_affine_forms_fold():
    i = SymbolicScalar("i")
    assert simplify((i + 1) * 4 - i * 4) == 4
    assert simplify(i * 2 - (i + i)) == 0
    assert simplify((i + 3) - (i - 2)) == 5
    assert not (i * 4 - 1).is_concrete()


def test_min_max_and_comparisons_with_known_difference():
    i = SymbolicScalar("i")
    assert simplify(pypto.min(i + 2, i + 5) - i) == 2
    assert simplify(pypto.max(i + 2, i + 5) - i) == 5
    assert bool(i + 1 > i)
    assert not bool(i < i)
    with pytest.raises(pypto.Error, match="only known at run time"):
        bool(i > 3)


def test_int_conversion_needs_a_known_value():
    assert int(SymbolicScalar(7)) == 7
    with pytest.raises(pypto.Error, match="only known at run time"):
        int(SymbolicScalar("n"))


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(1, 9))
def test_constant_arithmetic_matches_python(a, b, c):
    x, y = SymbolicScalar(a), SymbolicScalar(b)
    assert simplify(x + y) == a + b
    assert simplify(x - y) == a - b
    assert simplify(x * y) == a * b
    assert simplify(x // c) == a // c
    assert simplify(x % c) == a % c
    assert simplify(pypto.ceildiv(x, c)) == -(-a // c)
    assert simplify(pypto.min(x, y)) == min(a, b)


@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-5, 5), st.integers(-5, 5))
def test_affine_folding_is_exact_for_any_value(k1, k2, c1, c2):
    """(k1 i + c1) - (k2 i + c2), folded while tracing, equals the plain value at several i."""
    from pypto.ir.evaluate import fold_constants
    from pypto.ir.expr import ConstInt, const_value
    from pypto.ir.rewrite import substitute

    i = SymbolicScalar("i")
    e = (i * k1 + c1) - (i * k2 + c2)
    for v in (-3, 0, 7):
        got = const_value(fold_constants(substitute(e.expr, {i.expr: ConstInt(v)})))
        assert got == (k1 * v + c1) - (k2 * v + c2)
