"""Elementwise operators: binary (tile x tile, tile x scalar), unary, cast, compare and select.

Each family is defined once and yields its tensor-level op, its block-level op(s) and its unified
`pl.*` dispatch entry. Binary ops broadcast NumPy-style and promote dtypes (reference §1.2); a
tile x scalar op keeps the tile's dtype.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType, PipeType

from . import numeric as nm
from .registry import NAMESPACES, Dispatch, add_dsl_name, arg, attr, define, unified
from .traits import elementwise
from .typing import (
    OpError,
    broadcast_result,
    broadcast_shapes,
    expect_scalar,
    expect_shaped,
    expect_tensor,
    expect_tile,
    promote,
    result_like,
)

V = PipeType.V


# ---------------------------------------------------------------------------------------------
# type rules


def _binary_rule(name: str, *, float_only: bool = False, int_only: bool = False, level: str = "any"):
    def infer(args, kw):
        a = expect_tile(name, args[0], "lhs") if level == "tile" else (
            expect_tensor(name, args[0], "lhs") if level == "tensor" else expect_shaped(name, args[0], "lhs"))
        b = expect_tile(name, args[1], "rhs") if level == "tile" else (
            expect_tensor(name, args[1], "rhs") if level == "tensor" else expect_shaped(name, args[1], "rhs"))
        if type(a) is not type(b):
            raise OpError(f"{name}: cannot combine a {type(a).__name__[:-4]} with a {type(b).__name__[:-4]}")
        dt = promote(a.dtype, b.dtype)
        _check_dtype(name, dt, float_only, int_only)
        shape = broadcast_shapes(name, a.shape, b.shape)
        return broadcast_result([a, b], shape, dt)
    return infer


def _scalar_rule(name: str, *, float_only: bool = False, int_only: bool = False, level: str = "tile"):
    def infer(args, kw):
        a = expect_tile(name, args[0], "lhs") if level == "tile" else expect_tensor(name, args[0], "lhs")
        expect_scalar(name, args[1], "scalar operand")
        _check_dtype(name, a.dtype, float_only, int_only)
        return result_like(a)
    return infer


def _unary_rule(name: str, *, float_only: bool = False, int_only: bool = False, level: str = "tile"):
    def infer(args, kw):
        a = expect_tile(name, args[0], "operand") if level == "tile" else expect_tensor(name, args[0], "operand")
        _check_dtype(name, a.dtype, float_only, int_only)
        return result_like(a)
    return infer


def _check_dtype(name: str, dt: DataType, float_only: bool, int_only: bool) -> None:
    if float_only and not dt.is_float:
        raise OpError(f"{name}: needs a floating-point operand, got {dt.name}",
                      hint=f"cast first: pl.cast(x, pl.FP32) before {name.split('.')[-1]}")
    if int_only and not (dt.is_int or dt.is_bool):
        raise OpError(f"{name}: needs an integer operand, got {dt.name}")


# ---------------------------------------------------------------------------------------------
# families


def binary(name: str, ref, pto: str, *, scalar_pto: str | None = None, tensor: bool = False,
           float_only: bool = False, int_only: bool = False, scalar_name: str | None = None,
           tensor_scalar_names: tuple[str, str] | None = None, promoted: bool = True, commutative: bool = False,
           doc: str = "") -> None:
    """`block.<name>` (+ `block.<name>s`), optionally `tensor.<name>` (+ scalar form) and `pl.<name>`."""
    sname = scalar_name or f"{name}s"

    def sref(a, s):
        return ref(a, nm.scalar_as(a, s))

    tile = define(f"block.{name}", [arg("lhs", "tile"), arg("rhs", "tile")],
                  _binary_rule(f"block.{name}", float_only=float_only, int_only=int_only, level="tile"),
                  traits=elementwise(commutative), reference=ref, pto=pto, pipe=V, family=name, doc=doc, dsl=())
    tile_scalar = None
    if scalar_pto:
        tile_scalar = define(f"block.{sname}", [arg("lhs", "tile"), arg("rhs", "scalar")],
                             _scalar_rule(f"block.{sname}", float_only=float_only, int_only=int_only),
                             traits=elementwise(), reference=sref, pto=scalar_pto, pipe=V, family=name, doc=doc)
        add_dsl_name(f"pl.{sname}", tile_scalar)
    tensor_op = tensor_scalar = None
    if tensor:
        tensor_op = define(f"tensor.{name}", [arg("lhs", "tensor"), arg("rhs", "tensor")],
                           _binary_rule(f"tensor.{name}", float_only=float_only, int_only=int_only, level="tensor"),
                           traits=elementwise(commutative), reference=ref, family=name, tile_form=tile, doc=doc,
                           dsl=())
        if tensor_scalar_names and tile_scalar:
            canon, alias = tensor_scalar_names
            tensor_scalar = define(f"tensor.{canon}", [arg("lhs", "tensor"), arg("rhs", "scalar")],
                                   _scalar_rule(f"tensor.{canon}", float_only=float_only, int_only=int_only,
                                                level="tensor"),
                                   traits=elementwise(), reference=sref, family=name, tile_form=tile_scalar,
                                   aliases=(f"tensor.{alias}",), doc=doc,
                                   dsl=(f"pl.tensor.{canon}", f"pl.tensor.{alias}"))
        add_dsl_name(f"pl.tensor.{name}", Dispatch(name, tensor=tensor_op, tensor_scalar=tensor_scalar))
    add_dsl_name(f"pl.block.{name}", Dispatch(name, tile=tile, tile_scalar=tile_scalar))
    if promoted:
        unified(name, tensor=tensor_op, tile=tile, tensor_scalar=tensor_scalar, tile_scalar=tile_scalar, doc=doc)


def unary(name: str, ref, pto: str, *, tensor: bool = False, float_only: bool = False,
          int_only: bool = False, doc: str = "") -> None:
    tile = define(f"block.{name}", [arg("input", "tile")],
                  _unary_rule(f"block.{name}", float_only=float_only, int_only=int_only),
                  traits=elementwise(), reference=ref, pto=pto, pipe=V, family=name, doc=doc)
    tensor_op = None
    if tensor:
        tensor_op = define(f"tensor.{name}", [arg("input", "tensor")],
                           _unary_rule(f"tensor.{name}", float_only=float_only, int_only=int_only, level="tensor"),
                           traits=elementwise(), reference=ref, family=name, tile_form=tile, doc=doc)
    unified(name, tensor=tensor_op, tile=tile, doc=doc)


# ---------------------------------------------------------------------------------------------
# arithmetic

binary("add", lambda a, b: np.add(nm.up(a), nm.up(b)), "tadd", scalar_pto="tadds", tensor=True,
       tensor_scalar_names=("add_scalar", "adds"), commutative=True, doc="elementwise a + b")
binary("sub", lambda a, b: np.subtract(nm.up(a), nm.up(b)), "tsub", scalar_pto="tsubs", tensor=True,
       tensor_scalar_names=("sub_scalar", "subs"), doc="elementwise a - b")
binary("mul", lambda a, b: np.multiply(nm.up(a), nm.up(b)), "tmul", scalar_pto="tmuls", tensor=True,
       tensor_scalar_names=("mul_scalar", "muls"), commutative=True, doc="elementwise a * b")
binary("div", nm.trunc_div, "tdiv", scalar_pto="tdivs", tensor=True,
       tensor_scalar_names=("div_scalar", "divs"),
       doc="elementwise a / b (integers: truncating division, x / 0 = 0)")
binary("maximum", lambda a, b: np.maximum(nm.up(a), nm.up(b)), "tmax", scalar_pto="tmaxs",
       scalar_name="maxs", tensor=True, tensor_scalar_names=("maximum_scalar", "maxs"), commutative=True,
       doc="elementwise max(a, b)")
binary("minimum", lambda a, b: np.minimum(nm.up(a), nm.up(b)), "tmin", scalar_pto="tmins",
       scalar_name="mins", tensor=True, tensor_scalar_names=("minimum_scalar", "mins"), commutative=True,
       doc="elementwise min(a, b)")
binary("rem", nm.c_rem, "trem", scalar_pto="trems", doc="remainder with the sign of the dividend")
# today's names of the tile x scalar max / min (pl-head §0.1: maxs / mins -> maximums / minimums)
for _old, _new in (("maxs", "maximums"), ("mins", "minimums")):
    add_dsl_name(f"pl.{_new}", NAMESPACES["pl"][_old])
    add_dsl_name(f"pl.block.{_new}", NAMESPACES["pl.block"][_old])


def _bitwise(fn):
    def ref(a, b, *tmp):
        return fn(a, np.asarray(b).astype(a.dtype) if not isinstance(b, np.ndarray) else b)
    return ref


binary("and_", _bitwise(np.bitwise_and), "tand", scalar_pto="tands", scalar_name="ands", int_only=True,
       commutative=True, tensor=True, tensor_scalar_names=("and_scalar", "ands"), doc="bitwise and")
binary("or_", _bitwise(np.bitwise_or), "tor", scalar_pto="tors", scalar_name="ors", int_only=True,
       commutative=True, tensor=True, tensor_scalar_names=("or_scalar", "ors"), doc="bitwise or")
binary("shl", _bitwise(np.left_shift), "tshl", scalar_pto="tshls", int_only=True, tensor=True,
       tensor_scalar_names=("shl_scalar", "shls"), doc="shift left")
binary("shr", _bitwise(np.right_shift), "tshr", scalar_pto="tshrs", int_only=True, tensor=True,
       tensor_scalar_names=("shr_scalar", "shrs"), doc="shift right (arithmetic for signed types)")


# xor carries a tmp tile on the hardware; it does not change the result
def _xor_rule(name: str, scalar: bool):
    def infer(args, kw):
        a = expect_tile(name, args[0], "lhs")
        ops, shape = [a], a.shape
        if scalar:
            expect_scalar(name, args[1], "scalar operand")
        else:
            b = expect_tile(name, args[1], "rhs")
            ops, shape = [a, b], broadcast_shapes(name, a.shape, b.shape)
        if len(args) > 2:
            expect_tile(name, args[2], "tmp")
        _check_dtype(name, a.dtype, False, True)
        return broadcast_result(ops, shape, a.dtype)
    return infer


_xor_tile = define("block.xor", [arg("lhs", "tile"), arg("rhs", "tile"), arg("tmp", "tile", optional=True)],
       _xor_rule("block.xor", False), traits=elementwise(True), reference=_bitwise(np.bitwise_xor), pto="txor", pipe=V,
       dsl=("pl.block.xor", "pl.xor"), doc="bitwise xor (tmp: scratch tile)")
_xors_tile = define("block.xors", [arg("lhs", "tile"), arg("rhs", "scalar"), arg("tmp", "tile", optional=True)],
       _xor_rule("block.xors", True), traits=elementwise(), reference=_bitwise(np.bitwise_xor), pto="txors", pipe=V,
       dsl=("pl.block.xors", "pl.xors"), doc="bitwise xor with a scalar")
# the tensor forms (no scratch at this level)
define("tensor.xor", [arg("lhs", "tensor"), arg("rhs", "tensor")],
       _binary_rule("tensor.xor", int_only=True, level="tensor"), traits=elementwise(True),
       reference=_bitwise(np.bitwise_xor), family="xor", tile_form=_xor_tile, dsl=("pl.tensor.xor",), doc="bitwise xor")
define("tensor.xor_scalar", [arg("lhs", "tensor"), arg("rhs", "scalar")],
       _scalar_rule("tensor.xor_scalar", int_only=True, level="tensor"), traits=elementwise(),
       reference=_bitwise(np.bitwise_xor), family="xor", tile_form=_xors_tile, aliases=("tensor.xors",),
       dsl=("pl.tensor.xor_scalar", "pl.tensor.xors"), doc="bitwise xor with a scalar")


# ---------------------------------------------------------------------------------------------
# three-operand arithmetic: addc/subc (tile, tile, tile), addsc/subsc (tile, scalar, tile)


def _ternary_rule(name: str, middle_scalar: bool):
    def infer(args, kw):
        a = expect_tile(name, args[0], "lhs")
        if middle_scalar:
            expect_scalar(name, args[1], "scalar operand")
            ops, shape, dt = [a], a.shape, a.dtype
        else:
            b = expect_tile(name, args[1], "rhs")
            ops, shape, dt = [a, b], broadcast_shapes(name, a.shape, b.shape), promote(a.dtype, b.dtype)
        c = expect_tile(name, args[2], "rhs2")
        shape = broadcast_shapes(name, shape, c.shape)
        return broadcast_result([*ops, c], shape, promote(dt, c.dtype))
    return infer


def _t(kind):
    return [arg("lhs", "tile"), arg("rhs", kind), arg("rhs2", "tile")]


define("block.addc", _t("tile"), _ternary_rule("block.addc", False), traits=elementwise(),
       reference=lambda a, b, c: nm.up(a) + nm.up(b) + nm.up(c), pto="taddc", pipe=V,
       dsl=("pl.block.addc", "pl.addc"), doc="a + b + c")
define("block.subc", _t("tile"), _ternary_rule("block.subc", False), traits=elementwise(),
       reference=lambda a, b, c: nm.up(a) - nm.up(b) - nm.up(c), pto="tsubc", pipe=V,
       dsl=("pl.block.subc", "pl.subc"), doc="a - b - c")
define("block.addsc", _t("scalar"), _ternary_rule("block.addsc", True), traits=elementwise(),
       reference=lambda a, s, c: nm.up(a) + nm.scalar_as(a, s) + nm.up(c), pto="taddsc", pipe=V,
       dsl=("pl.block.addsc", "pl.addsc"), doc="a + s + c")
define("block.subsc", _t("scalar"), _ternary_rule("block.subsc", True), traits=elementwise(),
       reference=lambda a, s, c: nm.up(a) - nm.scalar_as(a, s) - nm.up(c), pto="tsubsc", pipe=V,
       dsl=("pl.block.subsc", "pl.subsc"), doc="a - s - c")


# ---------------------------------------------------------------------------------------------
# activations


def _prelu_rule(args, kw):
    a = expect_tile("block.prelu", args[0], "input")
    s = expect_tile("block.prelu", args[1], "slope")
    broadcast_shapes("block.prelu", a.shape, s.shape)
    if len(args) > 2:
        expect_tile("block.prelu", args[2], "tmp")
    _check_dtype("block.prelu", a.dtype, True, False)
    return result_like(a)


define("block.prelu", [arg("input", "tile"), arg("slope", "tile"), arg("tmp", "tile", optional=True)],
       _prelu_rule, traits=elementwise(), reference=lambda x, s, *t: np.where(nm.up(x) > 0, nm.up(x), nm.up(x) * nm.up(s)),
       pto="tprelu", pipe=V, dsl=("pl.block.prelu", "pl.prelu"), doc="x > 0 ? x : x * slope")
define("block.lrelu", [arg("input", "tile"), arg("slope", "scalar")],
       _scalar_rule("block.lrelu", float_only=True), traits=elementwise(),
       reference=lambda x, s: np.where(nm.up(x) > 0, nm.up(x), nm.up(x) * nm.scalar_as(x, s)),
       pto="tlrelu", pipe=V, dsl=("pl.block.lrelu", "pl.lrelu"), doc="leaky relu: x > 0 ? x : x * slope")


# ---------------------------------------------------------------------------------------------
# unary

unary("exp", nm.float_unary(np.exp), "texp", tensor=True, float_only=True, doc="e ** x")
unary("log", nm.float_unary(np.log), "tlog", tensor=True, float_only=True, doc="natural log")
unary("sqrt", nm.float_unary(np.sqrt), "tsqrt", tensor=True, float_only=True, doc="square root")
unary("rsqrt", nm.rsqrt, "trsqrt", tensor=True, float_only=True, doc="1 / sqrt(x)")
unary("recip", nm.recip, "trecip", tensor=True, float_only=True, doc="1 / x")
unary("neg", lambda x: np.negative(nm.up(x)), "tneg", tensor=True, doc="-x")
unary("abs", lambda x: np.abs(nm.up(x)), "tabs", tensor=True, doc="|x|")
unary("relu", lambda x: np.maximum(nm.up(x), 0).astype(nm.up(x).dtype), "trelu", tensor=True, doc="max(x, 0)")
unary("softplus", nm.float_unary(lambda x: np.logaddexp(0, x)), "tsoftplus", tensor=True, float_only=True,
      doc="log(1 + e ** x)")
# the math family of the tensor level (reference §1.4): computed element by element in fp32
for _name, _fn, _doc in (("tanh", np.tanh, "hyperbolic tangent"), ("sin", np.sin, "sine"), ("cos", np.cos, "cosine"),
                         ("exp2", np.exp2, "2 ** x"), ("expm1", np.expm1, "e ** x - 1"),
                         ("log2", np.log2, "base-2 log"), ("log10", np.log10, "base-10 log"),
                         ("log1p", np.log1p, "log(1 + x)"), ("floor", np.floor, "round down"),
                         ("ceil", np.ceil, "round up"), ("trunc", np.trunc, "round toward zero"),
                         ("rint", np.rint, "round half to even")):
    unary(_name, nm.float_unary(_fn), f"t{_name}", tensor=True, float_only=True, doc=_doc)
unary("not_", lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x), "tnot", int_only=True, tensor=True,
      doc="bitwise not")


# ---------------------------------------------------------------------------------------------
# cast


def _cast_rule(level: str):
    def infer(args, kw):
        name = f"{level}.cast"
        a = expect_tile(name, args[0]) if level == "block" else expect_tensor(name, args[0])
        return result_like(a, dtype=kw["target_type"])
    return infer


def cast_reference(x, *, target_type: DataType, mode: CastMode = CastMode.round):
    """Convert to `target_type`. Float -> int rounds by `mode` (round = half away from zero, rint = half
    to even, none = truncate); int -> int wraps; float -> float rounds to nearest even."""
    dst = target_type.to_numpy()
    xu = nm.up(x)
    if nm.is_float_array(xu) and (target_type.is_int or target_type.is_bool):
        if target_type.is_bool:
            return xu != 0
        r = _ROUND[mode](xu.astype(np.float64))  # float64: the int range limits are exact there
        info = np.iinfo(dst) if dst.kind in "iu" else None
        if info is not None:
            r = np.clip(np.nan_to_num(r, nan=0), info.min, info.max)
        return r.astype(dst)
    return xu.astype(dst)


_ROUND = {
    CastMode.none: np.trunc, CastMode.trunc: np.trunc, CastMode.rint: np.rint, CastMode.floor: np.floor,
    CastMode.ceil: np.ceil, CastMode.odd: np.rint,
    CastMode.round: lambda v: np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5)),
}

_cast_attrs = [attr("target_type", "dtype"), attr("mode", "castmode", CastMode.round)]
_block_cast = define("block.cast", [arg("input", "tile"), *_cast_attrs], _cast_rule("block"), traits=elementwise(),
                     reference=cast_reference, pto="tcvt", pipe=V, doc="convert the element type")
_tensor_cast = define("tensor.cast", [arg("input", "tensor"), *_cast_attrs], _cast_rule("tensor"), traits=elementwise(),
                      reference=cast_reference, tile_form=_block_cast, doc="convert the element type")
unified("cast", tensor=_tensor_cast, tile=_block_cast, scalar="scalar.cast",
        doc="convert a tensor, tile or scalar to another dtype")


# ---------------------------------------------------------------------------------------------
# compare and select

_CMP_FN = {CmpType.EQ: np.equal, CmpType.NE: np.not_equal, CmpType.LT: np.less, CmpType.LE: np.less_equal,
           CmpType.GT: np.greater, CmpType.GE: np.greater_equal}


def _cmp_ref(a, b, *, cmp_type=CmpType.EQ):
    """Comparison mask: 1 where true, 0 where false, in the (promoted) operand dtype."""
    ua, ub = nm.up(a), (nm.up(b) if isinstance(b, np.ndarray) else nm.scalar_as(a, b))
    return _CMP_FN[cmp_type](ua, ub).astype(np.result_type(ua, ub) if isinstance(b, np.ndarray) else ua.dtype)


_cmp_tile = define("block.cmp", [arg("lhs", "tile"), arg("rhs", "tile"), attr("cmp_type", "cmp", CmpType.EQ)],
                   _binary_rule("block.cmp", level="tile"), traits=elementwise(), reference=_cmp_ref, pto="tcmp",
                   pipe=V, dsl=("pl.block.cmp", "pl.cmp"),
                   doc="compare: 1 where lhs <op> rhs holds, else 0 (same dtype)")
_cmps_tile = define("block.cmps", [arg("lhs", "tile"), arg("rhs", "scalar"), attr("cmp_type", "cmp", CmpType.EQ)],
                    _scalar_rule("block.cmps"), traits=elementwise(), reference=_cmp_ref, pto="tcmps", pipe=V,
                    dsl=("pl.block.cmps", "pl.cmps"), doc="compare with a scalar")
define("tensor.cmp", [arg("lhs", "tensor"), arg("rhs", "tensor"), attr("cmp_type", "cmp", CmpType.EQ)],
       _binary_rule("tensor.cmp", level="tensor"), traits=elementwise(), reference=_cmp_ref, tile_form=_cmp_tile,
       dsl=("pl.tensor.cmp",), doc="compare: 1 where lhs <op> rhs holds, else 0 (same dtype)")
define("tensor.cmps", [arg("lhs", "tensor"), arg("rhs", "scalar"), attr("cmp_type", "cmp", CmpType.EQ)],
       _scalar_rule("tensor.cmps", level="tensor"), traits=elementwise(), reference=_cmp_ref, tile_form=_cmps_tile,
       dsl=("pl.tensor.cmps",), doc="compare with a scalar")


def _sel_rule(level: str):
    name = f"{level}.sel"
    expect = expect_tile if level == "block" else expect_tensor

    def infer(args, kw):
        m = expect(name, args[0], "mask")
        a = expect(name, args[1], "lhs")
        b = expect(name, args[2], "rhs")
        shape = broadcast_shapes(name, broadcast_shapes(name, m.shape, a.shape), b.shape)
        return broadcast_result([a, b, m], shape, promote(a.dtype, b.dtype))
    return infer


def _sel_ref(m, a, b):
    return np.where(np.asarray(m) != 0, nm.up(a), nm.up(b))


_sel_tile = define("block.sel", [arg("mask", "tile"), arg("lhs", "tile"), arg("rhs", "tile")], _sel_rule("block"),
                   traits=elementwise(), reference=_sel_ref, pto="tsel", pipe=V, dsl=("pl.block.sel", "pl.sel"),
                   doc="mask != 0 ? lhs : rhs")
define("tensor.sel", [arg("mask", "tensor"), arg("lhs", "tensor"), arg("rhs", "tensor")], _sel_rule("tensor"),
       traits=elementwise(), reference=_sel_ref, tile_form=_sel_tile, dsl=("pl.tensor.sel",),
       doc="mask != 0 ? lhs : rhs")


def _sels_rule(args, kw):
    a = expect_tile("block.sels", args[0], "lhs")
    b = expect_tile("block.sels", args[1], "rhs")
    expect_scalar("block.sels", args[2], "select_mode")
    return broadcast_result([a, b], broadcast_shapes("block.sels", a.shape, b.shape), promote(a.dtype, b.dtype))


define("block.sels", [arg("lhs", "tile"), arg("rhs", "tile"), arg("select_mode", "scalar")], _sels_rule,
       traits=elementwise(), reference=lambda a, b, mode: nm.up(a) if mode != 0 else nm.up(b), pto="tsels", pipe=V,
       dsl=("pl.block.sels", "pl.sels"), doc="select_mode != 0 ? lhs : rhs (whole tile)")
