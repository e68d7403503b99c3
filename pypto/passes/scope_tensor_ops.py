"""ScopeTensorOps: tensor computation outside any `pl.incore()` scope is put into one.

Tensor ops written in an Opaque or Orchestration function are outlined into kernels
automatically (rather than rejected): this pass marks what to outline, OutlineIncoreScopes does it.

Pre:  SSA, no nested calls; calls of Opaque functions already inlined.
Post: in every non-InCore function, each maximal run of consecutive *compute* statements of one
      block is wrapped in `ScopeStmt(InCore)`. Compute statements evaluate a `tensor.*` op other
      than the orchestration-native ones (create, view, reshape, read, write, dim), or any
      `block.*` / `system.*` op (tile code written outside a kernel). A scalar statement between
      two compute statements joins the run when every use of its value lies inside the run; so
      does a static view read only by matmuls (a K-chain piece: loaded where it is used).
      Runs never cross control flow: loops and ifs stay in the orchestration and the runs inside
      their bodies are wrapped separately. A compute call returned or yielded directly is first
      bound to a variable (`exp_result = pl.exp(x); return exp_result`). Existing InCore scopes are left as they are;
      AutoInCore scopes left over by the chunking passes are dissolved into their block.
      InCore functions are untouched. Still SSA.
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.enums import MemorySpace, ScopeKind
from pypto.ir.expr import Call, ConstInt, Expr, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    seq,
    stmt_list,
)
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import IRVisitor, rebuild
from pypto.ops.registry import Level, OpDef, tensor_ops

from .base import IRProperty, Pass, PassContext
from .outline_utils import bind_value_calls, free_vars, is_kernel, use_counts

COMPUTE, SCALAR, OTHER = "compute", "scalar", "other"


class ScopeTensorOps(Pass):
    """Wrap runs of tensor compute in non-InCore functions into InCore scopes (module docstring)."""

    name = "ScopeTensorOps"
    requires = frozenset({IRProperty.SSAForm})
    produces = frozenset()
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        budget = ctx.target.capacity(MemorySpace.Vec) // 2 if ctx.target is not None else 1 << 20
        fns = [f if is_kernel(f) or f.body is None else _scope_function(f, budget) for f in program.functions]
        if all(a is b for a, b in zip(fns, program.functions)):
            return program
        return program.with_functions(fns)


def is_compute_call(e: Expr) -> bool:
    """A call of an op that must run inside a kernel."""
    if not isinstance(e, Call) or isinstance(e.op, GlobalVar) or not isinstance(e.op, OpDef):
        return False
    if e.op.level is Level.TENSOR:
        return not e.op.traits.task_level  # (the task program does those itself)
    return True  # block.* and system.*


class _HasCall(IRVisitor):
    found = False

    def visit_Call(self, c: Call) -> None:
        if c.op is not tensor_ops.dim:
            self.found = True
        self.generic_visit(c)


class _Uses(IRVisitor):
    """Per variable, how it is used: ("cube", None) as a matmul operand, ("view", v) as the source
    of the view bound to v, ("other", None) anything else."""

    def __init__(self) -> None:
        super().__init__()
        self.uses: dict[Var, list[tuple[str, Var | None]]] = {}
        self._bound: Var | None = None

    def visit_AssignStmt(self, s: AssignStmt) -> None:
        self._bound = s.var if isinstance(s.value, Call) and s.value.op is tensor_ops.view else None
        self.generic_visit(s)
        self._bound = None

    def visit_Call(self, c: Call) -> None:
        first = 1 if c.op is tensor_ops.matmul_acc else 0
        for i, a in enumerate(c.args):
            if not isinstance(a, Var):
                continue
            if c.op in (tensor_ops.matmul, tensor_ops.matmul_acc) and i >= first:
                use = ("cube", None)
            elif c.op is tensor_ops.view and i == 0 and self._bound is not None:
                use = ("view", self._bound)
            else:
                use = ("other", None)
            self.uses.setdefault(a, []).append(use)
        bound, self._bound = self._bound, None  # (nested calls are not the bound view)
        self.generic_visit(c)
        self._bound = bound


def cube_operand_views(body: Stmt) -> frozenset[Var]:
    """Variables read only by matmuls, directly or through views of them (the pieces of a K chain
    and the windows they are cut from)."""
    u = _Uses()
    u.visit(body)
    known: dict[Var, bool] = {}

    def feeds_cube(v: Var, depth: int = 0) -> bool:
        if v not in known:
            known[v] = False  # (no cycles in SSA; guards recursion anyway)
            uses = u.uses.get(v, [])
            known[v] = bool(uses) and depth < 16 and all(
                kind == "cube" or (kind == "view" and feeds_cube(w, depth + 1)) for kind, w in uses)
        return known[v]

    return frozenset(v for v in list(u.uses) if feeds_cube(v))


def classify(s: Stmt, cube_views: frozenset[Var] = frozenset()) -> str:
    if isinstance(s, (AssignStmt, EvalStmt)):
        value = s.value if isinstance(s, AssignStmt) else s.expr
        if is_compute_call(value):
            return COMPUTE
        if isinstance(s, AssignStmt) and s.var in cube_views and isinstance(value, Call) \
                and value.op is tensor_ops.view and all(isinstance(d, ConstInt) for d in s.var.type.shape):
            # a static window only a matmul reads (a piece of a K chain): it joins the kernel like a
            # scalar, so it is loaded into Left / Right where the matmul needs it, not at the start
            return SCALAR
        if isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType):
            v = _HasCall()
            v.visit(value)
            if not v.found:
                return SCALAR
    return OTHER


def _scope_function(fn: Function, budget: int) -> Function:
    body = bind_value_calls(fn.body, is_compute_call)  # `return pl.exp(x)`: compute as a statement
    body = _Scoper(use_counts(body), budget, cube_operand_views(body)).block(body)
    if body is fn.body:
        return fn
    return Function(fn.name, fn.params, fn.param_directions, fn.return_types, body, fn.func_type, span=fn.span)


def _row_local(s: Stmt) -> bool:
    from .tiling import overwrites_whole, row_local

    v = s.value if isinstance(s, AssignStmt) else None
    return (not isinstance(v, Call) or row_local(v.op) or v.op is tensor_ops.matmul or v.op is tensor_ops.dim
            or overwrites_whole(v))


# values that are not in Vec until a vector op reads them: matmul results (in the accumulator) and
# windows of DDR tensors (loaded where a matmul or a vector op needs them)
_NOT_IN_VEC = (tensor_ops.matmul, tensor_ops.matmul_acc, tensor_ops.view)


def _needs_row_tiling(run: list[Stmt], budget: int, uses: Counter) -> bool:
    """Would a kernel of these statements have to be tiled over rows (a dynamic extent, or more
    whole tensors live in Vec at once than half the Vec memory)? A value is live from its statement
    (a matmul result or a window: from its first use by a vector op) to its last use in the run, or
    to the end of the run when it is used after it."""
    inside = use_counts(run)
    first: dict[Var, int] = {}  # first use by a statement that is not a matmul
    last: dict[Var, int] = {}
    for i, s in enumerate(run):
        vector = not (isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op in _NOT_IN_VEC)
        for v in free_vars([s]):
            last[v] = i
            if vector:
                first.setdefault(v, i)
    live: list[tuple[int, int, int]] = []  # (bytes, first, last statement that needs it in Vec)
    peak = 0
    for i, s in enumerate(run):
        t = s.var.type if isinstance(s, AssignStmt) else None
        if isinstance(t, TensorType) and not (isinstance(s.value, Call) and s.value.op is tensor_ops.assemble):
            n = t.nbytes()  # (an assemble writes into its target in place: no tile of its shape)
            if n is None:
                return True
            escapes = uses[s.var] != inside[s.var]
            end = len(run) if escapes else last.get(s.var, i)
            lazy = isinstance(s.value, Call) and s.value.op in _NOT_IN_VEC
            start = first.get(s.var, end + 1) if lazy else i
            live.append((n, start, end))
        peak = max(peak, sum(n for n, a, b in live if a <= i <= b))
    return peak > budget


class _Scoper:
    def __init__(self, uses: Counter, budget: int = 1 << 20, cube_views: frozenset[Var] = frozenset()) -> None:
        self.uses = uses
        self.budget = budget
        self.cube_views = cube_views

    def kind(self, s: Stmt) -> str:
        return classify(s, self.cube_views)

    def block(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        stmts = self._dissolve_auto(stmt_list(body))
        out: list[Stmt] = []
        run: list[Stmt] = []  # compute statements and the scalars seen between them
        pending: list[Stmt] = []  # scalars after the last compute statement of the run
        for s in stmts:
            kind = self.kind(s)
            if kind == COMPUTE:
                run += pending + [s]
                pending = []
            elif kind == SCALAR and run:
                pending.append(s)
            else:
                out += self.close(run) + pending
                run, pending = [], []
                out.append(self.nested(s))
        out += self.close(run) + pending
        if len(out) == len(stmts) and all(a is b for a, b in zip(out, stmts)):
            return body
        return seq(out, body.span) if out else SeqStmts((), span=body.span)

    def close(self, run: list[Stmt]) -> list[Stmt]:
        """The statements of a run: a scope around it, split at scalars whose value is used outside,
        and around ops that are not row-local when the kernel would need row tiling (tiling takes
        only row-local kernels: those ops get kernels of their own, the rest stays tiled)."""
        if not run:
            return []
        computes = [s for s in run if self.kind(s) == COMPUTE]
        odd = [s for s in computes if not _row_local(s)]
        if odd and len(computes) > 1 and _needs_row_tiling(run, self.budget, self.uses):
            k = run.index(odd[0])
            if k > 0:
                return self.close(run[:k]) + self.close(run[k:])
            return self.close(run[:1]) + self.close(run[1:])
        inside = use_counts(run)
        for i, s in enumerate(run):
            if self.kind(s) == SCALAR and self.uses[s.var] != inside[s.var]:
                left, right = run[:i], run[i + 1:]
                trail: list[Stmt] = []
                while left and self.kind(left[-1]) == SCALAR:
                    trail.insert(0, left.pop())
                lead: list[Stmt] = []
                while right and self.kind(right[0]) == SCALAR:
                    lead.append(right.pop(0))
                return self.close(left) + trail + [s] + lead + self.close(right)
        span = run[0].span
        return [ScopeStmt(ScopeKind.InCore, seq(run, span), span=span)]

    def nested(self, s: Stmt) -> Stmt:
        if isinstance(s, (ForStmt, WhileStmt)):
            body = self.block(s.body)
            return s if body is s.body else rebuild(s, {"body": body})
        if isinstance(s, IfStmt):
            then = self.block(s.then_body)
            other = self.block(s.else_body)
            if then is s.then_body and other is s.else_body:
                return s
            return rebuild(s, {"then_body": then, "else_body": other})
        return s

    def _dissolve_auto(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, ScopeStmt) and s.kind is ScopeKind.AutoInCore:
                out += self._dissolve_auto(stmt_list(s.body))
            else:
                out.append(s)
        return out


__all__ = ["ScopeTensorOps", "classify", "is_compute_call"]
