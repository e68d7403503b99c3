"""Building and rewriting MemRefs, for the memory passes (InitMemRef, MemoryReuse,
AllocateMemoryAddr): alloc statements, fresh buffers, replacing buffers everywhere they occur, and
re-inferring a call's type after its operands were retyped.
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, MemRef, make_memref
from pypto.ir.op import create_op_call
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, Stmt, seq, stmt_list
from pypto.ir.types import ShapedType, Type, constant_dims, is_constant_type
from pypto.ir.variables import is_alloc
from pypto.ir.visitor import IRMutator, rebuild
from pypto.ops.registry import block_ops


def alloc_stmt(m: MemRef, span: Span | None = None) -> AssignStmt:
    """`m = block.alloc(space, addr, size, id)`, the statement that defines a buffer."""
    call = create_op_call(block_ops.alloc, [], {"memory_space": m.memory_space, "addr": m.addr, "size": m.size,
                                             "id": m.id}, span or m.span)
    return AssignStmt(m, call, span=span or m.span)


def split_allocs(body: Stmt | None) -> tuple[list[AssignStmt], Stmt]:
    """(the alloc statements at the top level of a body, the body without them)."""
    stmts = stmt_list(body)
    return [s for s in stmts if is_alloc(s)], seq([s for s in stmts if not is_alloc(s)])


def fresh_memref(space: MemorySpace, size: int, id: int, span: Span | None = None) -> MemRef:
    return make_memref(space, -1, size, id, span=span)


class MemRefRewriter(IRMutator):
    """Replaces MemRefs everywhere they occur (variable types, call result types, allocs) through
    `var_map`; every variable whose type changes is rebuilt and its uses follow."""

    visit_types = True

    def visit_Type(self, t: Type) -> Type:
        return t if is_constant_type(t) else self.generic_visit(t)  # type: ignore[return-value]

    def visit_ShapedType(self, t: ShapedType) -> Type:
        if not constant_dims(t):
            return self.generic_visit(t)  # type: ignore[return-value]
        new = self.var_map.get(t.memref) if t.memref is not None else None  # all that can change
        return t if new is None or new is t.memref else rebuild(t, {"memref": new})  # type: ignore[return-value]


def retype_call(c: Call, args: tuple[Expr, ...] | None = None) -> Call:
    """The call — with `args` instead of its own arguments, when given — with its result type inferred
    again from its (retyped) arguments, as the parser would."""
    new_args = c.args if args is None else args
    infer = getattr(c.op, "infer_type", None)
    t = c.type
    if infer is not None:
        try:
            t = infer(new_args, dict(c.kwargs))
        except Exception:  # an op that rejects the retyped operands keeps the type it had
            t = c.type
        if t == c.type:
            t = c.type
    if t is c.type and new_args is c.args:
        return c
    return Call(c.op, new_args, c.kwargs, t, span=c.span)


__all__ = ["MemRefRewriter", "alloc_stmt", "fresh_memref", "retype_call", "split_allocs"]
