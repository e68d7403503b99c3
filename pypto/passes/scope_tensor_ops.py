"""ScopeTensorOps: tensor computation outside any `pl.incore()` scope is put into one.

Tensor ops written in an Opaque or Orchestration function are outlined into kernels
automatically (rather than rejected): this pass marks what to outline, OutlineIncoreScopes does it.

Pre:  SSA, no nested calls; calls of Opaque functions already inlined.
Post: in every non-InCore function, each maximal run of consecutive *compute* statements of one
      block is wrapped in `ScopeStmt(InCore)`. Compute statements evaluate a `tensor.*` op other
      than the orchestration-native ones (create, view, reshape, read, write, dim), or any
      `block.*` / `system.*` op (tile code written outside a kernel). A scalar statement between
      two compute statements joins the run when every use of its value lies inside the run.
      Runs never cross control flow: loops and ifs stay in the orchestration and the runs inside
      their bodies are wrapped separately. A compute call returned or yielded directly is first
      bound to a variable (`exp_result = pl.exp(x); return exp_result`). Existing InCore scopes are left as they are;
      AutoInCore scopes left over by the chunking passes are dissolved into their block.
      InCore functions are untouched. Still SSA.
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.enums import MemorySpace, ScopeKind
from pypto.ir.expr import Call, Expr, GlobalVar
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
from .outline_utils import bind_value_calls, is_kernel, use_counts

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


def classify(s: Stmt) -> str:
    if isinstance(s, (AssignStmt, EvalStmt)):
        value = s.value if isinstance(s, AssignStmt) else s.expr
        if is_compute_call(value):
            return COMPUTE
        if isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType):
            v = _HasCall()
            v.visit(value)
            if not v.found:
                return SCALAR
    return OTHER


def _scope_function(fn: Function, budget: int) -> Function:
    body = bind_value_calls(fn.body, is_compute_call)  # `return pl.exp(x)`: compute as a statement
    body = _Scoper(use_counts(body), budget).block(body)
    if body is fn.body:
        return fn
    return Function(fn.name, fn.params, fn.param_directions, fn.return_types, body, fn.func_type, span=fn.span)


def _row_local(s: Stmt) -> bool:
    from .tiling import overwrites_whole, row_local

    v = s.value if isinstance(s, AssignStmt) else None
    return (not isinstance(v, Call) or row_local(v.op) or v.op is tensor_ops.matmul or v.op is tensor_ops.dim
            or overwrites_whole(v))


def _needs_row_tiling(run: list[Stmt], budget: int) -> bool:
    """Would a kernel of these statements have to be tiled over rows (a dynamic extent, or whole
    tensors beyond half the Vec memory)?"""
    total = 0
    for s in run:
        t = s.var.type if isinstance(s, AssignStmt) else None
        if not isinstance(t, TensorType):
            continue
        if isinstance(s.value, Call) and s.value.op is tensor_ops.assemble:
            continue  # written into its target tensor in place: no tile of its shape
        n = t.nbytes()
        if n is None:
            return True
        total += n
    return total > budget


class _Scoper:
    def __init__(self, uses: Counter, budget: int = 1 << 20) -> None:
        self.uses = uses
        self.budget = budget

    def block(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        stmts = self._dissolve_auto(stmt_list(body))
        out: list[Stmt] = []
        run: list[Stmt] = []  # compute statements and the scalars seen between them
        pending: list[Stmt] = []  # scalars after the last compute statement of the run
        for s in stmts:
            kind = classify(s)
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
        computes = [s for s in run if classify(s) == COMPUTE]
        odd = [s for s in computes if not _row_local(s)]
        if odd and len(computes) > 1 and _needs_row_tiling(run, self.budget):
            k = run.index(odd[0])
            if k > 0:
                return self.close(run[:k]) + self.close(run[k:])
            return self.close(run[:1]) + self.close(run[1:])
        inside = use_counts(run)
        for i, s in enumerate(run):
            if classify(s) == SCALAR and self.uses[s.var] != inside[s.var]:
                left, right = run[:i], run[i + 1:]
                trail: list[Stmt] = []
                while left and classify(left[-1]) == SCALAR:
                    trail.insert(0, left.pop())
                lead: list[Stmt] = []
                while right and classify(right[0]) == SCALAR:
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
