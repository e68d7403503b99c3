"""Data movement and creation: load/store/move, tile and tensor creation, views, scalar access,
assemble and concat.

Tile shapes are static; a smaller, possibly dynamic, valid region is carried in the TileView.
Loads read only the valid region (the rest of the tile is padding); stores write only the valid
region and leave the rest of the output untouched.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PadValue, PipeType, TensorLayout
from pypto.ir.expr import MakeTuple, scalar_type
from pypto.ir.types import MemRefType, TensorType, TileType, TupleType

from .registry import arg, attr, define, unified
from .traits import ALLOC, ELEMENT, FILL, LAYOUT, WINDOW, ShapeClass, Traits
from .typing import (
    OpError,
    dim_eq,
    dims,
    expect_scalar,
    expect_shaped,
    expect_tensor,
    expect_tile,
    result_like,
    static_dim,
    static_dims,
    tile_result,
)

UNIT = TupleType(())  # the type of an op that yields nothing


def _is_seq(v) -> bool:
    return isinstance(v, (list, tuple, MakeTuple))


def _is_space(v) -> bool:
    return isinstance(v, MemorySpace)


def _is_tensor_value(v) -> bool:
    return isinstance(getattr(v, "type", None), TensorType)


# ---------------------------------------------------------------------------------------------
# load


def _load_binder(args, kwargs):
    """(tensor, offsets, shapes[, valid_shapes | target_memory], **kw) — both eras' 4th positional."""
    names = ["tensor", "offsets", "shapes"]
    out = dict(zip(names, args[:3]))
    rest = list(args[3:])
    if rest:
        v = rest.pop(0)
        out["target_memory" if _is_space(v) else "valid_shapes"] = v
    if rest:
        v = rest.pop(0)
        out["valid_shapes" if _is_seq(v) and "valid_shapes" not in out else "target_memory"] = v
    if rest:
        raise OpError(f"load takes at most 5 positional arguments, got {len(args)}")
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"load got argument {k!r} twice")
        out[k] = v
    if out.get("valid_shapes") is None and "shapes" in out:
        out["valid_shapes"] = out["shapes"]  # one IR form: the valid region is always spelled out
    return out


def _check_window(op: str, offs, extents, tensor_shape) -> None:
    """A window whose offset, extent and tensor dimension are all compile-time constants must lie
    inside the tensor (the run time checks the rest)."""
    for i, (o, e, d) in enumerate(zip(offs, extents, tensor_shape)):
        ov = static_dim(o) if not isinstance(o, int) else o
        ev = e if isinstance(e, int) else static_dim(e)
        dv = static_dim(d)
        if ov is None or ev is None or dv is None:
            continue
        if ov < 0 or ov + ev > dv:
            raise OpError(f"{op}: the window [{ov}, {ov + ev}) of axis {i} is outside the tensor's extent {dv}",
                          hint="a ragged last block needs a valid shape (valid_shapes=[...]) that fits")


def _load_rule(args, kw):
    t = expect_tensor("block.load", args[0], "source")
    offs = dims("block.load", args[1], "offsets")
    shape = static_dims("block.load", args[2], "shapes")
    valid = dims("block.load", args[3], "valid_shapes") if len(args) > 3 else None
    if len(offs) != t.rank or len(shape) != t.rank:
        raise OpError(f"block.load: offsets and shapes need {t.rank} entries (the tensor's rank), "
                      f"got {len(offs)} and {len(shape)}")
    if valid is not None and len(valid) != len(shape):
        raise OpError(f"block.load: valid_shapes needs {len(shape)} entries, got {len(valid)}")
    for i, (s, d) in enumerate(zip(shape, t.shape)):
        if s <= 0:
            raise OpError(f"block.load: tile dimension {i} must be positive, got {s}")
        dv = static_dim(d)
        vv = static_dim(valid[i]) if valid is not None else s
        # a tile larger than the tensor is fine when the valid region fits (the rest is padding)
        if dv is not None and s > dv and (vv is None or vv > dv):
            raise OpError(f"block.load: tile dimension {i} is {s} but the tensor has only {dv}",
                          hint="give a valid shape that fits the tensor (valid_shape=[...]); the rest is padding")
    _check_window("block.load", offs, valid if valid is not None else shape, t.shape)
    space = kw["target_memory"]
    if space is MemorySpace.DDR:
        raise OpError("block.load: target_memory must be an on-chip space (Vec, Mat, ...), not DDR")
    if kw["transpose"]:
        if len(shape) != 2:
            raise OpError("block.load: transpose=True needs a 2-D tile")
        shape = (shape[1], shape[0])
        if valid is not None:
            valid = (valid[1], valid[0])
    return tile_result(shape, t.dtype, memory_space=space, valid_shape=valid)


def _load_ref(tensor, offsets, shapes, valid_shapes=None, *, target_memory=MemorySpace.Vec, transpose=False):
    """The window [offsets, offsets + valid) of the tensor, zero-padded to `shapes`."""
    valid = tuple(valid_shapes) if valid_shapes is not None else tuple(shapes)
    out = np.zeros(tuple(shapes), dtype=tensor.dtype)
    region = tuple(slice(o, o + v) for o, v in zip(offsets, valid))
    src = tensor[region]
    out[tuple(slice(0, s) for s in src.shape)] = src
    return out.T.copy() if transpose else out


define("block.load", [arg("tensor", "tensor"), arg("offsets", "shape"), arg("shapes", "shape"),
                      arg("valid_shapes", "shape", optional=True),
                      attr("target_memory", "memspace", MemorySpace.Vec), attr("transpose", "bool", False)],
       _load_rule, traits=WINDOW, reference=_load_ref, pto="tload", pipe=PipeType.MTE2, binder=_load_binder,
       dsl=("pl.block.load", "pl.load"), doc="copy a window of a DDR tensor into a tile")


# ---------------------------------------------------------------------------------------------
# store


def _store_binder(args, kwargs):
    """Seed form (tile, offsets, shapes, output_tensor) and later form (tile, offsets, output_tensor)."""
    out: dict = {}
    if len(args) >= 4 and _is_seq(args[2]) and not _is_seq(args[3]):
        out.update(tile=args[0], offsets=args[1], shapes=args[2], output_tensor=args[3])
        rest = args[4:]
    else:
        out.update(zip(["tile", "offsets", "output_tensor", "shapes"], args[:4]))
        rest = args[4:]
    if rest:
        raise OpError(f"store takes at most 4 positional arguments, got {len(args)}")
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"store got argument {k!r} twice")
        out[k] = v
    shapes, tile = out.get("shapes"), out.get("tile")
    dst = getattr(out.get("output_tensor"), "type", None)
    if shapes is None and isinstance(getattr(tile, "type", None), TileType) and isinstance(dst, TensorType) \
            and tile.type.rank < dst.rank and tile.type.static_shape() is not None:
        # a lower-rank tile into a higher-rank tensor: its dims are the trailing ones (leading dims 1)
        shapes = out["shapes"] = [1] * (dst.rank - tile.type.rank) + list(tile.type.static_shape())
    if isinstance(shapes, (list, tuple)) and isinstance(getattr(tile, "type", None), TileType) \
            and tile.type.static_shape() == tuple(shapes):
        del out["shapes"]  # the seed form's shapes repeat the tile's shape: one IR form
    return out


def _store_rule(args, kw):
    tile = expect_tile("block.store", args[0], "tile")
    offs = dims("block.store", args[1], "offsets")
    out = expect_tensor("block.store", args[2], "output_tensor")
    if len(offs) != out.rank:
        raise OpError(f"block.store: offsets need {out.rank} entries (the output's rank), got {len(offs)}")
    if len(args) > 3:
        shp = static_dims("block.store", args[3], "shapes")
        if len(shp) != out.rank:
            raise OpError(f"block.store: shapes need {out.rank} entries, got {len(shp)}")
        n_tile = tile.num_elements()
        n = 1
        for s in shp:
            n *= s
        if n_tile is not None and n != n_tile and len(shp) == tile.rank:
            if any(a != b for a, b in zip(shp, tile.static_shape() or ())):
                raise OpError(f"block.store: shapes {list(shp)} do not match the tile shape "
                              f"{list(tile.static_shape() or ())}")
    elif tile.rank != out.rank:
        raise OpError(f"block.store: a rank-{tile.rank} tile into a rank-{out.rank} tensor needs shapes=[...]")
    else:
        _check_window("block.store", offs, tile.valid_shape, out.shape)
    if tile.dtype is not out.dtype:
        raise OpError(f"block.store: tile dtype {tile.dtype.name} differs from output dtype {out.dtype.name}",
                      hint="cast the tile first with pl.cast(tile, ...)")
    return out


def _store_ref(tile, offsets, output, shapes=None, *, valid=None):
    """The output with the tile's valid region written at offsets (a new array)."""
    res = np.array(output, copy=True)
    t = tile if shapes is None else tile.reshape(tuple(shapes))
    if valid is not None:
        t = t[tuple(slice(0, v) for v in valid)]
    region = tuple(slice(o, o + s) for o, s in zip(offsets, t.shape))
    dst = res[region]
    res[region] = t[tuple(slice(0, s) for s in dst.shape)].astype(res.dtype)
    return res


define("block.store", [arg("tile", "tile"), arg("offsets", "shape"), arg("output_tensor", "tensor"),
                       arg("shapes", "shape", optional=True)],
       _store_rule, traits=WINDOW, reference=_store_ref, pto="tstore", pipe=PipeType.MTE3, binder=_store_binder,
       result_reuses=2, dsl=("pl.block.store", "pl.store", "pl.block.l0c_store", "pl.l0c_store"),
       doc="write the tile's valid region into a DDR tensor at offsets; returns the tensor")


# ---------------------------------------------------------------------------------------------
# move, create, full, fillpad, alloc, block index


def _move_binder(args, kwargs):
    out = dict(zip(["tile", "target_memory", "transpose"], args))
    if len(args) > 3:
        raise OpError(f"move takes at most 3 positional arguments, got {len(args)}")
    for k, v in kwargs.items():
        if k in ("blayout", "slayout"):  # later-era layout hints: the CPU target picks its own layout
            continue
        if k in out:
            raise OpError(f"move got argument {k!r} twice")
        out[k] = v
    return out


def _move_rule(args, kw):
    t = expect_tile("block.move", args[0], "tile")
    shape, valid = t.shape, t.valid_shape
    if kw["transpose"]:
        if t.rank != 2:
            raise OpError("block.move: transpose=True needs a 2-D tile")
        shape, valid = (shape[1], shape[0]), (valid[1], valid[0])
    if kw["target_memory"] is MemorySpace.DDR:
        raise OpError("block.move: target_memory must be on chip; use pl.store to write to DDR")
    return tile_result(shape, t.dtype, memory_space=kw["target_memory"], valid_shape=valid)


define("block.move", [arg("tile", "tile"), attr("target_memory", "memspace"), attr("transpose", "bool", False)],
       _move_rule, traits=LAYOUT, reference=lambda t, *, target_memory, transpose=False: t.T.copy() if transpose else t.copy(),
       pto="tmov", pipe=PipeType.MTE1, binder=_move_binder, dsl=("pl.block.move", "pl.move", "pl.block.vec_move"),
       doc="copy a tile to another on-chip space (Mat -> Left/Right, Acc -> Vec, ...)")


def _create_tile_rule(args, kw):
    shape = static_dims("block.create_tile", args[0], "shape")
    if any(s <= 0 for s in shape):
        raise OpError(f"block.create_tile: shape must be positive, got {list(shape)}")
    return tile_result(shape, kw["dtype"], memory_space=kw["target_memory"])


define("block.create_tile", [arg("shape", "shape"), attr("dtype", "dtype"),
                             attr("target_memory", "memspace", MemorySpace.Vec)],
       _create_tile_rule, traits=ALLOC, reference=lambda shape, *, dtype, target_memory=None: np.zeros(shape, dtype.to_numpy()),
       aliases=("block.create", "tile.create"),
       dsl=("pl.block.create_tile", "pl.block.create", "pl.create_tile"), doc="an uninitialised tile")


def _full_rule(name: str, level: str):
    def infer(args, kw):
        if level == "block":
            shape = static_dims(name, args[0], "shape")
            return tile_result(shape, kw["dtype"])
        return TensorType(dims(name, args[0], "shape"), kw["dtype"])
    return infer


def _full_ref(shape, *, dtype, value):
    return np.full(tuple(shape), value, dtype=dtype.to_numpy())


_block_full = define("block.full", [arg("shape", "shape"), attr("dtype", "dtype"), attr("value", "number")],
                     _full_rule("block.full", "block"), traits=FILL, reference=_full_ref, pto="texpands", pipe=PipeType.V,
       doc="a Vec tile filled with a constant")
# `pl.full(shape, ...)` names tensor.full itself: a unified entry dispatches on its first operand's kind
# (Tensor or Tile), and full's first operand is a shape, so a dispatch entry could never resolve
define("tensor.full", [arg("shape", "shape"), attr("dtype", "dtype"), attr("value", "number")],
       _full_rule("tensor.full", "tensor"), traits=FILL, reference=_full_ref, tile_form=_block_full,
       dsl=("pl.tensor.full", "pl.full"), doc="a tensor filled with a constant")


def _fillpad_rule(name: str):
    def infer(args, kw):
        t = (expect_tile if name.startswith("block.") else expect_tensor)(name, args[0], "input")
        if isinstance(t, TileType):
            return tile_result(t.shape, t.dtype, memory_space=t.space)  # the whole tile becomes valid
        return result_like(t)
    return infer


def pad_scalar(dtype, pad: PadValue):
    """The fill value for `pad` in `dtype`: 0, the dtype's max (+inf for floats) or min (-inf)."""
    dt = np.dtype(dtype)
    if pad in (PadValue.zero, PadValue.null):
        return dt.type(0)
    if dt.kind == "f" or dt.name in ("bfloat16", "float16"):
        return dt.type(np.inf if pad is PadValue.max else -np.inf)
    info = np.iinfo(dt) if dt.kind in "iu" else None
    return dt.type(info.max if pad is PadValue.max else info.min) if info else dt.type(0)


def _fillpad_ref(x, *, pad_value=PadValue.zero, valid=None):
    out = np.array(x, copy=True)
    if valid is None:
        return out
    mask = np.ones(out.shape, dtype=bool)
    mask[tuple(slice(0, v) for v in valid)] = False
    out[mask] = pad_scalar(out.dtype, pad_value)
    return out


_FILLPAD = Traits(ShapeClass.ELEMENTWISE, inplace_safe=True)  # (depends on the valid region: not row-local)
_block_fillpad = define("block.fillpad", [arg("input", "tile"), attr("pad_value", "padvalue", PadValue.zero)],
                        _fillpad_rule("block.fillpad"), traits=_FILLPAD, reference=_fillpad_ref, pto="tfillpad", pipe=PipeType.V,
       dsl=("pl.block.fillpad",),
       doc="fill outside the valid region with zero / the dtype's max / min; the whole tile becomes valid")
_tensor_fillpad = define("tensor.fillpad", [arg("input", "tensor"), attr("pad_value", "padvalue", PadValue.zero)],
                         _fillpad_rule("tensor.fillpad"), traits=_FILLPAD, reference=_fillpad_ref,
                         tile_form=_block_fillpad,
       doc="fill outside the valid region (lowered to block.fillpad inside kernels)")
unified("fillpad", tensor=_tensor_fillpad, tile=_block_fillpad, doc="fill outside the valid region")


def _alloc_rule(args, kw):
    if kw["memory_space"] is MemorySpace.DDR and kw["size"] < 0:
        raise OpError("block.alloc: size must be non-negative")
    return MemRefType()


define("block.alloc", [attr("memory_space", "memspace"), attr("addr", "int", -1), attr("size", "int", 0),
                       attr("id", "int", 0)], _alloc_rule, traits=ALLOC, aliases=("tile.alloc",),
       doc="a buffer in an on-chip space (inserted by InitMemRef; addr set by AllocateMemoryAddr)")


def _block_idx_rule(args, kw):
    return scalar_type(DataType.UINT64)


define("block.get_block_idx", [], _block_idx_rule, traits=ELEMENT, reference=lambda: 0, pipe=PipeType.S,
       dsl=("pl.block.get_block_idx", "pl.get_block_idx"), doc="index of the executing core")
define("block.get_block_num", [], _block_idx_rule, traits=ELEMENT, reference=lambda: 1, pipe=PipeType.S,
       dsl=("pl.block.get_block_num", "pl.get_block_num"), doc="number of blocks of the executing spmd grid")


# ---------------------------------------------------------------------------------------------
# scalar access


def _read_rule(name: str, level: str):
    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "source")
        idx = dims(name, args[1], "indices")
        if len(idx) != t.rank:
            raise OpError(f"{name}: needs {t.rank} indices, got {len(idx)}")
        return scalar_type(t.dtype)
    return infer


def _write_rule(name: str, level: str):
    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "destination")
        idx = dims(name, args[1], "indices")
        if len(idx) != t.rank:
            raise OpError(f"{name}: needs {t.rank} indices, got {len(idx)}")
        expect_scalar(name, args[2], "value")
        return UNIT
    return infer


def _read_ref(x, indices):
    return x[tuple(indices)]


def _write_ref(x, indices, value):
    out = np.array(x, copy=True)
    out[tuple(indices)] = value
    return out


_ORCH_ELEMENT = Traits(ShapeClass.ELEMENT, task_level=True)
_tensor_read = define("tensor.read", [arg("tensor", "tensor"), arg("indices", "shape")],
                      _read_rule("tensor.read", "tensor"), traits=_ORCH_ELEMENT, reference=_read_ref,
                      doc="read one element")
_tensor_write = define("tensor.write", [arg("tensor", "tensor"), arg("indices", "shape"), arg("value", "scalar")],
                       _write_rule("tensor.write", "tensor"), traits=_ORCH_ELEMENT, reference=_write_ref,
                       doc="write one element")
_block_read = define("block.read", [arg("tile", "tile"), arg("indices", "shape")], _read_rule("block.read", "block"),
                     traits=ELEMENT, reference=_read_ref, pto="tgetval", pipe=PipeType.S,
                     doc="read one element of a tile")
_block_write = define("block.write", [arg("tile", "tile"), arg("indices", "shape"), arg("value", "scalar")],
                      _write_rule("block.write", "block"), traits=ELEMENT, reference=_write_ref, pto="tsetval",
                      pipe=PipeType.S, doc="write one element of a tile")
unified("read", tensor=_tensor_read, tile=_block_read)
unified("write", tensor=_tensor_write, tile=_block_write)


# ---------------------------------------------------------------------------------------------
# tensors: create, dim, view


def _create_rule(args, kw):
    shape = dims("tensor.create", args[0], "shape")
    for d in shape:
        v = static_dim(d)
        if v is not None and v <= 0:
            raise OpError(f"tensor.create: shape must be positive, got {v}")
    return TensorType(shape, kw["dtype"], kw["layout"])


define("tensor.create", [arg("shape", "shape"), attr("dtype", "dtype"), attr("layout", "layout", TensorLayout.ND),
                         attr("manual_dep", "bool", False), attr("init_value", "number", None, nullable=True)],
       _create_rule, traits=Traits(ShapeClass.FILL, task_level=True),
       reference=lambda shape, *, dtype, layout=None, manual_dep=False, init_value=None:
       np.full(tuple(shape), init_value or 0, dtype.to_numpy()),
       aliases=("tensor.create_tensor",),
       dsl=("pl.tensor.create", "pl.tensor.create_tensor", "pl.create_tensor"),
       doc="a new tensor (zero-filled on the CPU, or init_value); manual_dep=True: never dependency-tracked")


def _dim_rule(args, kw):
    t = expect_tensor("tensor.dim", args[0], "tensor")
    ax = kw["axis"]
    if not -t.rank <= ax < t.rank:
        raise OpError(f"tensor.dim: axis {ax} out of range for rank {t.rank}")
    return scalar_type(DataType.INDEX)


define("tensor.dim", [arg("tensor", "tensor"), attr("axis", "int")], _dim_rule, traits=_ORCH_ELEMENT,
       reference=lambda t, *, axis: t.shape[axis], dsl=("pl.tensor.dim", "pl.dim"), doc="size of an axis")


def _view_rule(name: str, level: str):
    def infer(args, kw):
        t = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        shape = dims(name, args[1], "shape")
        offs = dims(name, args[2], "offset")
        if len(shape) != t.rank or len(offs) != t.rank:
            raise OpError(f"{name}: shape and offset need {t.rank} entries, got {len(shape)} and {len(offs)}")
        valid = dims(name, args[3], "valid_shape") if len(args) > 3 else None
        for i, (s, d) in enumerate(zip(shape, t.shape)):
            sv, dv = static_dim(s), static_dim(d)
            vv = static_dim(valid[i]) if valid is not None else sv
            # a tensor window larger than the input is a ragged tail when its valid part fits (the rest
            # is padding, as for pl.load); the valid extent is checked against the input below
            if sv is not None and dv is not None and sv > dv and (level == "block" or valid is None
                                                                   or (vv is not None and vv > dv)):
                raise OpError(f"{name}: window dimension {i} is {sv} but the input has only {dv}",
                              hint=None if level == "block" else "give valid_shape=[...] that fits the input")
        if level == "tensor":
            _check_window(name, offs, valid if valid is not None else shape, t.shape)
        if level == "block":
            static_dims(name, args[1], "shape")
            return tile_result(shape, t.dtype, memory_space=t.space, valid_shape=valid)
        return TensorType(shape, t.dtype, t.layout)
    return infer


def _view_ref(x, shape, offset, valid_shape=None):
    return x[tuple(slice(o, o + s) for o, s in zip(offset, shape))].copy()


_VIEW_PARAMS = [arg("shape", "shape"), arg("offset", "shape"), arg("valid_shape", "shape", optional=True)]
_tensor_view = define("tensor.view", [arg("input", "tensor"), *_VIEW_PARAMS], _view_rule("tensor.view", "tensor"),
                      traits=Traits(ShapeClass.WINDOW, task_level=True, alias=True), reference=_view_ref,
                      aliases=("tensor.slice",), dsl=("pl.tensor.view", "pl.tensor.slice"),
                      doc="a window of a tensor (no copy)")
_block_view = define("block.view", [arg("input", "tile"), *_VIEW_PARAMS], _view_rule("block.view", "block"),
                     traits=Traits(ShapeClass.WINDOW, alias=True), reference=_view_ref, pto="textract",
                     pipe=PipeType.V, aliases=("block.slice", "tile.slice"), dsl=("pl.block.view", "pl.block.slice"),
                     doc="a window of a tile")
unified("view", tensor=_tensor_view, tile=_block_view, doc="a window: (input, shape, offset)")
unified("slice", tensor=_tensor_view, tile=_block_view, doc="a window: (input, shape, offset, valid_shape)")


# ---------------------------------------------------------------------------------------------
# assemble, concat


def _assemble_rule(name: str, level: str):
    def infer(args, kw):
        tgt = (expect_tile if level == "block" else expect_tensor)(name, args[0], "target")
        src = (expect_tile if level == "block" else expect_tensor)(name, args[1], "source")
        offs = dims(name, args[2], "offset")
        if src.rank != tgt.rank or len(offs) != tgt.rank:
            raise OpError(f"{name}: target, source and offset must have the same rank")
        if src.dtype is not tgt.dtype:
            raise OpError(f"{name}: source dtype {src.dtype.name} differs from target {tgt.dtype.name}")
        return tgt
    return infer


def _assemble_ref(target, source, offset):
    out = np.array(target, copy=True)
    out[tuple(slice(o, o + s) for o, s in zip(offset, source.shape))] = source
    return out


_tensor_assemble = define("tensor.assemble", [arg("target", "tensor"), arg("source", "tensor"), arg("offset", "shape")],
                          _assemble_rule("tensor.assemble", "tensor"), traits=WINDOW, reference=_assemble_ref,
                          result_reuses=0, doc="write source into target at offset; returns the updated target")
_block_assemble = define("block.assemble", [arg("target", "tile"), arg("source", "tile"), arg("offset", "shape")],
                         _assemble_rule("block.assemble", "block"), traits=WINDOW, reference=_assemble_ref,
                         pto="tinsert", pipe=PipeType.V, result_reuses=0,
                         doc="insert a tile into a larger tile at (row, col)")
unified("assemble", tensor=_tensor_assemble, tile=_block_assemble)


def _concat_rule(name: str):
    def infer(args, kw):
        a = expect_shaped(name, args[0], "src0")
        b = expect_shaped(name, args[1], "src1")
        if type(a) is not type(b) or a.rank != 2 or b.rank != 2:
            raise OpError(f"{name}: needs two 2-D operands of the same kind")
        if a.dtype is not b.dtype or dim_eq(a.shape[0], b.shape[0]) is False:
            raise OpError(f"{name}: operands need the same rows and dtype")
        from pypto.ir.expr import Add

        c0, c1 = static_dim(a.shape[1]), static_dim(b.shape[1])
        cols = c0 + c1 if c0 is not None and c1 is not None else Add(a.shape[1], b.shape[1], DataType.INDEX)
        return result_like(a, (a.shape[0], cols))
    return infer


_block_concat = define("block.concat", [arg("src0", "tile"), arg("src1", "tile")], _concat_rule("block.concat"),
                       traits=LAYOUT, reference=lambda a, b: np.concatenate([a, b], axis=1), pto="tconcat",
                       pipe=PipeType.V, doc="column concat")
_tensor_concat = define("tensor.concat", [arg("src0", "tensor"), arg("src1", "tensor")], _concat_rule("tensor.concat"),
                        traits=LAYOUT, reference=lambda a, b: np.concatenate([a, b], axis=1), tile_form=_block_concat,
                        doc="column concat")
unified("concat", tensor=_tensor_concat, tile=_block_concat)
