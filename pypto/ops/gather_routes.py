"""Today's call forms of `pl.gather`, `pl.scatter`, `pl.sort32`, `pl.mrgsort`, `pl.scatter_update`
(pl-head §3.7): one spelling, several forms told apart by their keywords and operand kinds. Each
router binds the op of the form it sees (indexing.py, ordering.py, gather_scatter.py); the forms
the registry had before keep working unchanged.

    pl.gather(x, indices)                              row gather (indexing.py)
    pl.gather(x, dim=-1, index=i) / (x, -1, i)         out[b, k] = x[b, i[b, k]] (torch.gather along
                                                       the last axis; index rows <= x rows; rank > 2
                                                       with matching leading dims; INT16 indices too)
    pl.gather(x, mask_pattern=P[, output_dtype=dt])    gather_mask (output_dtype: same-width bitcast)
    pl.gather(x, kvalue=k, cmp_mode=m, out_cols=n)     (dst, cdst) pair (gather_compare.py); also
                                                       pl.tile.gather_compare(src, k, tmp, ...)
    pl.tile.gather(src, indices, tmp)                  flat gather (gather_flat)
    pl.scatter(x, dim=d, index=i, src=s)               row scatter (indexing.py); another axis as
                                                       the gathers (moved last, static shapes)
    pl.scatter(src, mask_pattern=P, dst=d)             scatter_mask(d, src)
    pl.sort32(src, idx_tile)                           sort32_idx (the scalar-start form stays)
    pl.mrgsort(x, block_len=n)                         mrgsort_runs (format 1)
    pl.mrgsort(a, b[, c[, d]][, tmp][, exhausted])     mrgsort_lists (format 2)
    pl.scatter_update(x, dim, index, src) / (x, index, src, dim=-2)
"""

from __future__ import annotations

import enum
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstInt, Expr
from pypto.ir.types import TensorType, TileType

from . import gather_compare as gc
from . import gather_scatter as gs
from .registry import NAMESPACES, OpError, Router, block_ops, lookup_dsl, tensor_ops


class MaskPattern(enum.IntEnum):
    """`pl.tile.MaskPattern`: the column patterns of gather_mask / scatter_mask."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


def _is_value(v: Any) -> bool:
    return isinstance(v, Expr) and isinstance(v.type, (TensorType, TileType))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) or isinstance(v, ConstInt)


def _int(v: Any) -> int:
    return v.value if isinstance(v, ConstInt) else int(v)


def _take(spelling: str, args: list, kw: dict, names: tuple[str, ...]) -> list:
    """Positional-or-keyword parameters `names` out of (args, kw); OpError on extras."""
    if len(args) > len(names):
        raise OpError(f"{spelling} takes at most {len(names)} positional arguments here, got {len(args)}")
    out = list(args) + [None] * (len(names) - len(args))
    for k, n in enumerate(names):
        if n in kw:
            if k < len(args):
                raise OpError(f"{spelling} got '{n}' twice")
            out[k] = kw.pop(n)
    if kw:
        raise OpError(f"{spelling} got unexpected keyword(s) {', '.join(sorted(kw))}",
                      hint=f"this form takes {', '.join(names)}")
    return out


def _dim(spelling: str, dim: Any, rank: int) -> int:
    if not _is_int(dim):
        raise OpError(f"{spelling}: dim must be an int literal, got {dim!r}")
    d = _int(dim)
    if not -rank <= d < rank:
        raise OpError(f"{spelling}: dim {d} is out of range for rank {rank}")
    return d % rank


def _level_entry(name: str, v: Expr):
    """The tensor or tile op of the row gather / scatter family for operand v."""
    return getattr(tensor_ops if isinstance(v.type, TensorType) else block_ops, name)


def _index32(idx: Expr, build) -> Expr:
    dt = idx.type.dtype
    if dt is DataType.INT32:
        return idx
    if dt in (DataType.INT16, DataType.UINT16, DataType.UINT32, DataType.INT64):
        return build(lookup_dsl("pl", "cast"), [idx, DataType.INT32], {})
    raise OpError(f"gather / scatter: index must be an integer tensor, got {dt.name}")


def _as_2d(v: Expr, build) -> tuple[Expr, tuple]:
    shape = tuple(v.type.shape)
    if len(shape) == 2:
        return v, shape
    lead = 1
    for d in shape[:-1]:
        if not isinstance(d, ConstInt):
            raise OpError("gather / scatter: the leading dims of a rank > 2 operand must be static")
        lead *= d.value
    return build(lookup_dsl("pl.tensor", "reshape"), [v, [lead, shape[-1]]], {}), shape


def _along(spelling: str, x: Expr, dim: Any, idx: Expr) -> int:
    """Check a torch-style (input, dim, index) call; the axis it works along."""
    if not _is_value(x) or not _is_value(idx):
        raise OpError(f"{spelling}: input and index must be tensors or tiles")
    rank = x.type.rank
    if idx.type.rank != rank:
        raise OpError(f"{spelling}: index has rank {idx.type.rank}, the input {rank}")
    if rank < 2:
        raise OpError(f"{spelling}: needs rank >= 2 (reshape a vector to [1, N])")
    d = _dim(spelling, dim, rank)
    others = [k for k in range(rank) if k != d]
    if rank > 2 and any(x.type.shape[k] != idx.type.shape[k] for k in others[:-1]):
        raise OpError(f"{spelling}: a rank-{rank} index needs the input's dims other than dim and the last")
    return d


def _swap(v: Expr, d: int, build) -> Expr:
    """v with axis d and the last axis exchanged (a gather along d is one along the last axis there)."""
    ns = "pl.tensor" if isinstance(v.type, TensorType) else "pl.block"
    return build(lookup_dsl(ns, "transpose"), [v, d, v.type.rank - 1], {})


def _reshape(v: Expr, shape: list, build) -> Expr:
    ns = "pl.tensor" if isinstance(v.type, TensorType) else "pl.block"
    return build(lookup_dsl(ns, "reshape"), [v, shape], {})


def _static(spelling: str, dims) -> list[int]:
    if not all(isinstance(d, ConstInt) for d in dims):
        raise OpError(f"{spelling}: a gather along a non-last axis of a rank > 2 operand needs static dims")
    return [d.value for d in dims]


def _gather_inner(spelling: str, x: Expr, d: int, idx: Expr, build) -> Expr:
    """A rank > 2 gather along a non-last axis d: x viewed as [pre, D, post] (the dims before and
    after d merged), the post axis moved before D (kernels transpose the last two axes), then one
    2-D gather along the last axis of [pre * post, D]; the result goes back the same way."""
    xs, ishape = _static(spelling, x.type.shape), _static(spelling, idx.type.shape)
    if any(xs[k] != ishape[k] for k in range(len(xs)) if k != d):
        raise OpError(f"{spelling}: a rank-{len(xs)} gather along dim {d} needs the index's other dims equal to "
                      f"the input's, got index {ishape} for input {xs}")
    pre, post = 1, 1
    for v in xs[:d]:
        pre *= v
    for v in xs[d + 1:]:
        post *= v
    big, k = xs[d], ishape[d]
    if pre == 1:  # a 2-D gather along dim 0
        out = _gather_index(spelling, _reshape(x, [big, post], build), 0, _reshape(idx, [k, post], build), build)
        return _reshape(out, ishape, build)
    x3 = _swap(_reshape(x, [pre, big, post], build), 1, build)
    i3 = _swap(_reshape(idx, [pre, k, post], build), 1, build)
    out = build(_level_entry("gather", x3), [_reshape(x3, [pre * post, big], build),
                                             _reshape(i3, [pre * post, k], build)], {})
    out = _swap(_reshape(out, [pre, post, k], build), 1, build)
    return _reshape(out, ishape, build)


def _gather_index(spelling: str, x: Expr, dim: Any, idx: Expr, build) -> Expr:
    d = _along(spelling, x, dim, idx)
    idx = _index32(idx, build)
    last = d == x.type.rank - 1
    if not last and x.type.rank > 2:
        return _gather_inner(spelling, x, d, idx, build)
    if not last:
        x, idx = _swap(x, d, build), _swap(idx, d, build)
    rows_x, rows_i = x.type.shape[-2], idx.type.shape[-2]
    if isinstance(rows_x, ConstInt) and isinstance(rows_i, ConstInt) and rows_i.value < rows_x.value:
        # (torch.gather: the result has the index's extent, taken from the input's first rows)
        lead = list(x.type.shape[:-2])
        x = build(lookup_dsl("pl.tensor" if isinstance(x.type, TensorType) else "pl.block", "slice"),
                  [x, [*lead, rows_i.value, x.type.shape[-1]], [0] * x.type.rank], {})
    x2, _ = _as_2d(x, build)
    i2, ishape = _as_2d(idx, build)
    out = build(_level_entry("gather", x2), [x2, i2], {})
    if len(ishape) > 2:
        out = build(lookup_dsl("pl.tensor", "reshape"), [out, list(ishape)], {})
    return out if last else _swap(out, d, build)


def _route_gather(prev):
    def route(args: list, kw: dict, build) -> Any:
        kw = dict(kw)
        if kw.get("mask_pattern") is not None:
            src, pattern, out_dt = _take("pl.gather", args, kw, ("input", "mask_pattern", "output_dtype"))
            if kw:
                raise OpError(f"pl.gather: unexpected keyword(s) {', '.join(kw)}")
            call = {"mask_pattern": int(pattern)}
            if out_dt is not None:
                call["output_dtype"] = out_dt
            return build(_level_entry("gather_mask", src), [src], call)
        if any(k in kw for k in ("kvalue", "cmp_mode", "out_cols")):
            src, kvalue, mode, out_cols, offset, count_dt = _take(
                "pl.gather", args, kw, ("input", "kvalue", "cmp_mode", "out_cols", "offset", "count_dtype"))
            return _compare("pl.gather", src, kvalue, mode, out_cols, offset, count_dt, build)
        if "dim" in kw or "index" in kw or (len(args) == 3 and _is_int(args[1])):
            x, dim, idx = _take("pl.gather", args, kw, ("input", "dim", "index"))
            return _gather_index("pl.gather", x, -1 if dim is None else dim, idx, build)
        if len(args) == 3 and all(_is_value(a) for a in args) and isinstance(args[0].type, TileType):
            return build(gs.GATHER_FLAT, args, kw)  # pl.tile.gather(src, indices, tmp): a flat index
        return build(prev, args, kw)
    return route


def _compare(spelling: str, src, kvalue, mode, out_cols, offset, count_dt, build) -> tuple:
    """The compare form's (dst, cdst) pair: two ops over the same operands (gather_compare.py)."""
    if kvalue is None or mode is None or out_cols is None:
        raise OpError(f"{spelling} compare form needs kvalue=, cmp_mode= and out_cols= together")
    if not _is_value(src):
        raise OpError(f"{spelling}: the compare form's input must be a tensor or tile")
    if not _is_int(out_cols):
        raise OpError(f"{spelling}: out_cols must be an int literal, got {out_cols!r}")
    if offset is not None and not _is_int(offset):
        raise OpError(f"{spelling}: offset must be an int literal, got {offset!r}")
    tensor = isinstance(src.type, TensorType)
    m = gc.cmp_mode_of(spelling, _int(mode) if isinstance(mode, ConstInt) else mode)
    dst = build(gc.T_GATHER_COMPARE if tensor else gc.GATHER_COMPARE, [src, kvalue],
                {"cmp_mode": m, "offset": 0 if offset is None else _int(offset), "out_cols": _int(out_cols)})
    cnt = build(gc.T_GATHER_COUNT if tensor else gc.GATHER_COUNT, [src, kvalue],
                {"cmp_mode": m, "count_dtype": DataType.INT32 if count_dt is None else count_dt})
    return dst, cnt


def _route_gather_compare(args: list, kw: dict, build) -> Any:
    """pl.tile.gather_compare(src, kvalue, tmp, *, cmp_mode="eq", offset=0, out_cols, count_dtype=None)."""
    src, kvalue, _tmp, mode, offset, out_cols, count_dt = _take(
        "pl.tile.gather_compare", args, dict(kw),
        ("src", "kvalue", "tmp", "cmp_mode", "offset", "out_cols", "count_dtype"))
    return _compare("pl.tile.gather_compare", src, kvalue, "eq" if mode is None else mode, out_cols, offset,
                    count_dt, build)


def _scatter_inner(x: Expr, d: int, idx: Expr, src: Expr, build) -> Expr:
    """A scatter along a non-last axis d, the way _gather_inner gathers: x as [pre, D, post] with
    post moved before D, one row scatter over [pre * post, D], and the result moved back."""
    spelling = "pl.scatter"
    xs, ishape = _static(spelling, x.type.shape), _static(spelling, idx.type.shape)
    if not _is_value(src) or _static(spelling, src.type.shape) != ishape:
        raise OpError(f"{spelling}: src must have the index's shape {ishape} for a scatter along dim {d}")
    if any(xs[k] != ishape[k] for k in range(len(xs)) if k != d):
        raise OpError(f"{spelling}: a scatter along dim {d} needs the index's other dims equal to the input's, "
                      f"got index {ishape} for input {xs}")
    pre, post = 1, 1
    for v in xs[:d]:
        pre *= v
    for v in xs[d + 1:]:
        post *= v
    big, k = xs[d], ishape[d]

    def moved(v: Expr, n: int) -> Expr:  # [pre * post, n]: axis d last
        return _reshape(_swap(_reshape(v, [pre, n, post], build), 1, build), [pre * post, n], build)

    out = build(_level_entry("scatter", x), [moved(x, big), moved(idx, k), moved(src, k)], {})
    out = _swap(_reshape(out, [pre, post, big], build), 1, build)
    return _reshape(out, xs, build)


def _route_scatter(prev):
    def route(args: list, kw: dict, build) -> Any:
        kw = dict(kw)
        if kw.get("mask_pattern") is not None:
            src, pattern, dst = _take("pl.scatter", args, kw, ("input", "mask_pattern", "dst"))
            if dst is None:
                raise OpError("pl.scatter mask form needs dst= (the tensor whose masked columns are written)")
            entry = gs.T_SCATTER_MASK if isinstance(dst.type, TensorType) else gs.SCATTER_MASK
            return build(entry, [dst, src], {"mask_pattern": int(pattern)})
        if "dim" in kw or "index" in kw or (len(args) == 4 and _is_int(args[1])):
            x, dim, idx, src = _take("pl.scatter", args, kw, ("input", "dim", "index", "src"))
            d = _along("pl.scatter", x, -1 if dim is None else dim, idx)
            if src is None:
                raise OpError("pl.scatter index form needs src=")
            idx = _index32(idx, build)
            if d != x.type.rank - 1:
                return _scatter_inner(x, d, idx, src, build)
            x2, shape = _as_2d(x, build)
            out = build(_level_entry("scatter", x2), [x2, _as_2d(idx, build)[0], _as_2d(src, build)[0]], {})
            if len(shape) > 2:
                out = build(lookup_dsl("pl.tensor", "reshape"), [out, list(shape)], {})
            return out
        return build(prev, args, kw)
    return route


def _route_sort32(prev):
    def route(args: list, kw: dict, build) -> Any:
        second = args[1] if len(args) > 1 else kw.get("idx")
        if _is_value(second):
            src, idx = _take("pl.sort32", args, dict(kw), ("src", "idx"))
            entry = gs.T_SORT32_IDX if isinstance(src.type, TensorType) else gs.SORT32_IDX
            return build(entry, [src, idx], {})
        return build(prev, args, kw)
    return route


def _route_mrgsort(prev):
    def route(args: list, kw: dict, build) -> Any:
        kw = dict(kw)
        if "block_len" in kw:
            src, block_len = _take("pl.mrgsort", args, kw, ("src0", "block_len"))
            entry = gs.T_MRGSORT_RUNS if isinstance(src.type, TensorType) else gs.MRGSORT_RUNS
            return build(entry, [src, block_len], {})
        second = args[1] if len(args) > 1 else kw.get("src1")
        if _is_value(second):
            s0, s1, s2, s3, _tmp, _exhausted = _take("pl.mrgsort", args, kw,
                                                      ("src0", "src1", "src2", "src3", "tmp", "exhausted"))
            lists = [s for s in (s0, s1, s2, s3) if s is not None]  # (tmp / exhausted: device scratch, early exit)
            entry = gs.T_MRGSORT_LISTS if isinstance(s0.type, TensorType) else gs.MRGSORT_LISTS
            return build(entry, lists, {})
        return build(prev, args, kw)
    return route


def _route_scatter_update(args: list, kw: dict, build) -> Any:
    kw = dict(kw)
    if len(args) >= 2 and _is_int(args[1]) or ("index" in kw and "dim" in kw and len(args) <= 1):
        x, dim, idx, src = _take("pl.scatter_update", args, kw, ("input", "dim", "index", "src"))
    else:
        x, idx, src, dim = _take("pl.scatter_update", args, kw, ("input", "index", "src", "dim"))
    if not _is_value(x):
        raise OpError("pl.scatter_update: input must be a tensor or tile")
    if _dim("pl.scatter_update", -2 if dim is None else dim, max(x.type.rank, 1)) != x.type.rank - 2:
        raise OpError("pl.scatter_update: only dim=-2 (replacing rows) is supported")
    entry = gs.T_SCATTER_UPDATE if isinstance(x.type, TensorType) else gs.SCATTER_UPDATE
    return build(entry, [x, idx, src], {})


def _rebind(name: str, make) -> None:
    """Give `pl.<name>`, `pl.tensor.<name>`, `pl.block.<name>` a router over their current entries."""
    for ns in ("pl", "pl.tensor", "pl.block"):
        prev = NAMESPACES[ns].get(name)
        if prev is not None and not isinstance(prev, Router):
            NAMESPACES[ns][name] = Router(name, make(prev), doc=getattr(prev, "doc", ""))


_rebind("gather", _route_gather)
_rebind("scatter", _route_scatter)
_rebind("sort32", _route_sort32)
_rebind("mrgsort", _route_mrgsort)
for _ns in ("pl", "pl.tensor", "pl.block"):
    NAMESPACES[_ns]["scatter_update"] = Router("scatter_update", _route_scatter_update,
                                               doc="replace rows: input[index[k]] = src[k] (dim -2)")
for _ns in ("pl.tensor", "pl.block"):
    NAMESPACES[_ns]["gather_compare"] = Router("gather_compare", _route_gather_compare,
                                               doc="(dst, cdst): matching column indices per row and their counts")
# scatter_mask is also spelled directly (pl.tile.scatter_mask(dst, src, mask_pattern))
NAMESPACES["pl.block"]["scatter_mask"] = gs.SCATTER_MASK
NAMESPACES["pl.tensor"]["scatter_mask"] = gs.T_SCATTER_MASK

__all__ = ["MaskPattern"]
