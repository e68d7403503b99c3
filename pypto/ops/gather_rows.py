"""Row gathers into an on-chip accumulator (pl-head §3.7): `pl.gather_row` (also `pl.tensor.` /
`pl.tile.`). On the device it is one DMA of a GM row window straight into a region of an L1 / UB
buffer; here it is the same data movement spelled with the window ops, so it needs no op of its own:

    pl.gather_row(acc, src, dst_offset, src_offset, shapes, transpose=False, *, valid_shape=None)
      = assemble(acc, window, dst_offset), window = src[src_offset : src_offset + shapes]
        (a view with valid_shape when given: only that many rows / columns move, the rest of acc
        keeps what it held; transpose=True places the [r, c] window as a [c, r] column block)

`acc` is a tensor (from `pl.create_l1` or `pl.full`; the window is a `pl.tensor.slice`) or a tile
(the window is a `pl.load`). `shapes` must be static (the device sizes its DMA descriptor with it);
`valid_shape` may hold runtime scalars. As upstream, valid_shape and transpose do not combine.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.types import TensorType, TileType

from .gather_routes import _is_int, _is_value, _take
from .registry import NAMESPACES, OpError, Router, lookup_dsl


def _pair_of(spelling: str, v: Any, what: str) -> list:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise OpError(f"{spelling}: {what} needs two entries [row, column], got {v!r}")
    return list(v)


def _route_gather_row(args: list, kw: dict, build) -> Any:
    kw = dict(kw)
    if "dst" in kw:  # (pl-head spells the accumulator `dst`, the tensor module `acc`)
        kw["acc"] = kw.pop("dst")
    acc, src, dst_off, src_off, shapes, transpose, valid = _take(
        "pl.gather_row", args, kw, ("acc", "src", "dst_offset", "src_offset", "shapes", "transpose", "valid_shape"))
    if not _is_value(acc) or not isinstance(getattr(src, "type", None), TensorType):
        raise OpError("pl.gather_row: acc must be a tensor or tile and src a GM tensor",
                      hint="pl.gather_row(acc, src, dst_offset, src_offset, shapes)")
    if acc.type.rank != 2 or src.type.rank != 2:
        raise OpError(f"pl.gather_row: acc and src must be 2-D, got ranks {acc.type.rank} and {src.type.rank}")
    dst_off = _pair_of("pl.gather_row", dst_off, "dst_offset")
    src_off = _pair_of("pl.gather_row", src_off, "src_offset")
    shapes = _pair_of("pl.gather_row", shapes, "shapes")
    if not all(_is_int(s) for s in shapes):
        raise OpError(f"pl.gather_row: shapes must be compile-time ints, got {shapes!r}",
                      hint="pass the runtime extent as valid_shape=[rows, cols]")
    if acc.type.dtype is not src.type.dtype:
        raise OpError(f"pl.gather_row: acc holds {acc.type.dtype.name}, src {src.type.dtype.name}")
    transpose = bool(getattr(transpose, "value", transpose))
    if valid is not None:
        valid = _pair_of("pl.gather_row", valid, "valid_shape")
        if transpose:
            raise OpError("pl.gather_row: valid_shape is not supported together with transpose=True")
    if isinstance(acc.type, TileType):
        load_args = [src, src_off, shapes] + ([valid] if valid is not None else [])
        window = build(lookup_dsl("pl.block", "load"), load_args, {})
        ns = "pl.block"
    else:
        window = build(lookup_dsl("pl.tensor", "slice"), [src, shapes, src_off] + ([valid] if valid else []), {})
        ns = "pl.tensor"
    if transpose:
        window = build(lookup_dsl(ns, "transpose"), [window, 0, 1], {})
    return build(lookup_dsl(ns, "assemble"), [acc, window, dst_off], {})


for _ns in ("pl", "pl.tensor", "pl.block"):
    NAMESPACES[_ns]["gather_row"] = Router(
        "gather_row", _route_gather_row,
        doc="copy the GM window src[src_offset : + shapes] (valid_shape of it) into acc at dst_offset")
