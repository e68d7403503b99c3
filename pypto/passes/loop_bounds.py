"""Loop bounds for the passes that rewrite `for` loops: Python's `range(start, stop, step)` without
overflow, and the check of its step that building a range makes.

Loop bounds are 64-bit (INDEX) and integer arithmetic wraps, so the textbook forms overflow near
the ends of the range: `ctr = ctr + step` wraps past `stop` (a loop that never ends) and
`(stop - start + step - 1) // step` wraps for bounds more than 2**63 apart. These helpers build
expressions that stay exact:

- `trip_count`: len(range(...)), computed on UINT64 differences (which cannot overflow) and
  saturated at INT64_MAX (a loop that long cannot finish anyway, and the count stays an INDEX);
- `next_in_range`: whether `ctr + step` is still in the range, from the wrapped sum and a
  comparison with `ctr` (a sum that wrapped went past the end);
- `step_check`: a run-time step of 0 fails the run, as `range()` raises. It is an empty loop over
  `range(0, 0, step)`: every backend checks a loop's step before its trip count (docs/pto_format.md),
  so the loop reports the zero step of the loop it stands for and otherwise does nothing.
  A constant step of 0 is a compile error instead (`check_constant_step`).
"""

from __future__ import annotations

from pypto.errors import InvalidValue
from pypto.ir.dtype import DataType
from pypto.ir.expr import (
    Add,
    And,
    Cast,
    ConstInt,
    Expr,
    FloorDiv,
    Gt,
    Lt,
    Max,
    Min,
    Mul,
    Or,
    Sub,
    Var,
    scalar_type,
)
from pypto.ir.span import Span
from pypto.ir.stmt import ForStmt, SeqStmts, Stmt

from .base import PassError

_IDX, _U, _B = DataType.INDEX, DataType.UINT64, DataType.BOOL
INT64_MAX = 2**63 - 1


def range_len(start: int, stop: int, step: int) -> int:
    """len(range(start, stop, step)) for Python ints of any size (len() itself raises OverflowError
    past sys.maxsize)."""
    if step == 0:
        raise InvalidValue("range() arg 3 must not be zero")
    return max(0, (stop - start + step - (1 if step > 0 else -1)) // step)


def check_constant_step(s: ForStmt, what: str = "loop") -> None:
    """A PassError at the loop when its step is the constant 0."""
    if isinstance(s.step, ConstInt) and s.step.value == 0:
        raise PassError(f"{what} step cannot be zero", s.span, hint="range() needs a non-zero step")


def step_check(step: Expr, name: str, span: Span) -> list[Stmt]:
    """Statements that fail the run when `step` is 0 at run time (none for a constant step)."""
    if isinstance(step, ConstInt):
        return []
    zero = ConstInt(0, _IDX)
    lv = Var(name, scalar_type(_IDX), span=span)
    return [ForStmt(lv, zero, zero, as_index(step), (), SeqStmts((), span=span), (), span=span)]


def as_index(e: Expr) -> Expr:
    """`e` as an INDEX expression (a constant stays a constant)."""
    if isinstance(e, ConstInt):
        return e if e.dtype is _IDX else ConstInt(e.value, _IDX)
    if getattr(e.type, "dtype", _IDX) is not _IDX:
        return Cast(e, _IDX, span=e.span)
    return e


def _u(e: Expr) -> Expr:
    """An INDEX (or bool) value as UINT64: its two's-complement bits (a cast, also for a negative
    constant, so that an exact evaluator of the IR sees the same number)."""
    if isinstance(e, ConstInt) and e.value >= 0:
        return ConstInt(e.value, _U)
    return Cast(e, _U, span=e.span)


def trip_count(start: Expr, stop: Expr, step: Expr) -> Expr:
    """len(range(start, stop, step)) as an INDEX expression, at most INT64_MAX (a constant when all
    three are). A run-time step must be checked first (`step_check`): for 0 the value is undefined."""
    if isinstance(start, ConstInt) and isinstance(stop, ConstInt) and isinstance(step, ConstInt):
        return ConstInt(min(range_len(start.value, stop.value, step.value), INT64_MAX), _IDX)
    start, stop, step = as_index(start), as_index(stop), as_index(step)
    zero = ConstInt(0, _IDX)
    if start == zero and step == ConstInt(1, _IDX):  # range(n), the common case: nothing can wrap
        return Max(zero, stop, _IDX)
    up, down = Sub(_u(stop), _u(start), _U), Sub(_u(start), _u(stop), _U)  # exact when positive
    if isinstance(step, ConstInt):
        pos = step.value > 0
        nonempty: Expr = Lt(start, stop, _B) if pos else Gt(start, stop, _B)
        dist, mag = (up, _u(step)) if pos else (down, ConstInt(-step.value, _U))
    else:  # pick the distance and |step| of the step's sign by multiplying with 0 / 1
        p, n = Gt(step, zero, _B), Lt(step, zero, _B)
        nonempty = Or(And(p, Lt(start, stop, _B), _B), And(n, Gt(start, stop, _B), _B), _B)
        dist = Add(Mul(_u(p), up, _U), Mul(_u(n), down, _U), _U)
        mag = Add(Mul(_u(p), _u(step), _U), Mul(_u(n), Sub(ConstInt(0, _U), _u(step), _U), _U), _U)
    one = ConstInt(1, _U)
    count = Mul(_u(nonempty), Add(FloorDiv(Sub(dist, one, _U), mag, _U), one, _U), _U)  # 0 when empty
    return Cast(Min(count, ConstInt(INT64_MAX, _U), _U), _IDX)


def in_range(ctr: Expr, stop: Expr, step: Expr) -> Expr:
    """`ctr` is before `stop` in the direction of `step` (a run-time step of 0 gives False)."""
    if isinstance(step, ConstInt):
        return (Lt if step.value > 0 else Gt)(ctr, stop, _B)
    zero = ConstInt(0, _IDX)
    return Or(And(Gt(step, zero, _B), Lt(ctr, stop, _B), _B), And(Lt(step, zero, _B), Gt(ctr, stop, _B), _B), _B)


def next_in_range(nxt: Expr, ctr: Expr, stop: Expr, step: Expr) -> Expr:
    """For `nxt` = ctr + step (wrapped): the next value of a range that holds `ctr` is in it too.
    A sum that wrapped moved against the step's direction: it went past any stop."""
    def going(up: bool) -> Expr:
        return (And(Gt(nxt, ctr, _B), Lt(nxt, stop, _B), _B) if up
                else And(Lt(nxt, ctr, _B), Gt(nxt, stop, _B), _B))

    if isinstance(step, ConstInt):
        return going(step.value > 0)
    zero = ConstInt(0, _IDX)
    return Or(And(Gt(step, zero, _B), going(True), _B), And(Lt(step, zero, _B), going(False), _B), _B)


__all__ = ["INT64_MAX", "as_index", "check_constant_step", "in_range", "next_in_range", "range_len", "step_check",
           "trip_count"]
