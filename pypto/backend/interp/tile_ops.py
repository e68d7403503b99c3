"""Tile instructions on NumPy, driven by the op registry.

Every DPS instruction the code generator emits is `pto.<OpDef.pto>`; its semantics are the
registry's `OpDef.reference`, applied to the *valid regions* of the operands and written, cast, into
the destination's valid region. One generic path covers the elementwise families; a few shapes of
operand slicing (reductions, matmul, transpose, reshape, concat) and a few instructions whose
operands are not the reference's (texpands, tfillpad, textract, tinsert, tmov, tgetval, tsetval)
are special cases. Loads and stores live in kernel.py (they touch DDR views).

Source slicing for elementwise instructions, with (dvr, dvc) the destination's valid extents: a
tile operand reads `[:dvr, :dvc]`, except that a *static* shape of one row (or one column) where the
destination has more broadcasts that axis, NumPy-style (row vectors [R, 1], column vectors [1, C]).
Scalar operands are converted to the compute type of the first tile operand (fp32 for fp16/bf16).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from pypto.ir.enums import CastMode, CmpType, PadValue
from pypto.ops import OpDef, ops_by_pto
from pypto.ops.registry import OpError, block_ops
from pypto.ops.traits import ShapeClass
from pypto.pto.model import EnumAttr, Op

from .batch_ops import HANDLERS as BATCH_HANDLERS
from .batch_ops import batched_trans
from .errors import InterpError
from .fill_ops import HANDLERS as FILL_HANDLERS
from .values import DTYPES, Tile, cast_array, compute_dtype

# instruction -> the registry op whose reference it runs, where `ops_by_pto` picks another op
_REF_OVERRIDE = {"texpands": block_ops.expands}
_OPERAND_KINDS = ("tile", "scalar", "index")
# PTO attribute -> (registry attribute, its enum); values are `#pto<cmp lt>`-style enum attributes
_ATTRS = {"cmpMode": ("cmp_type", CmpType), "rmode": ("mode", CastMode), "pad": ("pad_value", PadValue)}

_BY_PTO: dict[str, OpDef] = {}


def opdef(short: str) -> OpDef | None:
    """The registry op of instruction `short` (`tadd`, `tmatmul.acc`, ...), or None if unknown."""
    if not _BY_PTO:
        _BY_PTO.update(ops_by_pto())
        _BY_PTO.update(_REF_OVERRIDE)
    return _BY_PTO.get(short)


def operand_params(od: OpDef):
    """The registry parameters that become instruction operands (tiles and scalars), in order."""
    return [p for p in od.operands if p.kind in _OPERAND_KINDS]


@functools.cache
def scratch_indices(short: str, n_ins: int) -> frozenset[int]:
    """Positions of `tmp` operands among an instruction's ins (scratch tiles it may overwrite)."""
    od = opdef(short)
    if od is None:
        return frozenset()
    return frozenset(i for i, p in enumerate(operand_params(od)) if p.name == "tmp" and i < n_ins)


def check_operands(short: str, od: OpDef, ins: list) -> list:
    """The ins paired with their parameters; InterpError on a wrong count or kind."""
    params = operand_params(od)
    if short == "tcolexpand" and len(ins) == 1:  # `tcolexpand ins(%row)`: target is the destination
        params = params[1:]
    need = sum(1 for p in params if not p.optional)
    if not need <= len(ins) <= len(params):
        sig = ", ".join(f"{p.name}{'?' if p.optional else ''}: {p.kind}" for p in params)
        raise InterpError(f"pto.{short} takes {need if need == len(params) else f'{need} to {len(params)}'} "
                          f"operand(s) ({sig}), got {len(ins)}")
    for p, v in zip(params, ins):
        if (p.kind == "tile") != isinstance(v, Tile):
            got = "a tile" if isinstance(v, Tile) else type(v).__name__
            raise InterpError(f"pto.{short}: operand '{p.name}' must be a {p.kind}, got {got}")
    return list(zip(params, ins))


def registry_kwargs(op: Op, od: OpDef, dst: Tile) -> dict:
    """The reference's keyword arguments from the instruction's attributes (and the destination)."""
    names = {p.name for p in od.attrs}
    kw: dict = {}
    for key, (name, enum_cls) in _ATTRS.items():
        a = op.attrs.get(key)
        if a is None or name not in names:
            continue
        text = a.value.split()[-1] if isinstance(a, EnumAttr) else str(a)
        try:
            kw[name] = enum_cls(a) if isinstance(a, int) else enum_cls.parse(text)
        except ValueError:
            raise InterpError(f"{op.name}: unknown {key} value {text!r}") from None
    if "target_type" in names:
        kw["target_type"] = DTYPES[dst.buf.dtype]
    if "output_dtype" in names:  # (gather_mask's bitcast: the destination's dtype)
        kw["output_dtype"] = DTYPES[dst.buf.dtype]
    if "axis1" in names:
        kw.update(axis1=0, axis2=1)
    for name in od.extra.get("pto_attrs", ()):  # integer attributes (gather_mask's pattern, scatter's reduce)
        if name in op.attrs:
            kw[name] = int(op.attrs[name])
    try:
        return od.normalize_kwargs(kw)
    except OpError as e:
        raise InterpError(f"{op.name}: {e}") from None


# ---------------------------------------------------------------------------------------------
# operand slicing


def _need(t: Tile, rows: int, cols: int, what: str) -> np.ndarray:
    if rows > t.rows or cols > t.cols:
        raise InterpError(f"{what} reads [{rows}, {cols}] of tile %{t.value.name}, which is only "
                          f"[{t.rows}, {t.cols}]")
    return t.arr[:rows, :cols]


def _scalar(v, ct: np.dtype):
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(ct)[()]


def shape_class(short: str) -> ShapeClass | None:
    od = opdef(short)
    return od.shape_class if od is not None else None


def _elementwise(short: str, args: list, dst: Tile) -> tuple[list, tuple[int, int]]:
    dvr, dvc = dst.vr, dst.vc
    shape = shape_class(short)
    first = next((v for _, v in args if isinstance(v, Tile)), dst)
    ct = compute_dtype(first.arr.dtype)
    out = []
    for k, (p, v) in enumerate(args):
        if not isinstance(v, Tile):
            out.append(v if p.name == "select_mode" else _scalar(v, ct))
            continue
        r = 1 if v.rows == 1 and dst.rows != 1 else dvr
        c = 1 if v.cols == 1 and dst.cols != 1 else dvc
        if k == 1 and shape is ShapeClass.ROW_EXPAND:
            c = v.cols  # [R, 1], or the packed 32-byte carrier (its lanes repeat; see trowexpandadd)
        if k == 1 and shape is ShapeClass.COL_EXPAND:
            r = 1
        out.append(_need(v, r, c, f"pto.{short}"))
    if short == "tcolexpand" and len(out) == 1:
        out.insert(0, dst.valid())
    return out, (dvr, dvc)


def _row_reduce(short: str, args: list, dst: Tile):
    src = args[0][1]
    return [_need(src, dst.vr, src.vc, f"pto.{short}")], (dst.vr, dst.vc)


def _col_reduce(short: str, args: list, dst: Tile):
    src = args[0][1]
    # a scratch tile selects the hardware's tree order for tcolsum (see block.col_sum's reference)
    tmp = [v.arr for _, v in args[1:2] if isinstance(v, Tile)]
    return [_need(src, src.vr, dst.vc, f"pto.{short}"), *tmp], (dst.vr, dst.vc)


def _row_wise(short: str, args: list, dst: Tile):
    """Each result row from the same row of the source: its valid region, scalars as they are."""
    ops = [_need(v, dst.vr, v.vc, f"pto.{short}") if isinstance(v, Tile) else v for _, v in args]
    return ops, (dst.vr, dst.vc)


def _matmul(short: str, args: list, dst: Tile):
    tiles = [v for _, v in args]
    acc = tiles.pop(0) if short.endswith(".acc") else None
    left, right = tiles[0], tiles[1]
    bias = tiles[2] if short.endswith(".bias") else None
    m, n, k = dst.vr, dst.vc, left.vc
    what = f"pto.{short}"
    ops = [_need(left, m, k, what), _need(right, k, n, what)]
    if acc is not None:
        ops.insert(0, _need(acc, m, n, what))
    if bias is not None:
        ops.append(_need(bias, 1 if bias.rows == 1 else m, n, what))
    return ops, (m, n)


def _transpose(short: str, args: list, dst: Tile):
    return [_need(args[0][1], dst.vc, dst.vr, f"pto.{short}")], (dst.vr, dst.vc)


def _reshape(short: str, args: list, dst: Tile):
    src = args[0][1]
    if src.arr.size != dst.arr.size:
        raise InterpError(f"pto.treshape: %{src.value.name} has {src.arr.size} elements, the destination "
                          f"{dst.arr.size}")
    return [src.arr, (dst.rows, dst.cols)], (dst.rows, dst.cols)


def _concat(short: str, args: list, dst: Tile):
    a, b = args[0][1], args[1][1]
    if a.vc + b.vc > dst.cols:
        raise InterpError(f"pto.tconcat: {a.vc} + {b.vc} columns do not fit a destination of {dst.cols}")
    return [_need(a, dst.vr, a.vc, "pto.tconcat"), _need(b, dst.vr, b.vc, "pto.tconcat")], (dst.vr, a.vc + b.vc)


def _gather(short: str, args: list, dst: Tile):
    src, idx = args[0][1], args[1][1]
    return [_need(src, dst.vr, src.vc, "pto.tgather"), _need(idx, min(idx.vr, dst.vr), dst.vc, "pto.tgather")], \
        (dst.vr, dst.vc)


def _scatter(short: str, args: list, dst: Tile):
    x, idx, src = (v for _, v in args)
    return [_need(x, dst.vr, dst.vc, "pto.tscatter"), _need(idx, min(idx.vr, dst.vr), idx.vc, "pto.tscatter"),
            _need(src, min(src.vr, dst.vr), idx.vc, "pto.tscatter")], (dst.vr, dst.vc)


def _reinterpret(short: str, args: list, dst: Tile):
    src = args[0][1]
    return [_need(src, dst.vr, src.vc, "pto.treinterpret")], (dst.vr, dst.vc)


def _gather_mask(short: str, args: list, dst: Tile):
    src = args[0][1]
    return [_need(src, dst.vr, src.vc, "pto.tgathermask")], (dst.vr, dst.vc)


# how the reference's operands are cut from the tiles: by shape class, or by instruction for the layout ops
_BY_SHAPE: dict[ShapeClass, Callable] = {ShapeClass.ROW_REDUCE: _row_reduce, ShapeClass.COL_REDUCE: _col_reduce,
                                         ShapeClass.MATMUL: _matmul, ShapeClass.ROW_WISE: _row_wise}
_BY_INSTRUCTION: dict[str, Callable] = {"ttrans": _transpose, "treshape": _reshape, "tconcat": _concat,
                                        "tgather": _gather, "tscatter": _scatter, "tgathermask": _gather_mask,
                                        "treinterpret": _reinterpret}


def _whole(short: str, args: list, dst: Tile):
    """Each tile's valid region as it is (ops whose operands do not line up with the result)."""
    return [v.arr[:v.vr, :v.vc] if isinstance(v, Tile) else v for _, v in args], (dst.vr, dst.vc)


def _prep(short: str) -> Callable:
    od = opdef(short)
    if od is not None and od.extra.get("whole_operands"):
        return _whole
    return _BY_INSTRUCTION.get(short) or _BY_SHAPE.get(shape_class(short), _elementwise)


def _write(dst: Tile, res, shape: tuple[int, int], short: str) -> None:
    res = np.asarray(res)
    try:
        res = np.broadcast_to(res, shape)
    except ValueError:
        raise InterpError(f"pto.{short}: the result has shape {list(res.shape)}, the destination's valid "
                          f"region is {list(shape)}") from None
    dst.arr[: shape[0], : shape[1]] = cast_array(res, dst.arr.dtype)


def generic(op: Op, short: str, ins: list, dst: Tile) -> None:
    """dst[valid] = reference(sources[valid], ...) for any registry instruction."""
    od = opdef(short)
    if od is None or od.reference is None:
        raise InterpError(f"unknown instruction {op.name}")
    keep_tmp = od.extra.get("reference_takes_tmp", False)  # (the scratch tile selects an order)
    args = [(p, v) for p, v in check_operands(short, od, ins) if p.name != "tmp" or keep_tmp]
    kw = registry_kwargs(op, od, dst)
    operands, shape = _prep(short)(short, args, dst)
    with np.errstate(all="ignore"):
        res = od.reference(*operands, **kw)
    _write(dst, res, shape, short)


# ---------------------------------------------------------------------------------------------
# instructions whose operands are not the reference's


def texpands(op: Op, ins: list, dst: Tile) -> None:
    # `ins(%s)` per docs/pto_format.md; the code generator also passes block.expands' shape-giving target
    # first (`ins(%target, %s)`), which only the destination's shape matters for
    if len(ins) == 2 and isinstance(ins[0], Tile):
        ins = ins[1:]
    if len(ins) != 1 or isinstance(ins[0], Tile):
        raise InterpError("pto.texpands takes one scalar operand")
    s = _scalar(ins[0], compute_dtype(dst.arr.dtype))
    _write(dst, block_ops.expands.reference(dst.valid(), s), (dst.vr, dst.vc), "texpands")


def tfillpad(op: Op, ins: list, dst: Tile) -> None:
    od = opdef("tfillpad")
    (_, src), = check_operands("tfillpad", od, ins)
    kw = registry_kwargs(op, od, dst)
    if src.vr > dst.rows or src.vc > dst.cols:
        raise InterpError(f"pto.tfillpad: the valid region [{src.vr}, {src.vc}] of %{src.value.name} does not "
                          f"fit the destination [{dst.rows}, {dst.cols}]")
    x = np.zeros((dst.rows, dst.cols), dtype=src.arr.dtype)
    x[: src.vr, : src.vc] = src.valid()
    res = od.reference(x, valid=(src.vr, src.vc), **kw)
    dst.arr[:, :] = cast_array(res, dst.arr.dtype)


def _index(v, what: str) -> int:
    if isinstance(v, Tile) or not np.issubdtype(np.asarray(v).dtype, np.integer):
        raise InterpError(f"{what} must be an integer scalar, got {type(v).__name__}")
    return int(v)


def textract(op: Op, ins: list, dst: Tile) -> None:
    if len(ins) != 3 or not isinstance(ins[0], Tile):
        raise InterpError("pto.textract takes a tile, a row and a column")
    src, r, c = ins[0], _index(ins[1], "row"), _index(ins[2], "column")
    if r < 0 or c < 0 or r + dst.vr > src.rows or c + dst.vc > src.cols:
        raise InterpError(f"pto.textract: window [{r}:{r + dst.vr}, {c}:{c + dst.vc}] is out of range for "
                          f"tile %{src.value.name} [{src.rows}, {src.cols}]")
    res = block_ops.view.reference(src.arr, (dst.vr, dst.vc), (r, c))
    _write(dst, res, (dst.vr, dst.vc), "textract")


def tinsert(op: Op, ins: list, dst: Tile) -> None:
    if len(ins) != 3 or not isinstance(ins[0], Tile):
        raise InterpError("pto.tinsert takes a source tile, a row and a column")
    src, r, c = ins[0], _index(ins[1], "row"), _index(ins[2], "column")
    if r < 0 or c < 0 or r + src.vr > dst.rows or c + src.vc > dst.cols:
        raise InterpError(f"pto.tinsert: window [{r}:{r + src.vr}, {c}:{c + src.vc}] is out of range for "
                          f"tile %{dst.value.name} [{dst.rows}, {dst.cols}]")
    dst.arr[r:r + src.vr, c:c + src.vc] = cast_array(src.valid(), dst.arr.dtype)


def tmov(op: Op, ins: list, dst: Tile) -> None:
    if len(ins) != 1 or not isinstance(ins[0], Tile):
        raise InterpError("pto.tmov takes one tile")
    src = ins[0]
    tr = bool(op.attrs.get("transpose", False))
    view = _need(src, dst.vc, dst.vr, "pto.tmov") if tr else _need(src, dst.vr, dst.vc, "pto.tmov")
    res = block_ops.move.reference(view, target_memory=None, transpose=tr)
    _write(dst, res, (dst.vr, dst.vc), "tmov")


def tile_index(t: Tile, r, c, what: str) -> tuple[int, int]:
    r, c = _index(r, f"{what} row"), _index(c, f"{what} column")
    if not (0 <= r < t.rows and 0 <= c < t.cols):
        raise InterpError(f"{what}: element [{r}, {c}] is out of range for tile %{t.value.name} "
                          f"[{t.rows}, {t.cols}]")
    return r, c


def tsetval(op: Op, ins: list, dst: Tile) -> None:
    if len(ins) != 3 or isinstance(ins[0], Tile):
        raise InterpError("pto.tsetval takes a value, a row and a column")
    r, c = tile_index(dst, ins[1], ins[2], "pto.tsetval")
    dst.arr[r, c] = cast_array(np.asarray(ins[0]), dst.arr.dtype)


def tci(op: Op, ins: list, dst: Tile) -> None:
    """`ins(%start, %step) {descending}`: the row start + j * step over the valid region."""
    if len(ins) != 2 or any(isinstance(v, Tile) for v in ins):
        raise InterpError("pto.tci takes two scalar operands (start, step)")
    od = opdef("tci")
    res = od.reference(ins[0], (dst.vr, dst.vc), ins[1], dtype=DTYPES[dst.buf.dtype],
                       descending=bool(op.attrs.get("descending", 0)))
    _write(dst, res, (dst.vr, dst.vc), "tci")


def ttrans(op: Op, ins: list, dst: Tile) -> None:
    if not batched_trans(ins, dst):  # (a 3-D tile's batches: batch_ops.py)
        generic(op, "ttrans", ins, dst)


HANDLERS: dict[str, Callable[[Op, list, Tile], None]] = {
    "texpands": texpands, "tci": tci, "tfillpad": tfillpad, "textract": textract, "tinsert": tinsert, "tmov": tmov,
    "tsetval": tsetval, "ttrans": ttrans, "textract.tile": textract,
}
HANDLERS.update(FILL_HANDLERS)  # ttri (fill_ops.py)
HANDLERS.update(BATCH_HANDLERS)  # tbatchmatmul (batch_ops.py)


# instructions the kernel executor runs itself (interp/kernel.py: DDR windows, flags, element reads)
KERNEL_LEVEL = frozenset({"tload", "tstore", "tgetval", "set_flag", "wait_flag", "pipe_barrier", "get_block_idx",
                          "get_block_num", "syncall"})
_SLICED_LIKE_ELEMENTWISE = frozenset({ShapeClass.ELEMENTWISE, ShapeClass.ROW_EXPAND, ShapeClass.COL_EXPAND})


def rule_of(short: str) -> str | None:
    """How the interpreter runs instruction `short` (None: it cannot): the kernel executor, a
    special handler, or the registry reference with operands cut by the op's shape class."""
    if short in KERNEL_LEVEL:
        return "kernel"
    if short in HANDLERS:
        return "handler"
    od = opdef(short)
    if od is None or od.reference is None:
        return None
    if short in _BY_INSTRUCTION or od.shape_class in _BY_SHAPE or od.shape_class in _SLICED_LIKE_ELEMENTWISE \
            or od.extra.get("whole_operands"):
        return "reference"
    return None


def execute(op: Op, short: str, ins: list, dst: Tile) -> None:
    handler = HANDLERS.get(short)
    if handler is not None:
        handler(op, ins, dst)
    else:
        generic(op, short, ins, dst)


__all__ = ["KERNEL_LEVEL", "execute", "opdef", "rule_of", "scratch_indices", "shape_class", "tile_index"]
