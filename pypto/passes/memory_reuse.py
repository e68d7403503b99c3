"""MemoryReuse: tiles whose lifetimes do not interfere share buffers.

Pre (HasMemRefs): kernels as InitMemRef leaves them — every tile value a variable, in-place
updates safe (their operand's buffer is not needed after them). Post, for each kernel:
- tiles of one memory space whose lifetimes do not interfere (liveness.analyze: loop-aware, if
  branches merged) share a buffer, whatever their sizes; a buffer is as large as its largest tile;
- the buffers the program itself shares stay shared: a reshape (or `y = x`) and its input, an
  in-place op (`OpDef.result_reuses`) and its updated operand;
- loop-carried tiles live in ONE buffer: a loop's init value, iter_arg, yielded value and return var
  share a MemRef, and so do an if's return var and the values both branches yield. Where the
  lifetimes forbid it (the init value is used after the loop, the yielded value is computed while
  the iter_arg is still needed, a branch yields a value that lives on after the if, two carried
  tiles trade places), a `block.move` (same space) into a fresh variable that does share is
  inserted right before the loop or the yield (a swap goes through one temporary). Code generation
  relies on this: tiles are buffers, not SSA values;
- buffers are numbered from 0 in order of first definition, one `block.alloc` each at the top of the
  kernel; allocs no longer referenced are gone.

The merge is greedy and deterministic: after the carried tiles are unified, groups are taken
largest first (ties: first defined first) and each joins the first existing buffer of its space it
does not interfere with, else opens a new one. An in-place elementwise update counts as no
interference (`liveness.inplace_safe`), so `acc = add(acc, x)` accumulates without a copy.

`plan_buffers(fn, ctx, merge=False)` is the same machinery without the merge; InitMemRef uses it so
that its output already keeps the carried-tile invariant (the printed form cannot say that an
iter_arg lives elsewhere than its init value).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import Call, IterArg, MemRef, Var
from pypto.ir.function import Function, Program
from pypto.ir.names import LazyNames
from pypto.ir.op import create_op_call
from pypto.ir.span import Span
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
    stmt_list,
)
from pypto.ir.types import TileType
from pypto.ir.variables import is_tile_var
from pypto.ir.visitor import IRMutator, rebuild, retype
from pypto.ops.registry import block_ops

from .analysis.buffer_sharing import hard_share_source
from .analysis.tile_liveness import Liveness, analyze
from .base import FunctionPass, IRProperty, PassContext, PassError
from .memrefs import alloc_stmt, fresh_memref, retype_call, split_allocs

_MAX_ROUNDS = 16


class MemoryReuse(FunctionPass):
    name = "MemoryReuse"
    requires = frozenset({IRProperty.HasMemRefs})
    produces = frozenset({IRProperty.HasMemRefs})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if fn.func_type is not FunctionType.InCore:
            return fn
        return plan_buffers(fn, ctx, merge=True)


def plan_buffers(fn: Function, ctx: PassContext, merge: bool, names: LazyNames | None = None,
                 liveness: Liveness | None = None) -> Function:
    """Give every tile of a kernel its buffer: reshapes and in-place updates share with their input,
    carried tiles are unified (with moves where needed), then — when `merge` — groups that do not
    interfere are merged. Existing MemRefs and allocs are replaced. Expects every tile value to be a
    variable and in-place updates to be safe (InitMemRef arranges both). `liveness`: `analyze(fn)`
    when the caller has it already."""
    allocs, body = split_allocs(fn.body)
    fn = dataclasses.replace(fn, body=body)
    lv = liveness if not allocs else None  # without allocs the body keeps its statements: still valid
    for _ in range(_MAX_ROUNDS):
        if lv is None:
            lv = analyze(fn)
        groups = _Groups(lv)
        edits = _plan_carried(fn.body, groups)
        if not edits:
            break
        names = names or LazyNames(fn)
        fn = _ApplyEdits(edits, names).visit(fn)
        lv = None
    else:  # pragma: no cover - each round only adds moves that the next one can place
        raise PassError(f"kernel {fn.name}: could not give loop-carried tiles one buffer each", fn.span)
    if merge:
        groups.merge_all(ctx)
    return _attach(fn, groups, lv, ctx)


# ---------------------------------------------------------------------------------------------
# rewriting helpers (shared with InitMemRef)


class Splicer(IRMutator):
    """A mutator whose statement visits may return several statements (a SeqStmts), spliced in."""

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        if all(a is b for a, b in zip(out, s.stmts)):
            return s
        return seq(out, span=s.span)


def move_of(src: Var, space: MemorySpace, name: str, span: Span) -> tuple[Var, AssignStmt]:
    """(v, `v = block.move(src, target_memory=space)`), v a new variable called `name`."""
    call = create_op_call(block_ops.move, [src], {"target_memory": space}, span)
    v = Var(name, call.type, span=src.span)
    return v, AssignStmt(v, call, span=span)


# ---------------------------------------------------------------------------------------------
# buffer groups


@dataclass(eq=False)
class _Group:
    space: MemorySpace
    vars: list[Var] = field(default_factory=list)
    enemies: set[Var] = field(default_factory=set)
    first: int = 0  # definition index of its first tile

    def conflicts(self, other: _Group) -> bool:
        return self.space is not other.space or not self.enemies.isdisjoint(other.vars)


class _Groups:
    """Union-find over tile variables; each class is a `_Group` (one buffer)."""

    def __init__(self, lv: Liveness) -> None:
        self.lv = lv
        self.order = lv.order()
        self.of: dict[Var, _Group] = {}
        self._nbytes: dict[Var, int] = {}
        for v in lv.defs:
            src = hard_share_source(lv.def_stmt.get(v), v)
            g = self.of.get(src) if src is not None else None
            if g is None or g.space is not v.type.space:
                g = _Group(v.type.space, first=self.order[v])
            g.vars.append(v)
            g.enemies |= lv.edges.get(v, set())
            self.of[v] = g

    def group(self, v: Var) -> _Group:
        g = self.of.get(v)
        if g is None:
            raise PassError(f"tile {v.name} is used but never defined in this kernel", v.span)
        return g

    def join(self, a: _Group, b: _Group) -> _Group:
        if a is b:
            return a
        if b.first < a.first:
            a, b = b, a
        a.vars.extend(b.vars)
        a.enemies |= b.enemies
        for v in b.vars:
            self.of[v] = a
        return a

    def try_union(self, a: Var, b: Var) -> bool:
        """Put `b` in `a`'s buffer if their groups do not interfere; False when they do."""
        ga, gb = self.group(a), self.group(b)
        if ga is gb:
            return True
        if ga.conflicts(gb):
            return False
        self.join(ga, gb)
        return True

    def bytes_of(self, g: _Group, ctx: PassContext) -> int:
        """The size of a group's buffer: that of its largest tile (each tile's size computed once)."""
        out = 0
        for v in g.vars:
            n = self._nbytes.get(v)
            if n is None:
                n = self._nbytes[v] = tile_nbytes(v, ctx)
            out = max(out, n)
        return out

    def all(self) -> list[_Group]:
        seen: dict[int, _Group] = {}
        for v in self.lv.defs:
            g = self.of[v]
            seen.setdefault(id(g), g)
        return sorted(seen.values(), key=lambda g: g.first)

    def merge_all(self, ctx: PassContext) -> None:
        """Greedy: largest groups first; each joins the first buffer of its space it fits beside."""
        groups = self.all()
        size = {id(g): self.bytes_of(g, ctx) for g in groups}
        buffers: list[_Group] = []
        for g in sorted(groups, key=lambda g: (-size[id(g)], g.first)):
            for b in buffers:
                if not b.conflicts(g):
                    merged = self.join(b, g)
                    buffers[buffers.index(b)] = merged
                    break
            else:
                buffers.append(g)


def tile_nbytes(v: Var, ctx: PassContext) -> int:
    t = v.type
    assert isinstance(t, TileType)
    shape = t.static_shape()
    if shape is None:
        raise PassError(f"tile {v.name} has a dynamic shape; tiles need static shapes", v.span,
                        hint="keep the tile shape static and put the dynamic extent in valid_shapes=[...]")
    return ctx.target.tile_bytes(t.space, shape, t.dtype)


# ---------------------------------------------------------------------------------------------
# carried tiles: one buffer per loop slot / if result


@dataclass
class _Edit:
    init: set[int] = field(default_factory=set)  # slots whose init value is copied before the loop
    ret: set[int] = field(default_factory=set)  # slots whose return var is copied after the stmt
    # copies before a loop's yield, in order: ("mv", i) copies slot i's value into its carried
    # buffer, ("tmp", i) first saves it to a temporary (breaking a cycle, e.g. a swap)
    body_yield: list[tuple[str, int]] = field(default_factory=list)
    then_yield: list[int] = field(default_factory=list)
    else_yield: list[int] = field(default_factory=list)


def _last_yield(body: Stmt | None, what: str, s: Stmt) -> YieldStmt:
    stmts = stmt_list(body)
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        raise PassError(f"{what} carries values but does not end in a yield", s.span)
    return stmts[-1]


def _order_copies(pending: list[int], dest: list[_Group | None], src: dict[int, _Group | None]) -> list[tuple[str, int]]:
    """Sequence the parallel copy `carried[i] = value[i]` for the pending slots: a copy may run once
    no other pending copy still reads its destination buffer; a cycle is broken with a temporary."""
    ops: list[tuple[str, int]] = []
    pending = list(pending)
    while pending:
        for i in pending:
            if not any(src[j] is dest[i] for j in pending if j != i):
                ops.append(("mv", i))
                pending.remove(i)
                break
        else:
            i = pending[0]
            ops.append(("tmp", i))
            src[i] = None
    return ops


def _carried_var(e: object, what: str, s: Stmt) -> Var:
    if not is_tile_var(e):
        raise PassError(f"{what} must be a tile variable here (InitMemRef binds tile expressions to variables)",
                        getattr(e, "span", None) or s.span)
    return e  # type: ignore[return-value]


def _plan_carried(body: Stmt | None, groups: _Groups) -> dict[int, _Edit]:
    """Unify carried tiles (inner statements first); return the copies needed where they interfere."""
    edits: dict[int, _Edit] = {}

    def walk(b: Stmt | None) -> None:
        for s in stmt_list(b):
            if isinstance(s, (SeqStmts, ScopeStmt)):
                walk(s.body if isinstance(s, ScopeStmt) else s)
            elif isinstance(s, (ForStmt, WhileStmt)):
                walk(s.body)
                loop(s)
            elif isinstance(s, IfStmt):
                walk(s.then_body)
                walk(s.else_body)
                branch(s)

    def loop(s: ForStmt | WhileStmt) -> None:
        slots = [i for i, a in enumerate(s.iter_args) if is_tile_var(a)]
        if not slots:
            return
        e = _Edit()
        y = _last_yield(s.body, "a loop", s)
        pending = []
        for i in slots:
            ia = s.iter_args[i]
            if i < len(s.return_vars) and not groups.try_union(ia, s.return_vars[i]):
                e.ret.add(i)
            if not groups.try_union(ia, _carried_var(ia.init_value, "a loop's tile init value", s)):
                e.init.add(i)
            if not groups.try_union(ia, _carried_var(y.values[i], "a yielded tile", y)):
                pending.append(i)
        e.body_yield = _order_copies(pending, [groups.group(a) if is_tile_var(a) else None for a in s.iter_args],
                                     {i: groups.of.get(y.values[i]) for i in pending})  # type: ignore[arg-type]
        if e.init or e.ret or e.body_yield:
            edits[id(s)] = e

    def branch(s: IfStmt) -> None:
        slots = [i for i, v in enumerate(s.return_vars) if is_tile_var(v)]
        if not slots:
            return
        e = _Edit()
        ty = _last_yield(s.then_body, "an if", s)
        ey = _last_yield(s.else_body, "an if", s)
        for i in slots:
            if not groups.try_union(s.return_vars[i], _carried_var(ty.values[i], "a yielded tile", ty)):
                e.then_yield.append(i)
            if not groups.try_union(s.return_vars[i], _carried_var(ey.values[i], "a yielded tile", ey)):
                e.else_yield.append(i)
        if e.then_yield or e.else_yield:
            edits[id(s)] = e

    walk(body)
    return edits


class _ApplyEdits(Splicer):
    """Inserts the planned copies; iter_args whose init changes are rebuilt and their uses follow."""

    def __init__(self, edits: dict[int, _Edit], names: LazyNames) -> None:
        super().__init__()
        self.edits = edits
        self.names = names

    def _loop(self, s: ForStmt | WhileStmt) -> Stmt:
        e = self.edits.get(id(s))
        if e is None:
            return self.generic_visit(s)
        pre: list[Stmt] = []
        changes: dict = {}
        if isinstance(s, ForStmt):
            changes.update(loop_var=self.mutate_def(s.loop_var), start=self.visit(s.start), stop=self.visit(s.stop),
                           step=self.visit(s.step))
        ias = []
        for i, ia in enumerate(s.iter_args):
            if i in e.init:
                src = self.visit(ia.init_value)
                v, mv = move_of(src, ia.type.space, self.names.fresh(src.name, "mv"), s.span)
                pre.append(mv)
                new = IterArg(ia.name, ia.type, v, span=ia.span)
                self.var_map[ia] = new
                ias.append(new)
            else:
                ias.append(self.mutate_def(ia))
        changes["iter_args"] = tuple(ias)
        if isinstance(s, WhileStmt):
            changes["condition"] = self.visit(s.condition)
        body = self.visit(s.body)
        if e.body_yield:
            spaces = {i: s.iter_args[i].type.space for _, i in e.body_yield}
            body = self._copy_yielded(body, e.body_yield, spaces)
        changes["body"] = body
        rets, post = self._returns(s, e)
        changes["return_vars"] = rets
        return seq([*pre, rebuild(s, changes), *post], span=s.span)

    visit_ForStmt = _loop
    visit_WhileStmt = _loop

    def visit_IfStmt(self, s: IfStmt) -> Stmt:
        e = self.edits.get(id(s))
        if e is None:
            return self.generic_visit(s)
        spaces = {i: v.type.space for i, v in enumerate(s.return_vars) if is_tile_var(v)}
        then = self.visit(s.then_body)
        other = self.visit(s.else_body)
        if e.then_yield:
            then = self._copy_yielded(then, [("mv", i) for i in e.then_yield], spaces)
        if e.else_yield:
            other = self._copy_yielded(other, [("mv", i) for i in e.else_yield], spaces)
        rets, post = self._returns(s, e)
        new = rebuild(s, {"condition": self.visit(s.condition), "then_body": then, "else_body": other,
                          "return_vars": rets})
        return seq([new, *post], span=s.span)

    def _returns(self, s: ForStmt | WhileStmt | IfStmt, e: _Edit) -> tuple[tuple[Var, ...], list[Stmt]]:
        rets: list[Var] = []
        post: list[Stmt] = []
        for i, rv in enumerate(s.return_vars):
            rv = self.mutate_def(rv)
            if i in e.ret:
                inner = Var(self.names.fresh(rv.name, "mv"), rv.type, span=rv.span)
                call = create_op_call(block_ops.move, [inner], {"target_memory": rv.type.space}, s.span)
                post.append(AssignStmt(rv, call, span=s.span))
                rv = inner
            rets.append(rv)
        return tuple(rets), post

    def _copy_yielded(self, body: Stmt, ops: list[tuple[str, int]], spaces: dict[int, MemorySpace]) -> Stmt:
        stmts = stmt_list(body)
        y = stmts[-1]
        assert isinstance(y, YieldStmt)
        vals = list(y.values)
        pre: list[Stmt] = []
        for kind, i in ops:
            v, mv = move_of(vals[i], spaces[i], self.names.fresh(vals[i].name, kind), y.span)
            pre.append(mv)
            vals[i] = v
        return seq([*stmts[:-1], *pre, rebuild(y, {"values": tuple(vals)})], span=body.span)


# ---------------------------------------------------------------------------------------------
# MemRefs


def _attach(fn: Function, groups: _Groups, lv: Liveness, ctx: PassContext) -> Function:
    """Number the groups by first definition, give each a MemRef, retype every tile, prepend allocs."""
    mem: dict[Var, MemRef] = {}
    refs: list[MemRef] = []
    for i, g in enumerate(groups.all()):
        first = min(g.vars, key=lambda v: groups.order[v])
        m = fresh_memref(g.space, groups.bytes_of(g, ctx), i, span=first.span)
        refs.append(m)
        for v in g.vars:
            mem[v] = m
    out = _Attach(mem).visit(fn)
    return dataclasses.replace(out, body=seq([alloc_stmt(m) for m in refs] + stmt_list(out.body), span=fn.body.span))


class _Attach(IRMutator):
    """Retypes each tile variable with its MemRef; uses follow; call result types are re-inferred."""

    def __init__(self, mem: dict[Var, MemRef]) -> None:
        super().__init__()
        self.mem = mem

    def mutate_def(self, var: Var) -> Var:
        got = self.var_map.get(var)
        if got is not None:
            return got
        new = super().mutate_def(var)
        m = self.mem.get(var)
        if m is not None and new.type.memref is not m:
            new = retype(new, dataclasses.replace(new.type, memref=m))
            self.var_map[var] = new
        return new

    def visit_Call(self, c: Call) -> Call:
        args = self.mutate_value(c.args)  # all that can change: the op and kwargs are not walked
        return c if args is c.args else retype_call(c, args)


__all__ = ["LazyNames", "MemoryReuse", "Splicer", "move_of", "plan_buffers"]
