"""Expression parsing: Python AST expression -> IR expression or compile-time Python value.

A kernel mixes two worlds: IR values (tensors, tiles, scalars computed at run time) and Python
values known while parsing (closure constants, literals, dtypes). Sub-expressions made only of
Python values are evaluated right away (constant folding); anything touching an IR value becomes IR.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.expr import Call, ConstInt, DynVar, Expr, GlobalVar, MakeTuple, TupleGetItem, Var
from pypto.ir.function import Function
from pypto.ir.limits import dtype_problem, type_problem
from pypto.ir.op import OpError
from pypto.ir.rewrite import substitute
from pypto.ir.span import Span
from pypto.ir.task_ops import TaskOpRef
from pypto.ir.types import ScalarType, ShapedType, TensorType, TileType, TupleType
from pypto.ops.registry import Dispatch, OpDef, get_def, lookup_dsl

from .. import annotations as ann
from ..annotations import AnnotationError
from ..dsl import DslHelper, DslOp
from ..errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)
from .affine import static_extent
from .calls import OpCaller
from .context import PyEnv
from .values import check_compatible, is_number, scalar_binop, to_expr

_PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}
_IR_BINOPS = {
    ast.Add: E.Add, ast.Sub: E.Sub, ast.Mult: E.Mul, ast.Div: E.FloatDiv, ast.FloorDiv: E.FloorDiv,
    ast.Mod: E.FloorMod, ast.Pow: E.Pow, ast.LShift: E.BitShiftLeft, ast.RShift: E.BitShiftRight,
    ast.BitAnd: E.BitAnd, ast.BitOr: E.BitOr, ast.BitXor: E.BitXor,
}
_PY_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}
_IR_CMP = {ast.Eq: E.Eq, ast.NotEq: E.Ne, ast.Lt: E.Lt, ast.LtE: E.Le, ast.Gt: E.Gt, ast.GtE: E.Ge}
_TILE_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul"}


class SelfRef:
    """`self` inside a @pl.program method."""


class MethodRef:
    def __init__(self, name: str):
        self.name = name


class ExprParser(OpCaller):
    """Mixin: needs `self.src`, `self.env`, `self.scopes`, `self.ctx` and `self.emit`."""

    env: PyEnv
    _ex_methods: dict[type, Any] = {}
    _callee_memo: tuple[ast.expr, Any] | None = None  # see peek_callee

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._ex_methods = {}  # AST class -> this class's `ex_<Class>` method (None: py_fallback)

    # ---- entry -------------------------------------------------------------------------------

    def eval(self, node: ast.expr) -> Any:
        cls = type(node)
        try:
            m = self._ex_methods[cls]
        except KeyError:
            m = self._ex_methods[cls] = getattr(type(self), "ex_" + cls.__name__, None)
        if m is None:
            return self.py_fallback(node)
        return m(self, node)

    def peek_callee(self, node: ast.Call) -> Any:
        """The value of a call's callee, for a statement that looks at it before evaluating the call:
        the call's own evaluation (ex_Call) then reuses it instead of evaluating the callee again.
        The memo is cleared at every statement and used once."""
        memo = self._callee_memo
        if memo is not None and memo[0] is node.func:
            return memo[1]
        value = self.eval(node.func)
        self._callee_memo = (node.func, value)
        return value

    def eval_ir(self, node: ast.expr, what: str = "value", like: DataType | None = None) -> Expr:
        return to_expr(self.eval(node), self.span(node), what, like)

    def span(self, node: ast.AST) -> Span:
        return self.src.span(node)

    # ---- leaves ------------------------------------------------------------------------------

    def ex_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def ex_Name(self, node: ast.Name) -> Any:
        b = self.scopes.lookup(node.id)
        if b is not None:
            return b.value
        if node.id == "self" and self.ctx.in_program:
            return SelfRef()
        v = self.env.lookup(node.id)
        if v is PyEnv._MISSING:
            from .context import undefined

            raise undefined(node.id, self.span(node), self.src, self.env, self.scopes)
        return v

    def ex_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        if isinstance(base, SelfRef):
            if node.attr not in self.ctx.signatures:
                raise ParserError(f"the program has no function '{node.attr}'", self.span(node),
                                  hint=f"functions: {', '.join(sorted(self.ctx.signatures)) or 'none'}")
            return MethodRef(node.attr)
        if isinstance(base, Expr):
            t = base.type
            if isinstance(t, ShapedType) and node.attr == "shape":
                return [d.value if isinstance(d, ConstInt) else d for d in t.shape]
            if isinstance(t, (ShapedType, ScalarType)) and node.attr == "dtype":
                return t.dtype
            raise UnsupportedFeatureError(f"IR values have no attribute '{node.attr}'", self.span(node),
                                          hint="use pl.* operations on tensors and tiles")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            name = getattr(base, "__name__", type(base).__name__)
            raise ParserError(f"'{name}' has no attribute '{node.attr}'", self.span(node)) from None

    def ex_List(self, node: ast.List) -> Any:
        return [self.eval(e) for e in node.elts]

    def ex_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.eval(e) for e in node.elts)

    def ex_Starred(self, node: ast.Starred) -> Any:
        raise UnsupportedFeatureError("starred expressions are only allowed in call arguments", self.span(node))

    def py_fallback(self, node: ast.expr) -> Any:
        """Comprehensions, lambdas, f-strings, dicts...: fine if they only use Python values."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and self.scopes.lookup(sub.id) is not None \
                    and not self.scopes.lookup(sub.id).python:
                raise UnsupportedFeatureError(f"{type(node).__name__} expressions cannot use IR values",
                                              self.span(node))
        return self.py_eval(node)

    def py_eval(self, node: ast.expr) -> Any:
        ns = self.env.eval_namespace()
        for s in self.scopes.stack:
            for k, b in s.names.items():
                if b.python:
                    ns[k] = b.value
        tree = ast.Expression(body=node)
        ast.fix_missing_locations(tree)
        try:
            return eval(compile(tree, self.src.filename, "eval"), ns)  # noqa: S307 - compile-time constants
        except ParserError:
            raise
        except Exception as e:
            raise ParserError(f"evaluating this Python expression failed: {type(e).__name__}: {e}",
                              self.span(node)) from None

    # ---- operators ---------------------------------------------------------------------------

    def ex_BinOp(self, node: ast.BinOp) -> Any:
        a = self.eval(node.left)
        b = self.eval(node.right)
        sp = self.span(node)
        op = type(node.op)
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            fn = _PY_BINOPS.get(op)
            try:
                return fn(a, b) if fn else self.py_eval(node)
            except Exception as e:
                raise ParserError(f"evaluating this Python expression failed: {type(e).__name__}: {e}", sp) from None
        if self._is_shaped(a) or self._is_shaped(b):
            return self.shaped_binop(op, a, b, node)
        cls = _IR_BINOPS.get(op)
        if cls is None:
            raise UnsupportedFeatureError(f"operator {type(node.op).__name__} is not supported on scalars", sp)
        self._check_scalar_operand(a, node.left)
        self._check_scalar_operand(b, node.right)
        return scalar_binop(cls, a, b, sp)

    def _is_shaped(self, v: Any) -> bool:
        return isinstance(v, Expr) and isinstance(v.type, (TensorType, TileType))

    def _check_scalar_operand(self, v: Any, node: ast.expr) -> None:
        if isinstance(v, Expr) and not isinstance(v.type, ScalarType):
            raise ParserTypeError(f"expected a scalar, got {self.describe(v)}", self.span(node))
        if not isinstance(v, Expr) and not is_number(v):
            raise ParserTypeError(f"expected a number or scalar, got {type(v).__name__}", self.span(node))

    def shaped_binop(self, op: type, a: Any, b: Any, node: ast.BinOp) -> Expr:
        name = _TILE_OPS.get(op)
        sp = self.span(node)
        if name is None:
            raise UnsupportedFeatureError(f"operator {op.__name__} is not defined on tensors/tiles", sp,
                                          hint="use the pl.* operation, e.g. pl.rem(a, b)")
        if not self._is_shaped(a):  # number <op> tile
            if name in ("add", "mul"):
                a, b = b, a
            else:
                raise UnsupportedFeatureError(f"a scalar on the left of '{name}' with a tensor/tile is not "
                                              "supported", sp, hint=f"write pl.{name}(...) with the tile first")
        entry = lookup_dsl("pl", name)
        assert entry is not None
        return self.call_entry(f"pl.{name}", entry, [a, b], {}, sp, [node.left, node.right])

    def ex_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        sp = self.span(node)
        op = type(node.op)
        if not isinstance(v, Expr):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[op](v)
        if self._is_shaped(v):
            if op is ast.USub:
                return self.call_entry("pl.neg", lookup_dsl("pl", "neg"), [v], {}, sp, [node.operand])
            if op is ast.UAdd:
                return v
            raise UnsupportedFeatureError(f"operator {op.__name__} is not defined on tensors/tiles", sp)
        self._check_scalar_operand(v, node.operand)
        dt = v.type.dtype
        if op is ast.USub:
            return E.Neg(v, dt, span=sp)
        if op is ast.UAdd:
            return v
        if op is ast.Not:
            return E.Not(v, DataType.BOOL, span=sp)
        return E.BitNot(v, dt, span=sp)

    def ex_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        parts: list[Any] = []
        lhs_node = node.left
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            if type(op) not in _PY_CMP:
                raise UnsupportedFeatureError(f"comparison {type(op).__name__} is not supported", self.span(node))
            if not isinstance(left, Expr) and not isinstance(right, Expr):
                parts.append(_PY_CMP[type(op)](left, right))
            else:
                if self._is_shaped(left) or self._is_shaped(right):
                    raise UnsupportedFeatureError("comparisons of tensors/tiles are written with pl.cmp / pl.cmps",
                                                  self.span(node))
                self._check_scalar_operand(left, lhs_node)
                self._check_scalar_operand(right, comp)
                parts.append(scalar_binop(_IR_CMP[type(op)], left, right, self.span(node)))
            left, lhs_node = right, comp
        out = parts[0]
        for p in parts[1:]:
            out = self._bool_combine(E.And, out, p, self.span(node))
        return out

    def ex_BoolOp(self, node: ast.BoolOp) -> Any:
        cls = E.And if isinstance(node.op, ast.And) else E.Or
        vals = [self.eval(v) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = self._bool_combine(cls, out, v, self.span(node))
        return out

    def _bool_combine(self, cls: type, a: Any, b: Any, sp: Span) -> Any:
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return (a and b) if cls is E.And else (a or b)
        ea = to_expr(a, sp)
        eb = to_expr(b, sp)
        return cls(ea, eb, DataType.BOOL, span=sp)

    def ex_IfExp(self, node: ast.IfExp) -> Any:
        c = self.eval(node.test)
        if isinstance(c, Expr):
            raise UnsupportedFeatureError("conditional expressions need a compile-time condition", self.span(node),
                                          hint="use an if statement with pl.yield_ for a run-time choice")
        return self.eval(node.body if c else node.orelse)

    # ---- subscripts --------------------------------------------------------------------------

    def ex_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        sp = self.span(node)
        from .arrays import ARRAY_TYPES

        if isinstance(base, ARRAY_TYPES):
            return self.array_get(base, self.eval(node.slice), sp)  # type: ignore[attr-defined]
        if isinstance(base, Expr):
            t = base.type
            if isinstance(t, TupleType):
                idx = self.eval(node.slice)
                if not isinstance(idx, int) or not -len(t.types) <= idx < len(t.types):
                    raise ParserTypeError(f"tuple index must be a constant in [0, {len(t.types)})", sp)
                return TupleGetItem(base, idx % len(t.types), span=sp)
            if isinstance(t, ShapedType):
                return self.shaped_subscript(base, node)
            raise ParserTypeError(f"cannot index {self.describe(base)}", sp)
        idx = self.eval(node.slice)
        is_annotation = base in (ann.Tensor, ann.Tile, ann.Scalar, ann.Out, ann.InOut, ann.Tuple) or \
            isinstance(base, ann.MemRefDecl)  # pl.MemRef(slots=2)[i % 2]: a slot picked at run time
        if not is_annotation and (isinstance(idx, Expr) or (isinstance(idx, tuple)
                                                             and any(isinstance(i, Expr) for i in idx))):
            raise ParserTypeError("cannot index a Python value with an IR value", sp)
        try:
            return base[idx]
        except AnnotationError as e:
            raise ParserTypeError(str(e), sp, hint=e.hint) from None
        except Exception as e:
            raise ParserError(f"indexing failed: {type(e).__name__}: {e}", sp) from None

    def ex_Slice(self, node: ast.Slice) -> Any:
        return slice(*(None if x is None else self.eval(x) for x in (node.lower, node.upper, node.step)))

    def shaped_subscript(self, base: Expr, node: ast.Subscript) -> Expr:
        t = base.type
        assert isinstance(t, ShapedType)
        sp = self.span(node)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        vals = [self.eval(i) for i in items]
        if len(vals) > t.rank:
            raise ParserTypeError(f"too many indices ({len(vals)}) for rank {t.rank}", sp)
        if all(not isinstance(v, slice) for v in vals) and len(vals) == t.rank:
            return self.call_entry("pl.read", lookup_dsl("pl", "read"), [base, vals], {}, sp, None)
        vals += [slice(None)] * (t.rank - len(vals))
        shape, offs, drop = [], [], []
        for ax, (d, v) in enumerate(zip(t.shape, vals)):
            if not isinstance(v, slice):  # numpy-style: an index takes that row and drops the axis
                if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Expr)
                                                                     and isinstance(v.type, ScalarType))):
                    raise ParserTypeError(f"index {v!r} of axis {ax} must be an integer or a slice", sp)
                if isinstance(v, int) and v < 0:
                    raise UnsupportedFeatureError("negative indices are not supported", sp)
                offs.append(v)
                shape.append(1)
                drop.append(ax)
                continue
            if v.step not in (None, 1):
                raise UnsupportedFeatureError("slices with a step are not supported", sp)
            lo = 0 if v.start is None else v.start
            hi = (d.value if isinstance(d, ConstInt) else d) if v.stop is None else v.stop
            offs.append(lo)
            if not isinstance(lo, Expr) and not isinstance(hi, Expr):
                if hi - lo <= 0:
                    raise ParserTypeError(f"the slice {lo}:{hi} is empty", sp)
                shape.append(hi - lo)
            else:
                zero = isinstance(lo, int) and not isinstance(lo, bool) and lo == 0
                ext = None if zero else static_extent(hi, lo)
                if ext is not None and ext <= 0:
                    raise ParserTypeError(f"the slice is empty (stop - start = {ext})", sp)
                shape.append(hi if zero else ext if ext is not None else scalar_binop(E.Sub, hi, lo, sp))
        kw = {"drop_dims": drop} if drop else {}
        return self.call_entry("pl.slice", lookup_dsl("pl", "slice"), [base, shape, offs], kw, sp, None)

    # ---- calls -------------------------------------------------------------------------------

    def call_args(self, node: ast.Call) -> tuple[list[Any], dict[str, Any], list[ast.expr]]:
        args: list[Any] = []
        arg_nodes: list[ast.expr] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value)
                if isinstance(v, Expr):
                    raise UnsupportedFeatureError("cannot unpack an IR value with *", self.span(a))
                args.extend(v)
                arg_nodes.extend([a] * len(v))
            else:
                args.append(self.eval(a))
                arg_nodes.append(a)
        kwargs: dict[str, Any] = {}
        for k in node.keywords:
            if k.arg is None:
                v = self.eval(k.value)
                if not isinstance(v, dict):
                    raise UnsupportedFeatureError("** needs a Python dict", self.span(k))
                kwargs.update(v)
            else:
                kwargs[k.arg] = self.eval(k.value)
        return args, kwargs, arg_nodes

    def ex_Call(self, node: ast.Call) -> Any:
        memo = self._callee_memo
        if memo is not None and memo[0] is node.func:
            self._callee_memo = None
            callee = memo[1]
        else:
            callee = self.eval(node.func)
        sp = self.span(node)
        if isinstance(callee, DslOp):
            split = getattr(self, "_split", None)
            if split is not None and callee.spelling.endswith("get_subblock_idx"):
                return ConstInt(split.lane, DataType.INDEX)  # (inside pl.split_aiv: this lane)
            args, kwargs, nodes = self.call_args(node)
            return self.call_entry(callee.spelling, callee.entry, args, kwargs, sp, nodes)
        if isinstance(callee, DslHelper):
            return self.helper_call(callee, node)
        if isinstance(callee, TaskOpRef):  # the printed form of a task op (pl.task.begin(...), ...)
            return self.task_op_call(callee, node, sp)
        if isinstance(callee, MethodRef):
            args, kwargs, nodes = self.call_args(node)
            if kwargs:
                raise UnsupportedFeatureError("calls of program functions take positional arguments only", sp)
            call = self.function_call(callee.name, args, sp, nodes)
            return self.kernel_call_no_dep(call, nodes, args, sp) or call  # type: ignore[attr-defined]
        if isinstance(callee, Function):
            args, kwargs, nodes = self.call_args(node)
            if kwargs:
                raise UnsupportedFeatureError("calls of @pl.function functions take positional arguments only", sp)
            self.ctx.add_external(callee, sp)
            return self.function_call(callee.name, args, sp, nodes)
        from ..decorators import InlineFunction

        if isinstance(callee, InlineFunction):
            args, kwargs, nodes = self.call_args(node)
            return self.inline_call(callee, args, kwargs, sp)
        hook = getattr(type(callee), "__pl_specialise__", None)
        if hook is not None:  # a @pl.jit.incore/.inline/.opaque function: specialised for these arguments
            args, kwargs, nodes = self.call_args(node)
            target, args = hook(callee, args, kwargs, sp)
            if isinstance(target, InlineFunction):
                return self.inline_call(target, args, {}, sp)
            self.ctx.add_external(target, sp)
            return self.function_call(target.name, args, sp, [node] * len(args))
        args, kwargs, nodes = self.call_args(node)
        if any(isinstance(a, Expr) for a in args) or any(isinstance(v, Expr) for v in kwargs.values()):
            return self.builtin_on_ir(callee, args, kwargs, node)
        try:
            return callee(*args, **kwargs)
        except ParserError:
            raise
        except AnnotationError as e:
            raise ParserTypeError(str(e), sp, hint=e.hint) from None
        except Exception as e:
            name = getattr(callee, "__name__", repr(callee))
            raise ParserError(f"calling {name} at compile time failed: {type(e).__name__}: {e}", sp) from None

    def builtin_on_ir(self, callee: Any, args: list[Any], kwargs: dict, node: ast.Call) -> Any:
        sp = self.span(node)
        import builtins

        if callee in (builtins.min, builtins.max) and len(args) == 2 and not kwargs:
            return self.scalar_form("scalar.min" if callee is builtins.min else "scalar.max", args, sp)
        if callee is builtins.abs and len(args) == 1:
            v = to_expr(args[0], sp)
            if isinstance(v.type, ScalarType):
                return E.Abs(v, v.type.dtype, span=sp)
        if callee in (builtins.int, builtins.float, builtins.bool) and len(args) == 1:
            dt = {builtins.int: DataType.INDEX, builtins.float: DataType.FP32, builtins.bool: DataType.BOOL}[callee]
            return self.scalar_form("scalar.cast", [args[0], dt], sp)
        name = getattr(callee, "__name__", repr(callee))
        raise UnsupportedFeatureError(f"cannot call the Python function '{name}' with IR values", sp,
                                      hint="inside a kernel, call pl.* operations, program functions "
                                           "(self.f(...)), @pl.function or @pl.inline functions")

    def helper_call(self, h: DslHelper, node: ast.Call) -> Any:
        sp = self.span(node)
        if h.name == "const":
            args, kwargs, _ = self.call_args(node)
            value = args[0] if args else kwargs.get("value")
            dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
            if not is_number(value) or not isinstance(dtype, DataType):
                raise ParserTypeError("pl.const needs a number and a dtype: pl.const(42, pl.INT32)", sp)
            p = dtype_problem(dtype)
            if p is not None:
                raise ParserTypeError(f"pl.const: {p.message}", sp, hint=p.hint)
            if dtype.is_float:
                return E.ConstFloat(float(value), dtype, span=sp)
            if dtype.is_bool:
                return E.ConstBool(bool(value), span=sp)
            if isinstance(value, float) and not value.is_integer():
                raise ParserTypeError(f"pl.const: {value!r} is not an integer ({dtype.name})", sp)
            v = int(value)
            lo, hi = dtype.int_range
            if not lo <= v <= hi:
                raise ParserTypeError(f"pl.const: {v} does not fit in {dtype.name} [{lo}, {hi}]", sp)
            return E.ConstInt(v, dtype, span=sp)
        if h.name == "static_print":  # parse time only: no IR
            from pypto.ir.printer import type_str

            args, kwargs, _ = self.call_args(node)
            parts = [type_str(a.type) if isinstance(a, Expr) and a.type is not None else repr(a) for a in args]
            print(f"{sp.filename}:{sp.begin_line}: " + " ".join(parts))
            return None
        if h.name == "static_assert":
            args, kwargs, _ = self.call_args(node)
            cond = args[0] if args else kwargs.get("cond")
            msg = args[1] if len(args) > 1 else kwargs.get("msg", "")
            if isinstance(cond, Expr):
                raise ParserTypeError("pl.static_assert needs a condition known at parse time (a Python value)", sp,
                                      hint="use Python values and shapes (e.g. tensor shapes from annotations)")
            if not cond:
                raise InvalidOperationError(f"static assertion failed{': ' + str(msg) if msg else ''}", sp)
            return None
        if h.name == "func_attr":  # function metadata: device hints, checked and not used here
            from .compat_calls import func_attr

            return func_attr(self, node, sp)
        from ..dsl import ARRAY_HELPERS, TASK_HELPERS

        if h.name in ARRAY_HELPERS:
            if h.name.startswith("array."):
                return self.array_helper_call(h.name, node)  # type: ignore[attr-defined]
            return self.prefetch_helper_call(h.name, node)  # type: ignore[attr-defined]
        if h.name in TASK_HELPERS:
            return self.task_helper_call(h, node)  # type: ignore[attr-defined]
        from .cross_core import HELPERS as CROSS_CORE

        if CROSS_CORE.get(h.name) is h:
            return self.cross_core_call(h, node)  # type: ignore[attr-defined]
        if h.name in ("yield_", "cond"):
            raise InvalidOperationError(f"pl.{h.name}(...) is a statement; it cannot be used inside an expression",
                                        sp)
        if h.name in ("range", "parallel", "unroll", "while_"):
            raise ParserSyntaxError(f"pl.{h.name}(...) can only be the iterable of a for loop", sp)
        raise ParserSyntaxError(f"pl.{h.name}() can only be used as `with pl.{h.name}():`", sp)

    def function_call(self, name: str, args: list[Any], sp: Span, nodes: list[ast.expr]) -> Expr:
        sig = self.ctx.signatures.get(name)
        if sig is None:
            raise ParserError(f"unknown function '{name}'", sp)
        if len(args) != len(sig.params):
            raise ParserTypeError(f"{name}() takes {len(sig.params)} arguments, got {len(args)}", sp,
                                  hint="parameters: " + ", ".join(p.name for p in sig.params))
        conv = []
        dyn: dict[Var, Expr] = {}
        for p, a, n in zip(sig.params, args, nodes):
            like = p.type.dtype if isinstance(p.type, ScalarType) else None
            e = to_expr(a, self.span(n), f"argument '{p.name}' of {name}()", like)
            check_compatible(p.type, e.type, self.span(n), f"argument '{p.name}' of {name}()")
            if isinstance(p.type, ScalarType) and isinstance(e.type, ScalarType) and p.type.dtype is not e.type.dtype:
                e = E.Cast(e, p.type.dtype, span=e.span)  # scalars convert implicitly (INT64 -> INDEX, BOOL)
            elif isinstance(p.type, ShapedType) and isinstance(e.type, ShapedType):
                for d, x in zip(p.type.shape, e.type.shape):
                    if isinstance(d, DynVar) and d not in dyn:
                        dyn[d] = x  # the callee's dynamic dim takes the argument's size here
            conv.append(e)
        rts = [substitute(t, dyn) for t in sig.return_types] if dyn else sig.return_types
        rt = rts[0] if len(rts) == 1 else TupleType(tuple(rts))
        return Call(GlobalVar(name), tuple(conv), (), rt, span=sp)

    def describe(self, v: Any) -> str:
        from pypto.ir.printer import type_str

        if isinstance(v, Expr):
            return type_str(v.type)
        return type(v).__name__

    # ---- op calls ----------------------------------------------------------------------------

    def call_entry(self, spelling: str, entry: OpDef | Dispatch, args: list[Any], kwargs: dict[str, Any],
                   sp: Span, nodes: list[ast.expr] | None) -> Any:
        try:
            out = self.call_op(spelling, entry, args, kwargs, sp)
        except OpError as e:
            raise ParserTypeError(e.message, sp, hint=e.hint) from None
        except AnnotationError as e:
            raise ParserTypeError(str(e), sp, hint=e.hint) from None
        # a result no target can build (`pl.cast(x, pl.FP8E4M3FN)`, `pl.create_tensor([2**40, 2**40], ...)`)
        p = type_problem(out.type) if isinstance(out, Expr) else None
        if p is not None:
            raise ParserTypeError(f"the result of {spelling}: {p.message}", sp, hint=p.hint)
        return out

    def lookup_ir_op(self, name: str) -> OpDef:
        return get_def(name)


def make_tuple_expr(values: list[Expr], sp: Span) -> MakeTuple:
    return MakeTuple(tuple(values), span=sp)
