"""InterchangeChunkLoops: chunk outer loops on top, parallel chunk inner loops in an InCore scope;
`auto_incore` scopes are consumed."""

from __future__ import annotations

from pypto.ir.enums import ForKind, LoopOrigin, ScopeKind
from pypto.ir.expr import Expr, IterArg
from pypto.ir.function import Function, Program
from pypto.ir.node import replace
from pypto.ir.rewrite import StmtRewriter, substitute
from pypto.ir.stmt import AssignStmt, ForStmt, ScopeStmt, Stmt, YieldStmt
from pypto.ir.types import ScalarType
from pypto.ir.walk import body_stmts, has_call, make_body, split_yield, walk_stmts

from .base import FunctionPass, IRProperty, PassContext


def _is(s: Stmt, origin: LoopOrigin) -> bool:
    return isinstance(s, ForStmt) and s.origin is origin


def _parallel_inner(s: Stmt) -> bool:
    return _is(s, LoopOrigin.ChunkInner) and s.kind is ForKind.Parallel  # type: ignore[union-attr]


def _index_stmt(s: Stmt) -> bool:
    """A scalar computation that may move with its inner loop (e.g. `i = i_out * 8 + i_in`)."""
    return isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType) and not has_call(s.value)


def _threads(parent: ForStmt, child: ForStmt) -> bool:
    """`child` carries exactly `parent`'s values: its inits are parent's iter_args and parent yields
    child's return vars (what SSA conversion and chunk splitting produce for a nest)."""
    _, y = split_yield(parent.body)
    got = tuple(y.values) if y is not None else ()
    return (len(child.iter_args) == len(parent.iter_args)
            and all(c.init_value is p for c, p in zip(child.iter_args, parent.iter_args))
            and len(got) == len(child.return_vars) and all(a is b for a, b in zip(got, child.return_vars)))


def _only_inner(outer: ForStmt) -> ForStmt | None:
    """The parallel ChunkInner loop that is the whole body of `outer` (besides a trailing yield)."""
    stmts, _ = split_yield(outer.body)
    if len(stmts) == 1 and _parallel_inner(stmts[0]):
        return stmts[0]  # type: ignore[return-value]
    return None


def _next_level(inner: ForStmt) -> tuple[list[Stmt], ForStmt, ForStmt] | None:
    """(index statements, next outer, next inner) when `inner`'s body continues the chain."""
    stmts, _ = split_yield(inner.body)
    if not stmts or not _is(stmts[-1], LoopOrigin.ChunkOuter) or not all(_index_stmt(x) for x in stmts[:-1]):
        return None
    nxt: ForStmt = stmts[-1]  # type: ignore[assignment]
    nxt_inner = _only_inner(nxt)
    if nxt_inner is None or not _threads(inner, nxt) or not _threads(nxt, nxt_inner):
        return None
    return stmts[:-1], nxt, nxt_inner


class InterchangeChunkLoops(FunctionPass):
    """Reorder split chunk loops inside each `with pl.auto_incore():` scope, then drop the scope.

    Pre: TypeChecked, SSAForm, chunked loops split (SplitChunkedLoops). Post (NoChunkedLoops): no
    AutoInCore scope remains (its statements take its place). Inside it, a chain
        O1 { I1 { idx1; O2 { I2 { idx2; ... On { In { body } } } } } }
    of ChunkOuter loops Ok each holding only a *Parallel* ChunkInner loop Ik (plus scalar index
    assignments idxk before the next outer loop) is rewritten to
        O1 { O2 { ... On { InCore { I1 { idx1; I2 { idx2; ... In { body } } } } } } }
    i.e. all outers on top and the parallel inners with the body in one `ScopeStmt(InCore)`.
    All inner loops being parallel, the original iterations are independent, so the order is free.
    Carried values (iter_args, e.g. a tensor assembled into) are re-threaded through the new
    nesting order; this needs each loop of the chain to pass its values straight to the next
    (as ConvertToSSA + SplitChunkedLoops produce), else the chain stops at that level. A Parallel ChunkRemainder
    loop is wrapped in an InCore scope too. Chunk loops whose inner loop is not Parallel keep their
    order (interchanging sequential loops would reorder their effects) and get no scope; nested
    chains inside them are still processed.
    """

    name = "InterchangeChunkLoops"
    requires = frozenset({IRProperty.TypeChecked, IRProperty.SSAForm})
    produces = frozenset({IRProperty.NoChunkedLoops})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if not any(isinstance(s, ScopeStmt) and s.kind is ScopeKind.AutoInCore for s in walk_stmts(fn.body)):
            return fn
        return replace(fn, body=_Interchanger().rewrite_body(fn.body))


class _Interchanger(StmtRewriter):
    def __init__(self) -> None:
        self.auto = 0

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        if isinstance(s, ScopeStmt) and s.kind is ScopeKind.AutoInCore:
            self.auto += 1
            try:
                return self.rewrite_stmts(body_stmts(s.body))  # the scope is consumed
            finally:
                self.auto -= 1
        if self.auto and _is(s, LoopOrigin.ChunkOuter):
            return self.chain(s)  # type: ignore[arg-type]
        if self.auto and _is(s, LoopOrigin.ChunkRemainder) and s.kind is ForKind.Parallel:  # type: ignore[union-attr]
            return ScopeStmt(ScopeKind.InCore, s, span=s.span)
        return self.recurse(s)

    def chain(self, first: ForStmt) -> Stmt:
        inner = _only_inner(first)
        if inner is None:
            return self.recurse(first)
        if not _threads(first, inner):  # wrap the inner loop only
            _, y = split_yield(first.body)
            scope = ScopeStmt(ScopeKind.InCore, inner, span=inner.span)
            return replace(first, body=make_body([scope] + ([y] if y is not None else [])))
        outers, inners, idx = [first], [inner], []
        while (got := _next_level(inners[-1])) is not None:
            idx.append(got[0])
            outers.append(got[1])
            inners.append(got[2])
        order = outers + inners
        # thread the carried values through the new nesting order
        prev: list[Expr] = [ia.init_value for ia in first.iter_args]
        ias: list[tuple[IterArg, ...]] = []
        for loop in order:
            ias.append(tuple(IterArg(a.name, a.type, x, span=a.span) for a, x in zip(loop.iter_args, prev)))
            prev = list(ias[-1])
        last = order[-1]
        nest: ForStmt = replace(last, iter_args=ias[-1], body=substitute(last.body, dict(zip(last.iter_args, ias[-1]))))
        n_out = len(outers)
        for p in range(len(order) - 2, -1, -1):
            child: Stmt = nest
            if p == n_out - 1:
                child = ScopeStmt(ScopeKind.InCore, nest, span=nest.span)
            pre = idx[p - n_out] if p >= n_out else []
            tail = [YieldStmt(nest.return_vars, span=nest.span)] if nest.return_vars else []
            nest = replace(order[p], iter_args=ias[p], body=make_body(pre + [child] + tail))
        return nest
