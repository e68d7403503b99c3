"""Buffers the program itself shares, and in-place updates.

A tile shares its input's buffer when it is a view of it (`block.reshape`, a plain copy `y = x`) or
when its op updates an operand in place (`OpDef.result_reuses`: matmul_acc and gemv_acc on the
accumulator, assemble on the target) — those are *hard* shares, InitMemRef must honour them.
`inplace_safe` says when an operation *may* write its result over an operand that dies at it:
when result element i depends only on operand element i (elementwise ops, same shape, element
size and space). Everything else (matmul, reductions, transposes, views, moves) gets a separate
buffer unless the op itself declares the reuse.
"""

from __future__ import annotations

from pypto.ir.expr import Call, Expr, Var
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TileType, Type
from pypto.ir.variables import is_tile_var
from pypto.ops.registry import Level, OpDef, block_ops


def shares_input(value: object) -> Var | None:
    """The tile whose buffer an assigned value lives in: a reshape's input (same bytes, new shape),
    or the source of a plain tile copy `y = x`."""
    if is_tile_var(value):
        return value  # type: ignore[return-value]
    if isinstance(value, Call) and value.op is block_ops.reshape and value.args and is_tile_var(value.args[0]):
        return value.args[0]  # type: ignore[return-value]
    return None


def updated_operand(value: object) -> int | None:
    """Index of the tile operand an op updates in place (`OpDef.result_reuses`: matmul_acc and
    gemv_acc on the accumulator, assemble on the target), else None."""
    if not isinstance(value, Call):
        return None
    k = getattr(value.op, "result_reuses", None)
    if k is None or k >= len(value.args) or not is_tile_var(value.args[k]):
        return None
    return k


def hard_share_source(s: Stmt | None, v: Var) -> Var | None:
    """The tile whose buffer `v` must share because of how `s` defines it (reshape, copy, in place)."""
    if not isinstance(s, AssignStmt) or s.var is not v:
        return None
    src = shares_input(s.value)
    if src is None:
        k = updated_operand(s.value)
        if k is not None:
            src = s.value.args[k]  # type: ignore[union-attr]
    return src

def inplace_safe(value: Expr, operand: Var, result_type: Type) -> bool:
    """True when `value` may write its result into the buffer of `operand` (which dies there)."""
    if not isinstance(value, Call) or not isinstance(value.op, OpDef):
        return False
    op = value.op
    if op.level is not Level.BLOCK:
        return False
    if not op.traits.inplace_safe:
        return False
    names = [p.name for p in op.operands]
    where = [i for i, a in enumerate(value.args) if a is operand]
    if not where or any(i < len(names) and names[i] == "tmp" for i in where):
        return False  # scratch operands are written by the op itself
    ot = operand.type
    if not isinstance(ot, TileType) or not isinstance(result_type, TileType):
        return False
    shape = ot.static_shape()
    return (shape is not None and shape == result_type.static_shape() and ot.dtype.itemsize == result_type.dtype.itemsize
            and ot.space is result_type.space)


__all__ = ["hard_share_source", "inplace_safe", "shares_input", "updated_operand"]
