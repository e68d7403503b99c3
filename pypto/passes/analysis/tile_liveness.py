"""Liveness of tile variables, for memory planning (InitMemRef, MemoryReuse, AllocateMemoryAddr)
and the memory report.

Two views of one kernel body:

- `analyze(fn)`: backward dataflow over the structured body. It records which tile variables are
  live right after each statement and builds the interference relation buffers are shared by: two
  tiles interfere when one is live where the other is defined (in SSA that is exactly when their
  live ranges overlap). Loops are solved to a fixpoint, so a value defined before a loop and used
  inside it is live across the whole loop, and whatever the loop head needs stays live around the
  back edge; the two branches of an if merge (a value is live before the if when either branch needs
  it). The iter_args of one loop, and the return vars of one loop or if, are defined together, so
  they interfere pairwise. An operand the result may be written over (`buffer_sharing.inplace_safe`)
  does not interfere with it.
- `linear_lifetimes(fn)`: statement indices (a pre-order walk of the body, alloc statements left
  out) and one `[first, last]` interval per tile, extended to the end of every loop that uses a value
  defined before it. Reports, memory maps and error messages use these.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pypto.ir.expr import Call, Expr, MakeTuple, Var
from pypto.ir.function import Function
from pypto.ir.node import Node, walk_fields
from pypto.ir.stmt import (
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
    stmt_list,
)
from pypto.ir.types import Type
from pypto.ir.variables import is_alloc, is_tile_var
from pypto.ir.visitor import IRVisitor
from pypto.ir.walk import CONSTANTS, stmt_exprs

from .buffer_sharing import inplace_safe

# ---------------------------------------------------------------------------------------------
# tile uses


def _collect_tiles(e: object, out: list[Var]) -> None:
    if isinstance(e, Var):
        if is_tile_var(e) and e not in out:
            out.append(e)
    elif isinstance(e, Call):
        for a in e.args:
            if not isinstance(a, CONSTANTS):
                _collect_tiles(a, out)
    elif isinstance(e, MakeTuple):
        for a in e.elements:
            if not isinstance(a, CONSTANTS):  # shapes and offsets: no tiles
                _collect_tiles(a, out)
    elif isinstance(e, Node) and not isinstance(e, (Type, *CONSTANTS)):
        for name, _ in walk_fields(type(e), True):
            v = getattr(e, name)
            for x in (v if type(v) is tuple else (v,)):
                _collect_tiles(x, out)


def tile_uses(*exprs: Expr | None) -> list[Var]:
    """Tile variables read by the expressions, in first-use order."""
    out: list[Var] = []
    for e in exprs:
        if e is not None:
            _collect_tiles(e, out)
    return out




@dataclass
class Liveness:
    """Result of `analyze`. `live_after[id(stmt)]` holds for leaf statements (assign, eval, yield)."""

    live_after: dict[int, frozenset[Var]] = field(default_factory=dict)
    edges: dict[Var, set[Var]] = field(default_factory=lambda: defaultdict(set))
    defs: list[Var] = field(default_factory=list)  # tile variables in definition order
    def_stmt: dict[Var, Stmt | None] = field(default_factory=dict)

    def interfere(self, a: Var, b: Var) -> bool:
        return b in self.edges.get(a, ())

    def order(self) -> dict[Var, int]:
        return {v: i for i, v in enumerate(self.defs)}


class _Flow:
    def __init__(self, res: Liveness) -> None:
        self.res = res
        # per statement (by id), what does not change between the rounds of a loop's fixpoint: the
        # tiles an assignment reads, and those of them it conflicts with; the tiles others read
        self._assign: dict[int, tuple[frozenset[Var], list[Var]]] = {}
        self._reads: dict[int, frozenset[Var]] = {}

    def reads(self, s: Stmt) -> frozenset[Var]:
        got = self._reads.get(id(s))
        if got is None:
            got = self._reads[id(s)] = frozenset(tile_uses(*stmt_exprs(s)))
        return got

    def edge(self, a: Var, others) -> None:
        for b in others:
            if b is not a:
                self.res.edges[a].add(b)
                self.res.edges[b].add(a)

    def block(self, body: Stmt | None, live: frozenset[Var], loop) -> frozenset[Var]:
        for s in reversed(stmt_list(body)):
            live = self.stmt(s, live, loop)
        return live

    def stmt(self, s: Stmt, live: frozenset[Var], loop) -> frozenset[Var]:
        if isinstance(s, AssignStmt):
            self.res.live_after[id(s)] = live
            v = s.var
            got = self._assign.get(id(s))
            if got is None:
                uses = tile_uses(s.value)
                conflicts = [u for u in uses if not inplace_safe(s.value, u, v.type)] if is_tile_var(v) else []
                got = self._assign[id(s)] = (frozenset(uses), conflicts)
            uses, conflicts = got
            if is_tile_var(v):
                self.edge(v, live)
                self.edge(v, conflicts)
                live = live - {v}
            return live | uses
        if isinstance(s, (EvalStmt, YieldStmt)):
            self.res.live_after[id(s)] = live
            return live | self.reads(s)
        if isinstance(s, ReturnStmt):
            return frozenset(tile_uses(*s.values))
        if isinstance(s, BreakStmt):
            return loop[1] if loop is not None else live
        if isinstance(s, ContinueStmt):
            return loop[0] if loop is not None else live
        if isinstance(s, SeqStmts):
            return self.block(s, live, loop)
        if isinstance(s, ScopeStmt):
            return self.block(s.body, live, loop)
        if isinstance(s, IfStmt):
            rvs = frozenset(v for v in s.return_vars if is_tile_var(v))
            out = live - rvs
            for r in rvs:
                self.edge(r, out | rvs)
            then_in = self.block(s.then_body, out, loop)
            else_in = self.block(s.else_body, out, loop) if s.else_body is not None else out
            return then_in | else_in | frozenset(tile_uses(s.condition))
        if isinstance(s, (ForStmt, WhileStmt)):
            return self.loop(s, live)
        return live | frozenset(tile_uses(*stmt_exprs(s)))

    def loop(self, s: ForStmt | WhileStmt, live: frozenset[Var]) -> frozenset[Var]:
        ias = frozenset(a for a in s.iter_args if is_tile_var(a))
        rvs = frozenset(v for v in s.return_vars if is_tile_var(v))
        out = live - rvs
        for r in rvs:
            self.edge(r, out | rvs)
        cond = frozenset(tile_uses(s.condition)) if isinstance(s, WhileStmt) else frozenset()
        head = (out | cond) - ias  # live where control (re)enters the loop head, before the iter_args
        exit_live = out | ias
        for _ in range(64):
            body_in = self.block(s.body, head, (head | ias, exit_live))
            new = head | (body_in - ias)
            if new == head:
                break
            head = new
        after_phi = body_in | cond | out
        for a in ias:
            self.edge(a, after_phi | ias)
        bounds = [s.start, s.stop, s.step] if isinstance(s, ForStmt) else []
        return head | frozenset(tile_uses(*bounds, *(a.init_value for a in s.iter_args)))


class _Defs(IRVisitor):
    def __init__(self, res: Liveness) -> None:
        self.res = res
        self.cur: Stmt | None = None

    def add(self, v: Var, s: Stmt | None) -> None:
        if is_tile_var(v) and v not in self.res.def_stmt:
            self.res.defs.append(v)
            self.res.def_stmt[v] = s

    def walk(self, body: Stmt | None) -> None:
        for s in stmt_list(body):
            if isinstance(s, AssignStmt):
                self.add(s.var, s)
            elif isinstance(s, (ForStmt, WhileStmt)):
                for a in s.iter_args:
                    self.add(a, s)
                self.walk(s.body)
                for v in s.return_vars:
                    self.add(v, s)
            elif isinstance(s, IfStmt):
                self.walk(s.then_body)
                self.walk(s.else_body)
                for v in s.return_vars:
                    self.add(v, s)
            elif isinstance(s, (SeqStmts, ScopeStmt)):
                self.walk(s.body if isinstance(s, ScopeStmt) else s)


def tile_defs(fn: Function, res: Liveness | None = None) -> list[Var]:
    """The tile variables of a function (parameters first), in definition order."""
    res = res if res is not None else Liveness()
    d = _Defs(res)
    for p in fn.params:
        d.add(p, None)
    d.walk(fn.body)
    return res.defs


def analyze(fn: Function) -> Liveness:
    """Liveness and interference of the tile variables of one function."""
    res = Liveness()
    tile_defs(fn, res)
    flow = _Flow(res)
    live_in = flow.block(fn.body, frozenset(), None)
    params = frozenset(p for p in fn.params if is_tile_var(p))
    for p in params:
        flow.edge(p, live_in | params)
    return res


# ---------------------------------------------------------------------------------------------
# linear lifetimes (statement indices)


@dataclass
class LinearLifetimes:
    """Statement indices of a body and a `[first, last]` interval per tile variable.

    `stmts[i]` is the statement numbered i (a loop or if is numbered at its header; its nested
    statements follow). A variable's interval starts where it is defined (an iter_arg at its loop's
    header, a return var at the last statement inside its loop or if) and ends at its last use,
    extended to the last statement of any loop that uses it but does not define it.
    """

    stmts: list[Stmt] = field(default_factory=list)
    start: dict[Var, int] = field(default_factory=dict)
    end: dict[Var, int] = field(default_factory=dict)
    order: list[Var] = field(default_factory=list)
    def_stmt: dict[Var, Stmt | None] = field(default_factory=dict)

    def live_at(self, i: int) -> list[Var]:
        return [v for v in self.order if self.start[v] <= i <= self.end[v]]

    def interval(self, v: Var) -> tuple[int, int]:
        return self.start[v], self.end[v]


class _Linear:
    def __init__(self, res: LinearLifetimes) -> None:
        self.res = res
        self.uses: list[tuple[Var, int, tuple[int, ...]]] = []
        self.loops: dict[int, tuple[int, int]] = {}  # loop number -> (header index, last index)
        self.stack: list[int] = []

    def define(self, v: Var, i: int, s: Stmt | None) -> None:
        if is_tile_var(v) and v not in self.res.start:
            self.res.start[v] = i
            self.res.order.append(v)
            self.res.def_stmt[v] = s

    def use(self, exprs: list[Expr], i: int) -> None:
        for v in tile_uses(*exprs):
            self.uses.append((v, i, tuple(self.stack)))

    def block(self, body: Stmt | None) -> None:
        for s in stmt_list(body):
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if is_alloc(s):
            return
        if isinstance(s, (SeqStmts, ScopeStmt)):
            self.block(s.body if isinstance(s, ScopeStmt) else s)
            return
        i = len(self.res.stmts)
        self.res.stmts.append(s)
        if isinstance(s, (ForStmt, WhileStmt)):
            bounds = [s.start, s.stop, s.step] if isinstance(s, ForStmt) else []
            self.use(bounds + [a.init_value for a in s.iter_args], i)
            for a in s.iter_args:
                self.define(a, i, s)
            n = len(self.loops)
            self.loops[n] = (i, i)
            self.stack.append(n)
            if isinstance(s, WhileStmt):
                self.use([s.condition], i)
            self.block(s.body)
            self.stack.pop()
            last = len(self.res.stmts) - 1
            self.loops[n] = (i, last)
            for v in s.return_vars:
                self.define(v, last, s)
            return
        if isinstance(s, IfStmt):
            self.use([s.condition], i)
            self.block(s.then_body)
            self.block(s.else_body)
            for v in s.return_vars:
                self.define(v, len(self.res.stmts) - 1, s)
            return
        self.use(stmt_exprs(s), i)
        if isinstance(s, AssignStmt):
            self.define(s.var, i, s)

    def finish(self) -> None:
        r = self.res
        for v in r.order:
            r.end[v] = r.start[v]
        for v, i, loops in self.uses:
            if v not in r.start:
                continue
            last = i
            for n in loops:
                head, end = self.loops[n]
                if r.start[v] < head:
                    last = max(last, end)
                    break  # loops are outermost first: the first one not defining v covers the rest
            r.end[v] = max(r.end[v], last)


def linear_lifetimes(fn: Function) -> LinearLifetimes:
    res = LinearLifetimes()
    lin = _Linear(res)
    for p in fn.params:
        lin.define(p, 0, None)
    lin.block(fn.body)
    lin.finish()
    return res


__all__ = ["LinearLifetimes", "Liveness", "analyze", "linear_lifetimes", "tile_defs",
           "tile_uses"]
