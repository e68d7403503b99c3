"""The IR verifier: a walk over a Program, Function, Stmt or Expr that reports broken invariants.

Each rule has a name and numeric codes (tests and passes select rules by name):

- SSAVerify: 1 a Var object defined at two binding sites; 2 name shadowing (reserved, never
  reported: names are only hints); 3 missing yield (a loop with iter_args whose body does not end
  in a yield; an if with return_vars whose branches do not both end in one); 4 iter_args and
  return_vars counts differ; 5 a yield carries the wrong number of values (or yields outside any
  loop/if); 6 scope violation (a variable used outside the loop or if that scopes it).
- TypeCheck: 101 kind mismatch (or an op rejecting its operands), 102 dtype, 103 rank,
  104 dimension, 105 other type attribute or count (memory space, layout, view, arity),
  106 if/while condition not a scalar, 107 for-loop start/stop/step not a scalar, 108 a for-loop
  step that is the constant 0.
- UseAfterDef: 401 a variable (or an unbound dynamic dimension, or a MemRef before its alloc)
  used where it is not yet defined.
- NoNestedCall (off by default): 501 a Call inside another Call's arguments, an if/while
  condition, a for-loop bound, or a scalar binary/unary expression.
- BreakContinue: 601 break/continue outside a loop (or in a parallel/unrolled one).
- SupportedTypes: 701 an element type no target stores (`pypto.ir.limits`), 702 a dimension
  outside [1, 2**63 - 1] or a size in bytes beyond int64 — on parameters, return types, every
  bound variable and every call's result.

Scoping follows the parser: plain loops, ifs without return_vars and `with` scopes leak their
definitions to the enclosing block; loops with iter_args and ifs with return_vars do not (only
their return vars are visible after them); loop variables and iter_args never leave their loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .dtype import DataType
from .enums import ForKind
from .expr import (
    BinaryExpr,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynVar,
    Expr,
    GlobalVar,
    MakeTuple,
    MemRef,
    Op,
    TupleGetItem,
    UnaryExpr,
    Var,
)
from .function import Function, Program
from .node import Node, walk_fields
from .span import Span
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
)
from .structural import structural_equal
from .types import (
    MemRefType,
    ScalarType,
    ShapedType,
    TensorType,
    TileType,
    TupleType,
    Type,
    UnknownType,
    is_constant_type,
)

SSA_MULTIPLE_ASSIGNMENT, SSA_NAME_SHADOWING, SSA_MISSING_YIELD = 1, 2, 3
SSA_ITER_RETURN_MISMATCH, SSA_YIELD_COUNT_MISMATCH, SSA_SCOPE_VIOLATION = 4, 5, 6
TYPE_KIND_MISMATCH, TYPE_DTYPE_MISMATCH, TYPE_RANK_MISMATCH, TYPE_DIM_MISMATCH = 101, 102, 103, 104
TYPE_ATTR_MISMATCH, TYPE_CONDITION_NOT_SCALAR, TYPE_RANGE_NOT_SCALAR = 105, 106, 107
USE_BEFORE_DEF, NESTED_CALL, BREAK_OUTSIDE_LOOP = 401, 501, 601
UNSUPPORTED_DTYPE, SIZE_OUT_OF_RANGE = 701, 702


@dataclass(frozen=True, eq=False)
class Diagnostic:
    rule: str
    code: int
    message: str
    span: Span
    node: Any = None  # the offending node
    stmt: Stmt | None = None  # the statement holding it (for the IR excerpt)
    function: str | None = None
    hint: str | None = None  # what to do about it, where a rule knows

    def __str__(self) -> str:
        return f"[{self.rule} {self.code}] {self.message} ({self.span})"


class VerificationError(Exception):
    """The IR broke the invariants the rules check; `diagnostics` lists every fault."""

    def __init__(self, diagnostics: list[Diagnostic], root: Any = None) -> None:
        self.diagnostics = list(diagnostics)
        self.root = root
        super().__init__(render_diagnostics(self.diagnostics, root))


# ---------------------------------------------------------------------------------------------
# walking helpers


@dataclass
class _Unit:
    """One body to check: a function's (strict: every use must be bound) or a bare statement's."""

    function: Function | None
    body: Stmt | None


def _units(node: Any) -> list[_Unit]:
    if isinstance(node, Program):
        return [_Unit(f, f.body) for f in node.functions]
    if isinstance(node, Function):
        return [_Unit(node, node.body)]
    if isinstance(node, Stmt):
        return [_Unit(None, node)]
    if isinstance(node, Expr):
        return [_Unit(None, EvalStmt(node, span=node.span))]
    raise TypeError(f"verify() takes a Program, Function, Stmt or Expr, got {type(node).__name__}")


def _children(s: Stmt) -> list[Stmt]:
    if isinstance(s, SeqStmts):
        return list(s.stmts)
    if isinstance(s, IfStmt):
        return [s.then_body] + ([s.else_body] if s.else_body is not None else [])
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body] if s.body is not None else []
    return []


def _all_stmts(body: Stmt | None) -> list[Stmt]:
    out, todo = [], [body] if body is not None else []
    while todo:
        s = todo.pop()
        out.append(s)
        todo.extend(reversed(_children(s)))
    return out


def _last_stmt(body: Stmt | None) -> Stmt | None:
    while isinstance(body, SeqStmts):
        body = body.stmts[-1] if body.stmts else None
    return body


def _stmt_exprs(s: Stmt) -> list[Expr]:
    """The expressions a statement evaluates itself (not those of nested statements)."""
    if isinstance(s, AssignStmt):
        return [s.value]
    if isinstance(s, EvalStmt):
        return [s.expr]
    if isinstance(s, IfStmt):
        return [s.condition]
    if isinstance(s, ForStmt):
        return [s.start, s.stop, s.step, *(ia.init_value for ia in s.iter_args)]
    if isinstance(s, WhileStmt):
        return [*(ia.init_value for ia in s.iter_args), s.condition]
    if isinstance(s, (YieldStmt, ReturnStmt)):
        return list(s.values)
    return []


_CONSTANTS = (ConstInt, ConstFloat, ConstBool)


def _expr_nodes(e: Any) -> list[Node]:
    """Every node of an expression tree in post-order, but the constants (no rule looks at them);
    variables are leaves, types are skipped."""
    out: list[Node] = []
    todo = [e]
    while todo:  # pre-order with the children pushed left to right, reversed at the end
        v = todo.pop()
        if type(v) is tuple:
            todo.extend(v)
        elif isinstance(v, Expr) and not isinstance(v, _CONSTANTS):
            out.append(v)
            if not isinstance(v, Var):
                for name, _ in walk_fields(type(v), False):
                    todo.append(getattr(v, name))
    out.reverse()
    return out


def _type_vars(t: Any) -> list[Var]:
    """Variables a type mentions (dynamic dims, memrefs, shape expressions)."""
    if isinstance(t, Type) and is_constant_type(t):
        return []
    out: list[Var] = []
    todo = [t]
    while todo:
        v = todo.pop()
        if isinstance(v, Var):
            out.append(v)
        elif type(v) is tuple:
            todo.extend(v)
        elif isinstance(v, Node) and not isinstance(v, Op):
            todo.extend([getattr(v, n) for n, _ in walk_fields(type(v), True)])
    return out


def _type_of(e: Expr) -> Type | None:
    try:
        return e.type
    except Exception:  # a malformed node (e.g. TupleGetItem out of range) is reported by the caller
        return None


# ---------------------------------------------------------------------------------------------
# rules


class Rule:
    name: ClassVar[str] = ""
    codes: ClassVar[dict[int, str]] = {}
    default: ClassVar[bool] = True

    def check(self, ctx: _Context) -> None:
        raise NotImplementedError


class _Context:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.program = root if isinstance(root, Program) else None
        self.units = _units(root)
        self.diagnostics: list[Diagnostic] = []
        self._scopes: dict[int, _ScopeWalk] = {}
        self._nodes: dict[int, tuple[Expr, list[Node]]] = {}

    def expr_nodes(self, e: Expr) -> list[Node]:
        """`_expr_nodes(e)`, computed once per expression (the scope walk and TypeCheck both need it)."""
        got = self._nodes.get(id(e))
        if got is None or got[0] is not e:
            got = self._nodes[id(e)] = (e, _expr_nodes(e))
        return got[1]

    def report(self, rule: Rule, code: int, message: str, node: Any, stmt: Stmt | None, unit: _Unit,
               hint: str | None = None) -> None:
        # a Var's own span is its definition; a fault at a use is located by the statement
        span = getattr(node, "span", None) if not (isinstance(node, Var) and stmt is not None) else None
        if not isinstance(span, Span) or not span.is_known:
            span = stmt.span if stmt is not None else None
        if (span is None or not span.is_known) and unit.function is not None:
            span = unit.function.span
        fn = unit.function.name if unit.function is not None else None
        self.diagnostics.append(Diagnostic(rule.name, code, message, span or Span.unknown(), node, stmt, fn, hint))

    def scopes(self, unit: _Unit) -> _ScopeWalk:
        got = self._scopes.get(id(unit))
        if got is None:
            got = self._scopes[id(unit)] = _ScopeWalk(unit, self)
        return got


class _ScopeWalk:
    """Walks one unit in program order tracking visible variables; shared by SSAVerify and
    UseAfterDef. Results: `redefined` (var, stmt), `out_of_scope` and `undefined` (var, node, stmt, note)."""

    def __init__(self, unit: _Unit, ctx: _Context) -> None:
        self.ctx = ctx
        self.strict = unit.function is not None
        stmts = _all_stmts(unit.body)
        self.allocs = {s.var for s in stmts if isinstance(s, AssignStmt)}
        self.tree_defs: set[Var] = set()
        for s in stmts:
            self.tree_defs.update(_binders(s))
        self.scopes: list[set[Var]] = [set()]
        self.ever: set[Var] = set()
        self.scoped_by: dict[Var, Stmt] = {}
        self.redefined: list[tuple[Var, Stmt | None]] = []
        self.out_of_scope: list[tuple[Var, Node, Stmt | None, str]] = []
        self.undefined: list[tuple[Var, Node, Stmt | None, str]] = []
        self.bound_dyn: set[Var] = set()
        self.reported: set[Var] = set()
        if unit.function is not None:
            for p in unit.function.params:
                self.define(p, None)
                self.bound_dyn.update(v for v in _type_vars(p.type) if isinstance(v, DynVar))
        if unit.body is not None:
            self.stmt(unit.body)

    def define(self, v: Var, s: Stmt | None) -> None:
        if v in self.ever:
            self.redefined.append((v, s))
        self.ever.add(v)
        self.scopes[-1].add(v)
        if s is not None:
            for tv in _type_vars(v.type):
                if isinstance(tv, (DynVar, MemRef)):
                    self.use(tv, v, s, f"in the type of {v.name}")

    def visible(self, v: Var) -> bool:
        for sc in reversed(self.scopes):
            if v in sc:
                return True
        return False

    def use(self, v: Var, node: Node, s: Stmt | None, note: str = "") -> None:
        """Record a faulty use; each variable is reported once (at its first faulty use)."""
        if self.visible(v) or v in self.reported:
            return
        if isinstance(v, DynVar):
            if v not in self.bound_dyn and self.strict:
                self.undefined.append((v, node, s, "dynamic dimension"))
                self.reported.add(v)
            return
        if isinstance(v, MemRef) and v not in self.allocs:
            return  # a memref without an alloc statement is defined implicitly by its type
        if v in self.ever:
            self.out_of_scope.append((v, node, s, note))
            self.reported.add(v)
        elif self.strict or v in self.tree_defs:
            self.undefined.append((v, node, s, note))
            self.reported.add(v)

    def exprs(self, s: Stmt, exprs: list[Expr]) -> None:
        for e in exprs:
            for n in self.ctx.expr_nodes(e):
                if isinstance(n, Var):
                    self.use(n, n, s)

    def block(self, body: Stmt | None, binders: list[Var], construct: Stmt) -> set[Var]:
        """Walk `body` in a new scope holding `binders`; returns what it defined besides them."""
        self.scopes.append(set())
        for b in binders:
            self.define(b, construct)
        if body is not None:
            self.stmt(body)
        inner = self.scopes.pop()
        for b in binders:
            inner.discard(b)
            self.scoped_by[b] = construct
        return inner

    def close(self, inner: set[Var], construct: Stmt, leak: bool) -> None:
        if leak:
            self.scopes[-1].update(inner)
        else:
            for v in inner:
                self.scoped_by.setdefault(v, construct)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for c in s.stmts:
                self.stmt(c)
        elif isinstance(s, AssignStmt):
            self.exprs(s, [s.value])
            self.define(s.var, s)
        elif isinstance(s, IfStmt):
            self.exprs(s, [s.condition])
            inner = self.block(s.then_body, [], s) | self.block(s.else_body, [], s)
            self.close(inner, s, not s.return_vars)
            for v in s.return_vars:
                self.define(v, s)
        elif isinstance(s, (ForStmt, WhileStmt)):
            self.exprs(s, [ia.init_value for ia in s.iter_args])
            binders: list[Var] = list(s.iter_args)
            if isinstance(s, ForStmt):
                self.exprs(s, [s.start, s.stop, s.step])
                binders.insert(0, s.loop_var)
            else:
                self.scopes.append(set(s.iter_args))  # the condition sees the iter_args
                self.exprs(s, [s.condition])
                self.scopes.pop()
            self.close(self.block(s.body, binders, s), s, not s.iter_args)
            for v in s.return_vars:
                self.define(v, s)
        elif isinstance(s, ScopeStmt):
            self.stmt(s.body)
        else:
            self.exprs(s, _stmt_exprs(s))


def _binders(s: Stmt) -> list[Var]:
    if isinstance(s, AssignStmt):
        return [s.var]
    if isinstance(s, ForStmt):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, (IfStmt, WhileStmt)):
        return [*getattr(s, "iter_args", ()), *s.return_vars]
    return []


_CONSTRUCT = {ForStmt: "for loop", WhileStmt: "while loop", IfStmt: "if"}


class SSAVerify(Rule):
    name = "SSAVerify"
    codes = {1: "multiple assignment", 2: "name shadowing (not reported)", 3: "missing yield",
             4: "iter_args/return_vars mismatch", 5: "yield count mismatch", 6: "scope violation"}

    def check(self, ctx: _Context) -> None:
        for unit in ctx.units:
            walk = ctx.scopes(unit)
            for v, s in walk.redefined:
                ctx.report(self, 1, f"variable {v.name} is defined more than once (SSA: one definition per "
                           f"variable)", s if s is not None else v, s, unit)
            for v, node, s, _ in walk.out_of_scope:
                owner = walk.scoped_by.get(v)
                where = f"the {_CONSTRUCT.get(type(owner), 'block')} at {owner.span}" if owner else "its block"
                hint = ("; pass it out with yield_ and use the return var" if not isinstance(owner, ForStmt)
                        or v is not owner.loop_var else "")
                ctx.report(self, 6, f"variable {v.name} is used outside {where}, which scopes it{hint}",
                           node, s, unit)
            self._structure(ctx, unit, unit.body, [])

    def _structure(self, ctx: _Context, unit: _Unit, s: Stmt | None, enclosing: list[Stmt]) -> None:
        if s is None:
            return
        if isinstance(s, (ForStmt, WhileStmt)):
            what = _CONSTRUCT[type(s)]
            if len(s.iter_args) != len(s.return_vars):
                ctx.report(self, 4, f"{what} has {len(s.iter_args)} iter_args but {len(s.return_vars)} "
                           f"return vars", s, s, unit)
            if s.iter_args and not isinstance(_last_stmt(s.body), YieldStmt):
                ctx.report(self, 3, f"{what} with {len(s.iter_args)} iter_args must end its body with a "
                           f"yield_", s, s, unit)
        elif isinstance(s, IfStmt) and s.return_vars:
            for label, body in (("then", s.then_body), ("else", s.else_body)):
                if body is None:
                    ctx.report(self, 3, f"if with {len(s.return_vars)} return vars has no else branch to "
                               f"yield them", s, s, unit)
                elif not isinstance(_last_stmt(body), YieldStmt):
                    ctx.report(self, 3, f"the {label} branch of an if with {len(s.return_vars)} return vars "
                               f"must end with a yield_", s, s, unit)
        elif isinstance(s, YieldStmt):
            owner = enclosing[-1] if enclosing else None
            if owner is None:
                ctx.report(self, 5, "yield_ outside any loop or if", s, s, unit)
            else:
                want = len(owner.return_vars) if isinstance(owner, IfStmt) else len(owner.iter_args)
                if len(s.values) != want:
                    article = "an" if isinstance(owner, IfStmt) else "a"
                    ctx.report(self, 5, f"yield_ of {len(s.values)} value(s) in {article} {_CONSTRUCT[type(owner)]} "
                               f"expecting {want}", s, s, unit)
        inner = enclosing + [s] if isinstance(s, (ForStmt, WhileStmt, IfStmt)) else enclosing
        for c in _children(s):
            self._structure(ctx, unit, c, inner)


class UseAfterDef(Rule):
    name = "UseAfterDef"
    codes = {401: "use before definition"}

    def check(self, ctx: _Context) -> None:
        for unit in ctx.units:
            for v, node, s, note in ctx.scopes(unit).undefined:
                if note == "dynamic dimension":
                    fn = unit.function.name if unit.function is not None else "?"
                    msg = f"dynamic dimension {v.name} is not bound by any parameter type of function {fn}"
                elif isinstance(v, MemRef):
                    msg = f"memref {v.name} is used {note} before its alloc statement"
                else:
                    msg = f"variable {v.name} is used {note + ' ' if note else ''}before it is defined"
                ctx.report(self, 401, msg, node, s, unit)


class BreakContinue(Rule):
    name = "BreakContinue"
    codes = {601: "break/continue outside a sequential or while loop"}

    def check(self, ctx: _Context) -> None:
        for unit in ctx.units:
            self._walk(ctx, unit, unit.body, None)

    def _walk(self, ctx: _Context, unit: _Unit, s: Stmt | None, loop: Stmt | None) -> None:
        if isinstance(s, (BreakStmt, ContinueStmt)):
            word = "break" if isinstance(s, BreakStmt) else "continue"
            if loop is None:
                ctx.report(self, 601, f"{word} outside a loop", s, s, unit)
            elif isinstance(loop, ForStmt) and loop.kind is not ForKind.Sequential:
                ctx.report(self, 601, f"{word} inside a {loop.kind.name} loop (only sequential for loops and "
                           f"while loops can break or continue)", s, s, unit)
            return
        inner = s if isinstance(s, (ForStmt, WhileStmt)) else loop
        for c in _children(s) if s is not None else []:
            self._walk(ctx, unit, c, inner)


class NoNestedCall(Rule):
    name = "NoNestedCall"
    codes = {501: "nested call"}
    default = False

    def check(self, ctx: _Context) -> None:
        for unit in ctx.units:
            for s in _all_stmts(unit.body):
                if isinstance(s, IfStmt):
                    self._expr(ctx, unit, s, s.condition, "an if condition")
                elif isinstance(s, WhileStmt):
                    self._expr(ctx, unit, s, s.condition, "a while condition")
                elif isinstance(s, ForStmt):
                    for b in (s.start, s.stop, s.step):
                        self._expr(ctx, unit, s, b, "a for-loop bound")
                if isinstance(s, (ForStmt, WhileStmt)):
                    for ia in s.iter_args:
                        self._expr(ctx, unit, s, ia.init_value, None)
                elif not isinstance(s, IfStmt):
                    for e in _stmt_exprs(s):
                        self._expr(ctx, unit, s, e, None)

    def _expr(self, ctx: _Context, unit: _Unit, s: Stmt, e: Any, where: str | None) -> None:
        stack: list[tuple[Any, str | None]] = [(e, where)]
        while stack:
            v, w = stack.pop()
            if type(v) is tuple:
                stack.extend((x, w) for x in v)
                continue
            if not isinstance(v, Expr) or isinstance(v, Var):
                continue
            if isinstance(v, Call):
                if w is not None:
                    ctx.report(self, 501, f"call of {v.op.name} inside {w}; bind it to a variable first "
                               f"(FlattenCallExpr)", v, s, unit)
                stack.extend((a, f"the arguments of {v.op.name}") for a in v.args)
            elif isinstance(v, (BinaryExpr, UnaryExpr)):
                kids = (v.lhs, v.rhs) if isinstance(v, BinaryExpr) else (v.operand,)
                stack.extend((k, "a scalar expression") for k in kids)
            elif isinstance(v, (MakeTuple, TupleGetItem)):
                stack.append((v.elements if isinstance(v, MakeTuple) else v.tuple, w))


# ---------------------------------------------------------------------------------------------
# types


def _dim_eq(a: Expr, b: Expr) -> bool:
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return a.value == b.value
    return a is b or structural_equal(a, b)


def type_text(t: Any) -> str:
    """A short, printer-independent rendering of a type for messages."""
    if t is None:
        return "<no type>"
    if isinstance(t, ScalarType):
        return f"Scalar[{t.dtype.text}]"
    if isinstance(t, ShapedType):
        dims = ", ".join(expr_text(d) for d in t.shape)
        extra = f", {t.memory_space.name}" if isinstance(t, TileType) and t.memory_space is not None else ""
        return f"{'Tile' if isinstance(t, TileType) else 'Tensor'}[[{dims}], {t.dtype.text}{extra}]"
    if isinstance(t, TupleType):
        return "Tuple[" + ", ".join(type_text(x) for x in t.types) + "]"
    return type(t).__name__


def _kind(t: Type) -> str:
    return {TensorType: "a Tensor", TileType: "a Tile", ScalarType: "a Scalar", TupleType: "a Tuple",
            MemRefType: "a MemRef"}.get(type(t), type(t).__name__)


def type_diff(expected: Type | None, actual: Type | None, *, strict: bool = False,
              dynamic_ok: bool = False) -> tuple[int, str] | None:
    """(code, why) when `actual` does not fit `expected`, else None. Memrefs are ignored; unknown
    types fit anything. Lenient (default): tile views and layouts are not compared, memory spaces
    only when both are set. `dynamic_ok`: dimensions that are not constant on both sides are left to
    the run-time check (a static parameter may receive a dynamic-sized view)."""
    if expected is None or actual is None:
        return TYPE_KIND_MISMATCH, "missing type"
    if expected is actual or expected == actual:  # equal types fit in every mode
        return None
    if isinstance(expected, UnknownType) or isinstance(actual, UnknownType):
        return None
    if type(expected) is not type(actual):
        return TYPE_KIND_MISMATCH, f"expected {_kind(expected)}, got {_kind(actual)}"
    if isinstance(expected, TupleType):
        if len(expected.types) != len(actual.types):
            return TYPE_ATTR_MISMATCH, f"expected {len(expected.types)} tuple elements, got {len(actual.types)}"
        for i, (x, y) in enumerate(zip(expected.types, actual.types)):
            d = type_diff(x, y, strict=strict, dynamic_ok=dynamic_ok)
            if d is not None:
                return d[0], f"tuple element {i}: {d[1]}"
        return None
    if isinstance(expected, ScalarType):
        if expected.dtype is not actual.dtype:
            return TYPE_DTYPE_MISMATCH, f"expected dtype {expected.dtype.text}, got {actual.dtype.text}"
        return None
    if not isinstance(expected, ShapedType):
        return None if (strict is False or expected == actual) else (TYPE_ATTR_MISMATCH, "types differ")
    if expected.dtype is not actual.dtype:
        return TYPE_DTYPE_MISMATCH, f"expected dtype {expected.dtype.text}, got {actual.dtype.text}"
    if expected.rank != actual.rank:
        return TYPE_RANK_MISMATCH, f"expected rank {expected.rank}, got {actual.rank}"
    for i, (x, y) in enumerate(zip(expected.shape, actual.shape)):
        if dynamic_ok and not (isinstance(x, ConstInt) and isinstance(y, ConstInt)):
            continue  # a dynamic size on either side is checked when the program runs
        if not _dim_eq(x, y):
            return TYPE_DIM_MISMATCH, f"dimension {i}: expected {expr_text(x)}, got {expr_text(y)}"
    if isinstance(expected, TileType):
        es, as_ = expected.memory_space, actual.memory_space
        if (strict or (es is not None and as_ is not None)) and expected.space is not actual.space:
            return TYPE_ATTR_MISMATCH, f"expected memory space {expected.space.name}, got {actual.space.name}"
        if strict:
            ev, av = expected.valid_shape, actual.valid_shape
            if len(ev) != len(av) or not all(_dim_eq(x, y) for x, y in zip(ev, av)):
                return TYPE_DIM_MISMATCH, (f"valid shape: expected [{', '.join(map(expr_text, ev))}], "
                                           f"got [{', '.join(map(expr_text, av))}]")
            vx, vy = expected.tile_view, actual.tile_view
            attrs = ("blayout", "slayout", "fractal", "pad")
            if vx is not None and vy is not None and any(getattr(vx, a) != getattr(vy, a) for a in attrs):
                return TYPE_ATTR_MISMATCH, "tile views differ (layout, fractal or pad)"
    if strict and isinstance(expected, TensorType) and expected.layout is not actual.layout:
        return TYPE_ATTR_MISMATCH, f"expected layout {expected.layout.name}, got {actual.layout.name}"
    return None


class TypeCheck(Rule):
    name = "TypeCheck"
    codes = {101: "kind mismatch", 102: "dtype mismatch", 103: "rank mismatch", 104: "dimension mismatch",
             105: "attribute or count mismatch", 106: "condition must be a scalar",
             107: "for range must be scalars"}

    def check(self, ctx: _Context) -> None:
        self.ctx = ctx
        for unit in ctx.units:
            self.unit = unit
            self._stmt(unit.body, [])

    def _report(self, code: int, msg: str, node: Any, s: Stmt | None) -> None:
        self.ctx.report(self, code, msg, node, s, self.unit)

    def _fits(self, expected: Type | None, actual: Type | None, what: str, node: Any, s: Stmt | None,
              **kw: Any) -> None:
        d = type_diff(expected, actual, **kw)
        if d is not None:
            self._report(d[0], f"{what}: {d[1]} ({type_text(expected)} vs {type_text(actual)})", node, s)

    def _stmt(self, s: Stmt | None, enclosing: list[Stmt]) -> None:
        if s is None:
            return
        for e in _stmt_exprs(s):
            self._calls(e, s)
        if isinstance(s, AssignStmt):
            vt = _type_of(s.value)
            if vt is None:  # untyped calls and bad tuple indices were reported by _calls already
                if not isinstance(s.value, (Call, TupleGetItem)):
                    self._report(101, f"the value assigned to {s.var.name} has no valid type", s.value, s)
            else:
                self._fits(s.var.type, vt, f"{s.var.name} is declared with another type than its value", s.var, s)
        elif isinstance(s, (IfStmt, WhileStmt)):
            if not isinstance(_type_of(s.condition), ScalarType):
                what = "if" if isinstance(s, IfStmt) else "while"
                self._report(106, f"{what} condition must be a scalar, got {type_text(_type_of(s.condition))}",
                             s.condition, s)
        if isinstance(s, ForStmt):
            for label, b in (("start", s.start), ("stop", s.stop), ("step", s.step)):
                if not isinstance(_type_of(b), ScalarType):
                    self._report(107, f"for-loop {label} must be a scalar, got {type_text(_type_of(b))}", b, s)
            if isinstance(s.step, ConstInt) and s.step.value == 0:
                self._report(108, "for-loop step cannot be zero (range() needs a non-zero step)", s.step, s)
        if isinstance(s, (ForStmt, WhileStmt)):
            for ia in s.iter_args:
                self._fits(ia.type, _type_of(ia.init_value), f"init value of iter_arg {ia.name}", ia, s)
            for ia, rv in zip(s.iter_args, s.return_vars):
                self._fits(ia.type, rv.type, f"return var {rv.name} vs iter_arg {ia.name}", rv, s)
        elif isinstance(s, YieldStmt) and enclosing:
            owner = enclosing[-1]
            targets = owner.return_vars if isinstance(owner, IfStmt) else owner.iter_args
            for i, (t, v) in enumerate(zip(targets, s.values)):
                self._fits(t.type, _type_of(v), f"yielded value #{i} for {t.name}", v, s)
        elif isinstance(s, ReturnStmt) and self.unit.function is not None:
            want = self.unit.function.return_types
            if len(want) != len(s.values):
                self._report(105, f"return of {len(s.values)} value(s) from function {self.unit.function.name} "
                             f"declared to return {len(want)}", s, s)
            for i, (t, v) in enumerate(zip(want, s.values)):
                self._fits(t, _type_of(v), f"returned value #{i}", v, s)
        inner = enclosing + [s] if isinstance(s, (ForStmt, WhileStmt, IfStmt)) else enclosing
        for c in _children(s):
            self._stmt(c, inner)

    def _calls(self, e: Expr, s: Stmt) -> None:
        for n in self.ctx.expr_nodes(e):
            if isinstance(n, TupleGetItem) and _type_of(n) is None:
                self._report(105, f"tuple index {n.index} out of range for {type_text(_type_of(n.tuple))}", n, s)
            if not isinstance(n, Call):
                continue
            if n.type is None:
                self._report(101, f"call of {n.op.name} has no type", n, s)
            elif isinstance(n.op, GlobalVar):
                self._global_call(n, s)
            elif isinstance(n.op, Op) and hasattr(n.op, "infer_type"):
                self._op_call(n, s)

    def _op_call(self, c: Call, s: Stmt) -> None:
        op = c.op
        try:
            kw = dict(c.kwargs)
            norm = getattr(op, "normalize_kwargs", None)
            if norm is not None:
                kw = norm(kw)
            want = op.infer_type(c.args, kw)
        except Exception as e:  # OpError from the type rule, or anything a broken operand provokes
            self._report(101, f"{op.name} rejects its operands: {getattr(e, 'message', None) or e}", c, s)
            return
        self._fits(want, c.type, f"recorded type of {op.name} differs from its inferred type", c, s, strict=True)

    def _global_call(self, c: Call, s: Stmt) -> None:
        prog = self.ctx.program
        if prog is None:
            return
        callee = prog.get_function(c.op.name)
        if callee is None:
            self._report(101, f"call of {c.op.name}, which is not a function of program {prog.name}", c, s)
            return
        if len(c.args) != len(callee.params):
            self._report(105, f"{callee.name} takes {len(callee.params)} argument(s), got {len(c.args)}", c, s)
        for p, a in zip(callee.params, c.args):
            self._fits(p.type, _type_of(a), f"argument {p.name} of {callee.name}", a, s, dynamic_ok=True)
        rets = callee.return_types
        if rets:
            want = rets[0] if len(rets) == 1 else TupleType(rets)
            self._fits(want, c.type, f"result of {callee.name}", c, s, dynamic_ok=True)


class SupportedTypes(Rule):
    """The types of a program are ones the targets can build (`pypto.ir.limits`)."""

    name = "SupportedTypes"
    codes = {701: "element type no target supports", 702: "dimension or size out of range"}

    def check(self, ctx: _Context) -> None:
        for unit in ctx.units:
            # each parameter and return type is reported; in the body, each problem once, where it
            # first appears (every value computed from a bad parameter has the same problem)
            self.seen: set[str] = set()
            fn = unit.function
            of = f" of function {fn.name}" if fn is not None else ""
            for p in fn.params if fn is not None else ():
                self._type(ctx, unit, p.type, f"parameter {p.name}{of}", p, None, once=False)
            for s in _all_stmts(unit.body):
                for v in _binders(s):
                    self._type(ctx, unit, v.type, f"variable {v.name}{of}", v, s)
                for e in _stmt_exprs(s):
                    for n in ctx.expr_nodes(e):
                        if isinstance(n, Call):
                            self._type(ctx, unit, _type_of(n), f"the result of {n.op.name}{of}", n, s)
            for i, t in enumerate(fn.return_types if fn is not None else ()):
                self._type(ctx, unit, t, f"return type #{i}{of}", fn, None, once=False)

    def _type(self, ctx: _Context, unit: _Unit, t: Type | None, what: str, node: Any, s: Stmt | None,
              once: bool = True) -> None:
        from .limits import type_problem

        p = type_problem(t)
        if p is not None and not (once and p.message in self.seen):
            self.seen.add(p.message)
            ctx.report(self, UNSUPPORTED_DTYPE if p.is_dtype else SIZE_OUT_OF_RANGE, f"{what}: {p.message}", node, s,
                       unit, hint=p.hint)


# ---------------------------------------------------------------------------------------------
# entry points


RULES: dict[str, type[Rule]] = {r.name: r for r in (SSAVerify, TypeCheck, UseAfterDef, NoNestedCall, BreakContinue,
                                                    SupportedTypes)}
DEFAULT_RULES: tuple[str, ...] = tuple(n for n, r in RULES.items() if r.default)


def _rules(rules: Any) -> list[Rule]:
    if rules is None:
        return [RULES[n]() for n in DEFAULT_RULES]
    if isinstance(rules, (str, Rule)) or (isinstance(rules, type) and issubclass(rules, Rule)):
        rules = [rules]
    out: list[Rule] = []
    for r in rules:
        if isinstance(r, str):
            if r not in RULES:
                raise ValueError(f"unknown verifier rule {r!r}; rules: {', '.join(RULES)}")
            out.append(RULES[r]())
        elif isinstance(r, type) and issubclass(r, Rule):
            out.append(r())
        elif isinstance(r, Rule):
            out.append(r)
        else:
            raise TypeError(f"a verifier rule is a name, a Rule class or a Rule, got {r!r}")
    return out


def verify(node: Any, rules: Any = None) -> list[Diagnostic]:
    """Every fault the selected rules (default: all but NoNestedCall) find in `node`."""
    ctx = _Context(node)
    for rule in _rules(rules):
        rule.check(ctx)
    return ctx.diagnostics


def verify_or_raise(node: Any, rules: Any = None) -> None:
    diags = verify(node, rules)
    if diags:
        raise VerificationError(diags, node)


# ---------------------------------------------------------------------------------------------
# rendering: the message of a VerificationError shows the IR around each fault


_OPS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "FloatDiv": "/", "Pow": "**",
        "Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "And": "and", "Or": "or",
        "BitAnd": "&", "BitOr": "|", "BitXor": "^", "BitShiftLeft": "<<", "BitShiftRight": ">>"}


def expr_text(e: Any, depth: int = 0) -> str:
    """A one-line, printer-independent rendering of an expression (deep trees are elided)."""
    if depth > 6:
        return "..."
    d = depth + 1
    if isinstance(e, Var):
        return e.name
    if isinstance(e, (ConstInt, ConstBool)):
        return repr(e.value) if isinstance(e, ConstBool) or e.dtype is DataType.INDEX else f"{e.value}:{e.dtype.text}"
    if isinstance(e, ConstFloat):
        return repr(e.value)
    if isinstance(e, Call):
        parts = [expr_text(a, d) for a in e.args] + [f"{k}={_kw_text(v)}" for k, v in e.kwargs]
        return f"{e.op.name}({', '.join(parts)})"
    if isinstance(e, BinaryExpr):
        sym = _OPS.get(type(e).__name__)
        lhs, rhs = expr_text(e.lhs, d), expr_text(e.rhs, d)
        return f"({lhs} {sym} {rhs})" if sym else f"{type(e).__name__.lower()}({lhs}, {rhs})"
    if isinstance(e, UnaryExpr):
        return f"{type(e).__name__.lower()}({expr_text(e.operand, d)})"
    if isinstance(e, MakeTuple):
        return "[" + ", ".join(expr_text(x, d) for x in e.elements) + "]"
    if isinstance(e, TupleGetItem):
        return f"{expr_text(e.tuple, d)}[{e.index}]"
    return type(e).__name__


def _kw_text(v: Any) -> str:
    return v.name if hasattr(v, "name") and not isinstance(v, str) else repr(v)


def _names(vs: Any) -> str:
    return ", ".join(v.name for v in vs)


def stmt_line(s: Stmt) -> str:
    """A one-line summary of a statement (compound statements show their header)."""
    if isinstance(s, AssignStmt):
        return f"{s.var.name}: {type_text(s.var.type)} = {expr_text(s.value)}"
    if isinstance(s, EvalStmt):
        return expr_text(s.expr)
    if isinstance(s, IfStmt):
        return f"if {expr_text(s.condition)}:" + (f"  # -> {_names(s.return_vars)}" if s.return_vars else "")
    if isinstance(s, ForStmt):
        init = ", ".join(expr_text(ia.init_value) for ia in s.iter_args)
        carried = f", ({_names(s.iter_args)},) in range(" if s.iter_args else " in range("
        tail = f", init_values=({init},)):  # -> {_names(s.return_vars)}" if s.iter_args else "):"
        kind = "" if s.kind is ForKind.Sequential else f"  # {s.kind.name}"
        return (f"for {s.loop_var.name}{carried}{expr_text(s.start)}, {expr_text(s.stop)}, "
                f"{expr_text(s.step)}{tail}{kind}")
    if isinstance(s, WhileStmt):
        init = ", ".join(expr_text(ia.init_value) for ia in s.iter_args)
        return f"while ({_names(s.iter_args)}) from ({init}) if {expr_text(s.condition)}:"
    if isinstance(s, ScopeStmt):
        return f"with {s.kind.name}:"
    if isinstance(s, YieldStmt):
        return f"yield_({', '.join(expr_text(v) for v in s.values)})"
    if isinstance(s, ReturnStmt):
        return "return " + ", ".join(expr_text(v) for v in s.values)
    if isinstance(s, BreakStmt):
        return "break"
    if isinstance(s, ContinueStmt):
        return "continue"
    if isinstance(s, SeqStmts):
        return f"<{len(s.stmts)} statements>"
    return type(s).__name__


def _render_stmt(s: Stmt) -> str:
    """The printer's first line for `s` when a printer exists, else `stmt_line`."""
    try:
        from .printer import python_print  # written separately; optional here

        text = python_print(s).strip("\n")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if lines:
            return lines[0].strip() + (" ..." if len(lines) > 1 and isinstance(s, (ForStmt, WhileStmt, IfStmt,
                                                                                   ScopeStmt)) else "")
    except Exception:  # the printer is optional: any failure falls back to the built-in summary
        pass
    return stmt_line(s)


def _flat(s: Stmt) -> list[Stmt]:
    return [y for x in s.stmts for y in _flat(x)] if isinstance(s, SeqStmts) else [s]


def _locate(root: Any, target: Stmt) -> tuple[list[Stmt], int, list[Any]] | None:
    """(the block holding `target`, its index there, the chain of enclosing function/statements)."""

    def search(body: Stmt, chain: list[Any]) -> tuple[list[Stmt], int, list[Any]] | None:
        block = _flat(body)
        for i, x in enumerate(block):
            if x is target:
                return block, i, chain
            for c in _children(x):
                got = search(c, chain + [x])
                if got is not None:
                    return got
        return None

    fns = root.functions if isinstance(root, Program) else [root] if isinstance(root, Function) else []
    for f in fns:
        got = search(f.body, [f]) if f.body is not None else None
        if got is not None:
            return got
    return search(root, []) if isinstance(root, Stmt) else None


def excerpt(root: Any, stmt: Stmt | None, context: int = 3) -> list[str]:
    """Lines showing the statements around `stmt` (marked with `>`) inside `root`."""
    if stmt is None or root is None:
        return []
    found = _locate(root, stmt)
    if found is None:
        return [f"  > {_render_stmt(stmt)}"]
    block, i, chain = found
    out: list[str] = []
    indent = ""
    for c in chain:
        out.append(f"    {indent}" + (f"def {c.name}({_names(c.params)}):" if isinstance(c, Function)
                                      else _render_stmt(c)))
        indent += "    "
    lo, hi = max(0, i - context), min(len(block), i + context + 1)
    if lo > 0:
        out.append(f"    {indent}...")
    for j in range(lo, hi):
        mark = "  > " if j == i else "    "
        out.append(f"{mark}{indent}{_render_stmt(block[j])}")
    if hi < len(block):
        out.append(f"    {indent}...")
    return out


def render_diagnostics(diags: list[Diagnostic], root: Any = None) -> str:
    lines = [f"IR verification failed with {len(diags)} error(s):"]
    for d in diags:
        where = f" in function {d.function}" if d.function else ""
        lines.append(f"error [{d.rule} {d.code}]{where}: {d.message}")
        lines.append(f"  --> {d.span}")
        src = d.span.source_line() if d.span.is_known else None
        if src:
            lines.append(f"   | {src.strip()}")
        lines.extend(excerpt(root, d.stmt))
        if d.hint:
            lines.append(f"   = help: {d.hint}")
    return "\n".join(lines)


__all__ = [
    "DEFAULT_RULES", "RULES", "BreakContinue", "Diagnostic", "NoNestedCall", "Rule", "SSAVerify", "SupportedTypes",
    "TypeCheck", "UseAfterDef", "VerificationError", "excerpt", "expr_text", "render_diagnostics", "stmt_line",
    "type_diff", "type_text", "verify", "verify_or_raise",
]
