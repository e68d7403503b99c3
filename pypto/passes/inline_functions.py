"""InlineFunctions: calls of Opaque and Orchestration functions are replaced by the callee's body.

Pre:  SSA, no nested calls (a call of a program function is the value of an assignment, an
      expression statement, or a returned / yielded value).
Post: no function calls a non-InCore function; only calls of InCore kernels remain. Each inlined
      body is a fresh copy (new variables), its parameters bound to the call's arguments (dynamic
      dimensions of the parameter types to the arguments' dimensions), its returned values taking
      the place of the call's result (`r[i]` of a tuple result becomes the i-th returned value; a
      returned expression that is not a variable or constant is assigned to the call's variable).
      Functions that were called and are no longer referenced are dropped; entry points (functions
      nobody calls) stay. Still SSA.
Errors: recursion among inlined functions; a call in a position that cannot be expanded in place
      (a while condition, a loop's init values); a callee returning from inside control flow.
"""

from __future__ import annotations

from pypto.ir.expr import (
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynVar,
    Expr,
    GlobalVar,
    MakeTuple,
    TupleGetItem,
    Var,
)
from pypto.ir.function import Function, Program
from pypto.ir.rewrite import Substitute, clone_fresh, substitute
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
    stmt_list,
)
from pypto.ir.types import ShapedType, TupleType
from pypto.ir.visitor import IRVisitor

from .base import IRProperty, Pass, PassContext, PassError
from .outline_utils import callers_of, calls_in, is_kernel

_ATOMS = (Var, ConstInt, ConstFloat, ConstBool)


class InlineFunctions(Pass):
    """Splice every call of a non-InCore function into its caller (see the module docstring)."""

    name = "InlineFunctions"
    requires = frozenset({IRProperty.SSAForm, IRProperty.NoNestedCalls})
    produces = frozenset()
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        fns = {f.name: f for f in program.functions}
        if not any(_has_inlinable_calls(f, fns) for f in program.functions):
            return program
        done: dict[str, Function] = {}
        for f in program.functions:
            _inline_function(f, fns, done, [])
        called_before = {n for n, by in callers_of(program).items() if by}
        result = program.with_functions(done[f.name] for f in program.functions)
        still_called = {n for n, by in callers_of(result).items() if by}
        keep = [f for f in result.functions if f.name not in called_before or f.name in still_called]
        return program.with_functions(keep)


def _inlinable(c: Call, fns: dict[str, Function]) -> bool:
    if not isinstance(c.op, GlobalVar):
        return False
    callee = fns.get(c.op.name)
    return callee is not None and not is_kernel(callee)


def _has_inlinable_calls(fn: Function, fns: dict[str, Function]) -> bool:
    return fn.body is not None and any(_inlinable(c, fns) for c in calls_in(fn.body))


def _inline_function(fn: Function, fns: dict[str, Function], done: dict[str, Function],
                     stack: list[str]) -> Function:
    """`fn` with all inlinable calls expanded (callees first); memoized in `done`."""
    got = done.get(fn.name)
    if got is not None:
        return got
    if fn.body is None or not _has_inlinable_calls(fn, fns):
        done[fn.name] = fn
        return fn
    stack.append(fn.name)
    body = _Inliner(fn, fns, done, stack).visit(fn.body)
    stack.pop()
    new = Function(fn.name, fn.params, fn.param_directions, fn.return_types, body, fn.func_type, span=fn.span)
    done[fn.name] = new
    return new


class _Inliner(Substitute):
    """Rewrites a caller body: expands call statements and substitutes the call results downstream
    (`self.exprs` grows as calls are expanded; SSA puts every use after its call)."""

    def __init__(self, fn: Function, fns: dict[str, Function], done: dict[str, Function],
                 stack: list[str]) -> None:
        super().__init__({})
        self.fn = fn
        self.fns = fns
        self.done = done
        self.stack = stack
        self.tuples: dict[Var, tuple[Expr, ...]] = {}
        self.bare = _bare_tuple_uses(fn.body)

    # ---- statements that may hold a call ----------------------------------------------------

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        if all(a is b for a, b in zip(out, s.stmts)):
            return s
        return seq(out, s.span) if out else s

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        c = s.value
        if isinstance(c, Call) and _inlinable(c, self.fns):
            stmts, rets = self.expand(c)
            if len(rets) == 1 and not isinstance(rets[0], _ATOMS):
                stmts.append(AssignStmt(s.var, rets[0], span=s.span))  # `return f(x)`: keep it a statement
            elif len(rets) == 1:
                self.exprs[s.var] = rets[0]
            elif len(rets) > 1:
                rets = self.bind(rets, s, stmts)
                self.tuples[s.var] = rets
                if self.bare.get(s.var):
                    stmts.append(AssignStmt(s.var, MakeTuple(rets, span=s.span), span=s.span))
            return SeqStmts(tuple(stmts), span=s.span)
        if isinstance(c, TupleGetItem) and isinstance(c.tuple, Var) and c.tuple in self.tuples:
            self.exprs[s.var] = self.tuples[c.tuple][c.index]  # `a = r[0]` of an inlined call: no copy
            return SeqStmts((), span=s.span)
        pre, value = self.hoist(c, s)
        if not pre:
            return self.generic_visit(s)
        return SeqStmts((*pre, self.generic_visit(AssignStmt(s.var, value, span=s.span))), span=s.span)

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        c = s.expr
        if isinstance(c, Call) and _inlinable(c, self.fns):
            stmts, _ = self.expand(c)
            return SeqStmts(tuple(stmts), span=s.span)
        if isinstance(c, TupleGetItem) and isinstance(c.tuple, Var) and c.tuple in self.tuples:
            self.exprs[s.var] = self.tuples[c.tuple][c.index]  # `a = r[0]` of an inlined call: no copy
            return SeqStmts((), span=s.span)
        pre, value = self.hoist(c, s)
        if not pre:
            return self.generic_visit(s)
        return SeqStmts((*pre, self.generic_visit(EvalStmt(value, span=s.span))), span=s.span)

    def visit_ReturnStmt(self, s: ReturnStmt) -> Stmt:
        return self._values_stmt(s)

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        return self._values_stmt(s)

    def _values_stmt(self, s: ReturnStmt | YieldStmt) -> Stmt:
        pre: list[Stmt] = []
        vals = []
        for v in s.values:
            more, nv = self.hoist(v, s)
            pre += more
            vals.append(nv)
        if not pre:
            return self.generic_visit(s)
        return SeqStmts((*pre, self.generic_visit(type(s)(tuple(vals), span=s.span))), span=s.span)

    def visit_ForStmt(self, s: ForStmt) -> Stmt:
        self.reject_calls([s.start, s.stop, s.step, *(a.init_value for a in s.iter_args)], s, "a for loop's header")
        return self.generic_visit(s)

    def visit_WhileStmt(self, s: WhileStmt) -> Stmt:
        self.reject_calls([s.condition, *(a.init_value for a in s.iter_args)], s, "a while loop's header")
        return self.generic_visit(s)

    def visit_IfStmt(self, s: IfStmt) -> Stmt:
        self.reject_calls([s.condition], s, "an if condition")
        return self.generic_visit(s)

    def visit_TupleGetItem(self, e: TupleGetItem) -> Expr:
        if isinstance(e.tuple, Var) and e.tuple in self.tuples:
            return self.tuples[e.tuple][e.index]
        return self.generic_visit(e)

    # ---- expansion ----------------------------------------------------------------------------

    def bind(self, rets: tuple[Expr, ...], s: AssignStmt, stmts: list[Stmt]) -> tuple[Expr, ...]:
        """Returned values that are not variables or constants get a variable of their own."""
        out = []
        for i, r in enumerate(rets):
            if not isinstance(r, _ATOMS):
                v = Var(f"{s.var.name}_{i}", r.type, span=s.span)
                stmts.append(AssignStmt(v, r, span=s.span))
                r = v
            out.append(r)
        return tuple(out)

    def hoist(self, e: Expr, s: Stmt) -> tuple[list[Stmt], Expr]:
        """Inlinable calls nested inside `e` become temporaries assigned (and expanded) before `s`."""
        pre: list[Stmt] = []

        def walk(x: Expr) -> Expr:
            if isinstance(x, Call):
                args = tuple(walk(a) for a in x.args)
                if _inlinable(x, self.fns):
                    tmp = Var(f"{x.op.name}_result", x.type, span=x.span)
                    self.bare[tmp] = 1
                    pre.append(self.visit_AssignStmt(AssignStmt(tmp, Call(x.op, args, x.kwargs, x.type, span=x.span),
                                                                span=x.span)))
                    return self.exprs.get(tmp, tmp)
                if any(a is not b for a, b in zip(args, x.args)):
                    return Call(x.op, args, x.kwargs, x.type, span=x.span)
                return x
            if isinstance(x, MakeTuple):
                els = tuple(walk(a) for a in x.elements)
                return MakeTuple(els, span=x.span) if any(a is not b for a, b in zip(els, x.elements)) else x
            return x

        new = walk(e)
        return pre, new

    def reject_calls(self, exprs: list[Expr], s: Stmt, where: str) -> None:
        for e in exprs:
            for c in calls_in(EvalStmt(e)):
                if _inlinable(c, self.fns):
                    raise PassError(f"the call of {c.op.name} in {where} cannot be inlined", c.span if c.span.is_known
                                    else s.span, hint="assign the call's result to a variable before the statement")

    def expand(self, c: Call) -> tuple[list[Stmt], tuple[Expr, ...]]:
        """The statements of the callee's body bound to this call, and the values it returns."""
        name = c.op.name
        chain = list(self.stack)
        if name in chain:
            cycle = " -> ".join(chain[chain.index(name):] + [name])
            raise PassError(f"recursive call of {name} ({cycle}): Opaque and Orchestration functions are "
                            "inlined into their callers, so they cannot call themselves", c.span,
                            hint="rewrite the recursion as a loop (pl.range / pl.while_), or make the callee an "
                                 "InCore kernel")
        callee = _inline_function(self.fns[name], self.fns, self.done, self.stack)
        if len(c.args) != len(callee.params):
            raise PassError(f"{name} takes {len(callee.params)} argument(s), got {len(c.args)}", c.span)
        args = [self.visit(a) for a in c.args]
        stmts: list[Stmt] = []
        subst: dict[Var, Expr] = {}
        for p, a in zip(callee.params, args):
            _bind_dyn(p.type, getattr(a, "type", None), subst)
        for p, a in zip(callee.params, args):
            if isinstance(a, _ATOMS):
                subst[p] = a
            else:  # evaluate a non-trivial argument once
                tmp = Var(p.name, substitute(p.type, subst), span=p.span)
                stmts.append(AssignStmt(tmp, a, span=c.span))
                subst[p] = tmp
        body = stmt_list(callee.body)
        rets: tuple[Expr, ...] = ()
        if body and isinstance(body[-1], ReturnStmt):
            rets = body[-1].values
            body = body[:-1]
        _reject_nested_return(body, callee)
        copy, renamed = clone_fresh(SeqStmts(tuple(body)), subst)
        stmts += stmt_list(copy)
        everything = {**subst, **renamed}
        return stmts, tuple(substitute(r, everything) for r in rets)


def _bind_dyn(ptype, atype, subst: dict) -> None:
    """Dynamic dimensions of a parameter type take the argument's dimensions."""
    if not (isinstance(ptype, ShapedType) and isinstance(atype, ShapedType)) or len(ptype.shape) != len(atype.shape):
        return
    for pd, ad in zip(ptype.shape, atype.shape):
        if isinstance(pd, DynVar) and pd not in subst and pd is not ad:
            subst[pd] = ad


def _reject_nested_return(body: list[Stmt], callee: Function) -> None:
    todo = list(body)
    while todo:
        s = todo.pop()
        if isinstance(s, ReturnStmt):
            raise PassError(f"{callee.name} returns from inside a loop or branch and cannot be inlined", s.span,
                            hint="return once, at the end of the function (carry the value out with pl.yield_)")
        if isinstance(s, SeqStmts):
            todo.extend(s.stmts)
        elif isinstance(s, (ForStmt, WhileStmt)):
            todo.extend(stmt_list(s.body))
        elif isinstance(s, IfStmt):
            todo.extend(stmt_list(s.then_body) + stmt_list(s.else_body))
        elif hasattr(s, "body") and isinstance(s.body, Stmt):
            todo.extend(stmt_list(s.body))


class _BareTupleUses(IRVisitor):
    def __init__(self) -> None:
        self.out: dict[Var, int] = {}

    def visit_TupleGetItem(self, e: TupleGetItem) -> None:
        if not isinstance(e.tuple, Var):
            self.visit(e.tuple)

    def visit_Var(self, v: Var) -> None:
        if isinstance(v.type, TupleType):
            self.out[v] = self.out.get(v, 0) + 1


def _bare_tuple_uses(body: Stmt | None) -> dict[Var, int]:
    """Uses of tuple-typed variables other than `t[i]` (those need the tuple value itself)."""
    v = _BareTupleUses()
    if body is not None:
        v.visit(body)
    return v.out


__all__ = ["InlineFunctions"]
