"""Tiling rules of the batched tensor ops (tiling.py's SPECIAL table): tensor.matmul / matmul_acc of
rank > 2 (block.batch_matmul over Mat tiles) and tensor.expand_clone (block.expand_clone with the
broadcast written as attributes: a CPU tile is 2-D, so the instruction needs the target's dims)."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call
from pypto.ir.stmt import Stmt
from pypto.ops.registry import block_ops

from .base import PassError

Vec, Mat = MemorySpace.Vec, MemorySpace.Mat


def _batch_operand(conv, e, trans: bool, s: Stmt, hint: str):
    """A batched matmul operand: its Mat tile (a 2-D one as [1, r, c]), the last two dims swapped
    for a_trans / b_trans (block.batch_matmul reads any memory space)."""
    t = conv.as_tile(e, Mat, span=s.span)
    if t.type.rank == 2:
        shape = (1, *(int(d) for d in t.type.static_shape()))
        t = conv.tile(f"{hint}_b", conv.op(block_ops.reshape, [t, shape], {}, s.span), s.span).var
    if trans:
        t = conv.tile(f"{hint}_t", conv.op(block_ops.transpose_view, [t], {}, s.span), s.span).var
    return t


def batch_matmul(conv, c: Call, s: Stmt, hint: str, acc_form: bool):
    """tensor.matmul(_acc) with an operand of rank > 2: block.batch_matmul(_acc) over Mat tiles."""
    kw = dict(c.kwargs)
    lhs, rhs = c.args[1:] if acc_form else c.args[:2]
    a = _batch_operand(conv, lhs, bool(kw.get("a_trans")), s, f"{hint}_lhs")
    b = _batch_operand(conv, rhs, bool(kw.get("b_trans")), s, f"{hint}_rhs")
    if acc_form:
        want = DataType.FP32 if a.type.dtype.is_float else DataType.INT32
        acc = conv.as_tile(c.args[0], Vec, span=s.span)
        if acc.type.dtype is not want:
            acc = conv.tile(f"{hint}_acc_in", conv.op(block_ops.cast, [acc], {"target_type": want}, s.span),
                            s.span).var
        call = conv.op(block_ops.batch_matmul_acc, [acc, a, b], {}, s.span)
    else:
        call = conv.op(block_ops.batch_matmul, [a, b], {}, s.span)
    out = conv.tile(hint if call.type.dtype is c.type.dtype else f"{hint}_acc", call, s.span)
    if out.var.type.dtype is not c.type.dtype:  # out_dtype: cast on the vector unit
        v = conv.as_tile(out, Vec, span=s.span)
        return conv.tile(hint, conv.op(block_ops.cast, [v], {"target_type": c.type.dtype}, s.span), s.span)
    return out


def expand_clone(conv, c: Call, s: Stmt, hint: str):
    """tensor.expand_clone(src, target): src broadcast to target's shape, as block.expand_clone with
    the target's dims (padded to 4 from the left) and a mask of the broadcast dims."""
    src_t, dst_t = c.args[0].type, c.type
    ss, ds = src_t.static_shape(), dst_t.static_shape()
    if ss is None or ds is None:
        raise PassError(f"{s.span}: pl.expand_clone needs static shapes in a kernel")
    dims = [1] * (4 - len(ds)) + [int(d) for d in ds]
    sdims = [1] * (4 - len(ss)) + [int(d) for d in ss]
    mask = sum(1 << i for i in range(4) if sdims[i] == 1 and dims[i] != 1)
    src = conv.as_tile(c.args[0], Vec, span=s.span)
    kw = {"d1": dims[1], "d2": dims[2], "bmask": mask}
    call = conv.op(block_ops.expand_clone, [src, tuple(int(d) for d in ds)], kw, s.span)
    return conv.tile(hint, call, s.span)
