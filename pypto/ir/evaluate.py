"""Evaluating scalar IR on Python numbers: constant folding and a reference evaluator.

`fold_constants` replaces operators whose operands are constants by their value (what the parser
does to Python-level arithmetic). `Evaluator` / `evaluate` run a whole scalar function — the
reference the loop passes are tested against. Both share one table of operator semantics.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from pypto.errors import Error

from .dtype import DataType
from .expr import (
    BinaryExpr,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    MakeTuple,
    Op,
    TupleGetItem,
    UnaryExpr,
    Var,
)
from .function import Function, Program
from .span import Span
from .stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from .types import ScalarType
from .visitor import IRMutator
from .walk import body_stmts

# ---------------------------------------------------------------------------------------------
# operator semantics


_BIN_FNS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "FloatDiv": operator.truediv,
    "FloorDiv": operator.floordiv, "FloorMod": operator.mod, "Min": min, "Max": max, "Pow": operator.pow,
    "Eq": operator.eq, "Ne": operator.ne, "Lt": operator.lt, "Le": operator.le, "Gt": operator.gt,
    "Ge": operator.ge, "And": lambda a, b: bool(a) and bool(b), "Or": lambda a, b: bool(a) or bool(b),
    "Xor": lambda a, b: bool(a) != bool(b), "BitAnd": operator.and_, "BitOr": operator.or_,
    "BitXor": operator.xor, "BitShiftLeft": operator.lshift, "BitShiftRight": operator.rshift,
}


def _cast(v: Any, dt: DataType) -> Any:
    if dt is DataType.BOOL:
        return bool(v)
    if dt.is_float:
        return float(v)
    return int(math.trunc(v))


_UN_FNS: dict[str, Callable[[Any], Any]] = {
    "Abs": abs, "Neg": operator.neg, "Not": lambda a: not a, "BitNot": operator.invert,
}


# ---------------------------------------------------------------------------------------------
# constants


def zero_of(t: Any) -> Expr | None:
    """A zero constant of a scalar type (None for other types)."""
    if not isinstance(t, ScalarType):
        return None
    if t.dtype is DataType.BOOL:
        return ConstBool(False)
    if t.dtype.is_float:
        return ConstFloat(0.0, t.dtype)
    return ConstInt(0, t.dtype)


class _Folder(IRMutator):
    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:
        e = self.generic_visit(e)  # type: ignore[assignment]
        if isinstance(e.lhs, (ConstInt, ConstFloat, ConstBool)) and isinstance(e.rhs, (ConstInt, ConstFloat, ConstBool)):
            try:
                return _const(_BIN_FNS[type(e).__name__](e.lhs.value, e.rhs.value), e.dtype, e.span)
            except (ArithmeticError, KeyError, ValueError):
                return e
        return e

    def visit_UnaryExpr(self, e: UnaryExpr) -> Expr:
        e = self.generic_visit(e)  # type: ignore[assignment]
        if isinstance(e.operand, (ConstInt, ConstFloat, ConstBool)):
            name = type(e).__name__
            v = e.operand.value
            return _const(_cast(v, e.dtype) if name == "Cast" else _UN_FNS[name](v), e.dtype, e.span)
        return e


def _const(v: Any, dt: DataType, span: Span) -> Expr:
    if dt is DataType.BOOL:
        return ConstBool(bool(v), span=span)
    if dt.is_float:
        return ConstFloat(float(v), dt, span=span)
    return ConstInt(_cast(v, dt), dt, span=span)


def fold_constants(node: Any) -> Any:
    """`node` with every scalar operator whose operands are constants replaced by its value (what the
    parser does to Python-level arithmetic; useful after substituting constants for variables)."""
    return _Folder().visit(node)


# ---------------------------------------------------------------------------------------------
# the reference evaluator


class EvalError(Error):
    """The evaluator met something it cannot run (an unknown call, an undefined variable, a loop
    over the step limit)."""


class _Exit(Exception):
    def __init__(self, kind: str, values: tuple = ()) -> None:
        self.kind, self.values = kind, values  # "break", "continue" or "return"


class Evaluator:
    """Runs a function whose values are Python numbers: scalar expressions, assignments, ifs,
    for/while loops with iter_args and yields, scopes (transparent), break/continue and return.
    Calls go to `calls(call, args)` when given, else raise EvalError. A non-SSA program runs too:
    the environment is keyed by Var object, so a reassignment simply overwrites.

    Break/continue in a loop with iter_args: continue carries the current iter_arg values to the
    next iteration; break leaves the loop with them (its return vars get the current values)."""

    def __init__(self, calls: Callable[[Call, list[Any]], Any] | None = None, max_steps: int = 200_000) -> None:
        self.calls = calls
        self.steps = 0
        self.max_steps = max_steps

    def run(self, fn: Function, args: Sequence[Any]) -> tuple:
        if len(args) != len(fn.params):
            raise EvalError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
        env: dict[Var, Any] = dict(zip(fn.params, args))
        try:
            self.block(fn.body, env)
        except _Exit as r:
            return r.values
        return ()

    def block(self, body: Stmt | None, env: dict[Var, Any]) -> tuple | None:
        """Run a body; the values of the yield that ended it, if any."""
        for s in body_stmts(body):
            if isinstance(s, YieldStmt):
                return tuple(self.expr(v, env) for v in s.values)
            self.stmt(s, env)
        return None

    def stmt(self, s: Stmt, env: dict[Var, Any]) -> None:
        if isinstance(s, AssignStmt):
            env[s.var] = self.expr(s.value, env)
        elif isinstance(s, EvalStmt):
            self.expr(s.expr, env)
        elif isinstance(s, IfStmt):
            taken = s.then_body if self.expr(s.condition, env) else s.else_body
            got = self.block(taken, env)
            for v, x in zip(s.return_vars, got or ()):
                env[v] = x
        elif isinstance(s, (ForStmt, WhileStmt)):
            self.loop(s, env)
        elif isinstance(s, ScopeStmt):
            self.block(s.body, env)
        elif isinstance(s, ReturnStmt):
            raise _Exit("return", tuple(self.expr(v, env) for v in s.values))
        elif isinstance(s, (BreakStmt, ContinueStmt)):
            raise _Exit("break" if isinstance(s, BreakStmt) else "continue")
        elif isinstance(s, SeqStmts):
            self.block(s, env)
        else:
            raise EvalError(f"cannot evaluate a {type(s).__name__}")

    def loop(self, s: ForStmt | WhileStmt, env: dict[Var, Any]) -> None:
        vals = [self.expr(ia.init_value, env) for ia in s.iter_args]
        # an iterator (len() of a range past 2**63 - 1 raises OverflowError); a step of 0 raises, as in Python
        count = None
        if isinstance(s, ForStmt):
            count = iter(range(*(self.expr(e, env) for e in (s.start, s.stop, s.step))))
        while True:
            for ia, x in zip(s.iter_args, vals):
                env[ia] = x
            if count is not None:
                i = next(count, None)
                if i is None:
                    break
                env[s.loop_var] = i  # type: ignore[union-attr]
            elif not self.expr(s.condition, env):  # type: ignore[union-attr]
                break
            self.steps += 1
            if self.steps > self.max_steps:
                raise EvalError(f"step limit of {self.max_steps} loop iterations exceeded")
            try:
                got = self.block(s.body, env)
            except _Exit as x:
                if x.kind == "return":
                    raise
                if x.kind == "break":
                    break
                continue
            if got is not None and s.iter_args:
                vals = list(got)
        for v, x in zip(s.return_vars, vals):
            env[v] = x

    def expr(self, e: Expr, env: dict[Var, Any]) -> Any:
        if isinstance(e, Var):
            if e not in env:
                raise EvalError(f"variable {e.name} is read before it is defined")
            return env[e]
        if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            return e.value
        if isinstance(e, BinaryExpr):
            a, b = self.expr(e.lhs, env), self.expr(e.rhs, env)
            r = _BIN_FNS[type(e).__name__](a, b)
            return _cast(r, e.dtype) if e.dtype.is_int and isinstance(r, float) else r
        if isinstance(e, UnaryExpr):
            a = self.expr(e.operand, env)
            return _cast(a, e.dtype) if type(e).__name__ == "Cast" else _UN_FNS[type(e).__name__](a)
        if isinstance(e, MakeTuple):
            return tuple(self.expr(x, env) for x in e.elements)
        if isinstance(e, TupleGetItem):
            return self.expr(e.tuple, env)[e.index]
        if isinstance(e, Call):
            if self.calls is None:
                raise EvalError(f"cannot evaluate a call of {e.op.name} (no call handler)")
            return self.calls(e, [self.expr(a, env) for a in e.args])
        raise EvalError(f"cannot evaluate a {type(e).__name__}")


def evaluate(fn: Function | Program, args: Sequence[Any], *, name: str | None = None,
             calls: Callable[[Call, list[Any]], Any] | None = None, max_steps: int = 200_000) -> tuple:
    """Run a scalar function on Python numbers and return its results as a tuple (see Evaluator).
    For a Program, `name` picks the function (default: the only one)."""
    if isinstance(fn, Program):
        fns = [f for f in fn.functions if name is None or f.name == name]
        if len(fns) != 1:
            raise EvalError(f"pick one function of {fn.name} with name=")
        fn = fns[0]
    return Evaluator(calls, max_steps).run(fn, args)


__all__ = ["EvalError", "Evaluator", "evaluate", "fold_constants", "zero_of"]
