"""Rules on types: TypeCheck (every value fits where it goes; every op call's recorded type is the
one its type rule infers) and SupportedTypes (the element types and sizes targets can build), and
`type_diff`, the comparison they share.
"""

from __future__ import annotations

from typing import Any

from ..expr import Call, ConstInt, Expr, GlobalVar, Op, TupleGetItem
from ..limits import type_problem
from ..message_text import expr_text, type_text
from ..stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, Stmt, WhileStmt, YieldStmt
from ..structural import structural_equal
from ..types import MemRefType, ScalarType, ShapedType, TensorType, TileType, TupleType, Type, UnknownType
from ..walk import child_bodies, stmt_binders, stmt_exprs, walk_stmts
from .context import (
    SIZE_OUT_OF_RANGE,
    TYPE_ATTR_MISMATCH,
    TYPE_DIM_MISMATCH,
    TYPE_DTYPE_MISMATCH,
    TYPE_KIND_MISMATCH,
    TYPE_RANK_MISMATCH,
    UNSUPPORTED_DTYPE,
    Context,
    Rule,
    Unit,
)


def _type_of(e: Expr) -> Type | None:
    try:
        return e.type
    except Exception:  # a malformed node (e.g. TupleGetItem out of range) is reported by the caller
        return None


def _dim_eq(a: Expr, b: Expr) -> bool:
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return a.value == b.value
    return a is b or structural_equal(a, b)


def _kind(t: Type) -> str:
    return {TensorType: "a Tensor", TileType: "a Tile", ScalarType: "a Scalar", TupleType: "a Tuple",
            MemRefType: "a MemRef"}.get(type(t), type(t).__name__)


def type_diff(expected: Type | None, actual: Type | None, *, strict: bool = False,
              dynamic_ok: bool = False) -> tuple[int, str] | None:
    """(code, why) when `actual` does not fit `expected`, else None. Memrefs are ignored; unknown
    types fit anything. Lenient (default): tile views and layouts are not compared, memory spaces
    only when both are set. `dynamic_ok`: dimensions that are not constant on both sides are left to
    the run-time check (a static parameter may receive a dynamic-sized view)."""
    if expected is None or actual is None:
        return TYPE_KIND_MISMATCH, "missing type"
    if expected is actual or expected == actual:  # equal types fit in every mode
        return None
    if isinstance(expected, UnknownType) or isinstance(actual, UnknownType):
        return None
    if type(expected) is not type(actual):
        return TYPE_KIND_MISMATCH, f"expected {_kind(expected)}, got {_kind(actual)}"
    if isinstance(expected, TupleType):
        if len(expected.types) != len(actual.types):
            return TYPE_ATTR_MISMATCH, f"expected {len(expected.types)} tuple elements, got {len(actual.types)}"
        for i, (x, y) in enumerate(zip(expected.types, actual.types)):
            d = type_diff(x, y, strict=strict, dynamic_ok=dynamic_ok)
            if d is not None:
                return d[0], f"tuple element {i}: {d[1]}"
        return None
    if isinstance(expected, ScalarType):
        if expected.dtype is not actual.dtype:
            return TYPE_DTYPE_MISMATCH, f"expected dtype {expected.dtype.text}, got {actual.dtype.text}"
        return None
    if not isinstance(expected, ShapedType):
        return None if (strict is False or expected == actual) else (TYPE_ATTR_MISMATCH, "types differ")
    if expected.dtype is not actual.dtype:
        return TYPE_DTYPE_MISMATCH, f"expected dtype {expected.dtype.text}, got {actual.dtype.text}"
    if expected.rank != actual.rank:
        return TYPE_RANK_MISMATCH, f"expected rank {expected.rank}, got {actual.rank}"
    for i, (x, y) in enumerate(zip(expected.shape, actual.shape)):
        if dynamic_ok and not (isinstance(x, ConstInt) and isinstance(y, ConstInt)):
            continue  # a dynamic size on either side is checked when the program runs
        if not _dim_eq(x, y):
            return TYPE_DIM_MISMATCH, f"dimension {i}: expected {expr_text(x)}, got {expr_text(y)}"
    if isinstance(expected, TileType):
        es, as_ = expected.memory_space, actual.memory_space
        if (strict or (es is not None and as_ is not None)) and expected.space is not actual.space:
            return TYPE_ATTR_MISMATCH, f"expected memory space {expected.space.name}, got {actual.space.name}"
        if strict:
            ev, av = expected.valid_shape, actual.valid_shape
            if len(ev) != len(av) or not all(_dim_eq(x, y) for x, y in zip(ev, av)):
                return TYPE_DIM_MISMATCH, (f"valid shape: expected [{', '.join(map(expr_text, ev))}], "
                                           f"got [{', '.join(map(expr_text, av))}]")
            vx, vy = expected.tile_view, actual.tile_view
            attrs = ("blayout", "slayout", "fractal", "pad")
            if vx is not None and vy is not None and any(getattr(vx, a) != getattr(vy, a) for a in attrs):
                return TYPE_ATTR_MISMATCH, "tile views differ (layout, fractal or pad)"
    if strict and isinstance(expected, TensorType) and expected.layout is not actual.layout:
        return TYPE_ATTR_MISMATCH, f"expected layout {expected.layout.name}, got {actual.layout.name}"
    return None


class TypeCheck(Rule):
    name = "TypeCheck"
    codes = {101: "kind mismatch", 102: "dtype mismatch", 103: "rank mismatch", 104: "dimension mismatch",
             105: "attribute or count mismatch", 106: "condition must be a scalar",
             107: "for range must be scalars"}

    def check(self, ctx: Context) -> None:
        self.ctx = ctx
        for unit in ctx.units:
            self.unit = unit
            self._stmt(unit.body, [])

    def _report(self, code: int, msg: str, node: Any, s: Stmt | None) -> None:
        self.ctx.report(self, code, msg, node, s, self.unit)

    def _fits(self, expected: Type | None, actual: Type | None, what: str, node: Any, s: Stmt | None,
              **kw: Any) -> None:
        d = type_diff(expected, actual, **kw)
        if d is not None:
            self._report(d[0], f"{what}: {d[1]} ({type_text(expected)} vs {type_text(actual)})", node, s)

    def _stmt(self, s: Stmt | None, enclosing: list[Stmt]) -> None:
        if s is None:
            return
        for e in stmt_exprs(s):
            self._calls(e, s)
        if isinstance(s, AssignStmt):
            vt = _type_of(s.value)
            if vt is None:  # untyped calls and bad tuple indices were reported by _calls already
                if not isinstance(s.value, (Call, TupleGetItem)):
                    self._report(101, f"the value assigned to {s.var.name} has no valid type", s.value, s)
            else:
                self._fits(s.var.type, vt, f"{s.var.name} is declared with another type than its value", s.var, s)
        elif isinstance(s, (IfStmt, WhileStmt)):
            if not isinstance(_type_of(s.condition), ScalarType):
                what = "if" if isinstance(s, IfStmt) else "while"
                self._report(106, f"{what} condition must be a scalar, got {type_text(_type_of(s.condition))}",
                             s.condition, s)
        if isinstance(s, ForStmt):
            for label, b in (("start", s.start), ("stop", s.stop), ("step", s.step)):
                if not isinstance(_type_of(b), ScalarType):
                    self._report(107, f"for-loop {label} must be a scalar, got {type_text(_type_of(b))}", b, s)
            if isinstance(s.step, ConstInt) and s.step.value == 0:
                self._report(108, "for-loop step cannot be zero (range() needs a non-zero step)", s.step, s)
        if isinstance(s, (ForStmt, WhileStmt)):
            for ia in s.iter_args:
                self._fits(ia.type, _type_of(ia.init_value), f"init value of iter_arg {ia.name}", ia, s)
            for ia, rv in zip(s.iter_args, s.return_vars):
                self._fits(ia.type, rv.type, f"return var {rv.name} vs iter_arg {ia.name}", rv, s)
        elif isinstance(s, YieldStmt) and enclosing:
            owner = enclosing[-1]
            targets = owner.return_vars if isinstance(owner, IfStmt) else owner.iter_args
            for i, (t, v) in enumerate(zip(targets, s.values)):
                self._fits(t.type, _type_of(v), f"yielded value #{i} for {t.name}", v, s)
        elif isinstance(s, ReturnStmt) and self.unit.function is not None:
            want = self.unit.function.return_types
            if len(want) != len(s.values):
                self._report(105, f"return of {len(s.values)} value(s) from function {self.unit.function.name} "
                             f"declared to return {len(want)}", s, s)
            for i, (t, v) in enumerate(zip(want, s.values)):
                self._fits(t, _type_of(v), f"returned value #{i}", v, s)
        inner = enclosing + [s] if isinstance(s, (ForStmt, WhileStmt, IfStmt)) else enclosing
        for c in child_bodies(s):
            self._stmt(c, inner)

    def _calls(self, e: Expr, s: Stmt) -> None:
        for n in self.ctx.expr_nodes(e):
            if isinstance(n, TupleGetItem) and _type_of(n) is None:
                self._report(105, f"tuple index {n.index} out of range for {type_text(_type_of(n.tuple))}", n, s)
            if not isinstance(n, Call):
                continue
            if n.type is None:
                self._report(101, f"call of {n.op.name} has no type", n, s)
            elif isinstance(n.op, GlobalVar):
                self._global_call(n, s)
            elif isinstance(n.op, Op) and hasattr(n.op, "infer_type"):
                self._op_call(n, s)

    def _op_call(self, c: Call, s: Stmt) -> None:
        op = c.op
        try:
            kw = dict(c.kwargs)
            norm = getattr(op, "normalize_kwargs", None)
            if norm is not None:
                kw = norm(kw)
            want = op.infer_type(c.args, kw)
        except Exception as e:  # OpError from the type rule, or anything a broken operand provokes
            self._report(101, f"{op.name} rejects its operands: {getattr(e, 'message', None) or e}", c, s)
            return
        self._fits(want, c.type, f"recorded type of {op.name} differs from its inferred type", c, s, strict=True)

    def _global_call(self, c: Call, s: Stmt) -> None:
        prog = self.ctx.program
        if prog is None:
            return
        callee = prog.get_function(c.op.name)
        if callee is None:
            self._report(101, f"call of {c.op.name}, which is not a function of program {prog.name}", c, s)
            return
        if len(c.args) != len(callee.params):
            self._report(105, f"{callee.name} takes {len(callee.params)} argument(s), got {len(c.args)}", c, s)
        for p, a in zip(callee.params, c.args):
            self._fits(p.type, _type_of(a), f"argument {p.name} of {callee.name}", a, s, dynamic_ok=True)
        rets = callee.return_types
        if rets:
            want = rets[0] if len(rets) == 1 else TupleType(rets)
            self._fits(want, c.type, f"result of {callee.name}", c, s, dynamic_ok=True)


class SupportedTypes(Rule):
    """The types of a program are ones the targets can build (`pypto.ir.limits`)."""

    name = "SupportedTypes"
    codes = {701: "element type no target supports", 702: "dimension or size out of range"}

    def check(self, ctx: Context) -> None:
        for unit in ctx.units:
            # each parameter and return type is reported; in the body, each problem once, where it
            # first appears (every value computed from a bad parameter has the same problem)
            self.seen: set[str] = set()
            fn = unit.function
            of = f" of function {fn.name}" if fn is not None else ""
            for p in fn.params if fn is not None else ():
                self._type(ctx, unit, p.type, f"parameter {p.name}{of}", p, None, once=False)
            for s in walk_stmts(unit.body):
                for v in stmt_binders(s):
                    self._type(ctx, unit, v.type, f"variable {v.name}{of}", v, s)
                for e in stmt_exprs(s):
                    for n in ctx.expr_nodes(e):
                        if isinstance(n, Call):
                            self._type(ctx, unit, _type_of(n), f"the result of {n.op.name}{of}", n, s)
            for i, t in enumerate(fn.return_types if fn is not None else ()):
                self._type(ctx, unit, t, f"return type #{i}{of}", fn, None, once=False)

    def _type(self, ctx: Context, unit: Unit, t: Type | None, what: str, node: Any, s: Stmt | None,
              once: bool = True) -> None:
        p = type_problem(t)
        if p is not None and not (once and p.message in self.seen):
            self.seen.add(p.message)
            ctx.report(self, UNSUPPORTED_DTYPE if p.is_dtype else SIZE_OUT_OF_RANGE, f"{what}: {p.message}", node, s,
                       unit, hint=p.hint)


__all__ = ["SupportedTypes", "TypeCheck", "type_diff"]
