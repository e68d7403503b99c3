"""Shape operators: reshape and transpose (views and windows live in memory.py)."""

from __future__ import annotations

import numpy as np

from pypto.ir.enums import PipeType
from pypto.ir.types import TileType

from .registry import arg, attr, define, unified
from .traits import LAYOUT, ShapeClass, Traits
from .typing import (
    OpError,
    dims,
    expect_tensor,
    expect_tile,
    result_like,
    static_dim,
    static_dims,
    tile_result,
)


def _reshape_rule(name: str, level: str):
    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        shape = static_dims(name, args[1], "shape") if level == "block" else dims(name, args[1], "shape")
        n_in = t.num_elements()
        sv = [d if isinstance(d, int) else static_dim(d) for d in shape]  # (block shapes are ints already)
        if n_in is not None and all(v is not None for v in sv):
            n_out = 1
            for v in sv:
                n_out *= v
            if n_out != n_in:
                raise OpError(f"{name}: cannot reshape {n_in} elements into {sv} ({n_out} elements)")
        if isinstance(t, TileType):
            if t.tile_view is not None and t.tile_view.valid_shape is not None and t.valid_shape != t.shape:
                raise OpError(f"{name}: cannot reshape a tile with a partial valid region",
                              hint="fill the padding with pl.fillpad(...) first")
            return tile_result(shape, t.dtype, memory_space=t.space)
        return result_like(t, shape)
    return infer


def _transpose_rule(name: str, level: str):
    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        a1, a2 = kw["axis1"], kw["axis2"]
        r = t.rank
        for a in (a1, a2):
            if not -r <= a < r:
                raise OpError(f"{name}: axis {a} out of range for rank {r}")
        a1, a2 = a1 % r, a2 % r
        if isinstance(t, TileType) and a1 != a2:
            lead = [static_dim(d) for d in t.shape[:-2]]
            # (leading dims of a static shape: a batched pto.ttrans, each batch's matrix transposed)
            if {a1, a2} != {r - 2, r - 1} or (t.static_shape() is None and any(d != 1 for d in lead)):
                raise OpError(f"{name}: a tile transposes its last two axes (of a static shape when it has "
                              f"leading dims); got axes {kw['axis1']}, "
                              f"{kw['axis2']} of a rank-{r} tile",
                              hint="reshape to 2-D first, or transpose in the orchestration by viewing the data")
        shape = list(t.shape)
        shape[a1], shape[a2] = shape[a2], shape[a1]
        if isinstance(t, TileType):
            valid = list(t.valid_shape)
            valid[a1], valid[a2] = valid[a2], valid[a1]
            return tile_result(shape, t.dtype, memory_space=t.space, valid_shape=valid)
        return result_like(t, shape)
    return infer


def _reshape_ref(x, shape):
    return np.reshape(x, tuple(shape)).copy()


def _transpose_ref(x, *, axis1, axis2):
    return np.swapaxes(x, axis1, axis2).copy()


_block_reshape = define("block.reshape", [arg("input", "tile"), arg("shape", "shape")],
                        _reshape_rule("block.reshape", "block"), traits=Traits(ShapeClass.LAYOUT, alias=True),
                        reference=_reshape_ref, pto="treshape", pipe=PipeType.V,
                        doc="same elements, new shape (shares the buffer)")
_tensor_reshape = define("tensor.reshape", [arg("input", "tensor"), arg("shape", "shape")],
                         _reshape_rule("tensor.reshape", "tensor"),
                         traits=Traits(ShapeClass.LAYOUT, alias=True, task_level=True), reference=_reshape_ref,
                         tile_form=_block_reshape, doc="same elements, new shape")
unified("reshape", tensor=_tensor_reshape, tile=_block_reshape)

_T_ATTRS = [attr("axis1", "int"), attr("axis2", "int")]
_block_transpose = define("block.transpose", [arg("input", "tile"), *_T_ATTRS],
                          _transpose_rule("block.transpose", "block"), traits=LAYOUT, reference=_transpose_ref,
                          pto="ttrans", pipe=PipeType.V, doc="swap two axes")
_tensor_transpose = define("tensor.transpose", [arg("input", "tensor"), *_T_ATTRS],
                           _transpose_rule("tensor.transpose", "tensor"), traits=LAYOUT, reference=_transpose_ref,
                           tile_form=_block_transpose, doc="swap two axes")
unified("transpose", tensor=_tensor_transpose, tile=_block_transpose)
