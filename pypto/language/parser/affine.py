"""Static extents of slices with symbolic bounds: `x[c + 64:c + 128]`, `x[k * 4:(k + 1) * 4]`.

A tile needs a static shape, so a slice whose start and stop differ by a constant must get that
constant as its extent even when both bounds mention loop variables. Bounds are read as integer
affine forms (sum of coefficient * variable, plus a constant); when the variable parts of stop
and start are equal, the extent is the difference of the constants."""

from __future__ import annotations

from typing import Any

from pypto.ir.expr import Add, ConstInt, Expr, Mul, Neg, Sub, Var

Affine = tuple[dict[Var, int], int]


def affine(e: Any) -> Affine | None:
    """`e` as ({var: coefficient}, constant) with zero coefficients dropped, or None when it is
    not an integer affine form (a product of two variables, a division, a call, ...)."""
    if isinstance(e, bool):
        return None
    if isinstance(e, int):
        return {}, e
    if isinstance(e, ConstInt):
        return {}, e.value
    if isinstance(e, Var):
        return {e: 1}, 0
    if isinstance(e, Neg):
        a = affine(e.operand)
        return None if a is None else ({v: -k for v, k in a[0].items()}, -a[1])
    if isinstance(e, (Add, Sub)):
        a, b = affine(e.lhs), affine(e.rhs)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, Add) else -1
        terms = dict(a[0])
        for v, k in b[0].items():
            terms[v] = terms.get(v, 0) + sign * k
        return {v: k for v, k in terms.items() if k}, a[1] + sign * b[1]
    if isinstance(e, Mul):
        a, b = affine(e.lhs), affine(e.rhs)
        if a is None or b is None:
            return None
        if a[0] and b[0]:
            return None  # var * var
        (terms, c), k = (a, b[1]) if not b[0] else (b, a[1])
        return {v: x * k for v, x in terms.items() if x * k}, c * k
    return None


def static_extent(hi: Any, lo: Any) -> int | None:
    """`hi - lo` when the variables cancel, else None."""
    if not isinstance(hi, Expr) and not isinstance(lo, Expr):
        return None
    a, b = affine(hi), affine(lo)
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[1] - b[1]
