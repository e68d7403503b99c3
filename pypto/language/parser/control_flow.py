"""Control flow: `for` over `pl.range` / `pl.parallel` / `pl.unroll` / `pl.while_`, `while`, `if`
(a compile-time condition keeps only the taken branch), `with pl.incore()` / `pl.auto_incore()`,
and `pl.yield_`, by which loops with init_values and ifs pass values out.

Scope rules follow the reference: a plain `for` (no init_values), an `if` without `pl.yield_`,
`with` and a natural `while` let their variables leak to the enclosing scope; loops with
init_values and yielding ifs expose only their yield targets.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, LoopOrigin, ScopeKind
from pypto.ir.expr import ConstInt, Expr, Var, scalar_type
from pypto.ir.span import Span
from pypto.ir.stmt import ForStmt, IfStmt, ScopeStmt, Stmt, WhileStmt, YieldStmt, seq
from pypto.ir.types import ScalarType, Type

from ..dsl import DslHelper
from ..errors import (
    InvalidOperationError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedFeatureError,
)
from .arrays import ARRAY_TYPES, ArrayParser, Slot
from .assignments import AssignmentParser
from .context import Binding
from .cross_core import CrossCoreParser, split_aiv
from .tasks import TASK_WITH, TaskParser
from .values import check_compatible, to_expr


@dataclass
class _YieldCtx:
    """A loop or if that takes a `pl.yield_`: what it expects, and what its first yield set (the
    target names and types the other branch must match)."""

    kind: str  # "loop" or "if"
    expected: int | None
    targets: list[str] | None = None
    target_spans: list[Span] | None = None
    types: list[Type] | None = None
    anns: list[Type | None] | None = None
    span: Span | None = None
    layout: list[Slot] | None = None  # user-level values -> flat IR values (a pl.array is several)


class ControlFlowParser(AssignmentParser, TaskParser, CrossCoreParser, ArrayParser):
    """Mixin: loops, ifs, `with` scopes and yields. Needs, besides what AssignmentParser needs,
    `self.yields` (the open loops and ifs that take a yield), `parse_block` and `stmt`
    (FunctionParser)."""

    # ---- yield -------------------------------------------------------------------------------

    def _yield_targets(self, tgt: ast.expr) -> tuple[list[str], list[Span]]:
        elts = tgt.elts if isinstance(tgt, (ast.Tuple, ast.List)) else [tgt]
        names, spans = [], []
        for e in elts:
            if not isinstance(e, ast.Name):
                raise ParserSyntaxError("pl.yield_ results must be assigned to plain names", self.span(e))
            names.append(e.id)
            spans.append(self.span(e))
        return names, spans

    def yield_stmt(self, call: ast.Call, names: list[str] | None, spans: list[Span], ann: Type | None,
                   is_last: bool) -> None:
        sp = self.span(call)
        if not self.yields:
            raise InvalidOperationError("pl.yield_ outside a loop with init_values or an if statement", sp)
        if call.keywords:
            raise ParserSyntaxError("pl.yield_ takes positional values only", sp)
        if not is_last:
            raise InvalidOperationError("pl.yield_ must be the last statement of its block", sp)
        ctx = self.yields[-1]
        vals: list[Expr] = []
        layout: list[Slot] = []
        for a in call.args:
            v = self.eval(a)
            if isinstance(v, ARRAY_TYPES):  # an array yields its elements
                vals += self.array_elems(v)
                layout.append(Slot(v.extent, v.dtype, v.task_ids))
                continue
            i = len(vals)
            like = None
            if ctx.types is not None and i < len(ctx.types) and isinstance(ctx.types[i], ScalarType):
                like = ctx.types[i].dtype
            vals.append(to_expr(v, self.span(a), "yielded value", like))
            layout.append(Slot())
        if ctx.layout is not None and layout != ctx.layout and any(s.extent for s in ctx.layout + layout):
            raise ParserTypeError("pl.yield_ passes arrays where the other values are not arrays (or arrays of "
                                  "another extent or dtype)", sp)
        if ctx.expected is not None and len(vals) != ctx.expected:
            raise SSAViolationError(f"pl.yield_ passes {len(vals)} values but the loop carries {ctx.expected}", sp)
        if names is not None and len(names) != len(layout):
            raise ParserSyntaxError(f"pl.yield_ passes {len(layout)} values into {len(names)} names", sp)
        if ctx.kind == "if" and ctx.targets is not None:
            if names is not None and names != ctx.targets:
                raise ParserSyntaxError(f"both branches must yield into the same names ({', '.join(ctx.targets)})",
                                        sp)
            if len(vals) != len(ctx.types or []):
                raise SSAViolationError("both branches of an if must yield the same number of values", sp)
        elif ctx.kind == "loop" and ctx.types is not None:
            for i, (v, t) in enumerate(zip(vals, ctx.types)):
                check_compatible(t, v.type, sp, f"yielded value {i}")
        if ctx.targets is None:
            ctx.targets = names
            ctx.target_spans = spans
        if ctx.kind == "if" and ctx.types is None:
            ctx.types = [v.type for v in vals]
        if ctx.layout is None:
            ctx.layout = layout
        if ann is not None:
            ctx.anns = [ann]
        ctx.span = sp
        self.emit(YieldStmt(tuple(vals), span=sp))

    def define_results(self, names: list[str] | None, spans: list[Span] | None, types: list[Type],
                       count: int, sp: Span, what: str) -> list[Var]:
        if names is None:
            names = [f"{what}_out{i}" if count > 1 else f"{what}_out" for i in range(count)]
            spans = [sp] * count
        out = []
        for n, s, t in zip(names, spans or [sp] * count, types):
            b = self.scopes.lookup(n)
            if b is not None and not b.python and self.strict_ssa:
                raise SSAViolationError(f"variable '{n}' is assigned more than once (strict_ssa=True)", s,
                                        previous_span=b.span)
            v = Var(n, t, span=s)
            self.scopes.define(n, Binding(v, s))
            out.append(v)
        return out

    def define_slots(self, ctx: _YieldCtx, types: list[Type], count: int, sp: Span, what: str) -> list[Var]:
        """The results of a loop / yielding if; array values are regrouped under their names."""
        if ctx.targets is not None and ctx.layout and any(s.extent is not None for s in ctx.layout):
            return self.bind_result_slots(ctx.targets, ctx.target_spans or [sp] * len(ctx.targets), types, ctx.layout)
        return self.define_results(ctx.targets, ctx.target_spans, types, count, sp, what)

    # ---- loops -------------------------------------------------------------------------------

    def st_For(self, node: ast.For) -> None:
        sp = self.span(node)
        if node.orelse:
            raise UnsupportedFeatureError("for ... else is not supported", sp)
        it = node.iter
        helper = None
        if isinstance(it, ast.Call):
            callee = self.eval(it.func)
            if isinstance(callee, DslHelper) and callee.name in ("range", "parallel", "unroll", "while_", "pipeline"):
                helper = callee.name
            elif isinstance(callee, DslHelper) and callee.name == "spmd":
                self.spmd_for(node)
                return
            elif callee is split_aiv:
                self.split_aiv_for(node)
                return
        if helper is None:
            raise ParserSyntaxError("for loops iterate over pl.range, pl.parallel, pl.unroll or pl.while_",
                                    self.span(it), hint="write `for i in pl.range(n):`")
        if helper == "while_":
            self.while_iter_loop(node)
            return
        args, kwargs, nodes = self.call_args(it)
        init = kwargs.pop("init_values", None)
        chunk = kwargs.pop("chunk", None)
        policy = kwargs.pop("chunk_policy", "leading_full")
        origin = kwargs.pop("origin", LoopOrigin.Original)
        if helper == "pipeline":  # the stage count only replicates the body on the device: same results
            stage = kwargs.pop("stage", None)
            if not isinstance(stage, int) or isinstance(stage, bool) or stage < 1:
                raise ParserSyntaxError(f"pl.pipeline needs stage=F, a positive int literal (got {stage!r})",
                                        self.span(it))
            helper = "range"
        if kwargs:
            raise ParserSyntaxError(f"pl.{helper} got unexpected keyword(s) {', '.join(kwargs)}", self.span(it))
        if not 1 <= len(args) <= 3:
            raise ParserSyntaxError(f"pl.{helper} takes 1 to 3 positional arguments like range(), got {len(args)}",
                                    self.span(it))
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        bounds = []
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            e = to_expr(v, self.span(it), f"loop {what}")
            if not isinstance(e.type, ScalarType) or not (e.type.dtype.is_int):
                raise ParserTypeError(f"loop {what} must be an integer", self.span(it))
            bounds.append(e)
        if isinstance(bounds[2], ConstInt) and bounds[2].value == 0:
            raise ParserSyntaxError("loop step cannot be zero", self.span(it))
        kind = {"range": ForKind.Sequential, "parallel": ForKind.Parallel, "unroll": ForKind.Unroll}[helper]
        if kind is ForKind.Unroll:
            if not all(isinstance(b, ConstInt) for b in bounds):
                raise ParserSyntaxError("pl.unroll needs constant bounds", self.span(it))
            if init is not None and chunk is None:  # (a chunked one carries values once in SSA form)
                raise ParserSyntaxError("pl.unroll does not take init_values", self.span(it))
        if chunk is not None:
            if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk <= 0:
                raise ParserSyntaxError("chunk must be a positive integer literal", self.span(it))
            if not any(s.kind == "auto_incore" for s in self.scopes.stack):
                raise ParserSyntaxError("chunk= is only allowed inside `with pl.auto_incore():`", self.span(it))
        inits: list[Expr] = []
        layout: list[Slot] = []
        if init is not None:
            if not isinstance(init, (tuple, list)):
                init = (init,)
            inits, layout = self.flatten_values(init, self.span(it), "init value")
        # target
        tgt = node.target
        iter_nodes: list[ast.expr] = []
        if isinstance(tgt, ast.Name):
            loop_name = tgt
            if inits:
                raise ParserSyntaxError("a loop with init_values unpacks them: `for i, (a, b) in pl.range(...)`",
                                        self.span(tgt))
        elif isinstance(tgt, ast.Tuple) and len(tgt.elts) == 2 and isinstance(tgt.elts[0], ast.Name) \
                and isinstance(tgt.elts[1], (ast.Tuple, ast.List)):
            loop_name = tgt.elts[0]
            iter_nodes = list(tgt.elts[1].elts)
            if len(iter_nodes) != len(layout):
                raise ParserSyntaxError(f"{len(iter_nodes)} loop-carried names but {len(layout)} init_values",
                                        self.span(tgt))
        else:
            raise ParserSyntaxError("loop target must be `i` or `i, (a, b, ...)`", self.span(tgt))
        loop_var = Var(loop_name.id, scalar_type(DataType.INDEX), span=self.span(loop_name))
        if self.strict_ssa:
            self._check_new_name(loop_name.id, self.span(loop_name))
        scope = self.scopes.push("for_iter" if inits else "for", leaks=not inits)
        self.scopes.define(loop_name.id, Binding(loop_var, loop_var.span))
        iter_args = self.bind_iter_slots(iter_nodes, inits, layout)
        ctx = _YieldCtx("loop", len(inits), types=[a.type for a in iter_args], layout=layout) if inits else None
        if ctx:
            self.yields.append(ctx)
        self.loop_depth += 1
        try:
            body = self.parse_block(node.body)
        finally:
            self.loop_depth -= 1
            if ctx:
                self.yields.pop()
            self.scopes.pop()
        del scope
        rets: list[Var] = []
        if inits:
            assert ctx is not None
            if not body or not isinstance(body[-1], YieldStmt):
                raise SSAViolationError("a loop with init_values must end with pl.yield_(...) of the new values", sp)
            rets = self.define_slots(ctx, [a.type for a in iter_args], len(inits), sp, loop_name.id)
        self.emit(ForStmt(loop_var, bounds[0], bounds[1], bounds[2], tuple(iter_args), seq(body), tuple(rets),
                          kind, chunk, policy, origin, span=sp))

    def _check_new_name(self, name: str, sp: Span) -> None:
        b = self.scopes.lookup(name)
        if b is not None and not b.python:
            raise SSAViolationError(f"variable '{name}' is assigned more than once (strict_ssa=True)", sp,
                                    previous_span=b.span)

    def while_iter_loop(self, node: ast.For) -> None:
        sp = self.span(node)
        it = node.iter
        args, kwargs, _ = self.call_args(it)
        init = kwargs.pop("init_values", None)
        if args or kwargs or init is None:
            raise ParserSyntaxError("pl.while_ takes only init_values=(...)", self.span(it),
                                    hint="for (x,) in pl.while_(init_values=(0,)):")
        if not isinstance(init, (tuple, list)):
            init = (init,)
        inits, layout = self.flatten_values(init, self.span(it), "init value")
        tgt = node.target
        if not isinstance(tgt, (ast.Tuple, ast.List)):
            raise ParserSyntaxError("pl.while_ unpacks its state: `for (x, y) in pl.while_(init_values=(...))`",
                                    self.span(tgt))
        if len(tgt.elts) != len(layout):
            raise ParserSyntaxError(f"{len(tgt.elts)} loop-carried names but {len(layout)} init_values", self.span(tgt))
        if not node.body or not (isinstance(node.body[0], ast.Expr) and self._is_helper(node.body[0].value, "cond")):
            raise InvalidOperationError("the first statement of a pl.while_ loop must be pl.cond(condition)", sp)
        self.scopes.push("while_iter", False)
        iter_args = self.bind_iter_slots(list(tgt.elts), inits, layout)
        cond_call = node.body[0].value
        assert isinstance(cond_call, ast.Call)
        if len(cond_call.args) != 1:
            raise ParserSyntaxError("pl.cond takes one condition", self.span(cond_call))
        cond = self.eval_ir(cond_call.args[0], "while condition")
        self._check_condition(cond, cond_call.args[0])
        ctx = _YieldCtx("loop", len(inits), types=[a.type for a in iter_args], layout=layout)
        self.yields.append(ctx)
        self.loop_depth += 1
        try:
            body = self.parse_block(node.body[1:])
        finally:
            self.loop_depth -= 1
            self.yields.pop()
            self.scopes.pop()
        if not body or not isinstance(body[-1], YieldStmt):
            raise SSAViolationError("a pl.while_ loop must end with pl.yield_(...) of the new state", sp)
        rets = self.define_slots(ctx, [a.type for a in iter_args], len(inits), sp, "while")
        self.emit(WhileStmt(cond, tuple(iter_args), seq(body), tuple(rets), span=sp))

    def _check_condition(self, cond: Expr, node: ast.expr) -> None:
        if not isinstance(cond.type, ScalarType):
            raise ParserTypeError(f"a condition must be a scalar, got {self.describe(cond)}", self.span(node))

    def st_While(self, node: ast.While) -> None:
        sp = self.span(node)
        if node.orelse:
            raise UnsupportedFeatureError("while ... else is not supported", sp)
        c = self.eval(node.test)
        if not isinstance(c, Expr):
            raise ParserSyntaxError("a while condition must depend on run-time values", self.span(node.test),
                                    hint="a Python-constant condition would loop forever or never")
        self._check_condition(c, node.test)
        self.scopes.push("while", True)
        self.loop_depth += 1
        try:
            body = self.parse_block(node.body)
        finally:
            self.loop_depth -= 1
            self.scopes.pop()
        self.emit(WhileStmt(c, (), seq(body), (), span=sp))

    # ---- if ----------------------------------------------------------------------------------

    def st_If(self, node: ast.If, is_last: bool = False) -> None:
        sp = self.span(node)
        c = self.eval(node.test)
        if not isinstance(c, Expr):  # compile-time condition: keep only the taken branch, in place
            taken = node.body if c else node.orelse
            for i, s in enumerate(taken):
                self.stmt(s, is_last=is_last and i == len(taken) - 1)
            return
        self._check_condition(c, node.test)
        then_ctx = _YieldCtx("if", None)
        then_body, then_scope = self._branch(node.body, then_ctx)
        else_body: list[Stmt] | None = None
        else_ctx = _YieldCtx("if", None, targets=then_ctx.targets, types=then_ctx.types, layout=then_ctx.layout)
        if node.orelse:
            orelse = self._elif_yield(node) if then_ctx.span else node.orelse
            else_body, _ = self._branch(orelse, else_ctx if then_ctx.span else _YieldCtx("if", None))
            else_yielded = bool(else_body) and isinstance(else_body[-1], YieldStmt)
        else:
            else_yielded = False
        then_yielded = bool(then_body) and isinstance(then_body[-1], YieldStmt)
        if then_yielded != else_yielded:
            raise SSAViolationError("if one branch of an if yields values, the other must yield the same number", sp,
                                    hint="add an else branch ending in pl.yield_(...)")
        rets: list[Var] = []
        if then_yielded:
            n = len(then_body[-1].values)  # type: ignore[attr-defined]
            rets = self.define_slots(then_ctx, list(then_ctx.types or []), n, sp, "if")
        self.emit(IfStmt(c, seq(then_body), seq(else_body) if else_body is not None else None, tuple(rets), span=sp))
        del then_scope

    def _elif_yield(self, node: ast.If) -> list[ast.stmt]:
        """`elif` is an `else` holding one `if`: when the branches yield (`r = pl.yield_(...)`), the
        else yields what the inner if defines (`r = pl.yield_(r)` appended), as the chain means."""
        last = node.body[-1] if node.body else None
        if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If) or \
                not isinstance(last, (ast.Assign, ast.AnnAssign)) or not self._is_helper(last.value, "yield_"):
            return node.orelse
        tgt = last.targets[0] if isinstance(last, ast.Assign) else last.target
        names = [e.id for e in (tgt.elts if isinstance(tgt, (ast.Tuple, ast.List)) else [tgt]) if isinstance(e, ast.Name)]
        inner = node.orelse[0]
        end = inner.body[-1] if inner.body else None
        if not isinstance(end, (ast.Assign, ast.AnnAssign)) or not self._is_helper(end.value, "yield_"):
            return node.orelse  # the inner if does not yield: the usual error explains
        assert isinstance(last.value, ast.Call)
        call = ast.Call(func=last.value.func, args=[ast.Name(id=n, ctx=ast.Load()) for n in names], keywords=[])
        target = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store()) \
            if isinstance(tgt, (ast.Tuple, ast.List)) else ast.Name(id=names[0], ctx=ast.Store())
        y = ast.Assign(targets=[target], value=call)
        for n in ast.walk(y):
            ast.copy_location(n, inner)
            if hasattr(n, "end_lineno"):
                n.end_lineno, n.end_col_offset = inner.lineno, inner.col_offset + 4  # type: ignore[attr-defined]
        return [inner, y]

    def _branch(self, stmts: list[ast.stmt], ctx: _YieldCtx) -> tuple[list[Stmt], Any]:
        scope = self.scopes.push("if", True)
        self.yields.append(ctx)
        try:
            body = self.parse_block(stmts)
        finally:
            self.yields.pop()
            if ctx.span is not None:  # a yielding branch exposes only its yield targets (defined after the if)
                scope.leaks = False
            self.scopes.pop()
        return body, scope

    # ---- with --------------------------------------------------------------------------------

    def st_With(self, node: ast.With) -> None:
        sp = self.span(node)
        if len(node.items) != 1:
            raise ParserSyntaxError("use exactly one context: `with pl.at(level=...):`", sp)
        ce = node.items[0].context_expr
        kind, hint = None, ""
        if isinstance(ce, ast.Call):
            callee = self.eval(ce.func)
            if isinstance(callee, DslHelper) and callee.name in TASK_WITH:
                self.task_with(node, callee.name, ce)
                return
        if node.items[0].optional_vars is not None:
            raise ParserSyntaxError("only `with pl.at(...) as tid:` and `with pl.spmd(...) as tid:` bind a name", sp)
        if isinstance(ce, ast.Call):
            if isinstance(callee, DslHelper) and callee.name in ("incore", "auto_incore") and not ce.args \
                    and all(k.arg == "name_hint" for k in ce.keywords):
                kind = ScopeKind.InCore if callee.name == "incore" else ScopeKind.AutoInCore
                hint = self._name_hint({k.arg: self.eval(k.value) for k in ce.keywords}, ce)
        if kind is None:
            raise ParserSyntaxError("only `with pl.at(level=...):`, `with pl.incore():` and `with pl.auto_incore():` "
                                    "are supported", self.span(ce))
        self.scopes.push("auto_incore" if kind is ScopeKind.AutoInCore else "with", True)
        try:
            body = self.parse_block(node.body)
        finally:
            self.scopes.pop()
        self.emit(ScopeStmt(kind, seq(body), hint, span=sp))

    def _name_hint(self, kwargs: dict, ce: ast.Call) -> str:
        """`name_hint=` of a region: a string naming the kernel it is outlined to."""
        hint = kwargs.get("name_hint") or ""
        if not isinstance(hint, str) or (hint and not hint.isidentifier()):
            raise ParserSyntaxError(f"name_hint must be a string that is a valid identifier, got {hint!r}",
                                    self.span(ce))
        return hint


__all__ = ["ControlFlowParser"]
