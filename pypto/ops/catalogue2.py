"""More of the public `pl` catalogue at its 2026-08 HEAD (pl-head §3.1-3.6; docs/pl_ops.md):

    part_add / part_mul / part_max / part_min(a, b)
        over a's valid region: op(a, b) where b is valid too, a where it is not; the result has
        a's valid region (the partial ops of the tile ISA: they combine a full accumulator with a
        ragged tail without padding it first)
    get_subblock_idx()        the AIV lane of a split region (0 here: no pl.split_aiv region splits a
                              kernel on the CPU)
    pl.tensor.get_block_idx / get_block_num / get_subblock_idx and pl.tile.* spellings
"""

from __future__ import annotations

import numpy as np

from pypto.ir.enums import PipeType
from pypto.ir.types import TensorType

from . import elementwise as _elementwise  # noqa: F401  (the spellings below extend its entries)
from . import memory as _memory  # noqa: F401  (get_block_idx / get_block_num)
from . import numeric as nm
from .registry import add_dsl_name, arg, block_ops, define, unified
from .traits import ELEMENT, ShapeClass, Traits
from .typing import OpError, dim_eq, expect_tensor, expect_tile, tile_result

V = PipeType.V
_PART = Traits(ShapeClass.ELEMENTWISE, inplace_safe=True, row_local=True)
PART_OPS = {"part_add": (np.add, "tpartadd"), "part_mul": (np.multiply, "tpartmul"),
            "part_max": (np.maximum, "tpartmax"), "part_min": (np.minimum, "tpartmin")}


def _part_rule(name: str, level: str):
    expect = expect_tile if level == "block" else expect_tensor

    def infer(args, kw):
        a = expect(name, args[0], "lhs")
        b = expect(name, args[1], "rhs")
        if a.dtype is not b.dtype:
            raise OpError(f"{name}: the operands have different dtypes ({a.dtype.name}, {b.dtype.name})",
                          hint="cast one of them first")
        if a.rank != b.rank or any(dim_eq(x, y) is False for x, y in zip(a.shape, b.shape)):
            raise OpError(f"{name}: the operands need the same shape (the valid regions may differ)")
        if level == "tensor":
            return TensorType(a.shape, a.dtype)
        return tile_result(a.shape, a.dtype, memory_space=a.space, valid_shape=a.valid_shape)
    return infer


def part_ref(fn):
    """op(a, b) over b's valid region (all of b without `valid_b`), a elsewhere; a and b are a's valid region."""
    def ref(a, b, *, valid_b=None):
        a, b = np.asarray(a), np.asarray(b)
        wide = nm.up(a)
        out = wide.copy()
        vr, vc = valid_b if valid_b is not None else b.shape[-2:]
        with np.errstate(all="ignore"):
            out[..., :vr, :vc] = fn(wide[..., :vr, :vc], nm.up(b)[..., :vr, :vc])
        return out
    return ref


for _name, (_fn, _pto) in PART_OPS.items():
    _tile = define(f"block.{_name}", [arg("lhs", "tile"), arg("rhs", "tile")], _part_rule(f"block.{_name}", "block"),
                   traits=_PART, reference=part_ref(_fn), pto=_pto, pipe=V, family=_name, dsl=(f"pl.block.{_name}",),
                   doc=f"{_name[5:]} where both operands are valid, lhs where rhs is not (lhs's valid region)")
    _tensor = define(f"tensor.{_name}", [arg("lhs", "tensor"), arg("rhs", "tensor")],
                     _part_rule(f"tensor.{_name}", "tensor"), traits=_PART, reference=part_ref(_fn), family=_name,
                     tile_form=_tile, dsl=(f"pl.tensor.{_name}",),
                     doc=f"{_name[5:]} of two tensors (fully valid: the plain op)")
    unified(_name, tensor=_tensor, tile=_tile, doc=_tile.doc)


# ---------------------------------------------------------------------------------------------
# block / lane queries: every spelling of the three


def _subblock_rule(args, kw):
    return block_ops.get_block_idx.infer(args, kw)


define("block.get_subblock_idx", [], _subblock_rule, traits=ELEMENT, reference=lambda: 0, pipe=PipeType.S,
       dsl=("pl.block.get_subblock_idx", "pl.get_subblock_idx"),
       doc="the AIV lane (0 or 1) of a pl.split_aiv region; 0 outside one (always, on the CPU)")
for _q in ("get_block_idx", "get_block_num", "get_subblock_idx"):
    add_dsl_name(f"pl.tensor.{_q}", getattr(block_ops, _q))  # (a scalar query: the same op at both levels)

__all__ = ["PART_OPS", "part_ref"]
