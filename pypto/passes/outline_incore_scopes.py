"""OutlineIncoreScopes: every `with pl.incore():` region becomes an InCore kernel function.

Pre:  SSA; calls of Opaque functions inlined (InlineFunctions); tensor compute outside kernels
      scoped (ScopeTensorOps).
Post: no `ScopeStmt(InCore)` is left in a non-InCore function. The n-th scope of function `f`
      (pre-order, n from 0) is the function `f_incore_<n>` (FunctionType.InCore) whose
      parameters are the free variables of the region (tensors and scalars, by first use; a
      dynamic dimension used as a value and not bound by any parameter type becomes an INDEX
      scalar parameter) and whose results are the variables the region defines and the rest of
      `f` uses. The region is replaced by the call: `v = f_incore_n(...)` for one result,
      `t = f_incore_n(...)`, `v_i = t[i]` for several, an expression statement for none.
      Kernels get fresh variables; the caller keeps its own. A non-InCore function that calls a
      kernel becomes Orchestration, and so does an Opaque entry function (called by nobody).
      Nested InCore scopes are merged into the outer one. Still SSA.
Errors: a scalar or tile defined inside a region and used after it (kernels return tensors).
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, ParamDirection, ScopeKind
from pypto.ir.expr import Call, ConstInt, DynVar, Expr, GlobalVar, MakeTuple, TupleGetItem, Var, scalar_type
from pypto.ir.function import Function, Program
from pypto.ir.node import replace
from pypto.ir.op import create_op_call
from pypto.ir.rewrite import clone_fresh, substitute
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, ScopeStmt, SeqStmts, Stmt, seq, stmt_list
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType
from pypto.ir.visitor import IRMutator
from pypto.ir.walk import walk_stmts
from pypto.ops.registry import tensor_ops

from .base import IRProperty, Pass, PassContext, PassError
from .outline_utils import (
    callees,
    defined_vars,
    dyn_vars_of,
    free_vars,
    is_kernel,
    unique_name,
    use_counts,
)


class OutlineIncoreScopes(Pass):
    """Turn InCore scopes into InCore kernel functions and calls (see the module docstring)."""

    name = "OutlineIncoreScopes"
    requires = frozenset({IRProperty.SSAForm})
    produces = frozenset({IRProperty.SplitIncoreOrch})
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        taken = set(program.function_names)
        out: list[Function] = []
        for f in program.functions:
            if is_kernel(f) or f.body is None:
                out.append(f)
                continue
            o = _Outliner(f, taken)
            body = o.visit(f.body)
            out.append(f if body is f.body else
                       Function(f.name, f.params, f.param_directions, f.return_types, body, f.func_type, span=f.span))
            out += o.kernels
        return _set_function_types(program.with_functions(out))


def _set_function_types(program: Program) -> Program:
    kinds = {f.name: f.func_type for f in program.functions}
    calls = {f.name: callees(f) for f in program.functions}  # the call graph, walked once
    called = set().union(*calls.values())
    entries = {f.name for f in program.functions if f.name not in called}  # as entry_functions() says
    fns = []
    for f in program.functions:
        t = f.func_type
        if t is not FunctionType.InCore:
            if any(kinds.get(c) is FunctionType.InCore for c in calls[f.name]):
                t = FunctionType.Orchestration
            elif t is FunctionType.Opaque and f.name in entries:
                t = FunctionType.Orchestration
        fns.append(f if t is f.func_type else
                   Function(f.name, f.params, f.param_directions, f.return_types, f.body, t, span=f.span))
    if all(a is b for a, b in zip(fns, program.functions)):
        return program
    return program.with_functions(fns)


class _Outliner(IRMutator):
    """Replaces the InCore scopes of one function by kernel calls, collecting the kernels."""

    def __init__(self, fn: Function, taken: set[str]) -> None:
        super().__init__()
        self.fn = fn
        self.taken = taken
        self.kernels: list[Function] = []
        self.count = 0
        self.uses: Counter[Var] = use_counts(fn.body)
        # tensors that are windows with a valid region (pl.view(t, shape, offset, valid_shape)): the
        # task gets only the valid part, so the kernel views its parameter with its run-time extents
        self.valid_views: dict[Var, tuple[Expr, ...]] = {
            st.var: st.value.args[3].elements for st in walk_stmts(fn.body)
            if isinstance(st, AssignStmt) and isinstance(st.value, Call)
            and st.value.op is tensor_ops.view and len(st.value.args) > 3
            and isinstance(st.value.args[3], MakeTuple)}

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        if all(a is b for a, b in zip(out, s.stmts)):
            return s
        return seq(out, s.span) if out else s

    def visit_ScopeStmt(self, s: ScopeStmt) -> Stmt:
        if s.kind is not ScopeKind.InCore:
            return self.generic_visit(s)
        body = _merge_nested(stmt_list(s.body))
        name = unique_name(s.name_hint or f"{self.fn.name}_incore_{self.count}", self.taken)
        self.count += 1
        kernel, args, results = _outline(name, body, self.uses, s, self.valid_views)
        self.kernels.append(kernel)
        ctype = results[0].type if len(results) == 1 else TupleType(tuple(v.type for v in results))
        call = Call(GlobalVar(name), tuple(args), (), ctype, span=s.span)
        if not results:
            return EvalStmt(call, span=s.span)
        if len(results) == 1:
            return AssignStmt(results[0], call, span=s.span)
        tup = Var("_".join(v.name for v in results) + "_tuple", ctype, span=s.span)
        stmts: list[Stmt] = [AssignStmt(tup, call, span=s.span)]
        stmts += [AssignStmt(v, TupleGetItem(tup, i, span=s.span), span=s.span) for i, v in enumerate(results)]
        return SeqStmts(tuple(stmts), span=s.span)


def _merge_nested(stmts: list[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, ScopeStmt) and s.kind is ScopeKind.InCore:
            out += _merge_nested(stmt_list(s.body))
        else:
            out.append(s)
    return out


def _outline(name: str, body: list[Stmt], uses: Counter, scope: ScopeStmt,
             valid_views: dict[Var, tuple[Expr, ...]] | None = None) -> tuple[Function, list[Expr], list[Var]]:
    """The kernel for a region, the call's arguments, and the caller's variables it defines."""
    defs = defined_vars(body)
    inside = use_counts(body)
    results = [v for v in defs if uses[v] > inside[v]]
    for v in results:
        if isinstance(v.type, (ScalarType, TileType)):
            what = "scalar" if isinstance(v.type, ScalarType) else "tile"
            raise PassError(f"{what} {v.name} is computed inside a pl.incore() region and used after it; a kernel "
                            "can only hand tensors back to its caller", v.span if v.span.is_known else scope.span,
                            hint="compute the value outside the region, or (for a tile) pl.store it into a tensor "
                                 "inside the region")
    free = free_vars(body)
    values = [v for v in free if not isinstance(v, DynVar)]
    subst: dict[Var, Expr] = {}
    # scalars first: tensor parameter types may mention them
    for v in sorted(values, key=lambda v: not isinstance(v.type, ScalarType)):
        p = Var(v.name, substitute(v.type, subst) if v.type is not None else None, span=v.span)
        subst[v] = p
    params = [subst[v] for v in values]
    args: list[Expr] = list(values)
    bound = dyn_vars_of(p.type for p in params)
    for d in (v for v in free if isinstance(v, DynVar) and v not in bound):
        p = Var(d.name, scalar_type(DataType.INDEX), span=d.span)
        subst[d] = p
        params.append(p)
        args.append(d)
    head: list[Stmt] = []
    body_subst = dict(subst)
    for i, v in enumerate(values):
        valid = (valid_views or {}).get(v)
        if valid is not None and isinstance(v.type, TensorType):
            sp = v.span
            # the extents the valid region may shrink are run-time extents of the parameter
            shape = tuple(d if isinstance(e, ConstInt) and isinstance(d, ConstInt) and e.value == d.value
                          else DynVar(f"{v.name}_d{k}", span=sp) for k, (d, e) in enumerate(zip(v.type.shape, valid)))
            p = Var(v.name, replace(v.type, shape=shape), span=sp)
            subst[v] = p
            params[i] = p
            dims = []
            for k in range(v.type.rank):
                d = Var(f"{p.name}_valid{k}", scalar_type(DataType.INDEX), span=sp)
                head.append(AssignStmt(d, create_op_call(tensor_ops.dim, [p], {"axis": k}, sp), span=sp))
                dims.append(d)
            zeros = MakeTuple(tuple(ConstInt(0) for _ in dims))
            call = create_op_call(tensor_ops.view, [p, MakeTuple(tuple(v.type.shape)), zeros, MakeTuple(tuple(dims))], {},
                                  sp)
            pv = Var(f"{p.name}_valid", call.type, span=sp)
            head.append(AssignStmt(pv, call, span=sp))
            body_subst[v] = pv
    copy, renamed = clone_fresh(SeqStmts(tuple(body)), body_subst)  # the kernel gets its own variables
    kbody = head + stmt_list(copy)
    rets = tuple(renamed[v] for v in results)
    kbody.append(ReturnStmt(rets, span=scope.span))
    kernel = Function(name, tuple(params), tuple(ParamDirection.In for _ in params),
                      tuple(r.type for r in rets), seq(kbody, scope.span), FunctionType.InCore, span=scope.span)
    return kernel, args, results


__all__ = ["OutlineIncoreScopes"]

