"""Calls whose form changed between the generations of the public `pl` language (docs/compat.md).

`adapt` runs before a `pl.*` call is bound to its registry op. Where the call form tells the
generations apart it decides by it (`pl.load`'s 4th positional argument, `valid_shapes=` against
`valid_shape=`, `sel` with or without a scratch tile, ...); where it does not, today's meaning wins
and `pl.compat` selects the older one. It returns the (possibly other) entry and arguments to
bind, or the finished expression when the call becomes several ops.
"""

from __future__ import annotations

from typing import Any

from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, MemorySpace
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ops.masks import mask_width
from pypto.ops.registry import Dispatch, OpDef, block_ops, tensor_ops

from .. import compat
from ..errors import ParserTypeError
from ..hints import AtomicType
from .values import python_value, scalar_binop


class PathKeywordError(ParserTypeError, TypeError):
    """A keyword valid only on the other path (a tensor-only keyword on a tile op): a TypeError, as
    today's API raises it, located at the call."""


class _Adapted(Exception):
    """Carries a finished expression out of a handler (the call became several ops)."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _t(v: Any):
    return getattr(v, "type", None)


def _is_tile(v: Any) -> bool:
    return isinstance(_t(v), TileType)


def _is_tensor(v: Any) -> bool:
    return isinstance(_t(v), TensorType)


def _take(args: list, kwargs: dict, pos: int, name: str, sp: Span, what: str) -> Any:
    """Remove and return the argument at position `pos` or keyword `name` (None if absent)."""
    if len(args) > pos:
        if name in kwargs:
            raise ParserTypeError(f"{what} got '{name}' twice", sp)
        return args.pop(pos)
    return kwargs.pop(name, None)


def _scratch(v: Any, sp: Span, what: str) -> None:
    if v is not None and not _is_tile(v):
        raise ParserTypeError(f"{what}: the scratch operand must be a tile, got {type(v).__name__}", sp)


# ---- load / store / assemble / slice ----------------------------------------------------------


def _load(c, entry, args, kwargs, sp):
    if "valid_shape" in kwargs:  # today's keyword; `valid_shapes=` is the March one
        if "valid_shapes" in kwargs:
            raise ParserTypeError("load: give valid_shape= or valid_shapes=, not both", sp)
        kwargs["valid_shapes"] = kwargs.pop("valid_shape")
    clamp = python_value(kwargs.pop("clamp", False))
    names = ["tensor", "offsets", "shapes"]
    got = dict(zip(names, args))
    got.update({k: v for k, v in kwargs.items() if k in names})
    src, offs, shapes = got.get("tensor"), got.get("offsets"), got.get("shapes")
    positional_valid = len(args) > 3 and isinstance(args[3], (list, tuple))
    if not clamp:
        return entry, args, kwargs
    if not (_is_tensor(src) and isinstance(offs, (list, tuple)) and isinstance(shapes, (list, tuple))) \
            or positional_valid or kwargs.get("valid_shapes") is not None:
        if clamp:
            raise ParserTypeError("load: clamp=True with an explicit valid shape", sp)
        return entry, args, kwargs
    dims = _t(src).shape
    valid, changed = [], False
    for s, o, d in zip(shapes, offs, dims):
        # clamp=True: the window is cut back to the tensor's edge (the rest of the tile is padding)
        if clamp and isinstance(s, int):
            rest = scalar_binop(E.Sub, d, o, sp) if not (isinstance(o, int) and o == 0) else d
            if isinstance(rest, E.ConstInt):
                valid.append(max(0, min(s, rest.value)))
            else:
                valid.append(scalar_binop(E.Min, s, rest, sp))
            changed = changed or not (isinstance(valid[-1], int) and valid[-1] == s)
        else:
            valid.append(s)
    if changed:
        kwargs["valid_shapes"] = valid
    return entry, args, kwargs


def _store(c, entry, args, kwargs, sp):
    if entry is not block_ops.store and not (isinstance(entry, Dispatch) and entry.tile is block_ops.store):
        return entry, args, kwargs
    atomic = python_value(kwargs.pop("atomic", AtomicType.None_))
    if atomic in (None, AtomicType.None_, 0):
        return entry, args, kwargs
    if atomic not in (AtomicType.Add, 1):
        raise ParserTypeError(f"store: atomic= must be pl.AtomicType.None_ or .Add, got {atomic!r}", sp)
    b = block_ops.store.binder(list(args), dict(kwargs))
    tile, offs, out = b.get("tile"), b.get("offsets"), b.get("output_tensor")
    if not (_is_tile(tile) and _is_tensor(out)) or b.get("shapes") is not None:
        raise ParserTypeError("store(atomic=pl.AtomicType.Add) needs a tile of the output's rank", sp)
    # out[window] += tile: read the window, add, write it back (the runtime orders tasks on `out`)
    if _t(tile).space is not MemorySpace.Vec:
        tile = c.build_op(block_ops.move, [tile], {"target_memory": MemorySpace.Vec}, sp)
    tt = _t(tile)
    cur = c.build_op(block_ops.load, [out, offs, list(tt.shape)], {"valid_shapes": list(tt.valid_shape)}, sp)
    total = c.call_op("pl.add", _lookup("pl", "add"), [cur, tile], {}, sp)
    raise _Adapted(c.build_op(block_ops.store, [total, offs, out], {}, sp))


def _assemble(c, entry, args, kwargs, sp):
    atomic = python_value(kwargs.pop("atomic", AtomicType.None_))
    args = _assemble_lead_ones(c, args, sp)
    if atomic in (None, AtomicType.None_, 0):
        return entry, args, kwargs
    if atomic not in (AtomicType.Add, 1) or len(args) != 3:
        raise ParserTypeError("assemble(target, source, offset, atomic=pl.AtomicType.Add) takes three operands", sp)
    target, source, offset = args
    if _is_tensor(target) and (_is_tile(source) or _is_tensor(source)) and _t(source).dtype is not _t(target).dtype:
        # an fp32 accumulator atomically added into a narrower output: the hardware converts each
        # partial to the output's dtype on the way out (fix-pipe), then adds it there
        source = c.call_op("pl.cast", _lookup("pl", "cast"), [source, _t(target).dtype], {"mode": CastMode.rint}, sp)
    if _is_tensor(target) and _is_tile(source):
        src_t = _t(source)
        cur = c.build_op(block_ops.load, [target, offset, list(src_t.shape)], {}, sp)
        total = c.call_op("pl.add", _lookup("pl", "add"), [cur, source], {}, sp)
        raise _Adapted(c.build_op(block_ops.store, [total, offset, target], {}, sp))  # a tile into DDR: a store
    cur = c.call_op("pl.view", _lookup("pl", "view"), [target, list(_t(source).shape), offset], {}, sp)
    total = c.call_op("pl.add", _lookup("pl", "add"), [cur, source], {}, sp)
    return entry, [target, total, offset], kwargs


def _assemble_lead_ones(c, args, sp) -> list:
    """A tensor source of lower rank than its tensor target (a [4, 16] chunk into a [2, 4, 16]
    output at [b, 0, 0]) is the source with leading unit axes, as today's API reads it."""
    args = list(args)
    if len(args) != 3 or not (_is_tensor(args[0]) and _is_tensor(args[1])):
        return args
    target, source, offset = args
    missing = _t(target).rank - _t(source).rank
    if missing > 0 and isinstance(offset, (list, tuple)) and len(offset) == _t(target).rank:
        args[1] = c.call_op("pl.reshape", _lookup("pl", "reshape"), [source, [1] * missing + list(_t(source).shape)],
                            {}, sp)
    return args


def _slice(c, entry, args, kwargs, sp):
    drop = python_value(kwargs.pop("drop_dims", None))
    pad = python_value(kwargs.pop("pad_value", None))
    clamp = python_value(kwargs.pop("clamp", False))
    if clamp:
        x = args[0] if args else kwargs.get("input")
        shape = args[1] if len(args) > 1 else kwargs.get("shape")
        offset = args[2] if len(args) > 2 else kwargs.get("offset")
        if not _is_tensor(x):
            raise ParserTypeError("slice: clamp=True is for tensors only", sp)
        if len(args) > 3 or "valid_shape" in kwargs:
            raise ParserTypeError("slice: clamp=True with an explicit valid_shape", sp)
        valid = [scalar_binop(E.Min, s, scalar_binop(E.Sub, d, o, sp), sp)
                 for s, o, d in zip(shape, offset, _t(x).shape)]
        kwargs["valid_shape"] = valid
    if drop is None and pad is None:
        return entry, args, kwargs
    out = c.call_op("pl.slice", entry, args, kwargs, sp)
    if pad is not None:
        out = c.call_op("pl.fillpad", _lookup("pl", "fillpad"), [out], {"pad_value": _pad_value(pad, sp)}, sp)
    if drop:
        out = _drop_dims(c, out, list(drop), sp)
    raise _Adapted(out)


def _pad_value(v: Any, sp: Span) -> Any:
    import math

    from pypto.ir.enums import PadValue

    if isinstance(v, PadValue) or isinstance(v, str):
        return v
    if v == 0:
        return PadValue.zero
    if v == math.inf:
        return PadValue.max
    if v == -math.inf:
        return PadValue.min
    raise ParserTypeError(f"slice: pad_value must be zero/max/min or 0/math.inf/-math.inf, got {v!r}", sp)


def _drop_dims(c, x: Any, drop: list, sp: Span) -> Any:
    shape = list(_t(x).shape)
    rank = len(shape)
    axes = sorted({(d + rank) if d < 0 else d for d in drop})
    for a in axes:
        if not (0 <= a < rank) or not (isinstance(shape[a], E.ConstInt) and shape[a].value == 1):
            raise ParserTypeError(f"slice: drop_dims={drop}: axis {a} is not a static unit axis of "
                                  f"{[getattr(d, 'value', d) for d in shape]}", sp)
    keep = [d for i, d in enumerate(shape) if i not in axes]
    if _is_tile(x) and len(keep) < 2:  # tiles floor at 2-D
        keep = [E.ConstInt(1, DataType.INDEX)] * (2 - len(keep)) + keep
    return c.call_op("pl.reshape", _lookup("pl", "reshape"), [x, keep], {}, sp)


# ---- compare and select ------------------------------------------------------------------------


def _cmp(c, entry, args, kwargs, sp, spelling: str):
    first = args[0] if args else kwargs.get("lhs")
    if not _is_tile(first) or spelling.startswith("pl.block.") or compat.legacy():
        return entry, args, kwargs  # a 0/1 tile: tensors, the seed spelling, or the older generation
    second = args[1] if len(args) > 1 else kwargs.get("rhs")
    scalar_rhs = not _is_tile(second)
    op = block_ops.cmps_mask if scalar_rhs else block_ops.cmp_mask
    return op, args, kwargs


def is_packed_mask(mask: Any, like: Any) -> bool:
    """Whether `mask` is a packed predicate mask for tiles shaped like `like` (today's cmp result)."""
    m, a = _t(mask), _t(like)
    if not (isinstance(m, TileType) and isinstance(a, TileType)) or m.dtype is not DataType.UINT8 or m.rank != a.rank:
        return False
    n, w = a.shape[-1], m.shape[-1]
    if not (isinstance(n, E.ConstInt) and isinstance(w, E.ConstInt)) or w.value != mask_width(n.value):
        return False
    return w.value != n.value or not compat.legacy()  # [.., 32] UINT8 for 32 columns: today's meaning


def _sel(c, entry, args, kwargs, sp):
    mask = args[0] if args else kwargs.get("mask")
    lhs = args[1] if len(args) > 1 else kwargs.get("lhs")
    if not _is_tile(mask):
        return entry, args, kwargs
    tmp = _take(args, kwargs, 3, "tmp", sp, "sel")
    _scratch(tmp, sp, "sel")
    if is_packed_mask(mask, lhs):
        return block_ops.sel_mask, args, kwargs
    return block_ops.sel if isinstance(entry, Dispatch) else entry, args, kwargs


def _sels(c, entry, args, kwargs, sp):
    if len(args) + len(kwargs) < 4 and "mask" not in kwargs:
        return entry, args, kwargs  # March: sels(lhs, rhs, select_mode)
    # today: sels(mask, src, tmp, scalar) = mask ? src : scalar
    names = ["mask", "src", "tmp", "scalar"]
    got = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in got:
            raise ParserTypeError(f"sels(mask, src, tmp, scalar): unexpected or repeated '{k}'", sp)
        got[k] = v
    mask, src, tmp, scalar = (got.get(n) for n in names)
    if not (_is_tile(mask) and _is_tile(src)) or scalar is None:
        raise ParserTypeError("sels(mask, src, tmp, scalar) needs a mask tile, a source tile and a scalar", sp)
    _scratch(tmp, sp, "sels")
    fill = c.build_op(block_ops.expands, [src, scalar], {}, sp)
    op = block_ops.sel_mask if is_packed_mask(mask, src) else block_ops.sel
    raise _Adapted(c.build_op(op, [mask, src, fill], {}, sp))


def _drop_tmp(position: int):
    def handler(c, entry, args, kwargs, sp):
        first = args[0] if args else None
        if _is_tile(first):
            tmp = _take(args, kwargs, position, "tmp", sp, "rem")
            _scratch(tmp, sp, "rem")
        return entry, args, kwargs
    return handler


# ---- keywords valid on one path only -----------------------------------------------------------

_TENSOR_ONLY_MATMUL = ("a_trans", "b_trans", "c_matrix_nz")


def _matmul(c, entry, args, kwargs, sp):
    if not _is_tile(args[0] if args else kwargs.get("lhs")):
        return entry, args, kwargs
    out_dtype = python_value(kwargs.pop("out_dtype", None))
    extra = [k for k in _TENSOR_ONLY_MATMUL if k in kwargs]
    if extra and not compat.legacy():
        raise PathKeywordError(f"matmul on tiles does not take {', '.join(extra)} (tensor-only keywords)", sp,
                              hint="transpose a tile operand with pl.tile.transpose_view / a transposed load")
    for k in extra:  # March: the tile path ignored them
        kwargs.pop(k)
    _operands_to_mat(c, args, 0, sp)
    if out_dtype is None:
        return entry, args, kwargs
    # out_dtype on tiles names the accumulator's dtype; another dtype is the product, then a cast
    acc = c.build_op(block_ops.matmul, list(args), dict(kwargs), sp)
    if out_dtype is _t(acc).dtype:
        raise _Adapted(acc)
    if not isinstance(out_dtype, DataType):
        raise ParserTypeError(f"matmul: out_dtype must be a dtype such as pl.FP32, got {out_dtype!r}", sp)
    raise _Adapted(c.build_op(block_ops.cast, [acc], {"target_type": out_dtype}, sp))


def _precision(c, entry, args, kwargs, sp, short: str):
    first = args[0] if args else kwargs.get("input", kwargs.get("lhs"))
    if _is_tile(first) and short == "rsqrt":
        if "high_precision" in kwargs:
            raise PathKeywordError("rsqrt on tiles does not take high_precision= (tensor-only); the tile form takes "
                                  "a tmp tile for its precise path", sp)
        tmp = _take(args, kwargs, 1, "tmp", sp, "rsqrt")
        _scratch(tmp, sp, "rsqrt")
    kwargs.pop("high_precision", None)  # the CPU computes the precise result either way
    return entry, args, kwargs


_COMPUTED_SPACES = (MemorySpace.Vec, MemorySpace.Acc)


def _operands_to_mat(c, args: list, first: int, sp: Span) -> None:
    """A matmul operand computed on chip (a Vec tile, or an Acc result) is staged through Mat (L1),
    where the device's FIXPIPE writeback puts a result that feeds the next matmul."""
    for i in range(first, min(first + 2, len(args))):
        t = _t(args[i])
        if isinstance(t, TileType) and t.space in _COMPUTED_SPACES:
            args[i] = c.build_op(block_ops.move, [args[i]], {"target_memory": MemorySpace.Mat}, sp)


def _matmul_bias(c, entry, args, kwargs, sp):
    _operands_to_mat(c, args, 0, sp)
    return entry, args, kwargs


def _window_of(c, v: Any) -> tuple[E.Var, E.Expr] | None:
    """(parent, offset) when tile `v` was last assigned a window of a named Acc tile."""
    if not isinstance(v, E.Var):
        return None
    for block in reversed(c.blocks):
        for st in reversed(block):
            if getattr(st, "var", None) is v:
                val = st.value
                if not (isinstance(val, E.Call) and val.op_name == "block.view"):
                    return None
                parent = val.args[0]
                b = c.scopes.lookup(getattr(parent, "name", ""))
                if (isinstance(parent, E.Var) and _t(parent).space is MemorySpace.Acc and b is not None
                        and b.value is parent):
                    return parent, val.args[2]
                return None
    return None


def _matmul_acc(c, entry, args, kwargs, sp):
    if args and _is_tile(args[0]):
        _operands_to_mat(c, args, 1, sp)
        win = None if getattr(c, "_in_window_acc", False) else _window_of(c, args[0])
        if win is not None:  # the MAD writes a window of its Acc tile in place: write it back
            c._in_window_acc = True  # the init_cond form re-enters for its accumulate branch
            try:
                _, args, kwargs = _matmul_acc_plain(c, entry, args, kwargs, sp)
                value = c.build_op(block_ops.matmul_acc, args, kwargs, sp)
            except _Adapted as done:
                value = done.value
            finally:
                c._in_window_acc = False
            raise _Adapted(_write_back(c, win, value, sp))
    return _matmul_acc_plain(c, entry, args, kwargs, sp)


def _matmul_acc_plain(c, entry, args, kwargs, sp):
    init = kwargs.pop("init_cond", None)
    if init is None:
        return entry, args, kwargs
    init = python_value(init)
    if isinstance(init, E.Expr):
        if not isinstance(init.type, ScalarType):
            raise ParserTypeError("matmul_acc: init_cond must be a boolean scalar", sp)
        # a run-time condition: an if choosing the overwrite or the accumulation
        cond = init if init.type.dtype is DataType.BOOL else scalar_binop(E.Ne, init, 0, sp)
        fresh = _matmul_init(c, args, kwargs, sp)
        acc = c.call_op("pl.matmul_acc", entry, args, kwargs, sp)
        raise _Adapted(_if_value(c, cond, fresh, acc, sp))
    if not init:
        return entry, args, kwargs
    raise _Adapted(_matmul_init(c, args, kwargs, sp))  # acc = lhs @ rhs, overwritten


def _write_back(c, win: tuple, value: E.Expr, sp: Span) -> E.Var:
    """`r = matmul_acc(window, ...)`, then `parent = assemble(parent, r, offset)`: a window of an Acc tile
    is a view on the device (the MAD's destination), a copy here."""
    from pypto.ir.stmt import AssignStmt

    parent, offset = win
    r = E.Var("window_acc", value.type, span=sp)
    c.emit(AssignStmt(r, value, span=sp))
    whole = c.build_op(block_ops.assemble, [parent, r, offset], {}, sp)
    c.emit(AssignStmt(c.bind_var(parent.name, whole.type, sp), whole, span=sp))
    return r


def _matmul_init(c, args: list, kwargs: dict, sp: Span) -> Any:
    acc, rest = args[0], args[1:]
    if _is_tile(acc):
        return c.build_op(block_ops.matmul, rest[:2], {}, sp)
    kw = {k: v for k, v in kwargs.items() if k in ("a_trans", "b_trans")}
    for k, v in zip(("a_trans", "b_trans"), rest[2:]):
        kw[k] = v
    kw["out_dtype"] = _t(acc).dtype
    return c.build_op(tensor_ops.matmul, rest[:2], kw, sp)


def _if_value(c, cond: E.Expr, then_value: E.Expr, else_value: E.Expr, sp: Span) -> E.Var:
    """`r = then_value if cond else else_value`, each computed in its branch."""
    from pypto.ir.stmt import AssignStmt, IfStmt, SeqStmts, YieldStmt

    t = else_value.type
    if then_value.type != t:
        then_value = c.build_op(block_ops.move, [then_value], {"target_memory": t.space}, sp) \
            if isinstance(t, TileType) else then_value
    a, b, r = E.Var("init", t, span=sp), E.Var("acc", t, span=sp), E.Var("acc_or_init", t, span=sp)
    then_body = SeqStmts((AssignStmt(a, then_value, span=sp), YieldStmt((a,), span=sp)), span=sp)
    else_body = SeqStmts((AssignStmt(b, else_value, span=sp), YieldStmt((b,), span=sp)), span=sp)
    c.emit(IfStmt(cond, then_body, else_body, (r,), span=sp))
    return r


def _create_tensor(c, entry, args, kwargs, sp):
    init = python_value(kwargs.get("init_value"))
    if not isinstance(init, E.Expr):
        return entry, args, kwargs  # (a number: tensor.create's own init_value attribute fills it)
    kwargs.pop("init_value")
    if kwargs.get("manual_dep"):
        raise ParserTypeError("create_tensor: init_value= with manual_dep=True is not supported here", sp)
    kwargs.pop("manual_dep", None)
    names = ["shape", "dtype", "layout"]
    got = dict(zip(names, args))
    got.update(kwargs)
    dt = got.get("dtype")
    if init != 0 and dt in (DataType.FP16, DataType.BF16):
        raise ParserTypeError("create_tensor: a nonzero init_value is not supported for FP16 / BF16", sp)
    raise _Adapted(c.build_op(tensor_ops.full, [got.get("shape")], {"dtype": dt, "value": init}, sp))


def _vec_move(c, entry, args, kwargs, sp):
    if len(args) != 1 or kwargs:
        raise ParserTypeError("vec_move(tile) takes one tile", sp)
    return block_ops.move, args, {"target_memory": MemorySpace.Vec}


def func_attr(c, node, sp: Span) -> None:
    """`pl.func_attr({...})`: a dict literal with string keys (a bare name among the values is a
    parameter, evaluated like any operand); device metadata, not used on the CPU."""
    import ast

    from ..errors import ParserSyntaxError
    from ..hints import check_func_attrs

    d = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not isinstance(d, ast.Dict) or any(k is None for k in d.keys):
        raise ParserSyntaxError("pl.func_attr takes one dict literal: pl.func_attr({\"split\": ...})", sp)
    attrs = {c.eval(k): c.eval(v) for k, v in zip(d.keys, d.values)}
    try:
        check_func_attrs(attrs)
    except TypeError as e:
        raise ParserTypeError(f"pl.func_attr: {e}", sp) from None


def _lookup(ns: str, name: str) -> OpDef | Dispatch:
    from pypto.ops.registry import lookup_dsl

    e = lookup_dsl(ns, name)
    assert e is not None, f"{ns}.{name}"
    return e


_HANDLERS = {
    "load": _load, "store": _store, "l0c_store": _store, "assemble": _assemble, "slice": _slice,
    "sel": _sel, "sels": _sels, "rem": _drop_tmp(2), "rems": _drop_tmp(2), "row_expand_add": _drop_tmp(2),
    "matmul": _matmul, "matmul_acc": _matmul_acc, "matmul_bias": _matmul_bias,
    "rsqrt": lambda *a: _precision(*a, "rsqrt"), "log": lambda *a: _precision(*a, "log"),
    "recip": lambda *a: _precision(*a, "recip"), "div": lambda *a: _precision(*a, "div"),
    "create_tensor": _create_tensor, "create": _create_tensor, "vec_move": _vec_move,
}


def adapt(c, spelling: str, entry: OpDef | Dispatch, args: list, kwargs: dict, sp: Span):
    """(entry, args, kwargs) to bind for this call, or _Adapted(expression) raised with the result."""
    short = spelling.rsplit(".", 1)[1]
    if short in ("cmp", "cmps"):
        return _cmp(c, entry, list(args), dict(kwargs), sp, spelling)
    h = _HANDLERS.get(short)
    if h is None:
        return entry, args, kwargs
    if short in ("create", "create_tensor") and entry is not tensor_ops.create \
            and not (isinstance(entry, Dispatch) and entry.tensor is tensor_ops.create):
        return entry, args, kwargs
    return h(c, entry, list(args), dict(kwargs), sp)


__all__ = ["_Adapted", "PathKeywordError", "adapt", "func_attr", "is_packed_mask"]
