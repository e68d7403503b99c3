"""The task language's orchestration ops (today's public `pl.at(... as tid, deps=...)`, `pl.spmd`,
`pl.submit`, `pl.manual_scope()`, ...; reference pl-head §2.4-2.5).

They are statements of an orchestration function, never of a kernel, and bracket the kernel
calls they apply to (the calls a `pl.at` region or an `spmd` is outlined into):

  task.begin(deps, no_dep, core_num, predicate; manual=, sync=, pred_cmp=, pred_value=)  (Eval)
  <kernel calls>
  tid = task.end()                            the task id standing for the bracketed calls
  task.scope_begin(manual=True) ... task.scope_end()   a manual scope: only explicit deps order
  tid = task.join(deps)                       pl.system.task_dummy: a task without work
  tid = task.invalid()                        pl.system.task_invalid(): "no producer"
  task.untrack(t)                             pl.create_tensor(..., manual_dep=True): t is untracked

A task id is a 64-bit integer scalar (`pl.TASK_ID` is INT64 here; -1 is "no task").
`pypto/codegen/task_codegen.py` turns them into options of `pto.submit`.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import Call, Expr, MakeTuple, Op
from pypto.ir.op import OpError, register_op
from pypto.ir.span import UNKNOWN_SPAN, Span
from pypto.ir.types import ScalarType, TensorType, TupleType, Type

TASK_ID = DataType.INT64
TASK_ID_TYPE = ScalarType(TASK_ID)
UNIT = TupleType(())
PRED_CMPS = ("eq", "ne", "gt", "lt", "ge", "le")


class TaskOp(Op):
    """An orchestration-only op of the task language (not a registry op: no kernel ever holds one)."""

    def infer_type(self, args: tuple[Expr, ...], kwargs: dict[str, Any]) -> Type:
        n = self.name
        if n in ("task.end", "task.join", "task.invalid"):
            for a in args:
                _check_ids(a, n)
            return TASK_ID_TYPE
        if n == "task.begin":
            if len(args) != 4 or not all(isinstance(a, MakeTuple) for a in args):
                raise OpError("task.begin takes (deps, no_dep, core_num, predicate) tuples")
            _check_ids(args[0], n)
            if args[3].elements and not isinstance(args[3].elements[0].type, TensorType):
                raise OpError("task.begin: the predicate reads an element of a tensor")
            if kwargs.get("pred_cmp") not in (None, *PRED_CMPS):
                raise OpError(f"task.begin: predicate comparison {kwargs.get('pred_cmp')!r}")
            return UNIT
        if n == "task.untrack":
            if len(args) != 1 or not isinstance(args[0].type, TensorType):
                raise OpError("task.untrack takes one tensor")
            return UNIT
        return UNIT


def _check_ids(a: Expr, op: str) -> None:
    items = a.elements if isinstance(a, MakeTuple) else (a,)
    for x in items:
        t = x.type
        if not (isinstance(t, ScalarType) and t.dtype.is_int):
            raise OpError(f"{op}: a dependency must be a task id (pl.Scalar[pl.TASK_ID]), got {t}")


TASK_OPS = {n: register_op(TaskOp(n)) for n in ("task.begin", "task.end", "task.scope_begin", "task.scope_end",
                                                 "task.join", "task.invalid", "task.untrack")}


def is_task_call(e: Any) -> bool:
    return isinstance(e, Call) and isinstance(e.op, TaskOp)


def task_call(name: str, args: list[Expr] | tuple[Expr, ...] = (), span: Span = UNKNOWN_SPAN, **kwargs: Any) -> Call:
    op = TASK_OPS[name]
    args = tuple(args)
    return Call(op, args, tuple(kwargs.items()), op.infer_type(args, kwargs), span=span)


class TaskOpRef:
    """`pl.task.<name>` in program text: how the printer spells a task op, so a printed program that
    uses the task language parses back (`pl.task.begin([tid], [], [], [])`, `t = pl.task.end()`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<pl.{self.name}>"


__all__ = ["PRED_CMPS", "TASK_ID", "TASK_ID_TYPE", "TASK_OPS", "TaskOp", "TaskOpRef", "is_task_call", "task_call"]
