"""The task language in the parser (today's public API, reference pl-head §2.2-2.4).

`with pl.at(...) [as tid]`, `with pl.spmd(n, ...) [as tid]`, `for i in pl.spmd(n)`,
`with pl.manual_scope()` / `pl.scope(mode=)`, `with pl.cluster()`, `pl.submit` /
`pl.spmd_submit`, `pl.system.task_dummy` / `task_invalid`, `pl.no_dep`, `pl.dump_tag`. Each task
becomes `task.begin(...)`, its kernel call(s) (an InCore scope or a `self.kernel(...)` call) and
`tid = task.end()` (pypto/ir/task_ops.py); the runtime honours the options.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import ScopeKind
from pypto.ir.expr import Call as IRCall
from pypto.ir.expr import ConstInt, Expr, GlobalVar, MakeTuple, Var
from pypto.ir.op import OpError, create_op_call
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt, ScopeStmt, seq
from pypto.ir.task_ops import TASK_ID, task_call
from pypto.ir.types import ScalarType, TensorType, TupleType
from pypto.language.placement import ScopeMode, check_at_arguments, check_spmd_arguments

from ..dsl import DslHelper
from ..errors import ParserSyntaxError, ParserTypeError
from .expressions import MethodRef

_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le"}
TASK_WITH = ("at", "spmd", "manual_scope", "scope", "cluster")


class TaskParser:
    """Mixin of the function parser (needs eval, emit, span, scopes, parse_block, assign_name)."""

    manual_depth = 0

    def task_op_call(self, ref: Any, node: ast.Call, sp: Span) -> Expr:
        """`pl.task.begin([...], [...], [...], [...], **attrs)`, `pl.task.end()`, ...: a task op as the
        printer writes it (a printed program parses back)."""
        args, kwargs, _ = self.call_args(node)
        ops = [MakeTuple(tuple(a), span=sp) if isinstance(a, (list, tuple)) else a for a in args]
        try:
            return task_call(ref.name, ops, sp, **kwargs)
        except (OpError, TypeError) as e:
            raise ParserTypeError(f"pl.{ref.name}: {e}", sp) from None

    # ---- with ------------------------------------------------------------------------------------

    def task_with(self, node: ast.With, name: str, ce: ast.Call) -> None:
        sp = self.span(node)
        tgt = node.items[0].optional_vars
        if tgt is not None and (not isinstance(tgt, ast.Name) or name not in ("at", "spmd")):
            raise ParserSyntaxError(f"`with pl.{name}(...) as name`: only pl.at and pl.spmd name a task, "
                                    "with a plain name", self.span(tgt))
        args, kwargs, _ = self.call_args(ce)
        if name == "cluster":
            if args or set(kwargs) - {"name_hint"}:
                raise ParserSyntaxError("pl.cluster takes only name_hint=", self.span(ce))
            self._inline_body(node.body)  # one core group on the CPU: no effect
            return
        if name in ("manual_scope", "scope"):
            self._scope(node, name, args, kwargs, ce)
            return
        if name == "at":
            try:
                check_at_arguments(*args, **kwargs)
            except (TypeError, ValueError) as e:
                raise ParserSyntaxError(f"pl.at: {e}", self.span(ce)) from None
            plain = tgt is None and not any(kwargs.get(k) for k in ("deps", "no_dep_args", "predicate"))
            hint = self._name_hint(kwargs, ce)
            if plain:  # an ordinary region: one kernel, ordered by the data it touches (no task bracket)
                self.emit(ScopeStmt(ScopeKind.InCore, seq(self._scoped_body(node.body)), hint, span=sp))
                return
            self._begin(kwargs, ce, sp)
            self.emit(ScopeStmt(ScopeKind.InCore, seq(self._scoped_body(node.body)), hint, span=sp))
            self._end(tgt, sp, node)
            return
        # spmd
        try:
            check_spmd_arguments(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise ParserSyntaxError(f"pl.spmd: {e}", self.span(ce)) from None
        if kwargs.get("deps") and tgt is None:
            raise ParserSyntaxError("pl.spmd: deps= is accepted only in the capture form "
                                    "`with pl.spmd(n, deps=[...]) as tid:`", self.span(ce))
        core = self._core_num(args[0] if args else kwargs.get("core_num"), ce)
        self._begin(kwargs, ce, sp, core=core)
        body = node.body
        if len(body) == 1 and self._kernel_call_stmt(body[0]):
            self.stmt(body[0])  # dispatches exactly one self.kernel(...) call
        else:
            if len(body) == 1 and isinstance(body[0], ast.With) and self._with_name(body[0]) == "at":
                body = body[0].body  # a sole pl.at(CORE_GROUP) body is the carrier
            self.emit(ScopeStmt(ScopeKind.InCore, seq(self._scoped_body(body)), span=sp))
        self._end(tgt, sp, node)

    def _with_name(self, node: ast.With) -> str | None:
        ce = node.items[0].context_expr if len(node.items) == 1 else None
        if isinstance(ce, ast.Call):
            try:
                callee = self.peek_callee(ce)
            except Exception:  # noqa: BLE001 - not a task construct
                return None
            if isinstance(callee, DslHelper):
                return callee.name
        return None

    def _kernel_call_stmt(self, s: ast.stmt) -> bool:
        v = s.value if isinstance(s, (ast.Assign, ast.Expr, ast.AnnAssign)) else None
        if not isinstance(v, ast.Call):
            return False
        f = v.func
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"

    def _scoped_body(self, body: list[ast.stmt]):
        self.scopes.push("with", True)
        try:
            return self.parse_block(body)
        finally:
            self.scopes.pop()

    def _inline_body(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def _scope(self, node: ast.With, name: str, args: list, kwargs: dict, ce: ast.Call) -> None:
        mode = ScopeMode.MANUAL if name == "manual_scope" else kwargs.pop("mode", args[0] if args else ScopeMode.AUTO)
        if name == "manual_scope" and (args or kwargs):
            raise ParserSyntaxError("pl.manual_scope() takes no arguments", self.span(ce))
        if name == "scope" and (len(args) > 1 or set(kwargs) - {"name_hint"}):
            raise ParserSyntaxError("pl.scope takes mode= only", self.span(ce))
        if not isinstance(mode, ScopeMode):
            raise ParserTypeError(f"pl.scope(mode=...) takes a pl.ScopeMode, got {mode!r}", self.span(ce))
        if self.manual_depth:
            raise ParserSyntaxError(f"pl.{name}() inside a manual scope (manual scopes do not nest, and an AUTO "
                                    "scope cannot be placed inside one)", self.span(ce))
        if mode is ScopeMode.AUTO:
            self._inline_body(node.body)  # a hand-placed AUTO scope bounds tracking only: same results
            return
        sp = self.span(node)
        self.emit(EvalStmt(task_call("task.scope_begin", span=sp), span=sp))
        self.manual_depth += 1
        try:
            self._inline_body(node.body)
        finally:
            self.manual_depth -= 1
        self.emit(EvalStmt(task_call("task.scope_end", span=sp), span=sp))

    # ---- options ---------------------------------------------------------------------------------

    def _core_num(self, v: Any, node: ast.AST) -> Expr:
        if v is None:
            raise ParserSyntaxError("pl.spmd needs core_num (an int > 0 or an integer expression)", self.span(node))
        if isinstance(v, int) and not isinstance(v, bool):
            if v <= 0:
                raise ParserSyntaxError(f"pl.spmd: core_num must be > 0, got {v}", self.span(node))
            return ConstInt(v, DataType.INDEX, span=self.span(node))
        if isinstance(v, Expr) and isinstance(v.type, ScalarType) and v.type.dtype.is_int:
            return v
        raise ParserTypeError(f"pl.spmd: core_num must be an int or an integer scalar, got {v!r}", self.span(node))

    def _deps(self, deps: Any, sp: Span) -> list[Expr]:
        if deps is None:
            return []
        if not isinstance(deps, (list, tuple)):
            raise ParserTypeError("deps= takes a list of task ids", sp, hint="deps=[tid, None, ...]")
        out = []
        for d in self.deps_entries(deps):  # type: ignore[attr-defined]  (an array: all its elements)
            if d is None:
                continue  # "no producer"
            if not (isinstance(d, Expr) and isinstance(d.type, ScalarType) and d.type.dtype.is_int):
                raise ParserTypeError(f"deps= entries are task ids (pl.Scalar[pl.TASK_ID]), arrays of them or None, got "
                                      f"{self.describe(d)}", sp)
            out.append(d)
        return out

    def _predicate(self, node: ast.expr | None, sp: Span) -> tuple[list[Expr], dict]:
        if node is None:
            return [], {}
        ok = isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP \
            and isinstance(node.left, ast.Subscript)
        value = self.eval(node.comparators[0]) if ok else None  # type: ignore[union-attr]
        if not ok or isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParserSyntaxError("predicate= must be `tensor[i, ...] OP literal` with OP one of == != > < >= <=",
                                    self.span(node))
        sub = node.left  # type: ignore[union-attr]
        t = self.eval(sub.value)
        if not (isinstance(t, Expr) and isinstance(t.type, TensorType)):
            raise ParserTypeError("predicate= reads an element of a tensor", self.span(sub))
        items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        idx = [self.eval(i) for i in items]
        if len(idx) != t.type.rank:
            raise ParserTypeError(f"predicate= indexes a rank-{t.type.rank} tensor with {len(idx)} indices",
                                  self.span(sub))
        from .values import to_expr

        exprs = [t, *(to_expr(i, self.span(sub), "predicate index", DataType.INDEX) for i in idx)]
        return exprs, {"pred_cmp": _CMP[type(node.ops[0])], "pred_value": float(value)}  # type: ignore[union-attr]

    def _begin(self, kwargs: dict, ce: ast.Call, sp: Span, core: Expr | None = None,
               pred_node: ast.expr | None = None, no_dep: list[Expr] | None = None) -> None:
        deps = self._deps(kwargs.get("deps"), self.span(ce))
        nodep = list(no_dep or [])
        for t in kwargs.get("no_dep_args") or []:
            if not (isinstance(t, Expr) and isinstance(t.type, TensorType)):
                raise ParserTypeError(f"no_dep_args= lists tensors, got {self.describe(t)}", self.span(ce))
            nodep.append(t)
        if pred_node is None:
            pred_node = next((k.value for k in ce.keywords if k.arg == "predicate"), None)
        pred, pattrs = self._predicate(pred_node, sp)
        attrs = dict(pattrs)
        if kwargs.get("sync_start"):
            attrs["sync"] = True
        args = [MakeTuple(tuple(deps), span=sp), MakeTuple(tuple(nodep), span=sp),
                MakeTuple((core,) if core is not None else (), span=sp), MakeTuple(tuple(pred), span=sp)]
        self.emit(EvalStmt(task_call("task.begin", args, sp, **attrs), span=sp))

    def _end(self, tgt: ast.expr | None, sp: Span, node: ast.AST) -> Var:
        end = task_call("task.end", span=sp)
        if isinstance(tgt, ast.Name):
            return self.assign_name(tgt.id, end, None, self.span(tgt), node)  # type: ignore[return-value]
        v = Var("_tid", end.type, span=sp)
        self.emit(AssignStmt(v, end, span=sp))
        return v

    # ---- for i in pl.spmd(n) ---------------------------------------------------------------------

    def spmd_for(self, node: ast.For) -> None:
        it = node.iter
        assert isinstance(it, ast.Call)
        sp = self.span(node)
        args, kwargs, _ = self.call_args(it)
        try:
            check_spmd_arguments(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise ParserSyntaxError(f"pl.spmd: {e}", self.span(it)) from None
        if kwargs.get("deps"):
            raise ParserSyntaxError("pl.spmd: deps= is accepted only in `with pl.spmd(n, deps=[...]) as tid:`",
                                    self.span(it))
        if not isinstance(node.target, ast.Name):
            raise ParserSyntaxError("`for i in pl.spmd(n):` binds one name, the block index", self.span(node.target))
        core = self._core_num(args[0] if args else kwargs.get("core_num"), it)
        self._begin(kwargs, it, sp, core=core)
        self.scopes.push("with", True)
        try:
            from .context import Binding

            idx = Var(node.target.id, ScalarType(DataType.INDEX), span=self.span(node.target))
            self.scopes.define(node.target.id, Binding(idx, idx.span))
            from pypto.ops.registry import block_ops

            raw = create_op_call(block_ops.get_block_idx, [], {}, sp)
            from pypto.ir.expr import Cast

            first = AssignStmt(idx, Cast(raw, DataType.INDEX, span=sp), span=sp)
            body = [first, *self.parse_block(node.body)]
        finally:
            self.scopes.pop()
        self.emit(ScopeStmt(ScopeKind.InCore, seq(body), span=sp))
        self._end(None, sp, node)

    # ---- calls -----------------------------------------------------------------------------------

    def task_helper_call(self, h: DslHelper, node: ast.Call) -> Any:
        sp = self.span(node)
        name = h.name
        if name in ("submit", "spmd_submit"):
            return self._submit(name, node, sp)
        args, kwargs, _ = self.call_args(node)
        if name == "task_invalid":
            if args or kwargs:
                raise ParserSyntaxError("pl.system.task_invalid() takes no arguments", sp)
            return task_call("task.invalid", span=sp)
        if name == "task_dummy":
            if args or set(kwargs) != {"deps"}:
                raise ParserSyntaxError("pl.system.task_dummy takes deps=[...] only", sp)
            v = Var("_join", ScalarType(TASK_ID), span=sp)
            self.emit(AssignStmt(v, task_call("task.join", self._deps(kwargs["deps"], sp), sp), span=sp))
            return v
        if name == "no_dep":
            if len(args) != 1 or kwargs or not (isinstance(args[0], Expr) and isinstance(args[0].type, TensorType)):
                raise ParserTypeError("pl.no_dep(t) takes one tensor (an argument of a self.kernel(...) call)", sp)
            return args[0]  # the enclosing call marks it (see _no_dep_args)
        if name == "dump_tag":
            if len(args) != 1 or kwargs:
                raise ParserTypeError("pl.dump_tag(t) takes one tensor", sp)
            return args[0]  # partial argument dumps are a device debugging aid: nothing to do here
        raise ParserSyntaxError(f"pl.{name}(...) is not an expression here", sp)

    def _no_dep_args(self, nodes: list[ast.expr], args: list[Any]) -> list[Expr]:
        out = []
        for n, a in zip(nodes, args):
            if isinstance(n, ast.Call) and isinstance(a, Expr):
                try:
                    callee = self.peek_callee(n)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(callee, DslHelper) and callee.name == "no_dep":
                    out.append(a)
        return out

    def _submit(self, name: str, node: ast.Call, sp: Span) -> tuple:
        if not self.ctx.in_program:
            raise ParserSyntaxError(f"pl.{name} is legal only in a @pl.program (its callee is self.<kernel>)", sp)
        if not node.args:
            raise ParserSyntaxError(f"pl.{name}(self.kernel, *args, ...) needs the kernel", sp)
        kernel = self.eval(node.args[0])
        if not isinstance(kernel, MethodRef):
            raise ParserTypeError(f"pl.{name}: the first argument must be self.<kernel>", self.span(node.args[0]))
        inner = ast.Call(func=node.args[0], args=node.args[1:], keywords=[])
        ast.copy_location(inner, node)
        args, _, nodes = self.call_args(inner)
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise ParserSyntaxError(f"pl.{name}: ** is not supported", sp)
            if k.arg != "predicate":
                kwargs[k.arg] = self.eval(k.value)
        allowed = {"deps", "dumps", "allow_early_resolve", "predicate"} | \
            ({"core_num", "sync_start"} if name == "spmd_submit" else set())
        extra = {k.arg for k in node.keywords} - allowed
        if extra:
            raise ParserSyntaxError(f"pl.{name}: unexpected keyword {sorted(extra)[0]!r}", sp)
        core = None
        if name == "spmd_submit":
            core = self._core_num(kwargs.get("core_num"), node)
        self._begin(kwargs, node, sp, core=core, no_dep=self._no_dep_args(nodes, args))
        call = self.function_call(kernel.name, args, sp, nodes)
        rt = call.type
        outs: list[Expr] = []
        if isinstance(rt, TupleType):
            v = Var(f"{kernel.name}_results", rt, span=sp)
            self.emit(AssignStmt(v, call, span=sp))
            from pypto.ir.expr import TupleGetItem

            outs = [TupleGetItem(v, i, span=sp) for i in range(len(rt.types))]
        else:
            v = Var(f"{kernel.name}_result", rt, span=sp)
            self.emit(AssignStmt(v, call, span=sp))
            outs = [v]
        tid = self._end(None, sp, node)
        return (*outs, tid)

    def kernel_call_no_dep(self, call: IRCall, nodes: list[ast.expr], args: list[Any], sp: Span) -> IRCall | None:
        """`self.k(pl.no_dep(t), ...)` outside pl.submit: wrap the call in a task with no_dep args."""
        nodep = self._no_dep_args(nodes, args)
        if not nodep or not isinstance(call.op, GlobalVar):
            return None
        args4 = [MakeTuple((), span=sp), MakeTuple(tuple(nodep), span=sp), MakeTuple((), span=sp),
                 MakeTuple((), span=sp)]
        self.emit(EvalStmt(task_call("task.begin", args4, sp), span=sp))
        v = Var(f"{call.op.name}_result", call.type, span=sp)
        self.emit(AssignStmt(v, call, span=sp))
        self._end(None, sp, call)  # type: ignore[arg-type]
        return v  # type: ignore[return-value]


__all__ = ["TASK_WITH", "TaskParser"]
