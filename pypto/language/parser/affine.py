"""Static extents of slices whose bounds are affine index expressions (`x[r + 1:r + 2]` is one row:
the bounds' terms cancel), so such a window is a static tile."""

from __future__ import annotations

from typing import Any

from pypto.ir import expr as E
from pypto.ir.expr import ConstInt, Expr
from pypto.ir.structural import structural_equal


def static_extent(hi: Any, lo: Any) -> int | None:
    """`hi - lo` when it is a constant: both sides as sums of terms times integers (`x[i:i + 8]`,
    `x[r + 1:r + 2]`, `x[2 * g:2 * g + 2]`) whose terms cancel; else None."""
    a, b = _affine(hi), _affine(lo)
    if a is None or b is None:
        return None
    terms = list(a[0])
    for t, k in b[0]:
        terms.append((t, -k))
    left: list[tuple[Any, int]] = []
    for t, k in terms:  # (structural equality: the terms are IR expressions, not hashable by value)
        for i, (u, m) in enumerate(left):
            if structural_equal(t, u):
                left[i] = (u, m + k)
                break
        else:
            left.append((t, k))
    if any(k != 0 for _, k in left):
        return None
    return a[1] - b[1]


def _affine(e: Any, depth: int = 0) -> tuple[list[tuple[Any, int]], int] | None:
    """e as ([(term, coefficient)], constant), through + / - and products with an integer."""
    if isinstance(e, bool) or depth > 32:
        return None
    if isinstance(e, int):
        return [], e
    if isinstance(e, ConstInt):
        return [], e.value
    if not isinstance(e, Expr):
        return None
    if isinstance(e, E.Neg):
        x = _affine(e.operand, depth + 1)
        return None if x is None else ([(t, -k) for t, k in x[0]], -x[1])
    if isinstance(e, (E.Add, E.Sub)):
        x, y = _affine(e.lhs, depth + 1), _affine(e.rhs, depth + 1)
        if x is None or y is None:
            return None
        sign = 1 if isinstance(e, E.Add) else -1
        return x[0] + [(t, sign * k) for t, k in y[0]], x[1] + sign * y[1]
    if isinstance(e, E.Mul) and (isinstance(e.lhs, ConstInt) or isinstance(e.rhs, ConstInt)):
        c, other = (e.lhs.value, e.rhs) if isinstance(e.lhs, ConstInt) else (e.rhs.value, e.lhs)
        x = _affine(other, depth + 1)
        if x is None:
            return None
        return [(t, c * k) for t, k in x[0]], c * x[1]
    return [(e, 1)], 0
