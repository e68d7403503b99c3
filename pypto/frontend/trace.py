"""The tracer: running a `@pypto.frontend.jit` function over `Tensor` handles records the Tensor
graph as IR statements of one `pl` function (tensor ops, views, assembles, `pl.range` loops).

A `Tensor` handle is mutable: `pypto.assemble(x, offsets, out)`, `out[...] = x` and `out.move(x)`
make `out`'s handle point at a new IR value. A `pypto.loop` records its body once; the handles the
body changed become the loop's carried values (iter_args), so SSA form never shows in user code.
Every statement carries the span of the user's line that made it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pypto.errors import InvalidState
from pypto.ir.builder import frame_span
from pypto.ir.diagnostics import LocatedError
from pypto.ir.expr import Expr, IterArg, Var, scalar_type
from pypto.ir.op import OpError, create_op_call
from pypto.ir.rewrite import substitute
from pypto.ir.span import UNKNOWN_SPAN, Span
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, seq

from .merge_scopes import current_scope, merge_block
from .options import get_semantic_label
from .tile_expand import expand_block

_HERE = os.path.dirname(os.path.abspath(__file__))
_PKG = os.path.dirname(_HERE)


class FrontendError(LocatedError, ValueError):
    """A tensor-level program the frontend cannot trace; the message shows the user's line."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message, span if span is not None and span is not UNKNOWN_SPAN else None, hint=hint)


def user_span() -> Span:
    """The span of the innermost frame outside the pypto package (the user's line and columns)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG + os.sep):
        f = f.f_back
    return frame_span(f)


class _Block:
    """Statements of one open construct (the function body or a loop body)."""

    def __init__(self, depth: int):
        self.depth = depth
        self.stmts: list[Stmt] = []
        self.pending: list[tuple] = []  # region writes to tile when the block closes (tile_expand.py)
        self.scope_of: dict[int, int] = {}  # id(statement) -> the sg_set_scope id it was recorded under


class Tracer:
    """The state of one trace: open blocks, the live tensor handles, names, tile-shape settings."""

    def __init__(self, name: str):
        self.name = name
        self.blocks: list[_Block] = [_Block(0)]
        self.handles: list[Any] = []  # every Tensor handle made in this trace
        self._names: dict[str, int] = {}
        self.vec_tile_shapes: tuple[int, ...] | None = None
        self.cube_tile_shapes: Any = None
        self.loop_count = 0
        self.loop_names: set[str] = set()
        self.loop_vars: list[str] = []
        self.loop_ranges: dict[Var, tuple[Expr, Expr]] = {}  # loop index -> (start, stop) of open loops
        self.loop_steps: dict[Var, Expr] = {}
        self.forced_scope: int | None = None  # a fusion scope id set by the frontend (vec_nbuffer_setting)
        self.options: dict[str, dict] = {}  # the options in force while tracing (options.traced_option)
        self.labels: dict[str, str] = {}  # value name -> the semantic label it was recorded under

    # --- names and statements
    def fresh(self, hint: str) -> str:
        base = hint if hint and hint.isidentifier() else "t"
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    @property
    def depth(self) -> int:
        return len(self.blocks) - 1

    def emit(self, stmt: Stmt) -> None:
        block = self.blocks[-1]
        block.stmts.append(stmt)
        sid = self.forced_scope if self.forced_scope is not None else current_scope()
        if sid >= 0:
            block.scope_of[id(stmt)] = sid

    def let(self, hint: str, value: Expr, span: Span) -> Var:
        v = Var(self.fresh(hint), value.type, span=span)
        self.emit(AssignStmt(v, value, span=span))
        label = get_semantic_label()
        if label:  # (set_semantic_label: shown in the tensor graph's JSON)
            self.labels[v.name] = label
        return v

    def let_early(self, hint: str, value: Expr, span: Span) -> Var:
        """`hint = value`, placed in the current block right after the last statement defining a
        variable it reads (so ops between there and here can share a kernel with what follows)."""
        from pypto.ir.variables import defined_vars, expr_vars

        needs = expr_vars(value)
        stmts = self.blocks[-1].stmts
        at = 0
        for k, st in enumerate(stmts):
            if needs & set(defined_vars(st)):
                at = k + 1
        v = Var(self.fresh(hint), value.type, span=span)
        stmts.insert(at, AssignStmt(v, value, span=span))
        return v

    def let_scalar(self, hint: str, value: Expr) -> Var:
        return self.let(hint, value, user_span())

    def call(self, op: Any, args: list[Expr], kwargs: dict[str, Any] | None = None, hint: str = "t",
             span: Span | None = None) -> Var:
        """Emit `hint = op(args, kwargs)`; a type error of the op names the user's line."""
        span = span or user_span()
        try:
            c = create_op_call(op, args, kwargs or {}, span=span)
        except OpError as e:
            raise FrontendError(str(e).removeprefix("Error: "), span) from None
        return self.let(hint, c, span)

    # --- loops
    @contextmanager
    def loop_body(self, var: Var, start: Expr, stop: Expr, step: Expr, span: Span) -> Iterator[None]:
        """Record a loop: the body's statements go into a new block; the handles it changed are
        carried."""
        before = {id(h): h._var for h in self.handles}
        self.blocks.append(_Block(self.depth + 1))
        ok = False
        try:
            yield
            ok = True
            self.close_block(keep={h._var for h in self.handles if id(h) in before})
        finally:
            body = self.blocks.pop()
            if ok:
                self._close_loop(body, before, var, start, stop, step, span)

    def _close_loop(self, body: _Block, before: dict[int, Var], var: Var, start: Expr, stop: Expr, step: Expr,
                    span: Span) -> None:
        changed = [h for h in self.handles if id(h) in before and h._var is not before[id(h)]]
        mapping: dict[Var, Expr] = {}
        iter_args, finals = [], []
        for h in changed:
            init = before[id(h)]
            ia = IterArg(self.fresh(h._hint), init.type, init, span=span)
            mapping[init] = ia
            iter_args.append(ia)
            finals.append(h._var)
        stmts = list(body.stmts)
        if changed:
            stmts.append(YieldStmt(tuple(finals), span=span))
        block = seq(stmts, span=span)
        if mapping:
            block = substitute(block, mapping)
        rets = tuple(Var(self.fresh(h._hint), h._var.type, span=span) for h in changed)
        self.emit(ForStmt(loop_var=var, start=start, stop=stop, step=step, iter_args=tuple(iter_args), body=block,
                          return_vars=rets, span=span))
        for h, r in zip(changed, rets):
            h._set(r, self.depth)
        for h in self.handles:  # values made inside the loop are not visible after it
            if h._depth > self.depth and id(h) not in {id(c) for c in changed}:
                h._escaped = span

    def close_block(self, keep: set[Var]) -> None:
        """Tile the innermost block's region writes by the vec tile shapes set for them (`keep`:
        values the code after the block may still read)."""
        if self.blocks[-1].pending:
            expand_block(self, self.blocks[-1], keep)
        if self.blocks[-1].scope_of:
            merge_block(self.blocks[-1], keep)

    # --- run-time branches (control.py: _Branch)
    def branch_open(self) -> dict[int, tuple[Any, Var]]:
        """Start recording one side of an `if`: the handles' values before it."""
        before = {id(h): (h, h._var) for h in self.handles}
        self.blocks.append(_Block(self.depth + 1))
        return before

    def branch_close(self, before: dict[int, tuple[Any, Var]]) -> tuple[list[Stmt], dict[int, Var]]:
        """End one side: its statements and the values it gave the handles; the handles go back
        to their values before the `if` (the other side starts from there)."""
        self.close_block(keep={h._var for h, _ in before.values()})
        block = self.blocks.pop()
        after = {k: h._var for k, (h, _) in before.items()}
        for h, v0 in before.values():
            if h._var is not v0:
                h._set(v0, self.depth)
        return block.stmts, after

    def emit_if(self, cond: Expr, then: tuple[list[Stmt], dict[int, Var]], other: tuple[list[Stmt], dict[int, Var]],
                before: dict[int, tuple[Any, Var]], extra: list[tuple[Any, Var, Var]], span: Span) -> list[Var]:
        """The `if` statement: handles either side changed, and `extra` (name-merged values: a handle
        to rebind, the then value, the else value), become its results."""
        from pypto.ir.stmt import IfStmt

        phis = [(h, then[1][k], other[1][k]) for k, (h, v0) in before.items()
                if then[1][k] is not v0 or other[1][k] is not v0] + list(extra)
        for h, a, b in phis:
            if a.type != b.type:
                raise FrontendError(f"the two sides of a run-time if give `{h._hint}` different types ({a.type} and "
                                    f"{b.type})", span)
        rets = [Var(self.fresh(h._hint), a.type, span=span) for h, a, _ in phis]
        then_stmts = then[0] + ([YieldStmt(tuple(a for _, a, _ in phis), span=span)] if phis else [])
        else_stmts = other[0] + ([YieldStmt(tuple(b for _, _, b in phis), span=span)] if phis else [])
        self.emit(IfStmt(cond, seq(then_stmts, span=span), seq(else_stmts, span=span) if else_stmts else None,
                         tuple(rets), span=span))
        known = {id(h) for h, _ in before.values()}
        for h, r in zip([p[0] for p in phis], rets):
            h._set(r, self.depth)
        for h in self.handles:  # values made inside a side are not visible after the if
            if id(h) not in known and h._depth > self.depth and all(h is not p[0] for p in phis):
                h._escaped = span
        return rets

    def scalar_var(self, name: str) -> Var:
        from pypto.ir.dtype import DataType

        return Var(self.fresh(name), scalar_type(DataType.INDEX), span=user_span())


_STATE = threading.local()


def current(what: str = "this") -> Tracer:
    tr = getattr(_STATE, "tracer", None)
    if tr is None:
        raise InvalidState(f"{what} can only be used inside a @pypto.frontend.jit function while it is traced")
    return tr


def active() -> Tracer | None:
    return getattr(_STATE, "tracer", None)


@contextmanager
def tracing(tr: Tracer) -> Iterator[Tracer]:
    prev = getattr(_STATE, "tracer", None)
    _STATE.tracer = tr
    try:
        yield tr
    finally:
        _STATE.tracer = prev


__all__ = ["FrontendError", "Tracer", "active", "current", "tracing", "user_span"]
