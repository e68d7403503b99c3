"""ConvertToSSA: one definition per variable; loop-carried values, if phis and while state made explicit."""

from __future__ import annotations

from pypto.ir.evaluate import zero_of
from pypto.ir.expr import ConstInt, DynVar, Expr, IterArg, MakeTuple, MemRef, Op, Var
from pypto.ir.function import Function, Program
from pypto.ir.names import LazyNames
from pypto.ir.node import replace
from pypto.ir.op import create_op_call
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
from pypto.ir.types import TensorType, TileType, Type, is_constant_type
from pypto.ir.variables import assigned_vars, expr_vars
from pypto.ir.visitor import IRMutator
from pypto.ir.walk import body_stmts, flatten_stmts, make_body, split_yield, walk_stmts
from pypto.ops.registry import block_ops, tensor_ops

from .analysis.var_liveness import Liveness
from .base import FunctionPass, IRProperty, PassContext, PassError


class ConvertToSSA(FunctionPass):
    """Rewrite each function into SSA form.

    Pre: TypeChecked; no break/continue (CtrlFlowTransform runs first). Input may reassign
    variables (the parser reuses a Var object for a reassignment of the same type), let variables
    leak out of plain loops, ifs and `with` scopes, and use natural `while cond:` loops; it may
    also already be (partly) SSA: user iter_args/yields and yielding ifs are kept.
    Post (SSAForm): every Var object has one binding site. A reassignment binds a new Var named
    `<name>__ssa_v<k>` (the first definition keeps the original object, so SSA input comes out
    structurally equal). A variable assigned in a `for`/`while` body and live at the loop head
    (read later in the body before being reassigned, read by the while condition, or read after
    the loop) becomes an iter_arg (typed like its init value) with a return var and a value in the
    final yield — after the user's own iter_args. A variable assigned in a branch of an if and read
    after it becomes a return var of the if, both branches ending in a yield (a branch that does
    not assign it yields the value from before the if). Variables used only inside a construct stay
    local to it. `with` scopes are transparent. A variable first assigned inside a loop and read after
    it is carried with an init of the buffer it aliases when every assignment writes one buffer from
    outside the loop (`out = pl.store(t, offs, c)` starts as c), else, in a for loop that assigns it
    on every path, with a placeholder init (a zero scalar, `tensor.create` / `block.create_tile`): its
    value after a loop that did not run is undefined, as in the public project.
    Errors (PassError at the construct): a variable read after an if that assigns it in one branch
    only (and not before); read after a loop that may not assign it; read in a loop before its
    first assignment; read where it has no value; break/continue present.
    """

    name = "ConvertToSSA"
    requires = frozenset({IRProperty.TypeChecked})
    produces = frozenset({IRProperty.SSAForm})

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        for s in walk_stmts(fn.body):
            if isinstance(s, (BreakStmt, ContinueStmt)):
                raise PassError(f"'{'break' if isinstance(s, BreakStmt) else 'continue'}' must be removed before "
                                "ConvertToSSA", s.span, hint="run CtrlFlowTransform first")
        return _Builder(fn).run()


def _line(v: Var) -> str:
    return f" (assigned at line {v.span.begin_line})" if v.span.is_known else ""


def _trips_at_least_once(s: ForStmt) -> bool:
    a, b, c = s.start, s.stop, s.step
    if not (isinstance(a, ConstInt) and isinstance(b, ConstInt) and isinstance(c, ConstInt)) or c.value == 0:
        return False
    return bool(range(a.value, b.value, c.value))


def must_define(body: Stmt | None) -> set[Var]:
    """Variables assigned on every path through `body` (loops count only when they surely run)."""
    out: set[Var] = set()
    for s in body_stmts(body):
        if isinstance(s, AssignStmt):
            out.add(s.var)
        elif isinstance(s, IfStmt):
            if s.else_body is not None:
                out |= must_define(s.then_body) & must_define(s.else_body)
            out |= set(s.return_vars)
        elif isinstance(s, ForStmt):
            out |= set(s.return_vars)
            if _trips_at_least_once(s):
                out |= must_define(s.body)
        elif isinstance(s, WhileStmt):
            out |= set(s.return_vars)
        elif isinstance(s, ScopeStmt):
            out |= must_define(s.body)
    return out


def placeholder(v: Var, span: Span) -> Expr:
    """A value of v's type for an iter_arg whose init is never observed."""
    t = v.type
    z = zero_of(t)
    if z is not None:
        return z
    if isinstance(t, TensorType):
        return create_op_call(tensor_ops.create, [MakeTuple(t.shape, span=span)], {"dtype": t.dtype, "layout": t.layout},
                              span)
    if isinstance(t, TileType) and t.is_static:
        return create_op_call(block_ops.create_tile, [MakeTuple(t.shape, span=span)],
                              {"dtype": t.dtype, "target_memory": t.space}, span)
    raise PassError(f"variable '{v.name}' is assigned inside this loop and used after it, but has no value before the "
                    "loop", span, hint=f"assign '{v.name}' before the loop")


class _Rename(IRMutator):
    """Uses -> their current SSA version. Inside types an unknown variable is left alone."""

    visit_types = True

    def __init__(self, b: _Builder, span: Span) -> None:
        super().__init__()
        self.b = b
        self.span = span
        self.in_type = 0

    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_Type(self, t: Type) -> Type:
        if is_constant_type(t):  # nothing inside to rename
            return t
        self.in_type += 1
        try:
            return self.generic_visit(t)  # type: ignore[return-value]
        finally:
            self.in_type -= 1

    def visit_Var(self, var: Var) -> Expr:
        if isinstance(var, (DynVar, MemRef)):
            return var
        got = self.b.env.get(var)
        if got is not None:
            return got
        if self.in_type:
            return var
        raise PassError(f"variable '{var.name}' is read here but has no value on this path{_line(var)}", self.span,
                        hint="assign it before this point on every path")


class _Builder:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.names = LazyNames(fn)
        self._rename = _Rename(self, fn.span)
        self.live = Liveness(fn)
        self.defined: set[Var] = set(fn.params)
        self.env: dict[Var, Var] = {p: p for p in fn.params}

    def run(self) -> Function:
        return replace(self.fn, body=make_body(self.block(self.fn.body)))

    # ---- helpers -----------------------------------------------------------------------------

    def rn(self, e: Expr, span: Span) -> Expr:
        r = self._rename  # one renamer for all expressions: they bind nothing, so its var_map stays empty
        r.span = span
        return r.visit(e)

    def fresh(self, v: Var, t: Type | None = None) -> Var:
        return self.names.fresh_var(v, t if t is not None else v.type, "ssa")

    def define(self, v: Var) -> Var:
        """The Var to bind for a definition of `v`: v itself the first time, else a new version."""
        if v not in self.defined:
            self.defined.add(v)
            return v
        return self.fresh(v)

    def define_iter_arg(self, ia: IterArg, init: Expr) -> IterArg:
        if ia not in self.defined and init is ia.init_value:
            self.defined.add(ia)
            return ia
        name = ia.name if ia not in self.defined else self.names.fresh(ia.name)
        self.defined.add(ia)
        return IterArg(name, ia.type, init, span=ia.span)

    # ---- statements --------------------------------------------------------------------------

    def block(self, body: Stmt | list[Stmt] | None) -> list[Stmt]:
        out: list[Stmt] = []
        for s in flatten_stmts(body) if isinstance(body, list) else body_stmts(body):
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, AssignStmt):
            value = self.rn(s.value, s.span)
            v = self.define(s.var)
            self.env[s.var] = v
            return [s if (v is s.var and value is s.value) else AssignStmt(v, value, span=s.span)]
        if isinstance(s, EvalStmt):
            e = self.rn(s.expr, s.span)
            return [s if e is s.expr else EvalStmt(e, span=s.span)]
        if isinstance(s, (ReturnStmt, YieldStmt)):
            return [type(s)(tuple(self.rn(v, s.span) for v in s.values), span=s.span)]
        if isinstance(s, ScopeStmt):
            return [ScopeStmt(s.kind, make_body(self.block(s.body)), s.name_hint, span=s.span)]
        if isinstance(s, SeqStmts):
            return self.block(s)
        if isinstance(s, IfStmt):
            return self.if_stmt(s)
        if isinstance(s, (ForStmt, WhileStmt)):
            return self.loop(s)
        raise PassError(f"ConvertToSSA cannot handle a {type(s).__name__}", s.span)  # pragma: no cover

    def branch(self, body: Stmt | None) -> tuple[list[Stmt], list[Expr], YieldStmt | None]:
        stmts, y = split_yield(body)
        out = self.block(stmts)
        vals = [self.rn(v, y.span) for v in y.values] if y is not None else []
        return out, vals, y

    def if_stmt(self, s: IfStmt) -> list[Stmt]:
        cond = self.rn(s.condition, s.span)
        env0 = dict(self.env)
        t_out, t_vals, t_y = self.branch(s.then_body)
        env_t, self.env = self.env, dict(env0)
        e_out, e_vals, e_y = self.branch(s.else_body)
        env_e = self.env
        live = self.live.after(s)
        phis: list[tuple[Var, Var, Var]] = []
        merged = dict(env0)
        for v in dict.fromkeys(assigned_vars(s.then_body) + assigned_vars(s.else_body)):
            a, b = env_t.get(v), env_e.get(v)
            if a is b and a is not None:
                merged[v] = a
                continue
            merged.pop(v, None)
            if v not in live:
                continue
            if a is None or b is None:
                where = "then" if a is not None else "else"
                raise PassError(f"variable '{v.name}' is assigned only in the {where} branch of this if{_line(v)} but "
                                "is used after it", s.span,
                                hint=f"assign '{v.name}' before the if, or in both branches")
            phis.append((v, a, b))
        self.env = merged
        rvs = []
        for rv in s.return_vars:
            new = self.define(rv)
            self.env[rv] = new
            rvs.append(new)
        for v, a, _ in phis:
            rv = self.fresh(v, a.type)
            self.env[v] = rv
            rvs.append(rv)
        if not phis:
            then_body = make_body(t_out + ([YieldStmt(tuple(t_vals), span=t_y.span)] if t_y is not None else []))
            else_body = None
            if s.else_body is not None:
                else_body = make_body(e_out + ([YieldStmt(tuple(e_vals), span=e_y.span)] if e_y is not None else []))
        else:
            then_body = make_body(t_out + [YieldStmt(tuple(t_vals) + tuple(a for _, a, _ in phis),
                                                     span=t_y.span if t_y is not None else s.span)])
            else_body = make_body(e_out + [YieldStmt(tuple(e_vals) + tuple(b for _, _, b in phis),
                                                     span=e_y.span if e_y is not None else s.span)])
        return [IfStmt(cond, then_body, else_body, tuple(rvs), span=s.span)]

    def aliased_init(self, s: ForStmt | WhileStmt, v: Var) -> Expr | None:
        """The value v has before the loop when every assignment in the body writes one buffer from
        outside it (`out = pl.store(t, offs, c)`: out is c's buffer): that buffer, else None."""
        assigned = assigned_vars(s.body)
        base = None
        for st in walk_stmts(s.body):
            if not (isinstance(st, AssignStmt) and st.var is v):
                continue
            val = st.value
            k = getattr(getattr(val, "op", None), "result_reuses", None)
            if k is None or k >= len(val.args):
                return None
            src = val.args[k]
            if not isinstance(src, Var) or src in assigned or src not in self.env or base not in (None, src):
                return None
            base = src
        return self.env[base] if base is not None else None

    def loop(self, s: ForStmt | WhileStmt) -> list[Stmt]:
        is_for = isinstance(s, ForStmt)
        bounds = [self.rn(e, s.span) for e in (s.start, s.stop, s.step)] if isinstance(s, ForStmt) else []
        user_inits = [self.rn(ia.init_value, s.span) for ia in s.iter_args]
        head = self.live.head(s)
        carried = [v for v in assigned_vars(s.body) if v in head]
        inits: list[Expr] = []
        for v in carried:
            if v in self.env:
                inits.append(self.env[v])
                continue
            what = "loop" if is_for else "while loop"
            # a variable that only ever names one outer buffer (`out = pl.store(t, offs, c)`) has that
            # buffer as its value before the loop, also where it is read first (a `continue` before
            # the store carries it on)
            alias = self.aliased_init(s, v)
            if alias is not None:
                inits.append(alias)
                continue
            if v in self.live.body_in(s) or (isinstance(s, WhileStmt) and v in expr_vars(s.condition)):
                raise PassError(f"variable '{v.name}' is read in this {what} before it is assigned{_line(v)}, so the "
                                "first iteration has no value for it", s.span,
                                hint=f"assign '{v.name}' before the loop")
            # the public parser accepts a for loop that assigns the variable on every path even when it may
            # not run: the value after a loop that did not run is then undefined (a placeholder)
            if not (isinstance(s, ForStmt) and v in must_define(s.body)):
                raise PassError(f"variable '{v.name}' is assigned inside this {what}{_line(v)} and used after it, but "
                                "it has no value if the loop does not run (or does not assign it)", s.span,
                                hint=f"assign '{v.name}' before the loop")
            inits.append(placeholder(v, s.span))
        env0 = dict(self.env)
        loop_var = None
        if isinstance(s, ForStmt):
            loop_var = self.define(s.loop_var)
            self.env[s.loop_var] = loop_var
        ias = [self.define_iter_arg(ia, init) for ia, init in zip(s.iter_args, user_inits)]
        for ia, new in zip(s.iter_args, ias):
            self.env[ia] = new
        new_ias = [IterArg(self.names.fresh(v.name), init.type, init, span=v.span) for v, init in zip(carried, inits)]
        for v, ia in zip(carried, new_ias):
            self.env[v] = ia
        cond = self.rn(s.condition, s.span) if isinstance(s, WhileStmt) else None
        out, vals, y = self.branch(s.body)
        vals += [self.env[v] for v in carried]
        if y is not None or carried:
            out.append(YieldStmt(tuple(vals), span=y.span if y is not None else s.span))
        self.env = env0
        rvs = []
        for rv in s.return_vars:
            new = self.define(rv)
            self.env[rv] = new
            rvs.append(new)
        for v, ia in zip(carried, new_ias):
            rv = self.fresh(v, ia.type)
            self.env[v] = rv
            rvs.append(rv)
        all_ias = tuple(ias + new_ias)
        if isinstance(s, ForStmt):
            assert loop_var is not None
            return [ForStmt(loop_var, *bounds, all_ias, make_body(out), tuple(rvs), s.kind, s.chunk, s.chunk_policy,
                            s.origin, span=s.span)]
        assert cond is not None
        return [WhileStmt(cond, all_ias, make_body(out), tuple(rvs), span=s.span)]


__all__ = ["ConvertToSSA", "must_define", "placeholder"]
