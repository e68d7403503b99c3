"""SplitChunkedLoops: `chunk=C` loops become an outer loop over chunks and an inner loop over C
iterations, plus a remainder loop."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, LoopOrigin, ScopeKind
from pypto.ir.expr import (
    Add,
    ConstInt,
    Expr,
    FloorDiv,
    FloorMod,
    IterArg,
    Mul,
    Sub,
    Var,
    scalar_type,
)
from pypto.ir.function import Function, Program
from pypto.ir.names import NameGen
from pypto.ir.node import replace
from pypto.ir.rewrite import StmtRewriter, clone_fresh, substitute
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, ForStmt, ScopeStmt, Stmt, YieldStmt
from pypto.ir.walk import body_stmts, make_body, split_yield, walk_stmts

from .base import FunctionPass, IRProperty, PassContext, PassError
from .loop_bounds import check_constant_step, step_check, trip_count
from .unroll_loops import expand_unroll

_IDX = DataType.INDEX


def _c(v: int) -> ConstInt:
    return ConstInt(v, _IDX)


def _add(a: Expr, b: Expr) -> Expr:
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return _c(a.value + b.value)
    if isinstance(a, ConstInt) and a.value == 0:
        return b
    if isinstance(b, ConstInt) and b.value == 0:
        return a
    return Add(a, b, _IDX)


def _sub(a: Expr, b: Expr) -> Expr:
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return _c(a.value - b.value)
    if isinstance(b, ConstInt) and b.value == 0:
        return a
    return Sub(a, b, _IDX)


def _mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return _c(a.value * b.value)
    if isinstance(b, ConstInt) and b.value == 1:
        return a
    return Mul(a, b, _IDX)


class SplitChunkedLoops(FunctionPass):
    """Split each `for i in pl.range/parallel/unroll(start, stop, step, chunk=C)`.

    Pre: TypeChecked, SSAForm; chunked loops sit inside `with pl.auto_incore():` (the parser checks
    this; IR built otherwise gets a PassError). Post: no loop has `chunk` set. With T the trip count
    (an `<i>__trips` variable when it is not a constant, computed without overflow and after a
    run-time step is checked for 0: loop_bounds.py), the loop becomes
        for i_out in range(T // C):                                  # Sequential, ChunkOuter
            for i_in in <kind>(C):                                   # original kind, ChunkInner
                i = start + (i_out * C + i_in) * step; body
        for i_rem in <kind>(T % C):                                  # original kind, ChunkRemainder
            i = start + ((T // C) * C + i_rem) * step; body (fresh copy)
    (policy "leading_full": full chunks first). For an unroll loop the inner loop, and a remainder of
    constant length, are expanded at once as UnrollLoops would (`pl.unroll` loops cannot carry
    values, and none should remain after the front passes); a remainder of run-time length runs as
    a Sequential loop. With a constant T, a loop that would run zero
    times is left out. Iter_args are threaded outer -> inner -> outer yield -> remainder; the
    original return vars are bound by the last loop. Nested chunked loops are split inner first.
    """

    name = "SplitChunkedLoops"
    requires = frozenset({IRProperty.TypeChecked, IRProperty.SSAForm})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if not any(isinstance(s, ForStmt) and s.chunk is not None for s in walk_stmts(fn.body)):
            return fn
        return replace(fn, body=_Splitter(NameGen.for_node(fn)).rewrite_body(fn.body))


def _expand(loop: ForStmt) -> list[Stmt]:
    """An Unroll loop of constant length is expanded right away (its copies get fresh variables)."""
    if loop.kind is ForKind.Unroll and isinstance(loop.stop, ConstInt):
        return expand_unroll(loop)
    return [loop]


class _Splitter(StmtRewriter):
    def __init__(self, names: NameGen) -> None:
        self.names = names
        self.auto = 0

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        if isinstance(s, ScopeStmt) and s.kind is ScopeKind.AutoInCore:
            self.auto += 1
            try:
                return self.recurse(s)
            finally:
                self.auto -= 1
        if isinstance(s, ForStmt) and s.chunk is not None:
            if not self.auto:
                raise PassError("a chunked loop (chunk=) must be inside `with pl.auto_incore():`", s.span)
            if s.chunk <= 0:
                raise PassError(f"chunk must be a positive integer, got {s.chunk}", s.span)
            if s.chunk_policy != "leading_full":
                raise PassError(f"unknown chunk policy {s.chunk_policy!r} (supported: 'leading_full')", s.span)
            return self.split(self.recurse(s))  # type: ignore[arg-type]
        return self.recurse(s)

    def var(self, hint: str, span: Span) -> Var:
        return Var(self.names.unique(hint), scalar_type(_IDX), span=span)

    def split(self, s: ForStmt) -> list[Stmt]:
        C, lv, sp = s.chunk, s.loop_var, s.span
        assert C is not None
        check_constant_step(s, "chunked loop")
        pre: list[Stmt] = step_check(s.step, self.names.unique(f"{lv.name}__step_check"), sp)
        trips = trip_count(s.start, s.stop, s.step)
        if not isinstance(trips, ConstInt):
            tv = self.var(f"{lv.name}__trips", sp)
            pre.append(AssignStmt(tv, trips, span=sp))
            trips = tv
        if isinstance(trips, ConstInt):
            n_full, n_rem = _c(trips.value // C), _c(trips.value % C)
        else:
            n_full, n_rem = FloorDiv(trips, _c(C), _IDX), FloorMod(trips, _c(C), _IDX)
        static = isinstance(trips, ConstInt)
        has_outer = not static or n_full.value > 0  # type: ignore[attr-defined]
        has_rem = not static or n_rem.value > 0  # type: ignore[attr-defined]
        stmts, y = split_yield(s.body)
        yvals = list(y.values) if y is not None else []

        def index(offset: Expr) -> Expr:
            return _add(s.start, _mul(offset, s.step))

        def loop(loop_var: Var, stop: Expr, kind: ForKind, origin: LoopOrigin, ias: tuple[IterArg, ...],
                 body: list[Stmt], rvs: tuple[Var, ...]) -> ForStmt:
            return ForStmt(loop_var, _c(0), stop, _c(1), ias, make_body(body), rvs, kind, None, s.chunk_policy,
                           origin, span=sp)

        def fresh_ias(inits: list[Expr]) -> tuple[IterArg, ...]:
            return tuple(IterArg(self.names.fresh(ia.name), ia.type, x, span=ia.span) for ia, x in zip(s.iter_args, inits))

        def fresh_rvs() -> tuple[Var, ...]:
            return tuple(self.names.fresh_var(rv) for rv in s.return_vars)

        out: list[Stmt] = list(pre)
        carried: list[Expr] = [ia.init_value for ia in s.iter_args]
        if has_outer:
            o = self.var(f"{lv.name}_out", sp)
            k = self.var(f"{lv.name}_in", sp)
            outer_ias = fresh_ias(carried)
            inner_ias = tuple(IterArg(ia.name, ia.type, oa, span=ia.span) for ia, oa in zip(s.iter_args, outer_ias))
            inner_body = substitute(make_body([AssignStmt(lv, index(_add(_mul(o, _c(C)), k)), span=sp), *stmts]
                                              + ([YieldStmt(tuple(yvals), span=y.span)] if y is not None else [])),
                                    dict(zip(s.iter_args, inner_ias)))
            inner_rvs = fresh_rvs()
            inner = loop(k, _c(C), s.kind, LoopOrigin.ChunkInner, inner_ias, body_stmts(inner_body), inner_rvs)
            outer_rvs = fresh_rvs() if has_rem else s.return_vars
            outer_body = _expand(inner) + ([YieldStmt(inner_rvs, span=sp)] if s.iter_args else [])
            out.append(loop(o, n_full, ForKind.Sequential, LoopOrigin.ChunkOuter, outer_ias, outer_body, outer_rvs))
            carried = list(outer_rvs)
        if has_rem:
            r = self.var(f"{lv.name}_rem", sp)
            rem_ias = fresh_ias(carried)
            base = _mul(n_full, _c(C))
            body = make_body([AssignStmt(lv, index(_add(base, r)), span=sp), *stmts]
                             + ([YieldStmt(tuple(yvals), span=y.span)] if y is not None else []))
            body, _ = clone_fresh(body, dict(zip(s.iter_args, rem_ias)),
                                  rename=lambda v: self.names.fresh(v.name)) if has_outer else (
                substitute(body, dict(zip(s.iter_args, rem_ias))), None)
            # an unroll remainder of run-time length cannot be unrolled: it runs sequentially
            kind = ForKind.Sequential if s.kind is ForKind.Unroll and not static else s.kind
            out += _expand(loop(r, n_rem, kind, LoopOrigin.ChunkRemainder, rem_ias, body_stmts(body), s.return_vars))
        elif not has_outer:  # a constant zero-trip loop
            out += [AssignStmt(rv, x, span=sp) for rv, x in zip(s.return_vars, carried)]
        return out


__all__ = ["SplitChunkedLoops", "trip_count"]
