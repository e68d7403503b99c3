"""Lowering of whole-tile reductions (`pl.sum(tile)`, `pl.block.max(tile)`, ... with axis=None).

PTO has no all-axes reduction instruction: a rank-2 tile reduces its rows, then that column
(`trow*` then `tcol*`), and a scalar result reads the single element (`tgetval`). The
intermediate tiles must exist before memory planning, so ConvertTensorToBlockOps applies this to
every kernel:

    s = pl.block.sum(t)            ->   s_rows = pl.block.sum(t, axis=1, keepdim=True)     # [R, 1]
                                        s_all = pl.block.sum(s_rows, axis=0, keepdim=True)  # [1, 1]
                                        s = pl.block.read(s_all, [0, 0])                    # scalar

With keepdim=True the [1, 1] tile is the result. Rank-1 tiles reduce their only axis.
"""

from __future__ import annotations

from pypto.ir.expr import Call, ConstInt, MakeTuple, Var
from pypto.ir.function import Function
from pypto.ir.node import replace
from pypto.ir.op import create_op_call
from pypto.ir.rewrite import StmtRewriter
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TileType
from pypto.ops.registry import block_ops
from pypto.ops.traits import ShapeClass


def is_full_reduction(c: object) -> bool:
    return (isinstance(c, Call) and getattr(c.op, "shape_class", None) is ShapeClass.AXIS_REDUCE
            and c.kwarg("axis") is None
            and isinstance(c.args[0].type, TileType) and c.args[0].type.rank in (1, 2))


class _Lower(StmtRewriter):
    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        if not (isinstance(s, AssignStmt) and is_full_reduction(s.value)):
            return self.recurse(s)
        c = s.value
        src = c.args[0]
        name, sp = s.var.name, s.span
        out: list[Stmt] = []

        def let(hint: str, value: Call) -> Var:
            v = Var(f"{name}_{hint}", value.type, span=sp)
            out.append(AssignStmt(v, value, span=sp))
            return v

        cur = src
        if src.type.rank == 2:
            cur = let("rows", create_op_call(c.op_name, [cur], {"axis": 1, "keepdim": True}, sp))
        cur_call = create_op_call(c.op_name, [cur], {"axis": 0, "keepdim": True}, sp)
        if c.kwarg("keepdim"):
            out.append(AssignStmt(s.var, cur_call, span=sp))
            return out
        whole = let("all", cur_call)
        idx = MakeTuple(tuple(ConstInt(0) for _ in range(src.type.rank)))
        out.append(AssignStmt(s.var, create_op_call(block_ops.read, [whole, idx], {}, sp), span=sp))
        return out


def lower_full_reductions(fn: Function) -> Function:
    body = _Lower().rewrite_body(fn.body)
    return fn if body is fn.body else replace(fn, body=body)


__all__ = ["is_full_reduction", "lower_full_reductions"]
