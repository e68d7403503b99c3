"""The compare form of today's gather (pl-head §3.7): `pl.gather(x, kvalue=k, cmp_mode=m, out_cols=n)`
and `pl.tile.gather_compare(src, kvalue, tmp, cmp_mode=, offset=, out_cols=)` return a pair
`(dst, cdst)` (`tmp` is the device's scratch, unused here). The pair is two ops here (the registry's ops have one result each); the router in
gather_routes.py binds both and hands the parser a Python tuple, which `a, b = ...` unpacks.

    gather_compare(src, kvalue)   dst[r, :] = the column indices j (+ offset) where cmp(src[r, j],
                                  kvalue) holds, in ascending order, the first out_cols of them;
                                  slots past a row's matches are 0
    gather_count(src, kvalue)     cdst[0, r] = how many columns of row r match (all of them, not
                                  capped at out_cols)

Comparison modes: eq ne lt le gt ge = 0..5 (as pl.cmp). The device leaves the slots past a row's
matches unspecified; the CPU writes 0 there, so results are deterministic.
"""

from __future__ import annotations

import enum

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType

from .registry import arg, attr, define
from .traits import LAYOUT
from .typing import OpError, expect_scalar, expect_tensor, expect_tile, result_like, static_dim, tile_result

CMP_MODES = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}
_CMP = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
_SRC_DTYPES = (DataType.FP16, DataType.FP32, DataType.INT16, DataType.INT32)
_WHOLE = {"whole_operands": True}


def cmp_mode_of(spelling: str, mode) -> int:
    """The integer mode of a `cmp_mode=` value ("eq" ... "ge", 0..5 or a pl.CmpType)."""
    if isinstance(mode, enum.Enum):
        mode = mode.value
    if isinstance(mode, str) and mode.lower() in CMP_MODES:
        return CMP_MODES[mode.lower()]
    if isinstance(mode, int) and not isinstance(mode, bool) and 0 <= mode <= 5:
        return mode
    raise OpError(f"{spelling}: cmp_mode must be one of {', '.join(CMP_MODES)} or 0..5, got {mode!r}")


def _src(name: str, level: str, args):
    src = (expect_tile if level == "block" else expect_tensor)(name, args[0], "src")
    if src.rank != 2:
        raise OpError(f"{name}: src must be 2-D, got rank {src.rank}", hint="reshape to [rows, columns] first")
    if src.dtype not in _SRC_DTYPES:
        raise OpError(f"{name}: src must be FP16, FP32, INT16 or INT32, got {src.dtype.name}")
    expect_scalar(name, args[1], "kvalue")
    if static_dim(src.shape[0]) is None:
        raise OpError(f"{name}: src needs a static row count")
    return src


def _result(level: str, like, shape, dtype: DataType):
    return tile_result(shape, dtype) if level == "block" else result_like(like, shape, dtype)


def _compare_rule(name: str, level: str):
    def infer(args, kw):
        src = _src(name, level, args)
        if not 0 <= kw["cmp_mode"] <= 5:
            raise OpError(f"{name}: cmp_mode must be 0..5, got {kw['cmp_mode']}")
        n = kw["out_cols"]
        if n <= 0:
            raise OpError(f"{name}: out_cols must be a positive int, got {n}")
        return _result(level, src, (static_dim(src.shape[0]), n), DataType.INT32)
    return infer


def _count_rule(name: str, level: str):
    def infer(args, kw):
        src = _src(name, level, args)
        if kw["count_dtype"] not in (DataType.INT32, DataType.UINT32):
            raise OpError(f"{name}: count_dtype must be INT32 or UINT32, got {kw['count_dtype'].name}")
        return _result(level, src, (1, static_dim(src.shape[0])), kw["count_dtype"])
    return infer


def _matches(src, kvalue, cmp_mode):
    src = np.asarray(src)
    return _CMP[cmp_mode](src, np.asarray(kvalue).astype(src.dtype))


def gather_compare_ref(src, kvalue, *, cmp_mode=0, offset=0, out_cols=1):
    hit = _matches(src, kvalue, cmp_mode)
    out = np.zeros((hit.shape[0], out_cols), np.int32)
    for r in range(hit.shape[0]):
        cols = np.flatnonzero(hit[r])[:out_cols]
        out[r, : cols.size] = cols + offset
    return out


def gather_count_ref(src, kvalue, *, cmp_mode=0, count_dtype=DataType.INT32):
    return _matches(src, kvalue, cmp_mode).sum(axis=1).reshape(1, -1).astype(count_dtype.to_numpy())


def _pair(short, params, rule, ref, pto, pto_attrs, doc):
    tile = define(f"block.{short}", params("tile"), rule(f"block.{short}", "block"), traits=LAYOUT, reference=ref,
                  pto=pto, pipe=PipeType.V, doc=doc, dsl=(), pto_attrs=pto_attrs, **_WHOLE)
    ten = define(f"tensor.{short}", params("tensor"), rule(f"tensor.{short}", "tensor"), traits=LAYOUT,
                 reference=ref, tile_form=tile, doc=doc, dsl=())
    return tile, ten


GATHER_COMPARE, T_GATHER_COMPARE = _pair(
    "gather_compare",
    lambda k: [arg("src", k), arg("kvalue", "scalar"), attr("cmp_mode", "int", 0),
               attr("offset", "int", 0), attr("out_cols", "int")],
    _compare_rule, gather_compare_ref, "tgathercmp", ("cmp_mode", "offset", "out_cols"),
    "per row, the first out_cols column indices (+ offset) where cmp(src, kvalue) holds; 0 past the matches")
GATHER_COUNT, T_GATHER_COUNT = _pair(
    "gather_count",
    lambda k: [arg("src", k), arg("kvalue", "scalar"), attr("cmp_mode", "int", 0),
               attr("count_dtype", "dtype", DataType.INT32)],
    _count_rule, gather_count_ref, "tgathercnt", ("cmp_mode",),
    "[1, rows]: how many columns of each row satisfy cmp(src, kvalue)")
