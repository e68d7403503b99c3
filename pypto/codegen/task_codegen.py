"""The task language in the task program: `task.*` orchestration ops -> options of `pto.submit`.

`task.begin ... task.end` brackets the kernel calls of one task (a `pl.at` region, an `spmd`, a
`pl.submit`). The first call of the bracket carries its options as extra `pto.submit` operands
(dirs `dep`, `pred`, `pred_idx`, `core_num`) and attributes (`manual`, `sync`, `untracked`,
`pred_cmp`, `pred_value`); a region outlined into several kernels chains them (each waits for the
previous one), so the bracket's task id -- that of its last call -- stands for all of them.
Every submit inside `task.scope_begin/end` (a manual scope) gets `manual`; arguments that are
`pl.no_dep` / `no_dep_args` or views of a `manual_dep` tensor are listed in `untracked`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.dtype import DataType
from pypto.pto.model import I64, Op, Sym, Value
from pypto.pto.syntax import JOIN_KERNEL

if TYPE_CHECKING:
    from .orchestration import OrchestrationCodegen


@dataclass
class _Pending:
    deps: list[Value]
    no_dep: set[int]
    core_num: Value | None
    pred: list[Value]
    attrs: dict
    last: Value | None = None
    calls: int = 0


@dataclass
class TaskState:
    cg: OrchestrationCodegen
    manual: int = 0
    pending: list[_Pending] = field(default_factory=list)
    untracked: set[int] = field(default_factory=set)  # ids of tensor Values never tracked (manual_dep)

    def call(self, c: E.Call, result: E.Var | None) -> None:
        cg, name = self.cg, c.op.name
        if name == "task.begin":
            deps, no_dep, core, pred = (a.elements for a in c.args)  # type: ignore[attr-defined]
            attrs = {k: v for k, v in c.kwargs if v not in (None, False)}
            self.pending.append(_Pending([cg.sc.expr(d, DataType.INT64) for d in deps],
                                         {id(cg.lookup(t)) for t in no_dep},  # type: ignore[arg-type]
                                         cg.sc.expr(core[0], DataType.INDEX) if core else None,
                                         [cg.lookup(pred[0]), *(cg.sc.expr(i, DataType.INDEX) for i in pred[1:])]
                                         if pred else [], attrs))
        elif name == "task.end":
            if not self.pending:
                raise CompileError("task.end without task.begin", c.span)
            p = self.pending.pop()
            if result is not None:
                cg.values[result] = p.last if p.last is not None else cg.sc.const(-1, DataType.INT64)
        elif name == "task.scope_begin":
            self.manual += 1
        elif name == "task.scope_end":
            self.manual -= 1
        elif name == "task.invalid":
            if result is not None:
                cg.values[result] = cg.sc.const(-1, DataType.INT64)
        elif name == "task.join":
            deps = [cg.sc.expr(d, DataType.INT64) for d in c.args]
            tid = Value(cg.names.fresh("tid"), I64)
            attrs = {"callee": Sym(JOIN_KERNEL), "dirs": ["dep"] * len(deps)}
            if self.manual:
                attrs["manual"] = True
            cg.emit(Op("pto.submit", [tid], deps, attrs=attrs))
            if result is not None:
                cg.values[result] = tid
        elif name == "task.untrack":
            self.untracked.add(id(cg.lookup(c.args[0])))  # type: ignore[arg-type]
        else:
            raise CompileError(f"{name} cannot run in the orchestration", c.span)

    def derived(self, src: Value, dst: Value) -> None:
        """A view or reshape of an untracked tensor is untracked too."""
        if id(src) in self.untracked:
            self.untracked.add(id(dst))

    def submit(self, vals: list[Value], attrs: dict, uses_barrier: bool) -> list[Value]:
        """Complete a kernel submission's operands and attributes; returns its results (task id)."""
        p = self.pending[-1] if self.pending else None
        untracked = [k for k, v in enumerate(vals) if id(v) in self.untracked or (p and id(v) in p.no_dep)]
        if p is None and not self.manual and not untracked and not uses_barrier:
            return []
        dirs = attrs["dirs"]
        if untracked:
            attrs["untracked"] = untracked
        if self.manual:
            attrs["manual"] = True
        if uses_barrier:
            attrs["sync"] = True
        if p is not None:
            deps = p.deps if p.calls == 0 else [p.last]  # later kernels of one region: after the previous
            vals += deps
            dirs += ["dep"] * len(deps)
            if p.core_num is not None:
                vals.append(p.core_num)
                dirs.append("core_num")
            if p.pred:
                vals += p.pred
                dirs += ["pred"] + ["pred_idx"] * (len(p.pred) - 1)
            for k in ("sync", "pred_cmp", "pred_value"):
                if k in p.attrs:
                    attrs[k] = p.attrs[k]
            if p.attrs.get("manual"):
                attrs["manual"] = True
        tid = Value(self.cg.names.fresh("tid"), I64)
        if p is not None:
            p.last = tid
            p.calls += 1
        return [tid]


def uses_barrier(fn) -> bool:
    """Whether a kernel waits at `pl.system.syncall` (its blocks must run at once)."""
    from pypto.ir.walk import expr_nodes, stmt_exprs, walk_stmts

    return any(isinstance(n, E.Call) and n.op.name == "system.syncall"
               for s in walk_stmts(fn) for e in stmt_exprs(s) for n in expr_nodes(e))


__all__ = ["TaskState", "uses_barrier"]
