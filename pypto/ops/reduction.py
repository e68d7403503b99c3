"""Reductions (row/column/axis) and the broadcasts that undo them (row_expand*, col_expand*, expands)."""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType, promote
from pypto.ir.enums import PipeType
from pypto.ir.expr import ConstInt, scalar_type
from pypto.ir.types import TileType

from . import numeric as nm
from .registry import arg, attr, block_ops, define, unified
from .traits import AXIS_REDUCE, COL_EXPAND, COL_REDUCE, FILL, ROW_EXPAND, ROW_REDUCE, ShapeClass, Traits
from .typing import OpError, dim_eq, expect_scalar, expect_tensor, expect_tile, result_like, tile_result

V = PipeType.V
_ONE = ConstInt(1)


def _row_reduce_rule(name: str, level: str):
    def infer(args, kw):
        a = expect_tile(name, args[0], "input") if level == "block" else expect_tensor(name, args[0], "input")
        if a.rank < 1:
            raise OpError(f"{name}: needs at least a 1-D input")
        if level == "block" and a.rank < 2:
            raise OpError(f"{name}: tile reductions need a 2-D tile, got rank {a.rank}",
                          hint="reshape to [1, N] first")
        if len(args) > 1:
            expect_tile(name, args[1], "tmp")
        shape = (*a.shape[:-1], _ONE)
        if isinstance(a, TileType):
            valid = (*a.valid_shape[:-1], _ONE)
            return tile_result(shape, a.dtype, valid_shape=valid)
        return result_like(a, shape)
    return infer


def _col_reduce_rule(name: str, level: str = "block"):
    def infer(args, kw):
        a = expect_tile(name, args[0], "input") if level == "block" else expect_tensor(name, args[0], "input")
        if a.rank != 2:
            raise OpError(f"{name}: needs a 2-D {'tile' if level == 'block' else 'tensor'}, got rank {a.rank}")
        if isinstance(a, TileType):
            return tile_result((_ONE, a.shape[1]), a.dtype, valid_shape=(_ONE, a.valid_shape[1]))
        return result_like(a, (_ONE, a.shape[1]))
    return infer


def _keep(fn):
    def ref(x, *tmp):
        return fn(nm.up(x), axis=-1, keepdims=True)
    return ref


def _keep_col(fn):
    def ref(x, *tmp):
        return fn(nm.up(x), axis=0, keepdims=True)
    return ref


def row_reduction(name: str, ref, pto: str, doc: str) -> tuple:
    """`block.<name>` ([R, C] tile -> [R, 1], optional scratch tile), `tensor.<name>` and `pl.<name>`."""
    tile = define(f"block.{name}", [arg("input", "tile"), arg("tmp", "tile", optional=True)],
                  _row_reduce_rule(f"block.{name}", "block"), traits=ROW_REDUCE, reference=ref, pto=pto, pipe=V,
                  doc=f"{doc}, keeping the axis as size 1 (tmp: scratch tile)")
    tensor = define(f"tensor.{name}", [arg("input", "tensor")], _row_reduce_rule(f"tensor.{name}", "tensor"),
                    traits=ROW_REDUCE, reference=ref, tile_form=tile, doc=doc)
    unified(name, tensor=tensor, tile=tile, doc=doc)
    return tile, tensor


def col_reduction(name: str, ref, pto: str, doc: str, dsl: tuple[str, ...] | None = None, tensor: bool = False):
    """`block.<name>` ([R, C] tile -> [1, C], optional scratch tile) and `pl.<name>`; with `tensor`,
    also `tensor.<name>` (its tile form the block op; `pl.tensor.<name>`)."""
    if dsl is None:  # with a tensor form, `pl.<name>` dispatches on the operand (tensor or tile)
        dsl = (f"pl.block.{name}",) if tensor else (f"pl.block.{name}", f"pl.{name}")
    tile = define(f"block.{name}", [arg("input", "tile"), arg("tmp", "tile", optional=True)],
                  _col_reduce_rule(f"block.{name}"), traits=COL_REDUCE, reference=ref, pto=pto, pipe=V,
                  dsl=dsl, doc=doc)
    if tensor:
        tensor_op = define(f"tensor.{name}", [arg("input", "tensor")], _col_reduce_rule(f"tensor.{name}", "tensor"),
                           traits=COL_REDUCE, reference=ref, tile_form=tile, doc=doc)
        unified(name, tensor=tensor_op, tile=tile, doc=doc)
    return tile


for _name, _fn, _pto in (("row_sum", np.sum, "trowsum"), ("row_max", np.max, "trowmax"),
                         ("row_min", np.min, "trowmin")):
    row_reduction(_name, _keep(_fn), _pto, f"{_name.split('_')[1]} over the last axis")

row_reduction("row_absmax", _keep(lambda x, axis, keepdims: np.max(np.abs(x), axis=axis, keepdims=keepdims)),
              "trowabsmax", "max of |x| over the last axis")

row_reduction("row_prod", _keep(np.prod), "trowprod", "product over the last axis")

def col_sum_ref(x, *tmp):
    """The hardware's column sum (pl-head §3.4): a float column accumulates in its own dtype (fp16 /
    bf16 rounded after each add), row after row, or with a scratch tile `tmp` as a binary tree
    (rows 2i + 2i+1 pairwise, an odd last row added into row 0, level by level). Integers: a plain sum."""
    x = np.asarray(x)
    wide = nm.up(x)
    if wide.dtype.kind != "f":
        return np.sum(x, axis=0, keepdims=True)
    dt = x.dtype
    keep = (lambda v: v.astype(dt).astype(np.float32)) if wide is not x else (lambda v: v)
    rows = list(wide)
    if not rows:
        return np.zeros((1, x.shape[1]), wide.dtype)
    if tmp:
        while len(rows) > 1:
            cnt, half = len(rows), len(rows) // 2
            nxt = [keep(rows[2 * i] + rows[2 * i + 1]) for i in range(half)]
            if cnt % 2:
                nxt[0] = keep(nxt[0] + rows[cnt - 1])
            rows = nxt
        return rows[0][None, :]
    acc = rows[0]
    for r in rows[1:]:
        acc = keep(acc + r)
    return acc[None, :]


for _name, _fn, _pto in (("col_sum", np.sum, "tcolsum"), ("col_max", np.max, "tcolmax"),
                         ("col_min", np.min, "tcolmin"), ("col_prod", np.prod, "tcolprod")):
    col_reduction(_name, col_sum_ref if _name == "col_sum" else _keep_col(_fn), _pto,
                  f"{_name.split('_')[1]} over axis 0 of a 2-D tile", tensor=True)
block_ops.col_sum.extra["reference_takes_tmp"] = True  # with a scratch tile: the tree order (col_sum_ref)


# sum / max / min over one axis (or all); max/min of two scalars is a scalar expression (parser)
def _axis_rule(name: str):
    def infer(args, kw):
        a = expect_tile(name, args[0], "input")
        axis = kw["axis"]
        keep = kw["keepdim"]
        if axis is None:
            if keep:
                return result_like(a, (_ONE,) * a.rank)
            return scalar_type(a.dtype)
        ax = axis + a.rank if axis < 0 else axis
        if not 0 <= ax < a.rank:
            raise OpError(f"{name}: axis {axis} out of range for rank {a.rank}")
        shape = list(a.shape)
        if keep:
            shape[ax] = _ONE
        else:
            del shape[ax]
        if not shape:
            return scalar_type(a.dtype)
        valid = list(a.valid_shape)
        if keep:
            valid[ax] = _ONE
        else:
            del valid[ax]
        return tile_result(shape, a.dtype, valid_shape=valid)
    return infer


def _axis_ref(fn):
    def ref(x, *, axis=None, keepdim=False):
        return fn(nm.up(x), axis=axis, keepdims=keepdim)
    return ref


_AXIS = [attr("axis", "int", None), attr("keepdim", "bool", False)]
_AXIS0 = [attr("axis", "int", 0, nullable=True), attr("keepdim", "bool", False)]  # max / min: reference §1.3 default axis 0
def _sum_ref(x, *, axis=None, keepdim=False):
    """block.sum: over axis 0 of a 2-D tile it is the column sum (pto.tcolsum: its order and precision)."""
    x = np.asarray(x)
    if axis is not None and x.ndim == 2 and axis % 2 == 0:
        r = col_sum_ref(x)
        return r if keepdim else r[0]
    return np.sum(nm.up(x), axis=axis, keepdims=keepdim)


define("block.sum", [arg("input", "tile"), *_AXIS], _axis_rule("block.sum"), traits=AXIS_REDUCE,
       reference=_sum_ref, pipe=V, dsl=("pl.block.sum", "pl.sum"),
       doc="sum over an axis (all axes when axis is None)")
_max = define("block.max", [arg("input", "tile"), *_AXIS0], _axis_rule("block.max"), traits=AXIS_REDUCE,
              reference=_axis_ref(np.max), pipe=V, dsl=("pl.block.max",), doc="max over an axis")
_min = define("block.min", [arg("input", "tile"), *_AXIS0], _axis_rule("block.min"), traits=AXIS_REDUCE,
              reference=_axis_ref(np.min), pipe=V, dsl=("pl.block.min",), doc="min over an axis")
unified("max", tile=_max, scalar="scalar.max", doc="tile max over an axis, or max of two scalars")
unified("min", tile=_min, scalar="scalar.min", doc="tile min over an axis, or min of two scalars")


# ---------------------------------------------------------------------------------------------
# broadcasts


def _row_expand_rule(name: str, level: str):
    def infer(args, kw):
        a = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        if a.rank < 2:
            raise OpError(f"{name}: needs a 2-D operand")
        if len(args) == 1:  # row_expand(src): broadcast column 0 across each row
            return result_like(a)
        v = (expect_tile if level == "block" else expect_tensor)(name, args[1], "row vector")
        if name == "block.row_expand_add" and _packed_carrier(v):
            if v.rank != a.rank or dim_eq(v.shape[-2], a.shape[-2]) is False:
                from .typing import _fmt

                raise OpError(f"{name}: a packed row carrier must be [..., {a.shape[-2]!r}, "
                              f"{v.shape[-1]!r}], got {_fmt(v.shape)}")
            return result_like(a, dtype=_pr(a.dtype, v.dtype))
        if v.rank != a.rank or dim_eq(v.shape[-1], _ONE) is False or dim_eq(v.shape[-2], a.shape[-2]) is False:
            from .typing import _fmt

            raise OpError(f"{name}: row vector must be [..., {a.shape[-2]!r}, 1], got {_fmt(v.shape)}")
        return result_like(a, dtype=_pr(a.dtype, v.dtype))
    return infer


def _packed_carrier(v) -> bool:
    """Is the row vector the hardware's packed carrier (pl-head §3.4, tile row_expand_add): one
    32-byte block per row, whose lanes repeat along the destination's columns?"""
    k = v.shape[-1] if v.rank >= 2 else None
    return isinstance(k, ConstInt) and k.value > 1 and k.value * v.dtype.bits == 256


def _row_vec_ref(fn):
    """a[..., i, j] op v[..., i, j % K]: K = 1 is the plain row vector, K > 1 the packed carrier."""
    def ref(a, v):
        a, v = nm.up(a), nm.up(v)
        k = v.shape[-1]
        if k > 1 and k != a.shape[-1]:
            v = v[..., np.arange(a.shape[-1]) % k]
        return fn(a, v)
    return ref


def _col_expand_rule(name: str, level: str):
    def infer(args, kw):
        a = (expect_tile if level == "block" else expect_tensor)(name, args[0], "input")
        v = (expect_tile if level == "block" else expect_tensor)(name, args[1], "column vector")
        if a.rank < 2 or v.rank != a.rank or dim_eq(v.shape[-2], _ONE) is False \
                or dim_eq(v.shape[-1], a.shape[-1]) is False:
            from .typing import _fmt

            raise OpError(f"{name}: column vector must be [1, {a.shape[-1]!r}], got {_fmt(v.shape)}")
        if name.endswith("col_expand"):
            return result_like(a, dtype=v.dtype)
        return result_like(a, dtype=_pr(a.dtype, v.dtype))
    return infer


def _pr(a: DataType, b: DataType) -> DataType:
    return promote(a, b)


# name -> (reference, PTO instruction, the elementwise op it applies with the broadcast vector)
_ROW_EXPAND = {
    "row_expand_add": (np.add, "trowexpandadd", block_ops.add),
    "row_expand_sub": (np.subtract, "trowexpandsub", block_ops.sub),
    "row_expand_mul": (np.multiply, "trowexpandmul", block_ops.mul),
    "row_expand_div": (nm.trunc_div, "trowexpanddiv", block_ops.div),
    "row_expand_max": (np.maximum, "trowexpandmax", block_ops.maximum),
    "row_expand_min": (np.minimum, "trowexpandmin", block_ops.minimum),
}
_COL_EXPAND = {
    "col_expand_add": (np.add, "tcolexpandadd", block_ops.add),
    "col_expand_sub": (np.subtract, "tcolexpandsub", block_ops.sub),
    "col_expand_mul": (np.multiply, "tcolexpandmul", block_ops.mul),
    "col_expand_div": (nm.trunc_div, "tcolexpanddiv", block_ops.div),
    "col_expand_max": (np.maximum, "tcolexpandmax", block_ops.maximum),
    "col_expand_min": (np.minimum, "tcolexpandmin", block_ops.minimum),
}


def _vec_ref(fn):
    def ref(a, v):
        return fn(nm.up(a), nm.up(v))
    return ref


def _both(name: str, params, rule, ref, pto: str, doc: str, traits: Traits, broadcasts=None) -> None:
    tile = define(f"block.{name}", params("tile"), rule(f"block.{name}", "block"), traits=traits, reference=ref,
                  pto=pto, pipe=V, broadcasts=broadcasts, doc=doc)
    tensor = define(f"tensor.{name}", params("tensor"), rule(f"tensor.{name}", "tensor"), traits=traits,
                    reference=ref, tile_form=tile, doc=doc)
    unified(name, tensor=tensor, tile=tile, doc=doc)


_both("row_expand", lambda k: [arg("input", k), arg("row_vec", k, optional=True)], _row_expand_rule,
      lambda a, v=None: np.broadcast_to((a if v is None else v)[..., :1], a.shape).copy(), "trowexpand",
      "row_expand(src): dst[i, j] = src[i, 0]; row_expand(target, row_vec): row_vec[i, 0] in target's shape",
      Traits(ShapeClass.ROW_EXPAND, row_local=True))
for _name, (_fn, _pto, _op) in _ROW_EXPAND.items():
    _both(_name, lambda k: [arg("lhs", k), arg("rhs", k)], _row_expand_rule, _row_vec_ref(_fn), _pto,
          f"lhs[i, :] {_name.rsplit('_', 1)[1]} rhs[i, 0]", ROW_EXPAND, _op)
_both("col_expand", lambda k: [arg("target", k), arg("col", k)], _col_expand_rule,
      lambda t, v: np.broadcast_to(v, t.shape).copy(), "tcolexpand", "broadcast a [1, N] row over target's rows",
      Traits(ShapeClass.COL_EXPAND, row_local=True))
for _name, (_fn, _pto, _op) in _COL_EXPAND.items():
    _both(_name, lambda k: [arg("lhs", k), arg("rhs", k)], _col_expand_rule, _vec_ref(_fn), _pto,
          f"lhs[:, j] {_name.rsplit('_', 1)[1]} rhs[0, j]", COL_EXPAND, _op)


def _expands_rule(name: str, level: str):
    def infer(args, kw):
        a = (expect_tile if level == "block" else expect_tensor)(name, args[0], "target")
        expect_scalar(name, args[1], "value")
        return result_like(a)
    return infer


def _expands_ref(t, s):
    return np.full(t.shape, s, dtype=nm.up(t).dtype)


_both("expands", lambda k: [arg("target", k), arg("value", "scalar")], _expands_rule, _expands_ref, "texpands",
      "a tensor/tile shaped like target, filled with the scalar", Traits(FILL.shape, row_local=True))
