"""UnrollLoops: expand `pl.unroll` loops into one copy of the body per iteration."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pypto.ir.enums import ForKind
from pypto.ir.evaluate import fold_constants
from pypto.ir.expr import ConstInt, Expr, Op, Var
from pypto.ir.function import Function, Program
from pypto.ir.node import replace
from pypto.ir.rewrite import StmtRewriter, clone_fresh
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, ForStmt, Stmt
from pypto.ir.variables import assigned_vars, defined_vars
from pypto.ir.visitor import IRVisitor
from pypto.ir.walk import split_yield, walk_stmts

from .analysis.var_liveness import Liveness
from .base import FunctionPass, IRProperty, PassContext, PassError
from .loop_bounds import range_len


@dataclass(frozen=True)
class UnrollLoopsOptions:
    max_copies: int = 4096  # more iterations than this is almost surely a mistake: refuse


class _RefCounter(IRVisitor):
    """How often each variable occurs (used or bound) under a node."""

    def __init__(self) -> None:
        self.counts: Counter[Var] = Counter()

    def visit_Op(self, op: Op) -> None:
        return None

    def visit_Var(self, var: Var) -> None:
        self.counts[var] += 1

    def visit_def(self, var: Var) -> None:
        self.counts[var] += 1
        super().visit_def(var)


def _refs(node: Any) -> Counter[Var]:
    c = _RefCounter()
    c.visit(node)
    return c.counts


class UnrollLoops(FunctionPass):
    """Expand every `ForStmt` of kind Unroll (chunk not set) into its iterations.

    Pre: TypeChecked; SSA not required (it runs first). Unroll loops have integer-constant bounds
    and a non-zero step; their bodies contain no break/continue for the unrolled loop.
    Post: no unchunked Unroll loop remains. Iteration k is a copy of the body in which the loop
    variable is the constant `start + k*step`; variables bound inside the body get fresh Var objects
    in each copy, except those the rest of the function refers to (defined before or used after the
    loop) or that carry a value into the next iteration — those keep their identity, so non-SSA
    reassignment works as in Python. If the loop variable is itself reassigned in the body or read
    after the loop, each copy starts with an assignment of the constant instead. Iter_args (not
    written by the parser, but accepted) are threaded: each copy reads the previous copy's yield,
    the return vars are assigned the last values. Nested unroll loops are expanded inner first.
    Chunked unroll loops (`chunk=`) are left for SplitChunkedLoops.
    Errors: non-constant bounds, zero step, break/continue, more than `max_copies` iterations.
    """

    name = "UnrollLoops"
    requires = frozenset({IRProperty.TypeChecked})
    produces = frozenset({IRProperty.NoUnrollLoops})

    def __init__(self, options: UnrollLoopsOptions | None = None) -> None:
        self.options = options or UnrollLoopsOptions()

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if not any(_is_unroll(s) for s in walk_stmts(fn.body)):
            return fn
        body = _Unroller(_refs(fn), self.options).rewrite_body(fn.body)
        return replace(fn, body=body)


def _is_unroll(s: Stmt) -> bool:
    return isinstance(s, ForStmt) and s.kind is ForKind.Unroll and s.chunk is None


class _Unroller(StmtRewriter):
    def __init__(self, counts: Counter[Var], options: UnrollLoopsOptions) -> None:
        self.counts = counts
        self.options = options

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        if _is_unroll(s):
            return self.unroll(s)  # type: ignore[arg-type]
        return self.recurse(s)

    def unroll(self, s: ForStmt) -> list[Stmt]:
        for x in walk_stmts(s.body, into_loops=False):
            if isinstance(x, (BreakStmt, ContinueStmt)):
                word = "break" if isinstance(x, BreakStmt) else "continue"
                raise PassError(f"'{word}' inside a pl.unroll loop cannot be unrolled", x.span,
                                hint="use pl.range for a loop that breaks or continues")
        # which variables may not be renamed: those referred to outside the loop or live across iterations
        local = _refs(s)
        outside = {v for v, n in local.items() if self.counts[v] > n}
        inner = self.recurse(s)  # inner unroll loops first
        carried = Liveness(inner.body).live_in  # type: ignore[union-attr]
        keep = {v for v in defined_vars(inner.body) if v in outside or v in carried}  # type: ignore[union-attr]
        return expand_unroll(inner, keep, outside, self.options.max_copies)  # type: ignore[arg-type]


def expand_unroll(s: ForStmt, keep: set[Var] | frozenset[Var] = frozenset(),
                  outside: set[Var] | frozenset[Var] = frozenset(), max_copies: int = 4096) -> list[Stmt]:
    """The iterations of a constant-bound loop as straight-line statements.

    Each copy of the body has the loop variable replaced by its constant (or assigned it first, when
    the loop variable is reassigned in the body or in `outside`, the set of variables the code
    around the loop refers to) and constant subexpressions folded; the variables bound in the body
    are new in each copy except those in `keep`. Iter_args are threaded (copy k reads the values
    copy k-1 yields) and the return vars are assigned the last values. In SSA form pass no `keep`.
    """
    bounds = []
    for what, b in (("start", s.start), ("stop", s.stop), ("step", s.step)):
        if not isinstance(b, ConstInt):
            raise PassError(f"pl.unroll needs constant bounds; its {what} is not an integer constant", s.span,
                            hint="use pl.range for loops with run-time bounds")
        bounds.append(b.value)
    if bounds[2] == 0:
        raise PassError("pl.unroll step cannot be zero", s.span)
    values = range(*bounds)
    n = range_len(*bounds)  # (len() of a range past 2**63 raises OverflowError)
    if n > max_copies:
        raise PassError(f"pl.unroll of {n} iterations exceeds the limit of {max_copies} copies", s.span,
                        hint="use pl.range, or unroll a smaller loop")
    lv = s.loop_var
    assign_lv = lv in outside or lv in assigned_vars(s.body)
    cur: list[Expr] = [ia.init_value for ia in s.iter_args]
    out: list[Stmt] = []
    for value in values:
        c = ConstInt(value, lv.type.dtype)
        mapping: dict[Var, Expr] = dict(zip(s.iter_args, cur))
        pre: list[Stmt] = []
        if assign_lv:
            target = lv if lv in outside else Var(lv.name, lv.type, span=lv.span)
            mapping[lv] = target
            pre.append(AssignStmt(target, c, span=s.span))
        else:
            mapping[lv] = c
        copy, _ = clone_fresh(s.body, mapping, set(keep) | ({lv} if lv in outside else set()))
        stmts, y = split_yield(fold_constants(copy))
        if s.iter_args:
            if y is None:
                raise PassError("an unroll loop with iter_args must end its body with pl.yield_", s.span)
            cur = list(y.values)
        out += pre + stmts
    out += [AssignStmt(rv, v, span=s.span) for rv, v in zip(s.return_vars, cur)]
    return out


__all__ = ["UnrollLoops", "UnrollLoopsOptions", "expand_unroll"]
