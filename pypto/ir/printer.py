"""`python_print`: IR -> valid `pl` source that parses back to a structurally equal IR.

Naming is deterministic: each distinct variable object gets a unique name within its function
(its hint, then `hint_1`, `hint_2`, ... on clashes) in order of first appearance. Dynamic
dimensions are declared once at the top (`M = pl.dynamic("M")`). Functions of a program are printed
callees first. Ops print fully qualified (`pl.block.add(...)`) with every attribute spelled out.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from pypto.errors import InvalidType

from .dtype import DataType
from .enums import (
    CastMode,
    CmpType,
    ForKind,
    FunctionType,
    LoopOrigin,
    MemorySpace,
    PadValue,
    ParamDirection,
    PipeType,
    ScopeKind,
    TensorLayout,
    TileLayout,
)
from .expr import (
    Abs,
    Add,
    And,
    BinaryExpr,
    BitAnd,
    BitNot,
    BitOr,
    BitShiftLeft,
    BitShiftRight,
    BitXor,
    Call,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynVar,
    Eq,
    Expr,
    FloatDiv,
    FloorDiv,
    FloorMod,
    Ge,
    GlobalVar,
    Gt,
    Le,
    Lt,
    MakeTuple,
    Max,
    MemRef,
    Min,
    Mul,
    Ne,
    Neg,
    Not,
    Or,
    Pow,
    Sub,
    TupleGetItem,
    UnaryExpr,
    Var,
    Xor,
)
from .function import Function, Program
from .node import Node
from .printer_names import RESERVED, PrintedNames, callee_order, collect_dynvars, sanitize
from .stmt import (
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
from .types import MemRefType, ScalarType, TensorType, TileType, TileView, TupleType, Type, UnknownType

# binary operator spelling and precedence (higher binds tighter)
_BIN: dict[type, tuple[str, int]] = {
    Or: ("or", 1), And: ("and", 2),
    Eq: ("==", 4), Ne: ("!=", 4), Lt: ("<", 4), Le: ("<=", 4), Gt: (">", 4), Ge: (">=", 4),
    BitOr: ("|", 5), BitXor: ("^", 6), BitAnd: ("&", 7), BitShiftLeft: ("<<", 8), BitShiftRight: (">>", 8),
    Add: ("+", 9), Sub: ("-", 9), Mul: ("*", 10), FloatDiv: ("/", 10), FloorDiv: ("//", 10), FloorMod: ("%", 10),
    Pow: ("**", 12),
}
_FUNC_BIN: dict[type, str] = {Min: "min", Max: "max", Xor: "xor"}
# expression kind -> the Printer method printing it (`Printer.expr`)
_EXPR_KINDS: tuple[tuple[type, str], ...] = (
    (Var, "_var"), (ConstInt, "_const_int"), (ConstFloat, "_const_float"), (ConstBool, "_const_bool"),
    (BinaryExpr, "_binary"), (UnaryExpr, "_unary"), (Call, "_call"), (MakeTuple, "_tuple"),
    (TupleGetItem, "_get_item"),
)
_ENUM_PATH: dict[type, str] = {
    MemorySpace: "MemorySpace", PipeType: "PipeType", PadValue: "PadValue", TileLayout: "TileLayout",
    CmpType: "CmpType", ForKind: "ForKind", FunctionType: "FunctionType", ScopeKind: "ScopeKind",
    LoopOrigin: "LoopOrigin",
}


class Printer:
    """IR -> `pl` source. Subclasses (dialects, see `message_text.MessagePrinter`) override the
    spelling of expressions and types; `expr` dispatches to the methods of the printer's own class."""

    _dispatch: dict[type, Any] = {}  # expression class -> method (per printer class, filled on first use)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._dispatch = {}

    def __init__(self, prefix: str = "pl", concise: bool = False):
        self.p = prefix
        self.concise = concise
        self.globals = PrintedNames(RESERVED)
        self.names = self.globals
        self.lines: list[str] = []
        self.in_program = False

    # ---- entry points ------------------------------------------------------------------------

    def header(self) -> list[str]:
        if self.p == "pl":
            return ["import pypto.language as pl"]
        return [f"from pypto import language as {self.p}"]

    def dyn_decls(self, node: Node) -> list[str]:
        out = []
        for d in collect_dynvars(node):
            out.append(f'{self.globals.get(d)} = {self.p}.dynamic("{d.name}")')
        return out

    def program(self, prog: Program) -> str:
        self.in_program = True
        lines = [f"# pypto.program: {prog.name}", *self.header(), ""]
        dyn = self.dyn_decls(prog)
        if dyn:
            lines += [*dyn, ""]
        lines.append(f"@{self.p}.program")
        lines.append(f"class {sanitize(prog.name or 'Program')}:")
        fns = callee_order(prog)
        for i, f in enumerate(fns):
            if i:
                lines.append("")
            lines += ["    " + ln if ln else "" for ln in self.function_lines(f)]
        if not fns:
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    def function(self, f: Function) -> str:
        lines = [*self.header(), ""]
        dyn = self.dyn_decls(f)
        if dyn:
            lines += [*dyn, ""]
        lines += self.function_lines(f)
        return "\n".join(lines) + "\n"

    def function_lines(self, f: Function) -> list[str]:
        saved = self.names
        self.names = PrintedNames(self.globals.taken)
        self.names.names.update(self.globals.names)
        self.lines = []
        params = []
        if self.in_program:
            params.append("self")
        for v, d in zip(f.params, f.param_directions):
            t = self.type(v.type)
            if d is ParamDirection.Out:
                t = f"{self.p}.Out[{t}]"
            elif d is ParamDirection.InOut:
                t = f"{self.p}.InOut[{t}]"
            params.append(f"{self.names.get(v)}: {t}")
        ret = ""
        if len(f.return_types) == 1:
            ret = f" -> {self.type(f.return_types[0])}"
        elif len(f.return_types) > 1:
            ret = " -> tuple[" + ", ".join(self.type(t) for t in f.return_types) + "]"
        deco = f"@{self.p}.function"
        if f.func_type is not FunctionType.Opaque:
            deco += f"(type={self.p}.FunctionType.{f.func_type.name})"
        head = [deco, f"def {sanitize(f.name)}({', '.join(params)}){ret}:"]
        self.block(f.body, 1)
        body = self.lines
        self.lines = []
        self.names = saved
        return head + body

    # ---- statements --------------------------------------------------------------------------

    def q(self, name: str) -> str:
        """`name` qualified with the module prefix (`pl.range`); bare without a prefix."""
        return f"{self.p}.{name}" if self.p else name

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def block(self, body: Stmt | None, indent: int, yield_targets: tuple[Var, ...] = ()) -> None:
        stmts = stmt_list(body)
        if not stmts:
            self.emit(indent, "pass")
            return
        for s in stmts:
            self.stmt(s, indent, yield_targets)

    def stmt(self, s: Stmt, ind: int, yt: tuple[Var, ...] = ()) -> None:
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                self.stmt(x, ind, yt)
        elif isinstance(s, AssignStmt):
            self.assign(s, ind)
        elif isinstance(s, EvalStmt):
            self.emit(ind, self.expr(s.expr))
        elif isinstance(s, YieldStmt):
            vals = ", ".join(self.expr(v) for v in s.values)
            call = f"{self.q('yield_')}({vals})"
            if not yt:
                self.emit(ind, call)
            elif len(yt) == 1:
                self.emit(ind, f"{self.names.get(yt[0])}{self.annot(yt[0])} = {call}")
            else:
                self.emit(ind, f"{', '.join(self.names.get(v) for v in yt)} = {call}")
        elif isinstance(s, ReturnStmt):
            self.emit(ind, "return " + ", ".join(self.expr(v) for v in s.values) if s.values else "return")
        elif isinstance(s, ForStmt):
            self.for_stmt(s, ind)
        elif isinstance(s, WhileStmt):
            self.while_stmt(s, ind)
        elif isinstance(s, IfStmt):
            self.if_stmt(s, ind)
        elif isinstance(s, ScopeStmt):
            self.emit(ind, self.scope_head(s))
            self.block(s.body, ind + 1, yt)
        elif isinstance(s, BreakStmt):
            self.emit(ind, "break")
        elif isinstance(s, ContinueStmt):
            self.emit(ind, "continue")
        else:
            raise InvalidType(f"cannot print statement {type(s).__name__}")

    def annot(self, v: Var) -> str:
        if self.concise or v.type is None or isinstance(v.type, (UnknownType, TupleType)):
            return ""
        return f": {self.type(v.type)}"

    def assign(self, s: AssignStmt, ind: int) -> None:
        v = s.var
        if isinstance(v, MemRef):
            self.emit(ind, f"{self.names.get(v)}: {self.q('MemRefType')} = {self.memref_alloc(v)}")
            return
        value = self.expr(s.value)
        self.emit(ind, f"{self.names.get(v)}{self.annot(v)} = {value}")

    def memref_alloc(self, m: MemRef) -> str:
        return f"{self.q('block.alloc')}({self.enum(m.memory_space)}, {m.addr}, {m.size}, {m.id})"

    def for_stmt(self, s: ForStmt, ind: int) -> None:
        self.emit(ind, self.for_head(s))
        self.block(s.body, ind + 1, s.return_vars)

    def for_head(self, s: ForStmt) -> str:
        fn = {ForKind.Sequential: "range", ForKind.Parallel: "parallel", ForKind.Unroll: "unroll"}[s.kind]
        args = self.range_args(s.start, s.stop, s.step)
        if s.iter_args:
            inits = ", ".join(self.expr(a.init_value) for a in s.iter_args)
            if len(s.iter_args) == 1:
                inits += ","
            args.append(f"init_values=({inits})")
        if s.chunk is not None:
            args.append(f"chunk={s.chunk}")
            if s.chunk_policy != "leading_full":
                args.append(f'chunk_policy="{s.chunk_policy}"')
        if s.origin is not LoopOrigin.Original:
            args.append(f"origin={self.q('LoopOrigin')}.{s.origin.name}")
        target = self.names.get(s.loop_var)
        if s.iter_args:
            ia = ", ".join(self.names.get(a) for a in s.iter_args)
            if len(s.iter_args) == 1:
                ia += ","
            target = f"{target}, ({ia})"
        return f"for {target} in {self.q(fn)}({', '.join(args)}):"

    def range_args(self, start: Expr, stop: Expr, step: Expr) -> list[str]:
        zero = isinstance(start, ConstInt) and start.value == 0 and start.dtype is DataType.INDEX
        one = isinstance(step, ConstInt) and step.value == 1 and step.dtype is DataType.INDEX
        if zero and one:
            return [self.expr(stop)]
        if one:
            return [self.expr(start), self.expr(stop)]
        return [self.expr(start), self.expr(stop), self.expr(step)]

    def while_stmt(self, s: WhileStmt, ind: int) -> None:
        self.emit(ind, self.while_head(s))
        if not s.iter_args:
            self.block(s.body, ind + 1)
            return
        self.emit(ind + 1, f"{self.q('cond')}({self.expr(s.condition)})")
        stmts = stmt_list(s.body)
        for x in stmts:
            self.stmt(x, ind + 1, s.return_vars)

    def while_head(self, s: WhileStmt) -> str:
        """The first line of a while loop (with iter_args: the `while_` header, the condition follows)."""
        if not s.iter_args:
            return f"while {self.expr(s.condition)}:"
        ia = ", ".join(self.names.get(a) for a in s.iter_args)
        inits = ", ".join(self.expr(a.init_value) for a in s.iter_args)
        if len(s.iter_args) == 1:
            ia += ","
            inits += ","
        return f"for ({ia}) in {self.q('while_')}(init_values=({inits})):"

    def if_head(self, s: IfStmt) -> str:
        return f"if {self.expr(s.condition)}:"

    def scope_head(self, s: ScopeStmt) -> str:
        fn = "incore" if s.kind is ScopeKind.InCore else "auto_incore"
        hint = f"name_hint={s.name_hint!r}" if s.name_hint else ""
        return f"with {self.q(fn)}({hint}):"

    def if_stmt(self, s: IfStmt, ind: int) -> None:
        self.emit(ind, self.if_head(s))
        self.block(s.then_body, ind + 1, s.return_vars)
        if s.else_body is not None and stmt_list(s.else_body):
            self.emit(ind, "else:")
            self.block(s.else_body, ind + 1, s.return_vars)

    # ---- expressions -------------------------------------------------------------------------

    def expr(self, e: Expr, prec: int = 0) -> str:
        fn = self._dispatch.get(type(e))
        if fn is None:
            fn = self._expr_method(type(e))
        return fn(self, e, prec)

    @classmethod
    def _expr_method(cls, expr_cls: type) -> Any:
        for kind, name in _EXPR_KINDS:
            if issubclass(expr_cls, kind):
                fn = cls._dispatch[expr_cls] = getattr(cls, name)
                return fn
        raise InvalidType(f"cannot print expression {expr_cls.__name__}")

    def _var(self, e: Var, prec: int) -> str:
        return self.names.get(e) if not isinstance(e, DynVar) else self.globals.get(e)

    def _const_int(self, e: ConstInt, prec: int) -> str:
        if e.dtype is DataType.INDEX:
            return str(e.value) if e.value >= 0 or prec < 11 else f"({e.value})"
        return f"{self.p}.const({e.value}, {self.p}.{e.dtype.name})"

    def _const_float(self, e: ConstFloat, prec: int) -> str:
        lit = _float_lit(e.value)
        if e.dtype is DataType.FP32 and math.isfinite(e.value):
            return lit if e.value >= 0 or prec < 11 else f"({lit})"
        return f"{self.p}.const({lit}, {self.p}.{e.dtype.name})"

    def _const_bool(self, e: ConstBool, prec: int) -> str:
        return "True" if e.value else "False"

    def _binary(self, e: BinaryExpr, prec: int) -> str:
        fn = _FUNC_BIN.get(type(e))
        if fn is not None:
            return f"{self.p}.{fn}({self.expr(e.lhs)}, {self.expr(e.rhs)})"
        op, p = _BIN[type(e)]
        # comparisons do not chain in Python: parenthesize nested ones
        lp = p + 1 if p == 4 else p
        rp = p if p == 12 else p + 1
        text = f"{self.expr(e.lhs, lp if p != 12 else p + 1)} {op} {self.expr(e.rhs, rp)}"
        return f"({text})" if p < prec else text

    def _unary(self, e: UnaryExpr, prec: int) -> str:
        if isinstance(e, Neg):
            text = f"-{self.expr(e.operand, 11)}"
            return f"({text})" if prec > 11 else text
        if isinstance(e, Not):
            text = f"not {self.expr(e.operand, 3)}"
            return f"({text})" if prec > 3 else text
        if isinstance(e, BitNot):
            text = f"~{self.expr(e.operand, 11)}"
            return f"({text})" if prec > 11 else text
        if isinstance(e, Abs):
            return f"abs({self.expr(e.operand)})"
        if isinstance(e, Cast):
            return f"{self.p}.cast({self.expr(e.operand)}, {self.p}.{e.dtype.name})"
        raise InvalidType(f"cannot print expression {type(e).__name__}")

    def _call(self, e: Call, prec: int) -> str:
        return self.call(e)

    def _tuple(self, e: MakeTuple, prec: int) -> str:
        return "[" + ", ".join([self.expr(x) for x in e.elements]) + "]"

    def _get_item(self, e: TupleGetItem, prec: int) -> str:
        return f"{self.expr(e.tuple, 13)}[{e.index}]"

    def call(self, c: Call) -> str:
        args = [self.expr(a) for a in c.args]
        if isinstance(c.op, GlobalVar):
            callee = f"self.{c.op.name}" if self.in_program else c.op.name
            return f"{callee}({', '.join(args)})"
        # optional trailing operands that are not positional in every call form print as keywords
        if c.op.name == "block.store" and len(args) == 4 and getattr(c.op, "operands", None) is not None:
            args[3] = f"shapes={args[3]}"
        kws = [f"{k}={self.value(v)}" for k, v in c.kwargs]
        return f"{self.p}.{c.op.name}({', '.join(args + kws)})"

    def value(self, v: Any) -> str:
        t = type(v)
        if t is bool or t is int:
            return repr(v)
        # the common attribute kinds first, by exact type (`_name_` is `name` without the descriptor)
        path = _ENUM_PATH.get(t)
        if path is not None:
            return f"{self.p}.{path}.{v._name_}"
        if t is DataType:
            return f"{self.p}.{v._name_}"
        if isinstance(v, DataType):
            return f"{self.p}.{v.name}"
        if isinstance(v, TensorLayout):
            return f"{self.p}.{v.name}"
        if isinstance(v, CastMode):
            return f'"{v.name}"'
        if isinstance(v, enum.Enum):
            path = _ENUM_PATH.get(type(v), type(v).__name__)
            return f"{self.p}.{path}.{v.name}"
        if isinstance(v, float):
            return _float_lit(v) if math.isfinite(v) else f'float("{v}")'
        if isinstance(v, str):
            return repr(v)
        if isinstance(v, tuple):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        return repr(v)

    def enum(self, v: enum.Enum) -> str:
        return self.value(v)

    # ---- types -------------------------------------------------------------------------------

    def type(self, t: Type) -> str:
        p = self.p
        if isinstance(t, ScalarType):
            return f"{p}.Scalar[{p}.{t.dtype.name}]"
        if isinstance(t, TensorType):
            parts = [self.shape(t.shape), f"{p}.{t.dtype.name}"]
            if t.layout is not TensorLayout.ND or t.memref is not None:
                parts.append(f"{p}.{t.layout.name}")
            if t.memref is not None:
                m = t.memref
                parts.append(f"{p}.MemRef({self.enum(m.memory_space)}, {m.addr}, {m.size}, {m.id})")
            return f"{p}.Tensor[{', '.join(parts)}]"
        if isinstance(t, TileType):
            parts = [self.shape(t.shape), f"{p}.{t.dtype.name}"]
            if t.memory_space is not None and t.memory_space is not MemorySpace.Vec:
                parts.append(self.enum(t.memory_space))
            if t.memref is not None:
                parts.append(self.names.get(t.memref))
            if t.tile_view is not None:
                tv = self.tile_view(t.tile_view)
                if tv:
                    parts.append(tv)
            return f"{p}.Tile[{', '.join(parts)}]"
        if isinstance(t, TupleType):
            return f"{p}.Tuple[{', '.join(self.type(x) for x in t.types)}]"
        if isinstance(t, MemRefType):
            return f"{p}.MemRefType"
        if isinstance(t, UnknownType):
            return f"{p}.Unknown"
        raise InvalidType(f"cannot print type {type(t).__name__}")

    def tile_view(self, tv: TileView) -> str:
        d = TileView()
        fields = []
        if tv.valid_shape is not None:
            fields.append(f"valid_shape={self.shape(tv.valid_shape)}")
        if tv.blayout is not d.blayout:
            fields.append(f"blayout={self.enum(tv.blayout)}")
        if tv.slayout is not d.slayout:
            fields.append(f"slayout={self.enum(tv.slayout)}")
        if tv.fractal != d.fractal:
            fields.append(f"fractal={tv.fractal}")
        if tv.pad is not d.pad:
            fields.append(f"pad={self.enum(tv.pad)}")
        return f"{self.p}.TileView({', '.join(fields)})"

    def shape(self, dims) -> str:
        return "[" + ", ".join(self.expr(d) for d in dims) + "]"


def _float_lit(v: float) -> str:
    if not math.isfinite(v):
        return f'float("{v}")'
    r = repr(float(v))
    return r


def python_print(node: Node, prefix: str = "pl", concise: bool = False) -> str:
    """Print a Program or Function as `pl` source; other nodes print as a source fragment."""
    pr = Printer(prefix, concise)
    if isinstance(node, Program):
        return pr.program(node)
    if isinstance(node, Function):
        return pr.function(node)
    if isinstance(node, Stmt):
        pr.stmt(node, 0)
        return "\n".join(pr.lines)
    if isinstance(node, Expr):
        return pr.expr(node)
    if isinstance(node, Type):
        return pr.type(node)
    return repr(node)


def expr_str(e: Expr) -> str:
    """A short rendering of an expression for error messages."""
    try:
        return Printer().expr(e)
    except TypeError:
        return repr(e)


def type_str(t: Type) -> str:
    try:
        return Printer().type(t)
    except TypeError:
        return repr(t)


__all__ = ["Printer", "expr_str", "python_print", "type_str"]
