"""Utilities shared by passes: statement lists, variable analysis, substitution, fresh names,
liveness, and a reference evaluator for scalar programs.

Conventions. A *variable* is a `Var` object (identity; the name is a hint). Before ConvertToSSA a
Var may be assigned several times (the parser reuses the object for a reassignment of the same
type), so analyses here treat a Var as a storage location: "defined" means "has a binding site"
(AssignStmt target, loop var, iter_arg, return var, parameter), "used" means "read by an
expression". Dynamic dimensions (`DynVar`) are bound by parameter types and are never reported as
free or live.

Statement bodies built by passes should go through `make_body` (flat, one statement unwrapped,
like the parser builds them) and `make_else` (an empty else is `None`), so that pass outputs are
structurally equal to the same program written in `pl`.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import (
    BinaryExpr,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynVar,
    Expr,
    GlobalVar,
    IterArg,
    MakeTuple,
    Op,
    TupleGetItem,
    UnaryExpr,
    Var,
)
from pypto.ir.function import Function, Program
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
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.types import ScalarType, Type, is_constant_type
from pypto.ir.visitor import IRMutator, IRVisitor, rebuild

# ---------------------------------------------------------------------------------------------
# statement lists


def flatten_stmts(stmts: Iterable[Stmt | None]) -> list[Stmt]:
    """The statements of `stmts` with nested SeqStmts spliced in and Nones dropped."""
    out: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmts):
            out.extend(flatten_stmts(s.stmts))
        else:
            out.append(s)
    return out


def body_stmts(body: Stmt | None) -> list[Stmt]:
    """A body as a flat list of statements (empty for None)."""
    return flatten_stmts([body])


def make_body(stmts: Iterable[Stmt | None], span: Span | None = None) -> Stmt:
    """A body the way the parser builds it: flat; a single statement is returned unwrapped."""
    flat = flatten_stmts(stmts)
    if len(flat) == 1:
        return flat[0]
    return SeqStmts(tuple(flat), span=span) if span is not None else SeqStmts(tuple(flat))


def make_else(stmts: Iterable[Stmt | None]) -> Stmt | None:
    """An else body: None when there is nothing in it (the printer drops empty else branches)."""
    flat = flatten_stmts(stmts)
    return make_body(flat) if flat else None


def last_stmt(body: Stmt | None) -> Stmt | None:
    stmts = body_stmts(body)
    return stmts[-1] if stmts else None


def split_yield(body: Stmt | None) -> tuple[list[Stmt], YieldStmt | None]:
    """(the statements before a trailing yield, the yield) — the yield is None if there is none."""
    stmts = body_stmts(body)
    if stmts and isinstance(stmts[-1], YieldStmt):
        return stmts[:-1], stmts[-1]
    return stmts, None


def child_bodies(s: Stmt) -> list[Stmt]:
    """The bodies directly nested in a statement (then/else, loop body, scope body)."""
    if isinstance(s, SeqStmts):
        return list(s.stmts)
    if isinstance(s, IfStmt):
        return [s.then_body] + ([s.else_body] if s.else_body is not None else [])
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body] if s.body is not None else []
    return []


def walk_stmts(node: Stmt | Function | None, *, into_loops: bool = True) -> Iterator[Stmt]:
    """Every statement under `node` in program order (pre-order; SeqStmts are not yielded, their
    statements are). With `into_loops=False` loop bodies are not entered (the loops themselves are
    yielded) — pass a loop's *body* to walk what belongs to that loop alone."""
    if isinstance(node, Function):
        node = node.body
    if node is None:
        return
    todo = [node]
    while todo:
        s = todo.pop()
        if not isinstance(s, SeqStmts):
            yield s
        if not into_loops and isinstance(s, (ForStmt, WhileStmt)):
            continue
        todo.extend(reversed(child_bodies(s)))


def stmt_exprs(s: Stmt) -> list[Expr]:
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


def stmt_binders(s: Stmt) -> list[Var]:
    """The variables a statement binds itself (assignment target, loop var, iter_args, return vars)."""
    if isinstance(s, AssignStmt):
        return [s.var]
    if isinstance(s, ForStmt):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, WhileStmt):
        return [*s.iter_args, *s.return_vars]
    if isinstance(s, IfStmt):
        return list(s.return_vars)
    return []


def contains_stmt(node: Stmt | None, cls: type | tuple[type, ...], *, into_loops: bool = True) -> bool:
    return any(isinstance(s, cls) for s in walk_stmts(node, into_loops=into_loops))


class StmtRewriter:
    """Rewrites statement trees one statement at a time.

    Override `rewrite(s)`: it returns the statement(s) replacing `s` (a Stmt, or a list: empty to
    delete, several to expand). The default, `recurse(s)`, rewrites the bodies nested in `s` and
    rebuilds it only if one changed. Bodies are rebuilt flat (`make_body`); an else that becomes
    empty is dropped (None)."""

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        return self.recurse(s)

    def rewrite_stmts(self, stmts: Iterable[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            r = self.rewrite(s)
            out.extend(flatten_stmts([r] if isinstance(r, Stmt) else r))
        return out

    def rewrite_body(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        old = body_stmts(body)
        new = self.rewrite_stmts(old)
        if len(new) == len(old) and all(a is b for a, b in zip(new, old)):
            return body
        return make_body(new)

    def recurse(self, s: Stmt) -> Stmt:
        if isinstance(s, IfStmt):
            t = self.rewrite_body(s.then_body)
            e = self.rewrite_body(s.else_body)
            if e is not None and e is not s.else_body and not body_stmts(e):
                e = None
            if t is s.then_body and e is s.else_body:
                return s
            return rebuild(s, {"then_body": t, "else_body": e})  # type: ignore[return-value]
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            b = self.rewrite_body(s.body)
            return s if b is s.body else rebuild(s, {"body": b})  # type: ignore[return-value]
        if isinstance(s, SeqStmts):
            return make_body(self.rewrite_stmts(s.stmts))
        return s


# ---------------------------------------------------------------------------------------------
# variables: uses, definitions, def-use


class _VarCollector(IRVisitor):
    def __init__(self, types: bool) -> None:
        self.visit_types = types
        self.uses: dict[Var, None] = {}
        self.defs: dict[Var, None] = {}

    def visit_Var(self, var: Var) -> None:
        self.uses.setdefault(var)

    def visit_def(self, var: Var) -> None:
        self.defs.setdefault(var)
        super().visit_def(var)

    def visit_Type(self, t: Type) -> None:
        if not is_constant_type(t):  # most types mention no variable
            self.generic_visit(t)


def _collect(node: Any, types: bool) -> _VarCollector:
    c = _VarCollector(types)
    c.visit_value(node) if isinstance(node, tuple) else c.visit(node)
    return c


def used_vars(node: Any, *, types: bool = False) -> list[Var]:
    """Variables read anywhere under `node` (in first-use order). `types`: also those mentioned
    in types (dynamic shape expressions)."""
    return list(_collect(node, types).uses)


def defined_vars(node: Any) -> list[Var]:
    """Variables bound anywhere under `node` (in program order)."""
    return list(_collect(node, False).defs)


def free_vars(node: Any, *, types: bool = False) -> list[Var]:
    """Variables read under `node` but bound nowhere inside it (DynVars excluded). This is the SSA
    notion; before SSA a variable bound inside may also be read before that (use `Liveness(node).live_in`)."""
    c = _collect(node, types)
    return [v for v in c.uses if v not in c.defs and not isinstance(v, DynVar)]


def has_call(e: Expr) -> bool:
    """Whether an expression contains a Call (types are not looked into)."""
    if isinstance(e, Call):
        return True
    if isinstance(e, BinaryExpr):
        return has_call(e.lhs) or has_call(e.rhs)
    if isinstance(e, UnaryExpr):
        return has_call(e.operand)
    if isinstance(e, MakeTuple):
        return any(has_call(x) for x in e.elements)
    if isinstance(e, TupleGetItem):
        return has_call(e.tuple)
    return False


def expr_vars(e: Any) -> set[Var]:
    """The set of (non-dynamic) variables an expression reads."""
    return {v for v in _collect(e, False).uses if not isinstance(v, DynVar)}


def assigned_vars(node: Stmt | None) -> list[Var]:
    """What a (non-SSA) statement tree may modify, in program order: assignment targets and the
    return vars of nested ifs and loops (not loop vars or iter_args, which never leave their loop)."""
    out: dict[Var, None] = {}
    for s in walk_stmts(node):
        if isinstance(s, AssignStmt):
            out.setdefault(s.var)
        elif isinstance(s, (IfStmt, ForStmt, WhileStmt)):
            for v in s.return_vars:
                out.setdefault(v)
    return list(out)


@dataclass
class DefUse:
    """Binding sites and reading statements of every variable of a function or statement tree.

    `defs[v]` lists the statements binding v (the Function itself for parameters); `uses[v]` the
    statements whose own expressions read v (a loop reading v in its bounds or init values counts,
    its body's statements are listed separately)."""

    defs: dict[Var, list[Stmt | Function]] = field(default_factory=dict)
    uses: dict[Var, list[Stmt]] = field(default_factory=dict)

    def num_defs(self, v: Var) -> int:
        return len(self.defs.get(v, ()))

    def users(self, v: Var) -> list[Stmt]:
        return self.uses.get(v, [])

    def multiply_defined(self) -> list[Var]:
        return [v for v, d in self.defs.items() if len(d) > 1]


def def_use(node: Function | Stmt) -> DefUse:
    du = DefUse()
    if isinstance(node, Function):
        for p in node.params:
            du.defs.setdefault(p, []).append(node)
    for s in walk_stmts(node):
        for v in stmt_binders(s):
            du.defs.setdefault(v, []).append(s)
        for e in stmt_exprs(s):
            for v in used_vars(e):
                lst = du.uses.setdefault(v, [])
                if not lst or lst[-1] is not s:
                    lst.append(s)
    return du


# ---------------------------------------------------------------------------------------------
# substitution and cloning


class Substitute(IRMutator):
    """Replace variables: a Var -> Var entry renames uses *and* binding sites; a Var -> Expr entry
    replaces uses only. With `types` (default) shape expressions inside types are rewritten too,
    and a variable whose type changes is re-created (its uses follow)."""

    def __init__(self, mapping: Mapping[Var, Expr], types: bool = True) -> None:
        super().__init__()
        self.visit_types = types
        self.exprs: dict[Var, Expr] = {}
        for k, v in mapping.items():
            if isinstance(v, Var):
                self.var_map[k] = v
            else:
                self.exprs[k] = v

    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_GlobalVar(self, g: GlobalVar) -> GlobalVar:
        return g

    def visit_Var(self, var: Var) -> Expr:
        got = self.var_map.get(var)
        if got is not None:
            return got
        return self.exprs.get(var, var)

    def visit_WhileStmt(self, s: WhileStmt) -> Stmt:
        # the iter_args are bound before the condition reads them (field order says otherwise)
        ias = tuple(self.mutate_def(x) for x in s.iter_args)
        cond, body = self.visit(s.condition), self.visit(s.body)
        rvs = tuple(self.mutate_def(x) for x in s.return_vars)
        if cond is s.condition and body is s.body and all(a is b for a, b in zip(ias + rvs, s.iter_args + s.return_vars)):
            return s
        return WhileStmt(cond, ias, body, rvs, span=s.span)


def substitute(node: Any, mapping: Mapping[Var, Expr], *, types: bool = True) -> Any:
    """`node` (expression, statement, type, function) with variables replaced per `mapping`."""
    if not mapping:
        return node
    return Substitute(mapping, types).visit(node)


class _Cloner(Substitute):
    def __init__(self, mapping: Mapping[Var, Expr], keep: set[Var], rename: Callable[[Var], str] | None) -> None:
        super().__init__(mapping)
        self.keep = keep
        self.rename = rename

    def mutate_def(self, var: Var) -> Var:
        got = self.var_map.get(var)
        if got is not None:
            return got
        if var in self.keep or isinstance(var, DynVar):
            return super().mutate_def(var)
        t = self.visit(var.type) if var.type is not None else None
        name = self.rename(var) if self.rename is not None else var.name
        if isinstance(var, IterArg):
            new: Var = IterArg(name, t, self.visit(var.init_value), span=var.span)
        else:
            new = rebuild(var, {"type": t, "name": name})  # type: ignore[assignment]
        self.var_map[var] = new
        return new


def clone_fresh(node: Any, mapping: Mapping[Var, Expr] | None = None, keep: Iterable[Var] = (),
                rename: Callable[[Var], str] | None = None) -> tuple[Any, dict[Var, Var]]:
    """A copy of `node` in which every variable bound inside it (except those in `keep`) is a new
    Var object, used consistently; `mapping` substitutes free variables on the way. Returns the
    copy and the old -> new map of the re-created variables. A variable bound several times (non-SSA)
    maps to one new variable."""
    c = _Cloner(mapping or {}, set(keep), rename)
    out = c.visit(node)
    return out, dict(c.var_map)


# ---------------------------------------------------------------------------------------------
# fresh names and constants

_SUFFIX = re.compile(r"__(ssa|tmp)_v\d+$")


def base_name(name: str) -> str:
    """`x__ssa_v3` -> `x`, `t__tmp_v1` -> `t` (repeatedly)."""
    while True:
        m = _SUFFIX.search(name)
        if m is None or m.start() == 0:
            return name
        name = name[:m.start()]


class NameGen:
    """Fresh, deterministic variable names `<base>__<kind>_v<k>` (k from 1) unique among `taken`."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(taken)
        self.counters: dict[tuple[str, str], int] = {}

    @classmethod
    def for_node(cls, node: Any) -> NameGen:
        c = _collect(node, True)
        return cls([v.name for v in (*c.defs, *c.uses)])

    def fresh(self, hint: str, kind: str = "ssa") -> str:
        base = base_name(hint or "v")
        key = (base, kind)
        k = self.counters.get(key, 0)
        while True:
            k += 1
            name = f"{base}__{kind}_v{k}"
            if name not in self.taken:
                break
        self.counters[key] = k
        self.taken.add(name)
        return name

    def unique(self, name: str) -> str:
        """`name` itself if free, else `name_1`, `name_2`, ... (reserved on return)."""
        out, k = name, 0
        while out in self.taken:
            k += 1
            out = f"{name}_{k}"
        self.taken.add(out)
        return out

    def fresh_var(self, like: Var | str, type_: Any = None, kind: str = "ssa", span: Span | None = None) -> Var:
        hint = like if isinstance(like, str) else like.name
        t = type_ if type_ is not None or isinstance(like, str) else like.type
        sp = span if span is not None else (like.span if isinstance(like, Var) else None)
        return Var(self.fresh(hint, kind), t, span=sp) if sp is not None else Var(self.fresh(hint, kind), t)


class LazyNames:
    """Fresh variable names for one function or statement tree, like `NameGen.for_node(node)`; the
    NameGen (a walk over the whole node) is built only when a name is first needed — many functions
    a pass looks at need none."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.gen: NameGen | None = None

    def _gen(self) -> NameGen:
        if self.gen is None:
            self.gen = NameGen.for_node(self.node)
        return self.gen

    def fresh(self, hint: str, kind: str = "ssa") -> str:
        return self._gen().fresh(hint, kind)

    def fresh_var(self, like: Var | str, type_: Any = None, kind: str = "ssa", span: Span | None = None) -> Var:
        return self._gen().fresh_var(like, type_, kind, span)


def zero_of(t: Any) -> Expr | None:
    """A zero constant of a scalar type (None for other types)."""
    if not isinstance(t, ScalarType):
        return None
    if t.dtype is DataType.BOOL:
        return ConstBool(False)
    if t.dtype.is_float:
        return ConstFloat(0.0, t.dtype)
    return ConstInt(0, t.dtype)


class _Folder(IRMutator):
    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:
        e = self.generic_visit(e)  # type: ignore[assignment]
        if isinstance(e.lhs, (ConstInt, ConstFloat, ConstBool)) and isinstance(e.rhs, (ConstInt, ConstFloat, ConstBool)):
            try:
                return _const(_BIN_FNS[type(e).__name__](e.lhs.value, e.rhs.value), e.dtype, e.span)
            except (ArithmeticError, KeyError, ValueError):
                return e
        return e

    def visit_UnaryExpr(self, e: UnaryExpr) -> Expr:
        e = self.generic_visit(e)  # type: ignore[assignment]
        if isinstance(e.operand, (ConstInt, ConstFloat, ConstBool)):
            name = type(e).__name__
            v = e.operand.value
            return _const(_cast(v, e.dtype) if name == "Cast" else _UN_FNS[name](v), e.dtype, e.span)
        return e


def _const(v: Any, dt: DataType, span: Span) -> Expr:
    if dt is DataType.BOOL:
        return ConstBool(bool(v), span=span)
    if dt.is_float:
        return ConstFloat(float(v), dt, span=span)
    return ConstInt(_cast(v, dt), dt, span=span)


def fold_constants(node: Any) -> Any:
    """`node` with every scalar operator whose operands are constants replaced by its value (what the
    parser does to Python-level arithmetic; useful after substituting constants for variables)."""
    return _Folder().visit(node)


# ---------------------------------------------------------------------------------------------
# liveness


class Liveness:
    """Backward liveness over structured statements, treating each Var as a storage location (so
    it is valid before SSA). `after(s)` is the set of variables live right after statement `s`;
    for loops, `head(loop)` is the set live at the loop head (exit test / next iteration) and
    `body_in(loop)` the set live on entry to the body. Break/continue are not modelled (run
    CtrlFlowTransform first)."""

    def __init__(self, node: Function | Stmt, live_out: Iterable[Var] = ()) -> None:
        self._root = node  # keeps the statements (whose ids are keys) alive
        self._vars: dict[int, set[Var]] = {}  # id(expr) -> expr_vars(expr): loops are walked until stable
        self._after: dict[int, frozenset[Var]] = {}
        self._head: dict[int, frozenset[Var]] = {}
        self._body_in: dict[int, frozenset[Var]] = {}
        body = node.body if isinstance(node, Function) else node
        self.live_in = self.block(body, frozenset(live_out))

    def after(self, s: Stmt) -> frozenset[Var]:
        return self._after.get(id(s), frozenset())

    def head(self, loop: Stmt) -> frozenset[Var]:
        return self._head.get(id(loop), frozenset())

    def body_in(self, loop: Stmt) -> frozenset[Var]:
        return self._body_in.get(id(loop), frozenset())

    def reads(self, e: Expr) -> set[Var]:
        got = self._vars.get(id(e))
        if got is None:
            got = self._vars[id(e)] = expr_vars(e)
        return got

    def block(self, body: Stmt | None, out: frozenset[Var]) -> frozenset[Var]:
        live = out
        for s in reversed(body_stmts(body)):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: Stmt, out: frozenset[Var]) -> frozenset[Var]:
        self._after[id(s)] = out
        if isinstance(s, AssignStmt):
            return (out - {s.var}) | self.reads(s.value)
        if isinstance(s, ScopeStmt):
            return self.block(s.body, out)
        if isinstance(s, IfStmt):
            rest = out - set(s.return_vars)
            t = self.block(s.then_body, rest)
            e = self.block(s.else_body, rest) if s.else_body is not None else rest
            return t | e | self.reads(s.condition)
        if isinstance(s, (ForStmt, WhileStmt)):
            rest = out - set(s.return_vars)
            binders = set(s.iter_args) | ({s.loop_var} if isinstance(s, ForStmt) else set())
            cond = self.reads(s.condition) if isinstance(s, WhileStmt) else frozenset()
            head = rest | (cond - binders)
            while True:
                b = self.block(s.body, head)
                new = rest | ((b | cond) - binders)
                if new == head:
                    break
                head = new
            self._head[id(s)] = head
            self._body_in[id(s)] = b
            pre = set().union(*(self.reads(e) for e in stmt_exprs(s) if e is not getattr(s, "condition", None)))
            return head | pre
        live = out
        for e in stmt_exprs(s):
            live = live | self.reads(e)
        return live


# ---------------------------------------------------------------------------------------------
# a reference evaluator for scalar programs


class EvalError(Exception):
    """The evaluator met something it cannot run (an unknown call, an undefined variable, a loop
    over the step limit)."""


class _Exit(Exception):
    def __init__(self, kind: str, values: tuple = ()) -> None:
        self.kind, self.values = kind, values  # "break", "continue" or "return"


_BIN_FNS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "FloatDiv": operator.truediv,
    "FloorDiv": operator.floordiv, "FloorMod": operator.mod, "Min": min, "Max": max, "Pow": operator.pow,
    "Eq": operator.eq, "Ne": operator.ne, "Lt": operator.lt, "Le": operator.le, "Gt": operator.gt,
    "Ge": operator.ge, "And": lambda a, b: bool(a) and bool(b), "Or": lambda a, b: bool(a) or bool(b),
    "Xor": lambda a, b: bool(a) != bool(b), "BitAnd": operator.and_, "BitOr": operator.or_,
    "BitXor": operator.xor, "BitShiftLeft": operator.lshift, "BitShiftRight": operator.rshift,
}


def _cast(v: Any, dt: DataType) -> Any:
    if dt is DataType.BOOL:
        return bool(v)
    if dt.is_float:
        return float(v)
    return int(math.trunc(v))


_UN_FNS: dict[str, Callable[[Any], Any]] = {
    "Abs": abs, "Neg": operator.neg, "Not": lambda a: not a, "BitNot": operator.invert,
}


class Evaluator:
    """Runs a function whose values are Python numbers: scalar expressions, assignments, ifs,
    for/while loops with iter_args and yields, scopes (transparent), break/continue and return.
    Calls go to `calls(call, args)` when given, else raise EvalError. A non-SSA program runs too:
    the environment is keyed by Var object, so a reassignment simply overwrites.

    Break/continue in a loop with iter_args: continue carries the current iter_arg values to the
    next iteration; break leaves the loop with them (its return vars get the current values)."""

    def __init__(self, calls: Callable[[Call, list[Any]], Any] | None = None, max_steps: int = 200_000) -> None:
        self.calls = calls
        self.steps = 0
        self.max_steps = max_steps

    def run(self, fn: Function, args: Sequence[Any]) -> tuple:
        if len(args) != len(fn.params):
            raise EvalError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
        env: dict[Var, Any] = dict(zip(fn.params, args))
        try:
            self.block(fn.body, env)
        except _Exit as r:
            return r.values
        return ()

    def block(self, body: Stmt | None, env: dict[Var, Any]) -> tuple | None:
        """Run a body; the values of the yield that ended it, if any."""
        for s in body_stmts(body):
            if isinstance(s, YieldStmt):
                return tuple(self.expr(v, env) for v in s.values)
            self.stmt(s, env)
        return None

    def stmt(self, s: Stmt, env: dict[Var, Any]) -> None:
        if isinstance(s, AssignStmt):
            env[s.var] = self.expr(s.value, env)
        elif isinstance(s, EvalStmt):
            self.expr(s.expr, env)
        elif isinstance(s, IfStmt):
            taken = s.then_body if self.expr(s.condition, env) else s.else_body
            got = self.block(taken, env)
            for v, x in zip(s.return_vars, got or ()):
                env[v] = x
        elif isinstance(s, (ForStmt, WhileStmt)):
            self.loop(s, env)
        elif isinstance(s, ScopeStmt):
            self.block(s.body, env)
        elif isinstance(s, ReturnStmt):
            raise _Exit("return", tuple(self.expr(v, env) for v in s.values))
        elif isinstance(s, (BreakStmt, ContinueStmt)):
            raise _Exit("break" if isinstance(s, BreakStmt) else "continue")
        elif isinstance(s, SeqStmts):
            self.block(s, env)
        else:
            raise EvalError(f"cannot evaluate a {type(s).__name__}")

    def loop(self, s: ForStmt | WhileStmt, env: dict[Var, Any]) -> None:
        vals = [self.expr(ia.init_value, env) for ia in s.iter_args]
        # an iterator (len() of a range past 2**63 - 1 raises OverflowError); a step of 0 raises, as in Python
        count = None
        if isinstance(s, ForStmt):
            count = iter(range(*(self.expr(e, env) for e in (s.start, s.stop, s.step))))
        while True:
            for ia, x in zip(s.iter_args, vals):
                env[ia] = x
            if count is not None:
                i = next(count, None)
                if i is None:
                    break
                env[s.loop_var] = i  # type: ignore[union-attr]
            elif not self.expr(s.condition, env):  # type: ignore[union-attr]
                break
            self.steps += 1
            if self.steps > self.max_steps:
                raise EvalError(f"step limit of {self.max_steps} loop iterations exceeded")
            try:
                got = self.block(s.body, env)
            except _Exit as x:
                if x.kind == "return":
                    raise
                if x.kind == "break":
                    break
                continue
            if got is not None and s.iter_args:
                vals = list(got)
        for v, x in zip(s.return_vars, vals):
            env[v] = x

    def expr(self, e: Expr, env: dict[Var, Any]) -> Any:
        if isinstance(e, Var):
            if e not in env:
                raise EvalError(f"variable {e.name} is read before it is defined")
            return env[e]
        if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            return e.value
        if isinstance(e, BinaryExpr):
            a, b = self.expr(e.lhs, env), self.expr(e.rhs, env)
            r = _BIN_FNS[type(e).__name__](a, b)
            return _cast(r, e.dtype) if e.dtype.is_int and isinstance(r, float) else r
        if isinstance(e, UnaryExpr):
            a = self.expr(e.operand, env)
            return _cast(a, e.dtype) if type(e).__name__ == "Cast" else _UN_FNS[type(e).__name__](a)
        if isinstance(e, MakeTuple):
            return tuple(self.expr(x, env) for x in e.elements)
        if isinstance(e, TupleGetItem):
            return self.expr(e.tuple, env)[e.index]
        if isinstance(e, Call):
            if self.calls is None:
                raise EvalError(f"cannot evaluate a call of {e.op.name} (no call handler)")
            return self.calls(e, [self.expr(a, env) for a in e.args])
        raise EvalError(f"cannot evaluate a {type(e).__name__}")


def evaluate(fn: Function | Program, args: Sequence[Any], *, name: str | None = None,
             calls: Callable[[Call, list[Any]], Any] | None = None, max_steps: int = 200_000) -> tuple:
    """Run a scalar function on Python numbers and return its results as a tuple (see Evaluator).
    For a Program, `name` picks the function (default: the only one)."""
    if isinstance(fn, Program):
        fns = [f for f in fn.functions if name is None or f.name == name]
        if len(fns) != 1:
            raise EvalError(f"pick one function of {fn.name} with name=")
        fn = fns[0]
    return Evaluator(calls, max_steps).run(fn, args)


__all__ = [
    "DefUse", "EvalError", "Evaluator", "LazyNames", "Liveness", "NameGen", "Substitute", "assigned_vars", "base_name",
    "body_stmts", "child_bodies", "clone_fresh", "contains_stmt", "def_use", "defined_vars",
    "evaluate", "expr_vars", "fold_constants", "flatten_stmts", "free_vars", "has_call", "last_stmt", "make_body", "make_else",
    "split_yield", "StmtRewriter", "stmt_binders", "stmt_exprs", "substitute", "used_vars", "walk_stmts", "zero_of",
]
