"""Statement parsing: one Python function definition -> one `ir.Function`.

The parser is faithful, not clever: reassignments stay reassignments (the same Var object is
assigned again; ConvertToSSA renames later), loops and ifs keep their structure, and every
construct keeps its source span. Scope rules follow the reference: a plain `for` (no init_values),
an `if` without `pl.yield_`, `with` and a natural `while` let their variables leak to the
enclosing scope; loops with init_values and yielding ifs expose only their yield targets.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, FunctionType, LoopOrigin, ParamDirection, ScopeKind
from pypto.ir.expr import (
    Call,
    Cast,
    ConstInt,
    Expr,
    IterArg,
    MemRef,
    TupleGetItem,
    Var,
    make_memref,
    scalar_type,
)
from pypto.ir.function import Function
from pypto.ir.node import replace
from pypto.ir.span import Span
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
)
from pypto.ir.structural import structural_equal
from pypto.ir.types import MemRefType, ScalarType, TileType, TupleType, Type
from pypto.ops.registry import lookup_dsl

from ..annotations import AnnotationError, DirectionAnn, to_ir_type
from ..dsl import DslHelper, DslOp
from ..errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedFeatureError,
)
from .context import Binding, PyEnv, Scopes, Source
from .expressions import ExprParser
from .values import check_compatible, is_number, to_expr

_SUPPORTED = ("Only assignments, for loops, while loops, if statements, with statements, returns, break, "
              "continue, and pass are supported")


@dataclass
class FunctionSig:
    name: str
    params: list[Var]
    directions: list[ParamDirection]
    return_types: list[Type]
    func_type: FunctionType
    span: Span
    declared_returns: bool = True


@dataclass
class ParseCtx:
    """State shared by the functions of one program (or one standalone function)."""

    in_program: bool = False
    signatures: dict[str, FunctionSig] = field(default_factory=dict)
    externals: dict[str, Function] = field(default_factory=dict)
    method_names: set[str] = field(default_factory=set)

    def add_external(self, fn: Function, span: Span) -> None:
        if fn.name in self.method_names:
            raise ParserError(f"external function '{fn.name}' has the same name as a function of this program",
                              span, hint="rename one of them")
        prev = self.externals.get(fn.name)
        if prev is not None and prev is not fn:
            raise ParserError(f"two different external functions are named '{fn.name}'", span)
        self.externals[fn.name] = fn
        if fn.name not in self.signatures:
            self.signatures[fn.name] = FunctionSig(fn.name, list(fn.params), list(fn.param_directions),
                                                   list(fn.return_types), fn.func_type, fn.span)
        if self.in_program:
            from ..decorators import function_deps  # functions the external one calls come along too

            for dep in function_deps(fn):
                if dep.name not in self.externals:
                    self.add_external(dep, span)


@dataclass
class _YieldCtx:
    kind: str  # "loop" or "if"
    expected: int | None
    targets: list[str] | None = None
    target_spans: list[Span] | None = None
    types: list[Type] | None = None
    anns: list[Type | None] | None = None
    span: Span | None = None


def _assign_names(stmts: list[ast.stmt]) -> tuple[dict[str, int], set[str]]:
    """Count assignments per name, and the names assigned inside nested blocks."""
    counts: dict[str, int] = {}
    nested: set[str] = set()

    def targets(t: ast.expr, depth: int) -> None:
        if isinstance(t, ast.Name):
            counts[t.id] = counts.get(t.id, 0) + 1
            if depth:
                nested.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e, depth)

    def walk(body: list[ast.stmt], depth: int) -> None:
        for s in body:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    targets(t, depth)
            elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
                targets(s.target, depth)
            elif isinstance(s, ast.For):
                targets(s.target, depth + 1)
                walk(s.body, depth + 1)
                walk(s.orelse, depth + 1)
            elif isinstance(s, (ast.While, ast.If)):
                walk(s.body, depth + 1)
                walk(s.orelse, depth + 1)
            elif isinstance(s, ast.With):
                walk(s.body, depth + 1)

    walk(stmts, 0)
    return counts, nested


class FunctionParser(ExprParser):
    def __init__(self, ctx: ParseCtx, src: Source, env: PyEnv, node: ast.FunctionDef, *,
                 func_type: FunctionType = FunctionType.Opaque, strict_ssa: bool = False, is_method: bool = False):
        self.ctx = ctx
        self.src = src
        self.env = env
        self.node = node
        self.func_type = func_type
        self.strict_ssa = strict_ssa
        self.is_method = is_method
        self.scopes = Scopes()
        self.blocks: list[list[Stmt]] = []
        self.yields: list[_YieldCtx] = []
        self.loop_depth = 0
        self.sig: FunctionSig | None = None
        self.inline_return: list[Any] | None = None
        self.counts: dict[str, int] = {}
        self.nested: set[str] = set()
        self.returned = False

    # ---- signature ---------------------------------------------------------------------------

    def parse_signature(self) -> FunctionSig:
        n = self.node
        a = n.args
        sp = self.span(n)
        if isinstance(n, ast.AsyncFunctionDef):
            raise UnsupportedFeatureError("kernel functions cannot be async", sp, hint="remove `async`")
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise UnsupportedFeatureError("kernel functions take plain positional parameters only "
                                          "(no *args, **kwargs, keyword-only or positional-only)", sp)
        if a.defaults:
            raise UnsupportedFeatureError("kernel parameters cannot have default values", self.span(a.defaults[0]))
        args = list(a.args)
        if self.is_method:
            if not args or args[0].arg != "self":
                raise ParserSyntaxError(f"'{n.name}' is a method of a @pl.program class: its first parameter "
                                        "must be 'self'", sp)
            args = args[1:]
        self.scopes.push("signature", False)
        params: list[Var] = []
        dirs: list[ParamDirection] = []
        seen: set[str] = set()
        for p in args:
            psp = self.span(p)
            if p.arg in seen:
                raise ParserSyntaxError(f"duplicate parameter '{p.arg}'", psp)
            seen.add(p.arg)
            if p.annotation is None:
                raise ParserTypeError(f"parameter '{p.arg}' needs a type annotation", psp,
                                      hint="e.g. x: pl.Tensor[[64, 128], pl.FP32]")
            ann = self.eval_annotation(p.annotation)
            direction = ParamDirection.In
            if isinstance(ann, DirectionAnn):
                direction, ann = ann.direction, ann.inner
            t = self.to_type(ann, p.annotation)
            if direction is ParamDirection.InOut and isinstance(t, ScalarType):
                raise ParserTypeError(f"scalar parameter '{p.arg}' cannot be pl.InOut (scalars are passed by value)",
                                      psp)
            if direction is ParamDirection.Out and isinstance(t, ScalarType):
                raise ParserTypeError(f"scalar parameter '{p.arg}' cannot be pl.Out", psp)
            params.append(Var(p.arg, t, span=psp))
            dirs.append(direction)
        rets: list[Type] = []
        declared = n.returns is not None
        if n.returns is not None:
            r = self.eval_annotation(n.returns)
            if r is not None:
                t = self.to_type(r, n.returns)
                rets = list(t.types) if isinstance(t, TupleType) else [t]
        self.scopes.pop()
        self.sig = FunctionSig(n.name, params, dirs, rets, self.func_type, sp, declared)
        return self.sig

    def eval_annotation(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise ParserTypeError(f"cannot parse the annotation string {node.value!r}", self.span(node)) from None
            node = ast.copy_location(node, node)
        try:
            return self.eval(node)
        except AnnotationError as e:
            raise ParserTypeError(str(e), self.span(node), hint=e.hint) from None

    def to_type(self, ann: Any, node: ast.expr) -> Type:
        try:
            return to_ir_type(ann)
        except AnnotationError as e:
            raise ParserTypeError(str(e), self.span(node), hint=e.hint) from None

    # ---- body --------------------------------------------------------------------------------

    def parse_function(self) -> Function:
        sig = self.sig or self.parse_signature()
        self.counts, self.nested = _assign_names(self.node.body)
        self.scopes.push("function", False)
        for v in sig.params:
            self.scopes.define(v.name, Binding(v, v.span))
        body = self.parse_block(self.node.body)
        self.scopes.pop()
        if sig.return_types and not self.returned:
            raise ParserSyntaxError(f"function '{sig.name}' declares a return type but has no return statement",
                                    sig.span)
        return Function(sig.name, tuple(sig.params), tuple(sig.directions), tuple(sig.return_types), seq(body),
                        sig.func_type, span=sig.span)

    def emit(self, s: Stmt) -> None:
        self.blocks[-1].append(s)

    def parse_block(self, stmts: list[ast.stmt]) -> list[Stmt]:
        self.blocks.append([])
        for i, s in enumerate(stmts):
            if self.returned and self.inline_return is None:
                raise ParserSyntaxError("code after return is not allowed", self.span(s))
            self.stmt(s, is_last=(i == len(stmts) - 1))
        return self.blocks.pop()

    def stmt(self, node: ast.stmt, is_last: bool = False) -> None:
        self._callee_memo = None
        m = getattr(self, "st_" + type(node).__name__, None)
        if m is None:
            raise UnsupportedFeatureError(f"'{type(node).__name__}' statements are not supported in kernels",
                                          self.span(node), hint=_SUPPORTED)
        try:
            m(node, is_last) if type(node).__name__ in ("Expr", "Assign", "AnnAssign", "If") else m(node)
        except ParserError:
            raise
        except AnnotationError as e:
            raise ParserTypeError(str(e), self.span(node), hint=e.hint) from None
        except RecursionError:
            raise ParserError("the kernel is nested too deeply to parse", self.span(node)) from None
        except Exception as e:  # never leak a bare Python exception to the user
            raise ParserError(f"internal error while parsing this statement: {type(e).__name__}: {e}",
                              self.span(node), note="this is a bug in PyPTO; please report it") from e

    # ---- simple statements -------------------------------------------------------------------

    def st_Pass(self, node: ast.Pass) -> None:
        return None

    def st_Break(self, node: ast.Break) -> None:
        if not self.loop_depth:
            raise ParserSyntaxError("'break' outside a loop", self.span(node))
        self.emit(BreakStmt(span=self.span(node)))

    def st_Continue(self, node: ast.Continue) -> None:
        if not self.loop_depth:
            raise ParserSyntaxError("'continue' outside a loop", self.span(node))
        self.emit(ContinueStmt(span=self.span(node)))

    def _is_helper(self, node: ast.expr, name: str) -> bool:
        if not isinstance(node, ast.Call):
            return False
        try:
            callee = self.peek_callee(node)
        except ParserError:
            return False
        return isinstance(callee, DslHelper) and callee.name == name

    def st_Expr(self, node: ast.Expr, is_last: bool = False) -> None:
        v = node.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return  # docstring / comment string
        if self._is_helper(v, "yield_"):
            self.yield_stmt(v, None, [], None, is_last)
            return
        if self._is_helper(v, "cond"):
            raise InvalidOperationError("pl.cond(...) must be the first statement of a pl.while_ loop",
                                        self.span(v))
        val = self.eval(v)
        if isinstance(val, Call):
            self.emit(EvalStmt(val, span=self.span(node)))

    def st_Return(self, node: ast.Return) -> None:
        sp = self.span(node)
        if self.inline_return is not None:
            val = None if node.value is None else self.eval(node.value)
            self.inline_return.append(val)
            self.returned = True
            return
        if len(self.blocks) != 1:
            raise UnsupportedFeatureError("return is only allowed at the end of the function body", sp,
                                          hint="assign the value in the branch and return it after the if")
        vals: list[Expr] = []
        if node.value is not None:
            items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for i, it in enumerate(items):
                like = None
                if self.sig and i < len(self.sig.return_types):
                    t = self.sig.return_types[i]
                    like = t.dtype if isinstance(t, ScalarType) else None
                got = self.eval(it)
                if len(items) == 1 and isinstance(got, Expr) and isinstance(got.type, TupleType):
                    vals = self.unpack_returned_tuple(got, sp)  # `return self.k(...)` of a multi-result call
                else:
                    vals.append(to_expr(got, self.span(it), "return value", like))
        assert self.sig is not None
        if self.sig.declared_returns:
            if len(vals) != len(self.sig.return_types):
                raise ParserTypeError(f"function '{self.sig.name}' returns {len(vals)} values but declares "
                                      f"{len(self.sig.return_types)}", sp)
            for i, (v, t) in enumerate(zip(vals, self.sig.return_types)):
                check_compatible(t, v.type, sp, f"return value {i}")
        else:
            self.sig.return_types = [v.type for v in vals]
        self.emit(ReturnStmt(tuple(vals), span=sp))
        self.returned = True

    def unpack_returned_tuple(self, whole: Expr, sp: Span) -> list[Expr]:
        """Bind a returned tuple-valued call and return its elements as names (the IR returns values)."""
        assert isinstance(whole.type, TupleType)
        tmp = Var("ret_tuple", whole.type, span=sp)
        self.emit(AssignStmt(tmp, whole, span=sp))
        out: list[Expr] = []
        for i in range(len(whole.type.types)):
            v = Var(f"ret{i}", whole.type.types[i], span=sp)
            self.emit(AssignStmt(v, TupleGetItem(tmp, i, span=sp), span=sp))
            out.append(v)
        return out

    # ---- assignments -------------------------------------------------------------------------

    def st_Assign(self, node: ast.Assign, is_last: bool = False) -> None:
        if len(node.targets) != 1:
            raise UnsupportedFeatureError("chained assignment (a = b = ...) is not supported", self.span(node))
        tgt = node.targets[0]
        if self._is_helper(node.value, "yield_"):
            names, spans = self._yield_targets(tgt)
            self.yield_stmt(node.value, names, spans, None, is_last)
            return
        if isinstance(tgt, ast.Name):
            self.assign_name(tgt.id, self.eval(node.value), None, self.span(tgt), node)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            self.assign_tuple(tgt, node.value, node)
        elif isinstance(tgt, ast.Subscript):
            self.assign_subscript(tgt, node.value, node)
        else:
            raise ParserSyntaxError("can only assign to names, tuples of names and subscripts", self.span(tgt))

    def st_AnnAssign(self, node: ast.AnnAssign, is_last: bool = False) -> None:
        if not isinstance(node.target, ast.Name):
            raise ParserSyntaxError("annotated assignment needs a plain name on the left", self.span(node.target))
        if node.value is None:
            raise ParserSyntaxError(f"'{node.target.id}' is declared without a value", self.span(node),
                                    hint="kernels have no uninitialised variables: assign a value")
        ann = self.eval_annotation(node.annotation)
        if ann in (int, float, bool, str):  # a Python-level constant with a Python annotation
            t = None
        else:
            t = self.to_type(ann, node.annotation)
        if self._is_helper(node.value, "yield_"):
            self.yield_stmt(node.value, [node.target.id], [self.span(node.target)], t, is_last)
            return
        if isinstance(t, MemRefType):
            self.memref_def(node)
            return
        self.assign_name(node.target.id, self.eval(node.value), t, self.span(node.target), node)

    def st_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise UnsupportedFeatureError("augmented assignment only to plain names", self.span(node))
        expr = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        ast.copy_location(expr, node)
        expr.left = ast.copy_location(expr.left, node.target)
        self.assign_name(node.target.id, self.eval(expr), None, self.span(node.target), node)

    def memref_def(self, node: ast.AnnAssign) -> None:
        sp = self.span(node)
        call = node.value
        ok = isinstance(call, ast.Call)
        callee = self.eval(call.func) if ok else None
        if not (isinstance(callee, DslOp) and getattr(callee.entry, "name", "") == "block.alloc"):
            raise ParserTypeError("a pl.MemRefType variable must be assigned pl.block.alloc(space, addr, size, id)",
                                  sp)
        args, kwargs, _ = self.call_args(call)
        names = ["memory_space", "addr", "size", "id"]
        vals = dict(zip(names, args))
        vals.update(kwargs)
        if "memory_space" not in vals:
            raise ParserTypeError("pl.block.alloc needs a memory space", sp)
        m = make_memref(vals["memory_space"], int(vals.get("addr", -1)), int(vals.get("size", 0)),
                        int(vals.get("id", 0)), name=node.target.id, span=self.span(node.target))
        self.scopes.define(node.target.id, Binding(m, m.span))
        self.emit(AssignStmt(m, self._alloc_call(m, sp), span=sp))

    def _alloc_call(self, m: MemRef, sp: Span) -> Expr:
        from pypto.ir.op import create_op_call

        return create_op_call("block.alloc", [], {"memory_space": m.memory_space, "addr": m.addr, "size": m.size,
                                                  "id": m.id}, sp)

    def _python_ok(self, name: str) -> bool:
        return self.counts.get(name, 0) <= 1 and name not in self.nested and self.loop_depth == 0

    def assign_name(self, name: str, value: Any, ann: Type | None, sp: Span, node: ast.AST) -> Var | None:
        if value is None:
            raise ParserTypeError("this expression produces no value", self.span(node))
        if not isinstance(value, Expr):
            if ann is None and (not is_number(value) or self._python_ok(name)):
                self.bind_python(name, value, sp)
                return None
            if ann is not None and not isinstance(ann, ScalarType) and not is_number(value):
                raise ParserTypeError(f"cannot assign {type(value).__name__} to a {ann}", sp)
            like = ann.dtype if isinstance(ann, ScalarType) else None
            value = to_expr(value, sp, f"value of '{name}'", like)
        t = value.type
        if isinstance(t, TupleType) and not t.types:
            raise ParserTypeError("this operation produces no value to assign", self.span(node))
        if ann is not None:
            if isinstance(ann, ScalarType) and isinstance(t, ScalarType) and ann.dtype is not t.dtype:
                value = Cast(value, ann.dtype, span=value.span)
                t = ann
            else:
                check_compatible(ann, t, sp, f"'{name}'")
                if isinstance(ann, TileType) and isinstance(t, TileType) and ann.memref is not None:
                    t = replace(t, memref=ann.memref)  # the buffer is not inferable: it comes from the text
        var = self.bind_var(name, t, sp)
        self.emit(AssignStmt(var, value, span=self.span(node)))
        return var

    def bind_python(self, name: str, value: Any, sp: Span) -> None:
        b = self.scopes.lookup(name)
        if b is not None and not b.python:
            raise ParserTypeError(f"'{name}' holds a pl value; it cannot be rebound to the Python value {value!r}",
                                  sp, hint="use pl.const(...) or a scalar expression")
        self.scopes.define(name, Binding(value, sp, python=True))

    def bind_var(self, name: str, t: Type, sp: Span) -> Var:
        """The Var an assignment to `name` writes: the visible one (non-SSA reassignment) or a new one."""
        b = self.scopes.lookup(name)
        if b is not None and not b.python and isinstance(b.value, Var):
            prev: Var = b.value
            if self.strict_ssa:
                raise SSAViolationError(f"variable '{name}' is assigned more than once (strict_ssa=True)", sp,
                                        hint=f"use a new name, e.g. '{name}_1'", previous_span=b.span)
            if type(prev) is Var and structural_equal(prev.type, t, enable_auto_mapping=False):
                return prev
            owner = self.scopes.owner(name)
            if owner is not self.scopes.stack[-1] and not isinstance(prev, IterArg):
                from pypto.ir.printer import type_str

                raise ParserTypeError(f"'{name}' changes type from {type_str(prev.type)} to {type_str(t)} inside a "
                                      "nested block", sp, hint="use a different name for the new value")
        elif b is not None and b.python:
            raise ParserTypeError(f"'{name}' was bound to the Python value {b.value!r}; it cannot become a pl value "
                                  "here", sp, hint="use a different name")
        v = Var(name, t, span=sp)
        self.scopes.define(name, Binding(v, sp))
        return v

    def assign_tuple(self, tgt: ast.Tuple | ast.List, value_node: ast.expr, node: ast.Assign) -> None:
        names = []
        for e in tgt.elts:
            if not isinstance(e, ast.Name):
                raise ParserSyntaxError("tuple assignment targets must be plain names", self.span(e))
            names.append(e)
        val = self.eval(value_node)
        sp = self.span(node)
        if isinstance(val, Expr):
            t = val.type
            if not isinstance(t, TupleType):
                raise ParserTypeError(f"cannot unpack a single value into {len(names)} names", sp)
            if len(t.types) != len(names):
                raise ParserTypeError(f"cannot unpack {len(t.types)} values into {len(names)} names", sp)
            tmp = Var("_".join(n.id for n in names) + "_tuple", t, span=sp)
            self.emit(AssignStmt(tmp, val, span=sp))
            for i, n in enumerate(names):
                self.assign_name(n.id, TupleGetItem(tmp, i, span=sp), None, self.span(n), node)
            return
        if not isinstance(val, (tuple, list)) or len(val) != len(names):
            raise ParserTypeError(f"cannot unpack this value into {len(names)} names", sp)
        for n, v in zip(names, val):
            self.assign_name(n.id, v, None, self.span(n), node)

    def assign_subscript(self, tgt: ast.Subscript, value_node: ast.expr, node: ast.Assign) -> None:
        base = self.eval(tgt.value)
        sp = self.span(node)
        if not self._is_shaped(base):
            raise UnsupportedFeatureError("only tensors and tiles can be assigned into by subscript", sp)
        items = tgt.slice.elts if isinstance(tgt.slice, ast.Tuple) else [tgt.slice]
        vals = [self.eval(i) for i in items]
        value = self.eval(value_node)
        if all(not isinstance(v, slice) for v in vals):
            call = self.call_entry("pl.write", lookup_dsl("pl", "write"), [base, vals, value], {}, sp, None)
            self.emit(EvalStmt(call, span=sp))
            return
        offs = []
        for v in vals:
            if not isinstance(v, slice) or v.step not in (None, 1):
                raise UnsupportedFeatureError("slice assignment needs plain slices on every axis", sp)
            offs.append(0 if v.lower is None else v.lower)
        offs += [0] * (base.type.rank - len(offs))
        call = self.call_entry("pl.assemble", lookup_dsl("pl", "assemble"), [base, value, offs], {}, sp, None)
        if isinstance(tgt.value, ast.Name):
            self.assign_name(tgt.value.id, call, None, self.span(tgt.value), node)
        else:
            self.emit(EvalStmt(call, span=sp))

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
        for i, a in enumerate(call.args):
            like = None
            if ctx.types is not None and i < len(ctx.types) and isinstance(ctx.types[i], ScalarType):
                like = ctx.types[i].dtype
            vals.append(self.eval_ir(a, "yielded value", like))
        if ctx.expected is not None and len(vals) != ctx.expected:
            raise SSAViolationError(f"pl.yield_ passes {len(vals)} values but the loop carries {ctx.expected}", sp)
        if names is not None and len(names) != len(vals):
            raise ParserSyntaxError(f"pl.yield_ passes {len(vals)} values into {len(names)} names", sp)
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

    # ---- loops -------------------------------------------------------------------------------

    def st_For(self, node: ast.For) -> None:
        sp = self.span(node)
        if node.orelse:
            raise UnsupportedFeatureError("for ... else is not supported", sp)
        it = node.iter
        helper = None
        if isinstance(it, ast.Call):
            callee = self.eval(it.func)
            if isinstance(callee, DslHelper) and callee.name in ("range", "parallel", "unroll", "while_"):
                helper = callee.name
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
        if init is not None:
            if not isinstance(init, (tuple, list)):
                init = (init,)
            inits = [to_expr(v, self.span(it), "init value") for v in init]
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
            if len(iter_nodes) != len(inits):
                raise ParserSyntaxError(f"{len(iter_nodes)} loop-carried names but {len(inits)} init_values",
                                        self.span(tgt))
        else:
            raise ParserSyntaxError("loop target must be `i` or `i, (a, b, ...)`", self.span(tgt))
        loop_var = Var(loop_name.id, scalar_type(DataType.INDEX), span=self.span(loop_name))
        if self.strict_ssa:
            self._check_new_name(loop_name.id, self.span(loop_name))
        scope = self.scopes.push("for_iter" if inits else "for", leaks=not inits)
        self.scopes.define(loop_name.id, Binding(loop_var, loop_var.span))
        iter_args = self._iter_args(iter_nodes, inits)
        ctx = _YieldCtx("loop", len(inits), types=[a.type for a in iter_args]) if inits else None
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
            rets = self.define_results(ctx.targets, ctx.target_spans, [a.type for a in iter_args], len(inits), sp,
                                       loop_name.id)
        self.emit(ForStmt(loop_var, bounds[0], bounds[1], bounds[2], tuple(iter_args), seq(body), tuple(rets),
                          kind, chunk, policy, origin, span=sp))

    def _check_new_name(self, name: str, sp: Span) -> None:
        b = self.scopes.lookup(name)
        if b is not None and not b.python:
            raise SSAViolationError(f"variable '{name}' is assigned more than once (strict_ssa=True)", sp,
                                    previous_span=b.span)

    def _iter_args(self, nodes: list[ast.expr], inits: list[Expr]) -> list[IterArg]:
        out = []
        for n, init in zip(nodes, inits):
            if not isinstance(n, ast.Name):
                raise ParserSyntaxError("loop-carried names must be plain names", self.span(n))
            if self.strict_ssa:
                self._check_new_name(n.id, self.span(n))
            a = IterArg(n.id, init.type, init, span=self.span(n))
            self.scopes.define(n.id, Binding(a, a.span))
            out.append(a)
        return out

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
        inits = [to_expr(v, self.span(it), "init value") for v in init]
        tgt = node.target
        if not isinstance(tgt, (ast.Tuple, ast.List)):
            raise ParserSyntaxError("pl.while_ unpacks its state: `for (x, y) in pl.while_(init_values=(...))`",
                                    self.span(tgt))
        if len(tgt.elts) != len(inits):
            raise ParserSyntaxError(f"{len(tgt.elts)} loop-carried names but {len(inits)} init_values", self.span(tgt))
        if not node.body or not (isinstance(node.body[0], ast.Expr) and self._is_helper(node.body[0].value, "cond")):
            raise InvalidOperationError("the first statement of a pl.while_ loop must be pl.cond(condition)", sp)
        self.scopes.push("while_iter", False)
        iter_args = self._iter_args(list(tgt.elts), inits)
        cond_call = node.body[0].value
        assert isinstance(cond_call, ast.Call)
        if len(cond_call.args) != 1:
            raise ParserSyntaxError("pl.cond takes one condition", self.span(cond_call))
        cond = self.eval_ir(cond_call.args[0], "while condition")
        self._check_condition(cond, cond_call.args[0])
        ctx = _YieldCtx("loop", len(inits), types=[a.type for a in iter_args])
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
        rets = self.define_results(ctx.targets, ctx.target_spans, [a.type for a in iter_args], len(inits), sp, "while")
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
        else_ctx = _YieldCtx("if", None, targets=then_ctx.targets, types=then_ctx.types)
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
            rets = self.define_results(then_ctx.targets, then_ctx.target_spans, list(then_ctx.types or []), n, sp,
                                       "if")
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
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            raise ParserSyntaxError("use exactly one context: `with pl.incore():` or `with pl.auto_incore():`", sp)
        ce = node.items[0].context_expr
        kind = None
        if isinstance(ce, ast.Call) and not ce.args and not ce.keywords:
            callee = self.eval(ce.func)
            if isinstance(callee, DslHelper) and callee.name in ("incore", "auto_incore"):
                kind = ScopeKind.InCore if callee.name == "incore" else ScopeKind.AutoInCore
        if kind is None:
            raise ParserSyntaxError("only `with pl.incore():` and `with pl.auto_incore():` are supported", self.span(ce))
        self.scopes.push("auto_incore" if kind is ScopeKind.AutoInCore else "with", True)
        try:
            body = self.parse_block(node.body)
        finally:
            self.scopes.pop()
        self.emit(ScopeStmt(kind, seq(body), span=sp))

    # ---- inline functions --------------------------------------------------------------------

    def inline_call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], sp: Span) -> Any:
        fnode, fsrc, fenv = fn.parsed()
        params = [a.arg for a in fnode.args.args]
        if kwargs:
            raise UnsupportedFeatureError("inline functions take positional arguments only", sp)
        if len(args) != len(params):
            raise ParserTypeError(f"inline function '{fnode.name}' takes {len(params)} arguments, got {len(args)}", sp)
        saved = (self.src, self.env, self.scopes, self.yields, self.loop_depth, self.inline_return, self.returned,
                 self.counts, self.nested)
        self.src, self.env = fsrc, fenv
        self.scopes = Scopes()
        self.yields = []
        self.inline_return = []
        self.returned = False
        self.counts, self.nested = _assign_names(fnode.body)
        self.scopes.push("inline", False)
        try:
            for pnode, a in zip(fnode.args.args, args):
                if pnode.annotation is not None and isinstance(a, Expr):
                    ann = self.eval_annotation(pnode.annotation)
                    if not isinstance(ann, DirectionAnn):
                        check_compatible(self.to_type(ann, pnode.annotation), a.type, sp,
                                         f"argument '{pnode.arg}' of {fnode.name}()")
                self.scopes.define(pnode.arg, Binding(a, sp, python=not isinstance(a, Expr)))
            for i, s in enumerate(fnode.body):
                if self.returned:
                    raise ParserSyntaxError("code after return in an inline function", self.span(s))
                self.stmt(s, is_last=i == len(fnode.body) - 1)
            result = self.inline_return[0] if self.inline_return else None
        finally:
            (self.src, self.env, self.scopes, self.yields, self.loop_depth, self.inline_return, self.returned,
             self.counts, self.nested) = saved
        return result
