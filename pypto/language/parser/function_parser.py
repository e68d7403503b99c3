"""Statement parsing: one Python function definition -> one `ir.Function`.

The parser is faithful, not clever: reassignments stay reassignments (the same Var object is
assigned again; ConvertToSSA renames later), loops and ifs keep their structure, and every
construct keeps its source span.

This module holds the function level (signature, body, the simple statements, returns, inline
calls); assignments are parsed in `assignments.py`, loops, ifs, `with` and yields (and the scope
rules they follow) in `control_flow.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, Expr, TupleGetItem, Var
from pypto.ir.function import Function
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ReturnStmt, Stmt, seq
from pypto.ir.types import ScalarType, TupleType, Type

from ..annotations import AnnotationError, DirectionAnn, to_ir_type
from ..errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)
from .context import Binding, PyEnv, Scopes, Source
from .control_flow import ControlFlowParser, _YieldCtx
from .values import check_compatible, to_expr

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


class FunctionParser(ControlFlowParser):
    """Parses one function: its signature, then its body statement by statement (`st_<Class>`
    methods: the simple statements here, assignments in `AssignmentParser`, loops, ifs, `with` and
    yields in `ControlFlowParser`); also inlines calls of `@pl.inline` functions."""

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
