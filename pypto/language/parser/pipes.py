"""`pl.tpush_to_aic/aiv(tile, *, split, id=None)` and `pl.tpop_from_aic/aiv(*, shape, dtype, split=0, id=None)`
in the parser: the pipe ops of pypto/ops/cross_core.py.

A pop's tile type is the annotation of the assignment it feeds (`t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat,
pl.TileView(valid_shape=[r, c])] = pl.tpop_from_aiv(split=0)`), or `shape=` / `dtype=` (Vec unless the
annotation names a space). `lane_stride=` (a device rebalancing of ragged lanes) is refused.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.types import TileType
from pypto.ops.cross_core import POPS, PUSHES, TPOP_FROM_AIC, TPOP_FROM_AIV, TPUSH_TO_AIC, TPUSH_TO_AIV

from ..errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError

OPS = {"tpush_to_aiv": TPUSH_TO_AIV, "tpush_to_aic": TPUSH_TO_AIC, "tpop_from_aic": TPOP_FROM_AIC,
       "tpop_from_aiv": TPOP_FROM_AIV}
_KEYS = {"tpush_to_aiv": {"split", "id", "lane_stride"}, "tpush_to_aic": {"split", "id"},
         "tpop_from_aic": {"shape", "dtype", "split", "id", "lane_stride"},
         "tpop_from_aiv": {"shape", "dtype", "split", "id"}}


def _int(p, name: str, key: str, v: Any, sp) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise ParserTypeError(f"pl.{name}: {key}= must be a constant int, got {p.describe(v)}", sp)
    return int(v)


def pipe_call(p, name: str, node: ast.Call) -> Any:
    """`p` is the function parser (CrossCoreParser mixin)."""
    sp = p.span(node)
    args, kwargs, _ = p.call_args(node)
    extra = sorted(set(kwargs) - _KEYS[name])
    if extra:
        raise ParserSyntaxError(f"pl.{name} got unexpected keyword(s) {', '.join(extra)}", sp,
                                hint=f"accepted: {', '.join(sorted(_KEYS[name]))}")
    if kwargs.get("lane_stride") is not None:
        raise UnsupportedFeatureError(f"pl.{name}: lane_stride= (cutting two vector lanes at a rebalanced row) is "
                                      "not supported; the lanes are cut at the tile's half", sp)
    op = OPS[name]
    attrs = {"split": _int(p, name, "split", kwargs.get("split"), sp), "id": _int(p, name, "id", kwargs.get("id"), sp)}
    if op in PUSHES:
        if len(args) != 1:
            raise ParserSyntaxError(f"pl.{name} takes one tile: pl.{name}(tile, split=0)", sp)
        return p.call_entry(f"pl.{name}", op, [args[0]], attrs, sp, None)
    assert op in POPS
    if args:
        raise ParserSyntaxError(f"pl.{name} takes keywords only (shape=, dtype=, split=, id=)", sp)
    ann = getattr(p, "annotated_type", None)
    ann = ann if isinstance(ann, TileType) else None
    shape = kwargs.get("shape")
    dtype = kwargs.get("dtype")
    if shape is None and ann is None:
        raise ParserTypeError(f"pl.{name}: the popped tile's shape is unknown: annotate the target "
                              f"(t: pl.Tile[[16, 16], pl.FP32] = pl.{name}(...)) or pass shape= and dtype=", sp)
    shape = list(shape) if shape is not None else list(ann.shape)
    dtype = dtype if dtype is not None else ann.dtype if ann is not None else None
    if not isinstance(dtype, DataType):
        raise ParserTypeError(f"pl.{name}: dtype= must be a pl data type, got {dtype!r}", sp)
    call_args: list[Any] = [shape]
    if ann is not None and ann.tile_view is not None and ann.tile_view.valid_shape is not None \
            and [getattr(d, "value", d) for d in ann.shape] == [getattr(d, "value", d) for d in shape]:
        call_args.append(list(ann.valid_shape))
    if ann is not None and ann.memory_space is not None:
        attrs["target_memory"] = ann.memory_space
    return p.call_entry(f"pl.{name}", op, call_args, {"dtype": dtype, **attrs}, sp, None)


__all__ = ["OPS", "pipe_call"]
