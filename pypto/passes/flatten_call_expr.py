"""FlattenCallExpr: three-address form — no call nested inside another expression or a condition."""

from __future__ import annotations

from typing import Any

from pypto.ir.expr import (
    BinaryExpr,
    Call,
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
from pypto.ir.names import LazyNames
from pypto.ir.node import replace
from pypto.ir.rewrite import StmtRewriter, substitute
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.structural import structural_equal
from pypto.ir.types import ScalarType, Type, is_constant_type
from pypto.ir.variables import expr_vars
from pypto.ir.visitor import IRMutator, rebuild
from pypto.ir.walk import has_call, make_body, split_yield, walk_stmts

from .base import FunctionPass, IRProperty, PassContext


class FlattenCallExpr(FunctionPass):
    """Hoist nested calls into temporaries.

    Pre: SSAForm. Post (NoNestedCalls, the verifier's NoNestedCall rule holds): a Call appears only
    as the whole value of an assignment, evaluation, yield or return (or as an element of a tuple
    there / the tuple of a TupleGetItem there); calls in iter_arg init values (later passes treat an
    init as a plain value: outlining would miss a tensor op there), calls inside call arguments (including
    shape/offset lists), scalar expressions, if conditions, for-loop bounds and while conditions are
    computed by `AssignStmt`s of temporaries named `<hint>__tmp_v<k>` (hint: the op's short name),
    placed right before the statement, innermost first, left to right. The output stays SSA.
    A call that also appears inside a type (a dynamic dimension) is replaced there by its temporary
    where that is in scope (the variables carrying such types are re-created).
    While conditions are evaluated before every iteration, so a call there is hoisted only when it
    reads no iter_arg (SSA makes it loop-invariant); otherwise the whole condition is carried as an
    extra bool iter_arg, computed once before the loop from the init values and again at the end of
    the body from the yielded values (values that are calls themselves are bound to temporaries
    first so that no call runs twice).
    """

    name = "FlattenCallExpr"
    requires = frozenset({IRProperty.SSAForm})
    produces = frozenset({IRProperty.NoNestedCalls})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if not any(_needs_work(s) for s in walk_stmts(fn.body)):
            return fn
        f = _Flattener(LazyNames(fn))
        body = f.rewrite_body(fn.body)
        out = replace(fn, body=body)
        return _TypeCalls(f.temps).visit(out) if f.temps else out


def _nested_call(e: Expr) -> bool:
    """A call somewhere it is not allowed when `e` is a statement's whole value."""
    if isinstance(e, Call):
        return any(has_call(a) for a in e.args)
    if isinstance(e, MakeTuple):
        return any(_nested_call(x) for x in e.elements)
    if isinstance(e, TupleGetItem):
        return _nested_call(e.tuple)
    return has_call(e)


def _needs_work(s: Stmt) -> bool:
    if isinstance(s, (IfStmt, WhileStmt)) and has_call(s.condition):
        return True
    if isinstance(s, ForStmt) and any(has_call(b) for b in (s.start, s.stop, s.step)):
        return True
    if isinstance(s, (ForStmt, WhileStmt)):
        return any(has_call(ia.init_value) for ia in s.iter_args)
    if isinstance(s, AssignStmt):
        return _nested_call(s.value)
    if isinstance(s, EvalStmt):
        return _nested_call(s.expr)
    if isinstance(s, (ReturnStmt, YieldStmt)):
        return any(_nested_call(v) for v in s.values)
    return False


class _Flattener(StmtRewriter):
    def __init__(self, names: LazyNames) -> None:
        self.names = names
        self.temps: set[Var] = set()

    def temp(self, c: Call, pre: list[Stmt]) -> Var:
        hint = c.op.name if isinstance(c.op, GlobalVar) else c.op.name.rsplit(".", 1)[-1]
        v = Var(self.names.fresh(hint, "tmp"), c.type, span=c.span)
        self.temps.add(v)
        pre.append(AssignStmt(v, c, span=c.span))
        return v

    def any(self, e: Expr, pre: list[Stmt]) -> Expr:
        """`e` without any call: every call (innermost first) becomes a temporary."""
        if isinstance(e, Call):
            args = tuple(self.any(a, pre) for a in e.args)
            c = e if all(a is b for a, b in zip(args, e.args)) else rebuild(e, {"args": args})
            return self.temp(c, pre)  # type: ignore[arg-type]
        if isinstance(e, BinaryExpr):
            lhs, rhs = self.any(e.lhs, pre), self.any(e.rhs, pre)
            return e if lhs is e.lhs and rhs is e.rhs else rebuild(e, {"lhs": lhs, "rhs": rhs})  # type: ignore
        if isinstance(e, UnaryExpr):
            x = self.any(e.operand, pre)
            return e if x is e.operand else rebuild(e, {"operand": x})  # type: ignore[return-value]
        if isinstance(e, MakeTuple):
            xs = tuple(self.any(x, pre) for x in e.elements)
            return e if all(a is b for a, b in zip(xs, e.elements)) else MakeTuple(xs, span=e.span)
        if isinstance(e, TupleGetItem):
            t = self.any(e.tuple, pre)
            return e if t is e.tuple else TupleGetItem(t, e.index, span=e.span)
        return e

    def top(self, e: Expr, pre: list[Stmt]) -> Expr:
        """`e` as a statement's whole value: a call may stay, its arguments lose theirs."""
        if isinstance(e, Call):
            args = tuple(self.any(a, pre) for a in e.args)
            return e if all(a is b for a, b in zip(args, e.args)) else rebuild(e, {"args": args})  # type: ignore
        if isinstance(e, MakeTuple):
            xs = tuple(self.top(x, pre) for x in e.elements)
            return e if all(a is b for a, b in zip(xs, e.elements)) else MakeTuple(xs, span=e.span)
        if isinstance(e, TupleGetItem):
            t = self.top(e.tuple, pre)
            return e if t is e.tuple else TupleGetItem(t, e.index, span=e.span)
        return self.any(e, pre)

    def iter_args(self, s: ForStmt | WhileStmt, pre: list[Stmt]) -> tuple[IterArg, ...]:
        out = []
        for ia in s.iter_args:
            init = self.any(ia.init_value, pre)
            out.append(ia if init is ia.init_value else IterArg(ia.name, ia.type, init, span=ia.span))
        return tuple(out)

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        s = self.recurse(s)
        pre: list[Stmt] = []
        if isinstance(s, AssignStmt):
            v = self.top(s.value, pre)
            s = s if v is s.value else AssignStmt(s.var, v, span=s.span)
        elif isinstance(s, EvalStmt):
            v = self.top(s.expr, pre)
            s = s if v is s.expr else EvalStmt(v, span=s.span)
        elif isinstance(s, (ReturnStmt, YieldStmt)):
            vals = tuple(self.top(v, pre) for v in s.values)
            s = s if all(a is b for a, b in zip(vals, s.values)) else type(s)(vals, span=s.span)
        elif isinstance(s, IfStmt):
            c = self.any(s.condition, pre)
            s = s if c is s.condition else replace(s, condition=c)
        elif isinstance(s, ForStmt):
            bounds = [self.any(b, pre) for b in (s.start, s.stop, s.step)]
            ias = self.iter_args(s, pre)
            s = self.rebind(s, ias, start=bounds[0], stop=bounds[1], step=bounds[2])
        elif isinstance(s, WhileStmt):
            ias = self.iter_args(s, pre)
            s = self.rebind(s, ias)
            if has_call(s.condition):
                return pre + self.while_condition(s)
        return pre + [s]

    def rebind(self, s: ForStmt | WhileStmt, ias: tuple[IterArg, ...], **changes: Expr) -> ForStmt | WhileStmt:
        """`s` with new iter_arg objects (uses in the body and condition follow) and other fields."""
        mapping = {a: b for a, b in zip(s.iter_args, ias) if a is not b}
        if mapping:
            changes["iter_args"] = ias  # type: ignore[assignment]
            changes["body"] = substitute(s.body, mapping)
            if isinstance(s, WhileStmt):
                changes["condition"] = substitute(s.condition, mapping)
        if all(getattr(s, k) is v for k, v in changes.items()):
            return s
        return replace(s, **changes)

    def while_condition(self, s: WhileStmt) -> list[Stmt]:
        pre: list[Stmt] = []
        state = set(s.iter_args)
        cond = self.hoist_invariant(s.condition, state, pre)  # calls not reading the state: once
        if not has_call(cond):
            return pre + [replace(s, condition=cond)]
        # carry the condition: computed from the init values, then from each iteration's yield
        read = [ia in expr_vars(cond) for ia in s.iter_args]
        inits: list[IterArg] = []
        for ia, r in zip(s.iter_args, read):
            init = ia.init_value
            if r and has_call(init):  # a call init must not run twice
                init = self.temp(init, pre) if isinstance(init, Call) else self.any(init, pre)
            inits.append(ia if init is ia.init_value else IterArg(ia.name, ia.type, init, span=ia.span))
        s = self.rebind(replace(s, condition=cond), tuple(inits))  # type: ignore[assignment]
        c0 = self.any(substitute(s.condition, {ia: ia.init_value for ia in s.iter_args}), pre)
        ctype = s.condition.type
        cond_ia = IterArg(self.names.fresh("cond", "tmp"), ctype, c0, span=s.condition.span)
        stmts, y = split_yield(s.body)
        vals = list(y.values) if y is not None else []
        for i, (r, v) in enumerate(zip(read, vals)):
            if r and has_call(v):
                vals[i] = self.temp(v, stmts) if isinstance(v, Call) else self.any(v, stmts)
        c1 = self.any(substitute(s.condition, dict(zip(s.iter_args, vals))), stmts)
        body = make_body(stmts + [YieldStmt(tuple(vals) + (c1,), span=y.span if y is not None else s.span)])
        rv = Var(self.names.fresh("cond", "tmp"), ctype, span=s.span)
        return pre + [WhileStmt(cond_ia, s.iter_args + (cond_ia,), body, s.return_vars + (rv,), span=s.span)]

    def hoist_invariant(self, e: Expr, state: set[Var], pre: list[Stmt]) -> Expr:
        """`e` with every outermost call that reads none of `state` computed into a temporary."""
        if isinstance(e, Call):
            if not (expr_vars(e) & state):
                return self.any(e, pre)
            args = tuple(self.hoist_invariant(a, state, pre) for a in e.args)
            return e if all(a is b for a, b in zip(args, e.args)) else rebuild(e, {"args": args})
        kids = _children(e)
        if not kids:
            return e
        new = {k: (tuple(self.hoist_invariant(x, state, pre) for x in v) if isinstance(v, tuple)
                   else self.hoist_invariant(v, state, pre)) for k, v in kids.items()}
        if all(new[k] is v for k, v in kids.items()):
            return e
        return rebuild(e, new)  # type: ignore[return-value]


class _TypeCalls(IRMutator):
    """Types may hold calls (a dynamic dimension `tensor.dim(a, 0)` in a result type). Once such a
    call is computed into a temporary, the types mentioning it name the temporary instead, wherever
    the temporary is in scope; variables whose type changes are re-created and their uses follow."""

    visit_types = True

    def __init__(self, temps: set[Var]) -> None:
        super().__init__()
        self.temps = temps
        self.scopes: list[list[tuple[Call, Var]]] = [[]]
        self.in_type = 0

    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_Type(self, t: Type) -> Type:
        if is_constant_type(t):  # no call and no variable inside
            return t
        self.in_type += 1
        try:
            return self.generic_visit(t)  # type: ignore[return-value]
        finally:
            self.in_type -= 1

    def visit_Call(self, c: Call) -> Expr:
        new = self.generic_visit(c)
        if self.in_type:
            for scope in reversed(self.scopes):
                for call, var in reversed(scope):  # the latest temporary: what the arguments use
                    if structural_equal(call, new):
                        return var
        return new

    def visit_AssignStmt(self, s: AssignStmt) -> AssignStmt:
        new: AssignStmt = self.generic_visit(s)  # type: ignore[assignment]
        if s.var in self.temps and isinstance(new.value, Call) and isinstance(new.var.type, ScalarType):
            self.scopes[-1].append((new.value, new.var))
        return new

    def body(self, b: Stmt | None) -> Stmt | None:
        if b is None:
            return None
        self.scopes.append([])
        try:
            return self.visit(b)
        finally:
            self.scopes.pop()

    def _compound(self, s: Stmt, before: tuple[str, ...], bodies: tuple[str, ...], after: tuple[str, ...]) -> Stmt:
        changes: dict[str, Any] = {}
        for name in before + after:
            if name in after:
                continue
            v = getattr(s, name)
            changes[name] = (tuple(self.mutate_def(x) for x in v) if name == "iter_args"
                             else self.mutate_def(v) if name == "loop_var" else self.mutate_value(v))
        for name in bodies:
            changes[name] = self.body(getattr(s, name))
        for name in after:
            changes[name] = tuple(self.mutate_def(x) for x in getattr(s, name))
        if all(changes[k] is getattr(s, k) or (type(changes[k]) is tuple and all(
                a is b for a, b in zip(changes[k], getattr(s, k)))) for k in changes):
            return s
        return rebuild(s, changes)  # type: ignore[return-value]

    def visit_IfStmt(self, s: IfStmt) -> Stmt:
        return self._compound(s, ("condition",), ("then_body", "else_body"), ("return_vars",))

    def visit_ForStmt(self, s: ForStmt) -> Stmt:
        return self._compound(s, ("loop_var", "start", "stop", "step", "iter_args"), ("body",), ("return_vars",))

    def visit_WhileStmt(self, s: WhileStmt) -> Stmt:
        return self._compound(s, ("iter_args", "condition"), ("body",), ("return_vars",))


def _children(e: Expr) -> dict:
    if isinstance(e, BinaryExpr):
        return {"lhs": e.lhs, "rhs": e.rhs}
    if isinstance(e, UnaryExpr):
        return {"operand": e.operand}
    if isinstance(e, MakeTuple):
        return {"elements": e.elements}
    if isinstance(e, TupleGetItem):
        return {"tuple": e.tuple}
    return {}


__all__ = ["FlattenCallExpr"]
