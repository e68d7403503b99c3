"""The fourth part of the pl-head §3.1-3.6 catalogue (the batched matmul is in matmul.py):

    expand_clone(src, target)   tensor: a copy of src broadcast to target's shape (numpy broadcasting
                                from the left, size-1 dims repeat); inside a kernel it fills target
    tile.extract(src, r, c, shape, target_memory=)   a copy of a window of a 2-D tile
    set_validshape(x, rows, cols)                    the valid region changed, the data kept

A CPU tile is 2-D (rows = the product of the leading dims), so the tile form `block.expand_clone`
carries the target's dims and a mask of the broadcast dims as attributes (set by the tiling pass,
pypto/passes/tiling_batch.py; pto.texpandclone in pto/memory.hpp, interp/batch_ops.py)."""

from __future__ import annotations

import numpy as np

from pypto.ir.enums import PipeType
from pypto.ir.types import TensorType

from .registry import arg, attr, define, unified
from .traits import ShapeClass, Traits
from .typing import OpError, expect_tensor, expect_tile, static_dim, static_dims, tile_result


def _broadcastable(name: str, src, dst) -> None:
    if len(src) > len(dst) or any(s not in (1, d) for s, d in zip(src[::-1], dst[::-1])):
        raise OpError(f"{name}: {list(src)} does not broadcast to {list(dst)}",
                      hint="each dim of the source must be 1 or the target's (counted from the right)")


def _tensor_rule(args, kw):
    x = expect_tensor("tensor.expand_clone", args[0], "input")
    t = expect_tensor("tensor.expand_clone", args[1], "target")
    xs, ts = x.static_shape(), t.static_shape()
    if xs is None or ts is None:
        raise OpError("tensor.expand_clone: needs static shapes")
    _broadcastable("tensor.expand_clone", [int(d) for d in xs], [int(d) for d in ts])
    return TensorType(t.shape, x.dtype)


def _block_rule(args, kw):
    x = expect_tile("block.expand_clone", args[0], "input")
    shape = static_dims("block.expand_clone", args[1], "shape")
    xs = x.static_shape()
    if xs is None or len(shape) > 4:
        raise OpError("block.expand_clone: needs a static source and a target of rank <= 4")
    _broadcastable("block.expand_clone", [int(d) for d in xs], shape)
    return tile_result(shape, x.dtype, memory_space=x.space)


def _tensor_ref(x, target):
    return np.broadcast_to(x, np.shape(target)).copy()


def _block_ref(x, shape, *, d1=1, d2=1, bmask=0):
    return np.broadcast_to(x, tuple(int(s) for s in shape)).copy()


define("tensor.expand_clone", [arg("input", "tensor"), arg("target", "tensor")], _tensor_rule,
       traits=Traits(ShapeClass.LAYOUT), reference=_tensor_ref, dsl=("pl.tensor.expand_clone", "pl.expand_clone"),
       doc="a copy of input broadcast to target's shape")
define("block.expand_clone", [arg("input", "tile"), arg("shape", "shape"), attr("d1", "int", 1), attr("d2", "int", 1),
                              attr("bmask", "int", 0)],
       _block_rule, traits=Traits(ShapeClass.LAYOUT), reference=_block_ref, pto="texpandclone", pipe=PipeType.V,
       dsl=(), pto_attrs=("d1", "d2", "bmask"),
       doc="tensor.expand_clone's tile form: the target's dims [d0, d1, d2, d3] (d0, d3 from the tile), "
           "bit i of bmask set where dim i is broadcast")


# ---------------------------------------------------------------------------------------------
# pl.tile.extract(src, index_row, index_col, shape, *, target_memory): a sub-tile copy


def _extract_rule(args, kw):
    t = expect_tile("block.extract", args[0], "input")
    if t.rank != 2:
        raise OpError(f"block.extract: needs a 2-D tile, got rank {t.rank}")
    shape = static_dims("block.extract", args[3], "shape")
    if len(shape) != 2:
        raise OpError(f"block.extract: shape needs 2 entries, got {list(shape)}")
    ts = t.static_shape()
    if ts is not None and (shape[0] > int(ts[0]) or shape[1] > int(ts[1])):
        raise OpError(f"block.extract: a {list(shape)} window does not fit the [{ts[0]}, {ts[1]}] tile")
    space = kw.get("target_memory") or t.space
    return tile_result(shape, t.dtype, memory_space=space)


def _extract_ref(x, index_row, index_col, shape, *, target_memory=None):
    r, c = int(index_row), int(index_col)
    return np.asarray(x)[r:r + int(shape[0]), c:c + int(shape[1])].copy()


# (pto.textract.tile: pto.textract with the window's corner as operands; the device instruction moves
# Mat -> Left / Right or Acc -> Mat, the CPU copies between any spaces)
define("block.extract", [arg("input", "tile"), arg("index_row", "index"), arg("index_col", "index"),
                         arg("shape", "shape"), attr("target_memory", "memspace", None)],
       _extract_rule, traits=Traits(ShapeClass.LAYOUT), reference=_extract_ref, pto="textract.tile",
       pipe=PipeType.V, dsl=("pl.block.extract",), doc="a copy of the [rows, cols] window at (index_row, index_col)")


# ---------------------------------------------------------------------------------------------
# pl.set_validshape(x, valid_rows, valid_cols): the valid region changed, the data kept


def _set_valid_rule(level: str):
    name = f"{level}.set_validshape"

    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        if t.rank != 2:
            raise OpError(f"{name}: needs a 2-D {'tile' if level == 'block' else 'tensor'}, got rank {t.rank}")
        for e, d, what in ((args[1], t.shape[0], "valid_rows"), (args[2], t.shape[1], "valid_cols")):
            v, dv = static_dim(e), static_dim(d)
            if v is not None and (v < 0 or (dv is not None and v > dv)):
                raise OpError(f"{name}: {what} {v} is outside [0, {dv}]")
        if level == "tensor":
            return TensorType(t.shape, t.dtype, t.layout)
        return tile_result(t.shape, t.dtype, memory_space=t.space, valid_shape=(args[1], args[2]))
    return infer


def _set_valid_ref(x, valid_rows, valid_cols):
    return np.asarray(x).copy()  # (the data is unchanged; only the valid region moves)


# (the tensor form is a window of the whole tensor with this valid_shape: tiling.py; the tile form
# copies the tile and sets the destination's valid extents, pto.tsetvalid)
_t_setvalid = define("tensor.set_validshape", [arg("input", "tensor"), arg("valid_rows", "index"),
                                               arg("valid_cols", "index")],
                     _set_valid_rule("tensor"), traits=Traits(ShapeClass.WINDOW, alias=True), reference=_set_valid_ref,
                     dsl=("pl.tensor.set_validshape",), doc="the tensor with valid_shape [valid_rows, valid_cols]")
_b_setvalid = define("block.set_validshape", [arg("input", "tile"), arg("valid_rows", "index"),
                                              arg("valid_cols", "index")],
                     _set_valid_rule("block"), traits=Traits(ShapeClass.LAYOUT), reference=_set_valid_ref,
                     pto="tsetvalid", pipe=PipeType.V, dsl=("pl.block.set_validshape",),
                     doc="the tile with valid region [valid_rows, valid_cols] (the data kept)")
unified("set_validshape", tensor=_t_setvalid, tile=_b_setvalid, doc="change the valid-shape metadata")


# ---------------------------------------------------------------------------------------------
# pl.create_l1(shape, dtype, transpose=False): the device's L1 accumulator tensor (for gather_row),
# here a plain zero-filled buffer inside the kernel (tiling.py lowers it like tensor.create)


def _create_l1_rule(args, kw):
    shape = static_dims("tensor.create_l1", args[0], "shape")
    if any(d <= 0 for d in shape):
        raise OpError(f"tensor.create_l1: shape must be positive, got {list(shape)}")
    return TensorType(shape, kw["dtype"])


define("tensor.create_l1", [arg("shape", "shape"), attr("dtype", "dtype"), attr("transpose", "bool", False)],
       _create_l1_rule, traits=Traits(ShapeClass.FILL),
       reference=lambda shape, *, dtype, transpose=False: np.zeros(tuple(shape), dtype.to_numpy()),
       dsl=("pl.tensor.create_l1", "pl.create_l1"),
       doc="an on-chip (L1) tensor inside a kernel; a zero-filled buffer on the CPU (transpose: layout only)")
