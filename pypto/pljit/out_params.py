"""A @pl.jit entry that drops the write to an Out parameter is refused at compile.

`out = expr` rebinds the name only: the caller's buffer is never written, and a @pl.jit call
returns None whatever the function returns, so the value is lost without a trace. The public
compiler refuses such a kernel at code generation (`PartialCodegenError`; its examples rely on
it), so this one does too, before compiling, naming the parameter and the line.

The check is data flow in program order, and conservative: an Out parameter is reported when
its first touch is an assignment to its name, with no read of the incoming value before it
(`out = kern(a, out)`, `out[:] = e` (an assemble into `out`), `pl.store(t, offs, out)` all read
it first). A function that never mentions the parameter writes nothing on purpose or by another
route, and is left alone."""

from __future__ import annotations

from typing import Any

from pypto.ir.enums import ParamDirection
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt
from pypto.ir.visitor import IRVisitor


class _FirstTouch(IRVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.first: dict[str, Any] = {}  # name -> "read" | the AssignStmt that wrote it first

    def visit_Var(self, v: Any) -> None:
        if v.name in self.names:
            self.first.setdefault(v.name, "read")

    def visit_AssignStmt(self, s: AssignStmt) -> None:
        self.visit_value(s.value)  # (the right-hand side is evaluated before the name is bound)
        if s.var.name in self.names:
            self.first.setdefault(s.var.name, s)


def dropped_out_writes(fn: Function) -> list[tuple[str, AssignStmt]]:
    """(parameter name, the assignment that rebinds it) for each Out parameter of `fn` whose
    incoming buffer is never written because the first thing done to it is a rebinding."""
    outs = {p.name for p, d in zip(fn.params, fn.param_directions) if d is ParamDirection.Out}
    if not outs or fn.body is None:
        return []
    touch = _FirstTouch(outs)
    touch.visit(fn.body)
    return [(n, w) for n, w in touch.first.items() if isinstance(w, AssignStmt)]


def check_out_writes(jit_name: str, program: Program) -> None:
    from pypto.backend.pto_backend import PartialCodegenError

    fn = program.get_function(jit_name)
    if fn is None:
        return
    dropped = dropped_out_writes(fn)
    if dropped:
        name, stmt = dropped[0]
        raise PartialCodegenError(
            f"@pl.jit {jit_name}: `{name} = ...` at {stmt.span} rebinds the Out parameter '{name}' "
            f"without writing it, so the caller's buffer is never written (a @pl.jit call writes its "
            f"Out tensors in place and returns None). Write through it: `{name}[:] = expr` for the whole "
            f"tensor, `{name}[<slices>] = expr` for a window, or `{name} = pl.store(tile, offsets, {name})`")
