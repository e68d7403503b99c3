"""The tiling rule of `tensor.paged_gather` (pypto/ops/gather_paged.py) inside a kernel: the pool
and the block table stay whole kernel-parameter tensors (the tile op looks rows up by data, so any
row may be read: the task reads both whole, as mgather's table), the index becomes a tile, and the
result is one tile of [max_indices, size]."""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call
from pypto.ir.stmt import Stmt
from pypto.ops.gather_paged import PAGED_GATHER

from .base import PassError


def lower_paged_gather(conv, c: Call, s: Stmt, hint: str):
    from .tiling import Window

    src, idx, table = c.args
    whole = []
    for e, what in ((src, "src (the paged pool)"), (table, "block_table")):
        w = conv.value(e)
        if not isinstance(w, Window) or w.root is None or not w.full:
            raise PassError(f"tensor.paged_gather: {what} must be a tensor parameter of the kernel, passed whole "
                            "(rows are looked up by data)", s.span, hint="pass the tensor itself, not a slice of it")
        conv.read.add(w.root)
        whole.append(w.tensor)
    it = conv.as_tile(idx, MemorySpace.Vec, span=s.span)
    return conv.tile(hint, conv.op(PAGED_GATHER, [whole[0], it, whole[1]], dict(c.kwargs), s.span), s.span)
