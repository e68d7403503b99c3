"""Block-level op calls -> PTO instructions (one function per special case, a generic DPS rule for
the rest, driven by the registry's `OpDef.pto`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType, PadValue, PipeType
from pypto.ir.types import ScalarType, TensorType, TileType, TileView
from pypto.ops.registry import Level, OpDef, block_ops, system_ops, tensor_ops
from pypto.ops.traits import ShapeClass
from pypto.pto.model import EnumAttr, Op, PartitionViewT, ScalarT, Value

from .cross_core_ops import HANDLERS as CROSS_CORE
from .scalars import PTO_DTYPE, pto_scalar

if TYPE_CHECKING:
    from .kernel import KernelCodegen

_CMP = {CmpType.EQ: "eq", CmpType.NE: "ne", CmpType.LT: "lt", CmpType.LE: "le", CmpType.GT: "gt",
        CmpType.GE: "ge"}
_ROUND = {CastMode.none: "NONE", CastMode.rint: "RINT", CastMode.round: "ROUND", CastMode.floor: "FLOOR",
          CastMode.ceil: "CEIL", CastMode.trunc: "TRUNC", CastMode.odd: "ODD"}
_PAD = {PadValue.null: "zero", PadValue.zero: "zero", PadValue.max: "max", PadValue.min: "min"}


def _pipe(p: PipeType) -> EnumAttr:
    return EnumAttr("pto", f"pipe PIPE_{p.name}")


def emit_op(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    op = c.op
    name = op.name
    handler = _SPECIAL.get(op)
    if handler is not None:
        handler(cg, c, result)
        return
    if isinstance(op, OpDef) and op.shape_class is ShapeClass.SYNC:
        _sync_op(cg, c)
        return
    if isinstance(op, OpDef) and op.level is Level.TENSOR:
        raise CompileError(f"kernel {cg.fn.name}: tensor op {name} inside a kernel was not converted to tile ops",
                           c.span, hint="ConvertTensorToBlockOps handles this; is the pipeline complete?")
    if not isinstance(op, OpDef) or not op.pto:
        raise CompileError(f"kernel {cg.fn.name}: {name} has no PTO instruction", c.span)
    generic(cg, c, result, f"pto.{op.pto}")


def _dst(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> Value:
    if result is None or not isinstance(result.type, TileType):
        raise CompileError(f"{c.op.name} must be assigned to a tile variable", c.span)
    return cg.tile(result, True)


def _operand(cg: KernelCodegen, e: E.Expr) -> Value | None:
    t = e.type
    if isinstance(t, TileType):
        assert isinstance(e, E.Var)
        return cg.tile(e)
    if isinstance(t, ScalarType):
        return cg.sc.expr(e)
    return None  # shapes / offsets are not instruction operands


def generic(cg: KernelCodegen, c: E.Call, result: E.Var | None, pto_name: str) -> None:
    ins = [v for v in (_operand(cg, a) for a in c.args) if v is not None]
    attrs = {}
    for k, v in c.kwargs:
        if k == "cmp_type":
            attrs["cmpMode"] = EnumAttr("pto", f"cmp {_CMP[v]}")
        elif k == "mode":
            attrs["rmode"] = EnumAttr("pto", f"round_mode {_ROUND[v]}")
        elif k == "pad_value":
            attrs["pad"] = EnumAttr("pto", f"pad {_PAD[v]}")
        elif k == "transpose" and v:
            attrs["transpose"] = True
        elif k in c.op.extra.get("pto_attrs", ()):  # integer attributes the instruction takes (gather_mask's pattern)
            attrs[k] = int(v)
    cg.emit(Op(pto_name, ins=ins, outs=[_dst(cg, c, result)], attrs=attrs))


# ---- memory --------------------------------------------------------------------------------


def _partition(cg: KernelCodegen, tensor: E.Expr, offsets: E.Expr, sizes: list[E.Expr], span) -> Value:
    if not isinstance(tensor, E.Var) or tensor not in cg.views:
        raise CompileError(f"kernel {cg.fn.name}: the tensor of a load/store must be a parameter", span)
    tv = cg.views[tensor]
    assert isinstance(offsets, E.MakeTuple)
    offs = [cg.sc.expr(o, DataType.INDEX) for o in offsets.elements]
    szs = [cg.sc.expr(s, DataType.INDEX) for s in sizes]
    shape = tuple(s.value if isinstance(s, E.ConstInt) else None for s in sizes)
    t = tensor.type
    assert isinstance(t, TensorType)
    pv = Value(cg.names.fresh("pv"), PartitionViewT(shape, PTO_DTYPE[t.dtype]))
    cg.emit(Op("pto.partition_view", [pv], [tv, *offs, *szs]))
    return pv


def _load(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    tensor, offsets, shapes = c.args[0], c.args[1], c.args[2]
    valid = c.args[3] if len(c.args) > 3 else shapes
    assert isinstance(valid, E.MakeTuple)
    pv = _partition(cg, tensor, offsets, list(valid.elements), c.span)
    dst = _dst(cg, c, result)
    attrs = {"transpose": True} if c.kwarg("transpose") else {}
    cg.emit(Op("pto.tload", ins=[pv], outs=[dst], attrs=attrs))


def _store(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    tile, offsets, out = c.args[0], c.args[1], c.args[2]
    tt = tile.type
    assert isinstance(tt, TileType) and isinstance(tile, E.Var)
    ot = out.type
    assert isinstance(ot, TensorType)
    if len(c.args) > 3:  # store a tile into a tensor of another rank: the window is `shapes`
        if tt.valid_shape != tt.shape:
            raise CompileError("storing a partially valid tile with shapes=[...] is not supported", c.span)
        shapes = c.args[3]
        assert isinstance(shapes, E.MakeTuple)
        sizes = list(shapes.elements)
    elif tt.rank == ot.rank:
        sizes = list(tt.valid_shape)
    else:
        raise CompileError("store needs shapes=[...] when the tile and tensor ranks differ", c.span)
    pv = _partition(cg, out, offsets, sizes, c.span)
    cg.emit(Op("pto.tstore", ins=[cg.tile(tile)], outs=[pv]))
    if result is not None:
        cg.alias_tensor(result, out)


def _whole(cg: KernelCodegen, tensor: E.Expr, span) -> Value:
    """A window over the whole tensor: data-dependent access (mgather / mscatter) may touch any of it."""
    t = tensor.type
    assert isinstance(t, TensorType)
    zeros = E.MakeTuple(tuple(E.ConstInt(0, DataType.INDEX) for _ in t.shape))
    return _partition(cg, tensor, zeros, list(t.shape), span)


def _mgather(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    from pypto.ops.gather_memory import COALESCE, OOB_MODES

    pv = _whole(cg, c.args[0], c.span)
    idx = c.args[1]
    assert isinstance(idx, E.Var)
    dst = _dst(cg, c, result)
    attrs = {"coalesce": COALESCE.index(c.kwarg("coalesce", "row")), "oob": OOB_MODES.index(c.kwarg("gather_oob", "undefined"))}
    cg.emit(Op("pto.tmgather", ins=[pv, cg.tile(idx)], outs=[dst], attrs=attrs))


def _paged_gather(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    """The pool and the block table as whole windows, the index as a tile (pypto/ops/gather_paged.py)."""
    pool, table = _whole(cg, c.args[0], c.span), _whole(cg, c.args[2], c.span)
    idx = c.args[1]
    assert isinstance(idx, E.Var)
    attrs = {"block_size": c.kwarg("block_size"), "col_off": c.kwarg("col_off", 0),
             "trans": int(bool(c.kwarg("is_trans", False)))}
    cg.emit(Op("pto.tpagedgather", ins=[pool, cg.tile(idx), table], outs=[_dst(cg, c, result)], attrs=attrs))


def _mscatter(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    src, idx, out = c.args
    assert isinstance(src, E.Var) and isinstance(idx, E.Var)
    pv = _whole(cg, out, c.span)
    cg.emit(Op("pto.tmscatter", ins=[cg.tile(src), cg.tile(idx)], outs=[pv]))
    if result is not None:
        cg.alias_tensor(result, out)


def _create(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    _dst(cg, c, result)  # an uninitialised buffer: only the allocation


def _full(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    dst = _dst(cg, c, result)
    dt = result.type.dtype  # type: ignore[union-attr]
    value = c.kwarg("value")
    s = cg.sc.const(float(value) if dt.is_float else int(value), dt)
    cg.emit(Op("pto.texpands", ins=[s], outs=[dst]))


def _expands(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    """expands(target, s): the target only gives the shape; the instruction takes the scalar."""
    cg.emit(Op("pto.texpands", ins=[cg.sc.expr(c.args[1])], outs=[_dst(cg, c, result)]))


def _col_expand(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    """col_expand(target, row): the target only gives the shape; the instruction takes the row."""
    cg.emit(Op("pto.tcolexpand", ins=[_operand(cg, c.args[1])], outs=[_dst(cg, c, result)]))


def _row_expand(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    """row_expand(src) broadcasts src's column 0; row_expand(target, row_vec) (today's form) broadcasts
    row_vec, the target giving only the shape."""
    if len(c.args) == 1:
        generic(cg, c, result, "pto.trowexpand")
        return
    cg.emit(Op("pto.trowexpand", ins=[_operand(cg, c.args[1])], outs=[_dst(cg, c, result)]))


def _reshape(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    src = c.args[0]
    assert isinstance(src, E.Var)
    if result is not None and isinstance(result.type, TileType) and result.type.memref is src.type.memref:
        cg.tile(result, True)  # same bytes, another shape: an alias at the same address
        return
    generic(cg, c, result, "pto.treshape")


def _two_d_offsets(cg: KernelCodegen, offsets: E.Expr, span) -> tuple[Value, Value]:
    assert isinstance(offsets, E.MakeTuple)
    el = offsets.elements
    if len(el) == 1:
        return cg.sc.index(0), cg.sc.expr(el[0], DataType.INDEX)
    for o in el[:-2]:
        if not (isinstance(o, E.ConstInt) and o.value == 0):
            raise CompileError("tile windows of rank > 2 need zero offsets in the leading dimensions", span)
    return cg.sc.expr(el[-2], DataType.INDEX), cg.sc.expr(el[-1], DataType.INDEX)


def _view(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    src = c.args[0]
    r, col = _two_d_offsets(cg, c.args[2], c.span)
    cg.emit(Op("pto.textract", ins=[_operand(cg, src), r, col], outs=[_dst(cg, c, result)]))


def _assemble(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    target, source = c.args[0], c.args[1]
    dst = _dst(cg, c, result)
    assert isinstance(target, E.Var) and result is not None
    if target.type.memref is not result.type.memref:  # type: ignore[union-attr]
        cg.emit(Op("pto.tmov", ins=[cg.tile(target)], outs=[dst]))
    r, col = _two_d_offsets(cg, c.args[2], c.span)
    cg.emit(Op("pto.tinsert", ins=[_operand(cg, source), r, col], outs=[dst]))


def _index_pair(cg: KernelCodegen, idx: E.Expr, t: TileType, span) -> tuple[Value, Value]:
    assert isinstance(idx, E.MakeTuple)
    el = [cg.sc.expr(i, DataType.INDEX) for i in idx.elements]
    shape = t.static_shape() or ()
    if len(el) == 1:
        return cg.sc.index(0), el[0]
    row = el[0]
    for k in range(1, len(el) - 1):  # flatten leading indices into the 2-D row
        m = cg.sc.new(DataType.INDEX, "r")
        cg.emit(Op("arith.muli", [m], [row, cg.sc.index(shape[k])]))
        a = cg.sc.new(DataType.INDEX, "r")
        cg.emit(Op("arith.addi", [a], [m, el[k]]))
        row = a
    return row, el[-1]


def _read(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    tile = c.args[0]
    assert isinstance(tile, E.Var) and isinstance(tile.type, TileType) and result is not None
    r, col = _index_pair(cg, c.args[1], tile.type, c.span)
    v = Value(cg.names.fresh(result.name), pto_scalar(tile.type.dtype))
    cg.emit(Op("pto.tgetval", [v], [cg.tile(tile), r, col]))
    cg.values[result] = v


def _write(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    tile = c.args[0]
    assert isinstance(tile, E.Var) and isinstance(tile.type, TileType)
    r, col = _index_pair(cg, c.args[1], tile.type, c.span)
    val = cg.sc.expr(c.args[2], tile.type.dtype)
    cg.emit(Op("pto.tsetval", ins=[val, r, col], outs=[cg.tile(tile)]))


def _block_idx(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    assert result is not None
    if c.op is block_ops.get_subblock_idx:  # no pl.split_aiv lanes on the CPU: always lane 0
        cg.values[result] = cg.sc.const(0, DataType.UINT64)
        return
    v = Value(cg.names.fresh(result.name), ScalarT("ui64"))
    cg.emit(Op("pto.get_block_num" if c.op is block_ops.get_block_num else "pto.get_block_idx", [v]))
    cg.values[result] = v


def _syncall(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    cg.emit(Op("pto.syncall", attrs={"mode": c.kwarg("mode", "hard")}))


def _axis_reduce(row: OpDef, col: OpDef):
    """block.sum / max / min: the row reduction (last axis) or column reduction (axis 0 of 2-D)."""
    kind = row.name.split("_")[-1]

    def handler(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
        src = c.args[0]
        st = src.type
        assert isinstance(st, TileType)
        axis = c.kwarg("axis")
        if axis is None:
            raise CompileError(f"block.{kind} over all axes is not supported by tile code", c.span,
                               hint=f"reduce rows then columns: pl.row_{kind}(...) then pl.col_{kind}(...)")
        ax = axis % st.rank
        if ax == st.rank - 1 and not c.kwarg("keepdim") and result is not None:
            # the result drops the reduced axis: a [R] tile is laid out as one row [1, R], but trow*
            # writes a column [R, 1]; both are R contiguous elements, so reduce into a [R, 1] view
            # of the result's buffer
            rt = result.type
            assert isinstance(rt, TileType)
            col_view = TileType((*rt.shape, E.ConstInt(1)), rt.dtype, rt.memory_space, rt.memref,
                                TileView(valid_shape=(*rt.valid_shape, E.ConstInt(1))))
            cg.tile(result, True)
            cg.emit(Op(f"pto.{row.pto}", ins=[cg.tile(src)], outs=[cg.alloc_tile(result, col_view)]))
        elif ax == st.rank - 1:
            generic(cg, c, result, f"pto.{row.pto}")
        elif st.rank == 2 and ax == 0:
            generic(cg, c, result, f"pto.{col.pto}")
        else:
            raise CompileError(f"block.{kind} over axis {axis} of a rank-{st.rank} tile is not supported", c.span)
    return handler


def _sync_op(cg: KernelCodegen, c: E.Call) -> None:
    """A flag (set / wait: the op's instruction with its pipes and event) or a barrier on the op's pipe."""
    op = c.op
    if c.kwarg("event_id") is None:
        cg.emit(Op(f"pto.{op.pto}", attrs={"pipe": _pipe(op.pipe)}))
        return
    attrs = {"set_pipe": _pipe(c.kwarg("set_pipe")), "wait_pipe": _pipe(c.kwarg("wait_pipe")),
             "event_id": int(c.kwarg("event_id"))}
    cg.emit(Op(f"pto.{op.pto}", attrs=attrs))


def _tensor_dim(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    t = c.args[0]
    assert isinstance(t, E.Var) and result is not None
    tt = t.type
    assert isinstance(tt, TensorType)
    ax = c.kwarg("axis") % tt.rank
    d = tt.shape[ax]
    if isinstance(d, E.ConstInt):
        cg.values[result] = cg.sc.index(d.value)
        return
    p = cg.param_of.get(t)
    if p is None or (p, "dim", ax) not in cg.runtime:
        raise CompileError("tensor.dim of a tensor that is not a parameter", c.span)
    cg.values[result] = cg.runtime[(p, "dim", ax)]


# ops whose PTO is not one DPS instruction of their operands (the rest: `generic`, by `OpDef.pto`)
_SPECIAL = {
    block_ops.alloc: lambda cg, c, r: None,
    block_ops.load: _load,
    block_ops.store: _store,
    block_ops.mgather: _mgather,
    block_ops.mscatter: _mscatter,
    block_ops.paged_gather: _paged_gather,
    block_ops.create_tile: _create,
    block_ops.full: _full,
    block_ops.reshape: _reshape,
    block_ops.expands: _expands,
    block_ops.col_expand: _col_expand,
    block_ops.row_expand: _row_expand,
    block_ops.view: _view,
    block_ops.assemble: _assemble,
    block_ops.read: _read,
    block_ops.write: _write,
    block_ops.get_block_idx: _block_idx,
    block_ops.get_block_num: _block_idx,
    block_ops.get_subblock_idx: _block_idx,
    system_ops.syncall: _syncall,
    block_ops.sum: _axis_reduce(block_ops.row_sum, block_ops.col_sum),
    block_ops.max: _axis_reduce(block_ops.row_max, block_ops.col_max),
    block_ops.min: _axis_reduce(block_ops.row_min, block_ops.col_min),
    tensor_ops.dim: _tensor_dim,
}

# the ops the code generator lowers by a rule of its own rather than by their PTO instruction
_SPECIAL.update(CROSS_CORE)  # the pipe ops: codegen/cross_core_ops.py
SPECIAL_OPS = frozenset(_SPECIAL)

__all__ = ["SPECIAL_OPS", "emit_op"]
