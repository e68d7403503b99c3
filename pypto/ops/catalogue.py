"""Ops of the public `pl` catalogue at its 2026-08 HEAD (pl-head §3) that the older registry lacked,
and today's spellings of ops we already had (docs/pl_ops.md lists every op with its CPU action).

    row_expand_expdif(x, v)   exp(x[i, j] - v[i, 0])        (tile, tensor, pl)
    col_expand_expdif(x, v)   exp(x[i, j] - v[0, j])
    tri(diagonal, shape, valid_shape=None, dtype=INT32, upper=False)
                              1 where j <= i + diagonal (upper: j >= i + diagonal) in the valid region
    fillpad_expand(x, shape, pad_value=zero)
                              x's valid region at the top left of a larger tile, the rest padded
    transpose_view(tile)      the tile's last two dims swapped (the hardware reinterprets the
                              fractal layout; on the CPU this is a transposing copy)
    fillpad_inplace           fillpad (the CPU writes the same result; no buffer reuse promise)
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PadValue, PipeType
from pypto.ir.expr import ConstInt

from . import elementwise as _elementwise  # noqa: F401  (defined first: reduction's expand ops use its ops)
from . import shape as _shape  # noqa: F401  (defined first: pto.ttrans runs block.transpose's reference)
from .memory import pad_scalar
from .reduction import _both, _col_expand_rule, _row_expand_rule
from .registry import add_dsl_name, arg, attr, block_ops, define, unified
from .traits import COL_EXPAND, LAYOUT, ROW_EXPAND, ShapeClass, Traits
from .typing import (
    OpError,
    dims,
    expect_scalar,
    expect_tensor,
    expect_tile,
    result_like,
    static_dims,
    tile_result,
)

V = PipeType.V
_FILL = Traits(ShapeClass.FILL)


# ---------------------------------------------------------------------------------------------
# exp of a difference with a broadcast row / column vector (softmax's numerator in one instruction)


def _expdif(a, v):
    x = np.asarray(a)
    wide = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    return np.exp(wide - np.asarray(v).astype(wide.dtype))


def _float_only(rule):
    def make(name: str, level: str):
        inner = rule(name, level)

        def infer(args, kw):
            t = inner(args, kw)
            if not t.dtype.is_float:
                raise OpError(f"{name}: exp needs a floating-point operand, got {t.dtype.name}",
                              hint="cast to pl.FP32 first")
            return t
        return infer
    return make


_both("row_expand_expdif", lambda k: [arg("lhs", k), arg("rhs", k)], _float_only(_row_expand_rule), _expdif,
      "trowexpandexpdif", "exp(lhs[i, j] - rhs[i, 0])", ROW_EXPAND)
_both("col_expand_expdif", lambda k: [arg("lhs", k), arg("rhs", k)], _float_only(_col_expand_rule), _expdif,
      "tcolexpandexpdif", "exp(lhs[i, j] - rhs[0, j])", COL_EXPAND)


# ---------------------------------------------------------------------------------------------
# tri: a tile made from its coordinates (ci / arange: creation.py)

def _tri_rule(args, kw):
    expect_scalar("block.tri", args[0], "diagonal")
    shape = static_dims("block.tri", args[1], "shape")
    if len(shape) != 2:
        raise OpError(f"block.tri: needs a 2-D shape, got {list(shape)}")
    valid = dims("block.tri", args[2], "valid_shape") if len(args) > 2 else None
    if valid is not None and len(valid) != 2:
        raise OpError(f"block.tri: valid_shape needs 2 entries, got {len(valid)}")
    return tile_result(shape, kw["dtype"], valid_shape=valid)


def tri_ref(diagonal, shape, valid_shape=None, *, dtype=DataType.INT32, upper=False):
    """1 where j <= i + diagonal (upper: j >= i + diagonal), else 0, over the valid region (the
    rest of the tile 0 here; it is padding)."""
    rows, cols = (int(s) for s in shape)
    vr, vc = (int(s) for s in (valid_shape if valid_shape is not None else shape))
    i, j = np.ogrid[:rows, :cols]
    d = int(diagonal)
    ones = (j >= i + d) if upper else (j <= i + d)
    ones &= (i < vr) & (j < vc)
    return ones.astype(dtype.to_numpy())


define("block.tri", [arg("diagonal", "scalar"), arg("shape", "shape"), arg("valid_shape", "shape", optional=True),
                     attr("dtype", "dtype", DataType.INT32), attr("upper", "bool", False)],
       _tri_rule, traits=_FILL, reference=tri_ref, pto="ttri", pipe=V, dsl=("pl.block.tri", "pl.tri"),
       pto_attrs=("upper",), doc="a lower (upper) triangular 0/1 tile from `diagonal`")


# ---------------------------------------------------------------------------------------------
# fillpad_expand, fillpad_inplace, transpose_view


def _fillpad_expand_rule(level: str):
    name = f"{level}.fillpad_expand"

    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        shape = static_dims(name, args[1], "shape")
        if len(shape) != t.rank:
            raise OpError(f"{name}: shape needs {t.rank} entries, got {list(shape)}")
        for i, (s, d) in enumerate(zip(shape, t.shape)):
            if isinstance(d, ConstInt) and s < d.value:
                raise OpError(f"{name}: shape {list(shape)} is smaller than the input's in dim {i} ({d.value})",
                              hint="the result holds the whole input; use pl.fillpad to keep its shape")
        if level == "tensor":
            return result_like(t, shape)
        return tile_result(shape, t.dtype, memory_space=t.space)  # (the whole result is valid)
    return infer


def fillpad_expand_ref(x, shape, *, pad_value=PadValue.zero, valid=None):
    """x's valid region (all of x without `valid`) at the top left of a `shape` array, the rest the pad."""
    x = np.asarray(x)
    vr, vc = valid if valid is not None else x.shape
    out = np.full(tuple(int(s) for s in shape), pad_scalar(x.dtype, pad_value), dtype=x.dtype)
    out[:vr, :vc] = x[:vr, :vc]
    return out


_fpe_tile = define("block.fillpad_expand", [arg("input", "tile"), arg("shape", "shape"),
                                            attr("pad_value", "padvalue", PadValue.zero)],
                   _fillpad_expand_rule("block"), traits=Traits(ShapeClass.LAYOUT), reference=fillpad_expand_ref,
                   pto="tfillpad", pipe=V, dsl=("pl.block.fillpad_expand",),
                   doc="copy the valid region into the top left of a larger tile and pad the rest (zero / max / min)")
# the tensor form (pl-head §3.5): a kernel loads the input and runs the tile op
_fpe_tensor = define("tensor.fillpad_expand", [arg("input", "tensor"), arg("shape", "shape"),
                                               attr("pad_value", "padvalue", PadValue.zero)],
                     _fillpad_expand_rule("tensor"), traits=Traits(ShapeClass.LAYOUT), reference=fillpad_expand_ref,
                     tile_form=_fpe_tile, doc="fillpad_expand of a tensor (its valid region at the top left)")
unified("fillpad_expand", tensor=_fpe_tensor, tile=_fpe_tile, doc="copy the valid region into a larger padded value")
add_dsl_name("pl.block.fillpad_inplace", block_ops.fillpad)  # same numbers; buffer reuse is the planner's call


def _transpose_view_rule(args, kw):
    t = expect_tile("block.transpose_view", args[0], "input")
    if t.rank < 2:
        raise OpError(f"block.transpose_view: needs a tile of rank 2 or more, got rank {t.rank}")
    if t.rank > 2 and t.static_shape() is None:  # (the CPU splits batches by the static shapes)
        raise OpError("block.transpose_view: a batched (rank > 2) tile needs a static shape")
    sw = lambda s: (*s[:-2], s[-1], s[-2])  # noqa: E731  (the last two dims swapped)
    return tile_result(sw(tuple(t.shape)), t.dtype, memory_space=t.space, valid_shape=sw(tuple(t.valid_shape)))


define("block.transpose_view", [arg("input", "tile")], _transpose_view_rule, traits=LAYOUT,
       reference=lambda x: np.swapaxes(x, -1, -2).copy(), pto="ttrans", pipe=V,
       doc="the tile with its two dims swapped (a layout reinterpretation on the device; a copy here)")

__all__ = ["fillpad_expand_ref", "tri_ref"]
