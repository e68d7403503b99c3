"""InitMemRef: every tile of every kernel gets a buffer (a `MemRef`).

Pre: SSA kernels (`FunctionType.InCore`) made of `block.*` ops whose tile types carry their memory
space (docs/compiler_pipeline.md, "After outlining and tensor->tile conversion").

Post (HasMemRefs), for each kernel:
- every tile variable — assignment target, iter_arg, loop or if return var, tile parameter — has
  `TileType.memref` set to a MemRef in the tile's memory space, `size = target.tile_bytes(...)` of
  its largest tile, `addr = -1`; every use sees the retyped variable, and call result types are
  inferred again from the retyped operands (as the parser would);
- each MemRef is defined once, by `mem = block.alloc(space, -1, size, id)` at the top of the kernel
  body, ids numbered from 0 in order of first definition;
- buffers are shared from the start where the program says so: a `block.reshape` result (or a plain
  `y = x` of a tile) shares its input's buffer (same bytes); an op with `OpDef.result_reuses = k`
  (matmul_acc and gemv_acc on the accumulator, block.assemble on the target) updates operand k in
  place, so its result shares that operand's buffer — and when anything in that buffer is still live
  after the op, a `block.move` copy of the operand (same space) is inserted right before the op,
  which then updates the copy;
- every tile value is a variable: a tile computed inside another call's arguments, yielded as an
  expression or passed as a loop's init value is first assigned to a fresh `<op>__tmp_v<k>`;
- loop-carried tiles already share one buffer (init value, iter_arg, yielded value, return var; an
  if's return var and both yielded values), with a `block.move` where lifetimes forbid it — the same
  rule MemoryReuse keeps (see memory_reuse.py). Doing it here keeps the IR printable: the printed
  form has no place for an iter_arg's type, which the parser takes from the init value.

Every other tile gets a buffer of its own; MemoryReuse then merges buffers whose lifetimes do not
interfere. Tensors get no MemRef, and functions other than kernels are untouched. A kernel that
already has MemRefs is returned as is.
"""

from __future__ import annotations

import dataclasses

from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, Expr, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
    stmt_list,
)
from pypto.ir.types import TileType
from pypto.ir.variables import is_alloc, is_tile_var
from pypto.ir.visitor import rebuild

from .analysis.buffer_sharing import hard_share_source, updated_operand
from .analysis.tile_liveness import Liveness, analyze, tile_defs
from .base import FunctionPass, IRProperty, PassContext
from .memory_reuse import LazyNames, Splicer, move_of, plan_buffers


class InitMemRef(FunctionPass):
    name = "InitMemRef"
    requires = frozenset({IRProperty.SSAForm, IRProperty.IncoreBlockOps})
    produces = frozenset({IRProperty.HasMemRefs})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if fn.func_type is not FunctionType.InCore or has_memrefs(fn):
            return fn
        names = LazyNames(fn)
        fn = _BindTiles(names).visit(fn)
        lv = analyze(fn)
        copied = _InPlaceCopies(lv, names).run(fn)
        return plan_buffers(copied, ctx, merge=False, names=names, liveness=lv if copied is fn else None)


def has_memrefs(fn: Function) -> bool:
    """True when the kernel already has buffers (an alloc statement or a tile with a MemRef)."""
    if any(is_alloc(s) for s in stmt_list(fn.body)):
        return True
    return any(v.type.memref is not None for v in tile_defs(fn))


class _BindTiles(Splicer):
    """Every tile value gets a variable, hence a buffer: a tile computed inside another call's
    arguments, yielded as an expression (`pl.yield_(pl.add(a, b))`) or passed as a loop's init value
    is first assigned to a fresh variable `<op>__tmp_v<k>` (FlattenCallExpr leaves yields alone)."""

    def __init__(self, names: LazyNames) -> None:
        super().__init__()
        self.names = names

    def flat(self, e: Expr, pre: list[Stmt], top: bool) -> Expr:
        if not isinstance(e, Call):
            return e
        args = tuple(self.flat(a, pre, False) for a in e.args)
        if any(a is not b for a, b in zip(args, e.args)):
            e = rebuild(e, {"args": args})
        if top or not isinstance(e.type, TileType):
            return e
        v = Var(self.names.fresh(e.op.name.rsplit(".", 1)[-1], "tmp"), e.type, span=e.span)
        pre.append(AssignStmt(v, e, span=e.span))
        return v

    def uses(self, e: Expr) -> Expr:
        """`e` with its variables renamed through `var_map` (which stays empty, making this a no-op,
        unless a loop's init value had to be bound to a variable)."""
        return self.visit(e) if self.var_map else e

    def _with(self, pre: list[Stmt], s: Stmt) -> Stmt:
        return seq([*pre, s], span=s.span) if pre else s

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        pre: list[Stmt] = []
        value = self.flat(self.uses(s.value), pre, True)
        return self._with(pre, s if value is s.value else rebuild(s, {"value": value}))

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        pre: list[Stmt] = []
        e = self.flat(self.uses(s.expr), pre, True)
        return self._with(pre, s if e is s.expr else rebuild(s, {"expr": e}))

    def _values(self, s: YieldStmt | ReturnStmt, top: bool) -> Stmt:
        pre: list[Stmt] = []
        vals = tuple(self.flat(self.uses(v), pre, top) for v in s.values)
        return self._with(pre, rebuild(s, {"values": vals}) if pre else s)

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        return self._values(s, False)

    def visit_ReturnStmt(self, s: ReturnStmt) -> Stmt:
        return self._values(s, True)

    def _loop(self, s: ForStmt | WhileStmt) -> Stmt:
        pre: list[Stmt] = []
        for a in s.iter_args:
            init = self.flat(self.uses(a.init_value), pre, False)
            if init is not a.init_value:
                self.var_map[a] = IterArg(a.name, a.type, init, span=a.span)
        return self._with(pre, self.generic_visit(s))

    visit_ForStmt = _loop
    visit_WhileStmt = _loop


class _InPlaceCopies:
    """Inserts `x__copy_v1 = block.move(x)` before an in-place op (`OpDef.result_reuses`) whose operand's
    buffer (the operand or anything sharing it) is still live after the op; the op updates the copy."""

    def __init__(self, lv: Liveness, names: LazyNames) -> None:
        self.lv = lv
        self.names = names
        self.root: dict[Var, Var] = {}
        self.members: dict[Var, list[Var]] = {}

    def run(self, fn: Function) -> Function:
        body = self.block(fn.body)
        return fn if body is fn.body else dataclasses.replace(fn, body=body)

    def alias(self, v: Var, src: Var) -> None:
        r = self.root.setdefault(src, src)
        self.members.setdefault(r, [r]).append(v)
        self.root[v] = r

    def block(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        stmts = stmt_list(body)
        out: list[Stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        if len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts)):
            return body
        return seq(out, span=body.span)

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, AssignStmt) and is_tile_var(s.var):
            k = updated_operand(s.value)
            if k is not None:
                return self.in_place(s, k)
            src = hard_share_source(s, s.var)
            if src is not None:
                self.alias(s.var, src)
            return [s]
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            body = self.block(s.body)
            return [s if body is s.body else rebuild(s, {"body": body})]
        if isinstance(s, IfStmt):
            then, other = self.block(s.then_body), self.block(s.else_body)
            if then is s.then_body and other is s.else_body:
                return [s]
            return [rebuild(s, {"then_body": then, "else_body": other})]
        if isinstance(s, SeqStmts):
            return stmt_list(self.block(s))
        return [s]

    def in_place(self, s: AssignStmt, k: int) -> list[Stmt]:
        call = s.value
        assert isinstance(call, Call)
        operand = call.args[k]
        assert isinstance(operand, Var)
        live = self.lv.live_after.get(id(s), frozenset())
        sharing = self.members.get(self.root.get(operand, operand), [operand])
        if operand not in live and not any(m in live for m in sharing):
            self.alias(s.var, operand)
            return [s]
        copy, mv = move_of(operand, operand.type.space, self.names.fresh(operand.name, "copy"), s.span)
        args = list(call.args)
        args[k] = copy
        self.alias(s.var, copy)
        return [mv, AssignStmt(s.var, rebuild(call, {"args": tuple(args)}), span=s.span)]


__all__ = ["InitMemRef", "has_memrefs"]
