"""Helpers shared by the outlining passes (InlineFunctions, ScopeTensorOps, OutlineIncoreScopes,
ConvertTensorToBlockOps) that the IR toolkit (`pypto.ir.variables`, `pypto.ir.rewrite`) does not have: use counts, the free variables of a region
(dynamic dimensions included, and what the types of the free variables mention), the call graph,
and the rewrite of kernel call sites. Substitution and cloning come from `pypto.ir.rewrite`.

All walks here look inside types: a shape may mention a scalar variable or a dynamic dimension,
and code moved between functions must carry those along.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, DynVar, Expr, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.node import Node
from pypto.ir.rewrite import substitute
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts, Stmt, YieldStmt, seq
from pypto.ir.types import Type, is_constant_type
from pypto.ir.variables import defined_vars as _defined_vars
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.ops.registry import tensor_ops


class _Uses(IRVisitor):
    visit_types = True

    def __init__(self) -> None:
        self.counts: Counter[Var] = Counter()
        self.order: list[Var] = []

    def visit_Var(self, var: Var) -> None:
        # every use of a value also uses what its type mentions (a dimension held in a scalar)
        if var not in self.counts:
            self.order.append(var)
        self.counts[var] += 1
        if var.type is not None and not isinstance(var, DynVar):
            self.visit(var.type)

    def visit_Type(self, t: Type) -> None:
        if not is_constant_type(t):  # most types mention no variable
            self.generic_visit(t)


def use_counts(node: Node | Iterable[Stmt]) -> Counter[Var]:
    """How often each variable is used (types included) inside `node`."""
    u = _Uses()
    for n in _nodes(node):
        u.visit(n)
    return u.counts


def defined_vars(node: Node | Iterable[Stmt]) -> list[Var]:
    """Variables bound inside `node` or a list of statements, in program order."""
    return _defined_vars(node if isinstance(node, Node) else tuple(node))


def free_vars(node: Node | Iterable[Stmt]) -> list[Var]:
    """Variables used inside `node` but not bound there, in order of first use. Unlike
    `pypto.ir.variables.free_vars` this includes dynamic dimensions (the caller decides what to do with
    them) and what the types of the free variables mention (a shape held in a scalar)."""
    nodes = list(_nodes(node))
    bound = set()
    for n in nodes:
        bound.update(defined_vars(n))
    u = _Uses()
    for n in nodes:
        u.visit(n)
    return [v for v in u.order if v not in bound]


def dyn_vars_of(types: Iterable) -> set[DynVar]:
    """Dynamic dimensions mentioned by some types."""
    u = _Uses()
    for t in types:
        if t is not None:
            u.visit(t)
    return {v for v in u.order if isinstance(v, DynVar)}


def _nodes(node: Node | Iterable[Stmt]) -> Iterable[Node]:
    if isinstance(node, Node):
        return [node]
    return list(node)


# ---------------------------------------------------------------------------------------------
# the call graph


class _Calls(IRVisitor):
    def __init__(self) -> None:
        self.calls: list[Call] = []

    def visit_Call(self, c: Call) -> None:
        if isinstance(c.op, GlobalVar):
            self.calls.append(c)
        self.generic_visit(c)


def calls_in(node: Node) -> list[Call]:
    """Every call of a program function (`Call(GlobalVar)`) inside `node`, in program order."""
    v = _Calls()
    v.visit(node)
    return v.calls


def callees(fn: Function) -> set[str]:
    return {c.op.name for c in calls_in(fn.body)} if fn.body is not None else set()


def callers_of(program: Program) -> dict[str, set[str]]:
    """Function name -> the names of the functions that call it."""
    out: dict[str, set[str]] = {f.name: set() for f in program.functions}
    for f in program.functions:
        for c in callees(f):
            out.setdefault(c, set()).add(f.name)
    return out


def entry_functions(program: Program) -> list[str]:
    """Functions no other function calls (a function calling only itself counts as called)."""
    by = callers_of(program)
    return [f.name for f in program.functions if not by.get(f.name)]


def is_kernel(fn: Function | None) -> bool:
    return fn is not None and fn.func_type is FunctionType.InCore


# ---------------------------------------------------------------------------------------------
# statement lists


def flatten_items(items: list) -> list[Stmt]:
    """Statements from a list whose entries are statements or (nested) lists of statements (slots)."""
    out: list[Stmt] = []
    for it in items:
        if isinstance(it, list):
            out.extend(flatten_items(it))
        elif isinstance(it, SeqStmts):
            out.extend(it.stmts)
        elif it is not None:
            out.append(it)
    return out


def block_of(items: list, span: Span | None = None) -> Stmt:
    """A body from a list of statements and slots (empty bodies become an empty SeqStmts)."""
    flat = flatten_items(items)
    if not flat:
        return SeqStmts((), span=span) if span is not None else SeqStmts(())
    return seq(flat, span)


# ---------------------------------------------------------------------------------------------
# calls used as returned / yielded values


def bind_value_calls(body: Stmt | None, pred) -> Stmt | None:
    """`body` with each returned or yielded value that is a call satisfying `pred` bound to a new
    variable just before the return / yield (`return f(x)` -> `f_result = f(x); return f_result`).
    The front passes allow calls there; outlining needs them as statements of their own."""
    if body is None:
        return None
    return _BindValueCalls(pred).visit(body)


class _BindValueCalls(IRMutator):
    def __init__(self, pred) -> None:
        super().__init__()
        self.pred = pred

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        return s  # nothing is renamed: only returns and yields change

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        return s

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        return s if all(a is b for a, b in zip(out, s.stmts)) else seq(out, s.span)

    def visit_ReturnStmt(self, s: ReturnStmt) -> Stmt:
        return self._bind(s)

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        return self._bind(s)

    def _bind(self, s: ReturnStmt | YieldStmt) -> Stmt:
        pre: list[Stmt] = []
        vals: list[Expr] = []
        for v in s.values:
            if isinstance(v, Call) and self.pred(v):
                tmp = Var(f"{v.op.name.rsplit('.', 1)[-1]}_result", v.type, span=v.span)
                pre.append(AssignStmt(tmp, v, span=v.span))
                v = tmp
            vals.append(v)
        return SeqStmts((*pre, type(s)(tuple(vals), span=s.span)), span=s.span) if pre else s


# ---------------------------------------------------------------------------------------------
# call sites of kernels that gained Out parameters


def rewrite_kernel_calls(fn: Function, kernels: dict[str, Function], new_outs: dict[str, list[Var]]) -> Function:
    """`fn` with every call of a kernel listed in `new_outs` passing freshly created outputs.

    Before the call: `o = tensor.create(shape, dtype)` per new Out parameter. A dynamic dimension
    is the caller's own expression of it: the matching dimension of the argument whose parameter
    type has it (a dynamic dimension the caller binds, or a constant), or a scalar argument; it is
    read with `tensor.dim` only when the argument's type does not say. The call's result
    variables stay (they alias the outputs)."""
    if fn.body is None or not any(c.op.name in new_outs for c in calls_in(fn.body)):
        return fn
    body = _CallSites(kernels, new_outs).visit(fn.body)
    return Function(fn.name, fn.params, fn.param_directions, fn.return_types, body, fn.func_type, span=fn.span)


class _CallSites(IRMutator):
    def __init__(self, kernels: dict[str, Function], new_outs: dict[str, list[Var]]) -> None:
        super().__init__()
        self.kernels = kernels
        self.new_outs = new_outs

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        return s if all(a is b for a, b in zip(out, s.stmts)) else seq(out, s.span)

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        c = s.value
        if isinstance(c, Call) and c.op.name in self.new_outs:
            pre, call = self.expand(c, s.span)
            return SeqStmts((*pre, AssignStmt(s.var, call, span=s.span)), span=s.span)
        return s

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        c = s.expr
        if isinstance(c, Call) and c.op.name in self.new_outs:
            pre, call = self.expand(c, s.span)
            return SeqStmts((*pre, EvalStmt(call, span=s.span)), span=s.span)
        return s

    def visit_ReturnStmt(self, s: ReturnStmt) -> Stmt:
        return self._hoist(s)

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        return self._hoist(s)

    def _hoist(self, s: ReturnStmt | YieldStmt) -> Stmt:
        pre: list[Stmt] = []
        vals = []
        for v in s.values:
            if isinstance(v, Call) and v.op.name in self.new_outs:
                tmp = Var(f"{v.op.name}_result", v.type, span=v.span)
                pre.append(self.visit_AssignStmt(AssignStmt(tmp, v, span=s.span)))
                v = tmp
            vals.append(v)
        return SeqStmts((*pre, type(s)(tuple(vals), span=s.span)), span=s.span) if pre else s

    def expand(self, c: Call, span: Span) -> tuple[list[Stmt], Call]:
        from pypto.ir.expr import ConstInt, MakeTuple
        from pypto.ir.op import create_op_call
        from pypto.ir.types import ScalarType, ShapedType

        from .base import PassError

        kernel = self.kernels[c.op.name]
        pre: list[Stmt] = []
        known: dict[Var, Expr] = {}  # kernel-side dimension variable -> caller expression
        where: dict[Var, tuple[Expr, int]] = {}  # ... or where to read it with tensor.dim
        for p, a in zip(kernel.params, c.args):
            if isinstance(p.type, ScalarType):
                known[p] = a
            elif isinstance(p.type, ShapedType):
                for axis, d in enumerate(p.type.shape):
                    if isinstance(d, Var) and d not in where:
                        where[d] = (a, axis)

        def dim(d: Var) -> Expr:
            got = known.get(d)
            if got is None:
                if d not in where:
                    raise PassError(f"cannot size the output of {kernel.name} at this call: its dimension {d.name} "
                                    "is not the dimension of any input", span,
                                    hint="pass a tensor of that size, or the size as a scalar argument")
                src, axis = where[d]
                t = getattr(src, "type", None)
                if isinstance(t, ShapedType) and axis < t.rank:
                    got = t.shape[axis]  # the caller's own expression of the size (bound there)
                else:
                    got = Var(f"{getattr(src, 'name', 'arg')}_dim{axis}", ScalarType(DataType.INDEX), span=span)
                    pre.append(AssignStmt(got, create_op_call(tensor_ops.dim, [src], {"axis": axis}, span), span=span))
                known[d] = got
            return got

        outs = []
        for o in self.new_outs[c.op.name]:
            t = o.type
            shape = []
            for d in t.shape:
                if isinstance(d, ConstInt):
                    shape.append(d)
                else:
                    shape.append(substitute(d, {v: dim(v) for v in free_vars(EvalStmt(d)) if v in known or v in where
                                                or isinstance(v, DynVar)}))
            call = create_op_call(tensor_ops.create, [MakeTuple(tuple(shape))], {"dtype": t.dtype, "layout": t.layout},
                                  span)
            v = Var(o.name, call.type, span=span)
            pre.append(AssignStmt(v, call, span=span))
            outs.append(v)
        return pre, Call(c.op, (*c.args, *outs), c.kwargs, c.type, span=c.span)


def unique_name(base: str, taken: set[str]) -> str:
    n, k = base, 1
    while n in taken:
        n = f"{base}_{k}"
        k += 1
    taken.add(n)
    return n


__all__ = [
    "bind_value_calls", "block_of", "callees", "callers_of", "calls_in", "defined_vars", "dyn_vars_of",
    "entry_functions", "flatten_items", "free_vars", "is_kernel", "rewrite_kernel_calls", "unique_name",
    "use_counts",
]
