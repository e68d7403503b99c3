"""Packed predicate masks: today's tile compare results (reference pl-head §3.3).

A tile `cmp` / `cmps` at the public HEAD gives a UINT8 mask of the shape
`[..., roundup(ceil(N / 8), 32)]` (N: the compared tiles' last dim), one bit per element, which
`sel` consumes. The bit order is not pinned upstream; here it is little-endian within a byte:
element j of a row is bit `j % 8` of byte `j // 8` (NumPy's `packbits(bitorder="little")`), and
bytes past `ceil(N / 8)` are zero. `sel_mask` reads the same order, so a mask made by `cmp_mask`
selects exactly where the comparison held.

The older same-dtype 0/1 compare (`block.cmp`) and select (`block.sel`) stay as they are; which
one a `pl.cmp` / `pl.sel` call becomes is decided by the parser (pypto/language/parser/compat_calls.py,
docs/compat.md).
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import CmpType, PipeType
from pypto.ir.expr import ConstInt

from . import numeric as nm
from .registry import arg, attr, define
from .traits import ROW_WISE
from .typing import OpError, dim_eq, expect_scalar, expect_tile, promote, static_dim, tile_result

V = PipeType.V
_CMP_FN = {CmpType.EQ: np.equal, CmpType.NE: np.not_equal, CmpType.LT: np.less, CmpType.LE: np.less_equal,
           CmpType.GT: np.greater, CmpType.GE: np.greater_equal}


def mask_width(n: int) -> int:
    """Bytes per row of the packed mask of N elements: ceil(N / 8) rounded up to 32."""
    nbytes = (n + 7) // 8
    return (nbytes + 31) // 32 * 32


def _mask_type(name: str, a):
    n = static_dim(a.shape[-1])
    if n is None:
        raise OpError(f"{name}: the compared tiles need a static last dimension (the mask is packed along it)")
    lead_valid = list(a.valid_shape[:-1])
    return tile_result((*a.shape[:-1], mask_width(n)), DataType.UINT8, memory_space=a.space,
                       valid_shape=(*lead_valid, ConstInt(mask_width(n), DataType.INDEX)))


def _cmp_mask_rule(args, kw):
    a = expect_tile("block.cmp_mask", args[0], "lhs")
    b = expect_tile("block.cmp_mask", args[1], "rhs")
    if a.rank != b.rank or any(dim_eq(x, y) is False for x, y in zip(a.shape, b.shape)):
        raise OpError("block.cmp_mask: lhs and rhs need the same shape")
    promote(a.dtype, b.dtype)
    return _mask_type("block.cmp_mask", a)


def _cmps_mask_rule(args, kw):
    a = expect_tile("block.cmps_mask", args[0], "lhs")
    expect_scalar("block.cmps_mask", args[1], "scalar operand")
    return _mask_type("block.cmps_mask", a)


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """[..., N] booleans -> [..., mask_width(N)] UINT8, little-endian bits (element j: bit j % 8 of byte j // 8)."""
    packed = np.packbits(bits.astype(bool), axis=-1, bitorder="little")
    out = np.zeros((*bits.shape[:-1], mask_width(bits.shape[-1])), dtype=np.uint8)
    out[..., : packed.shape[-1]] = packed
    return out


def unpack_bits(mask: np.ndarray, n: int) -> np.ndarray:
    """The first n predicate bits of each row of a packed mask, as booleans."""
    return np.unpackbits(np.asarray(mask, dtype=np.uint8), axis=-1, bitorder="little")[..., :n].astype(bool)


def _cmp_mask_ref(a, b, *, cmp_type=CmpType.EQ):
    ua, ub = nm.up(a), (nm.up(b) if isinstance(b, np.ndarray) else nm.scalar_as(a, b))
    return pack_bits(_CMP_FN[cmp_type](ua, ub))


def _sel_mask_rule(args, kw):
    m = expect_tile("block.sel_mask", args[0], "mask")
    a = expect_tile("block.sel_mask", args[1], "lhs")
    b = expect_tile("block.sel_mask", args[2], "rhs")
    if len(args) > 3:
        expect_tile("block.sel_mask", args[3], "tmp")
    if m.dtype is not DataType.UINT8:
        raise OpError(f"block.sel_mask: the mask must be a packed UINT8 mask (from pl.cmp), got {m.dtype.name}")
    n = static_dim(a.shape[-1])
    if n is None or dim_eq(m.shape[-1], mask_width(n)) is False or a.rank != m.rank:
        raise OpError(f"block.sel_mask: a mask for [..., {a.shape[-1]!r}] tiles is [..., {mask_width(n or 0)}] UINT8")
    if a.rank != b.rank or any(dim_eq(x, y) is False for x, y in zip(a.shape, b.shape)):
        raise OpError("block.sel_mask: lhs and rhs need the same shape")
    return tile_result(a.shape, promote(a.dtype, b.dtype), like=a, memory_space=a.space)


def _sel_mask_ref(m, a, b, *tmp):
    bits = unpack_bits(m, a.shape[-1])
    return np.where(bits, nm.up(a), nm.up(b))


define("block.cmp_mask", [arg("lhs", "tile"), arg("rhs", "tile"), attr("cmp_type", "cmp", CmpType.EQ)],
       _cmp_mask_rule, traits=ROW_WISE, reference=_cmp_mask_ref, pto="tcmp.mask", pipe=V,
       dsl=("pl.block.cmp_mask",), doc="compare into a packed UINT8 predicate mask (bit j % 8 of byte j // 8)")
define("block.cmps_mask", [arg("lhs", "tile"), arg("rhs", "scalar"), attr("cmp_type", "cmp", CmpType.EQ)],
       _cmps_mask_rule, traits=ROW_WISE, reference=_cmp_mask_ref, pto="tcmps.mask", pipe=V,
       dsl=("pl.block.cmps_mask",), doc="compare with a scalar into a packed UINT8 predicate mask")
define("block.sel_mask", [arg("mask", "tile"), arg("lhs", "tile"), arg("rhs", "tile"), arg("tmp", "tile", optional=True)],
       _sel_mask_rule, traits=ROW_WISE, reference=_sel_mask_ref, pto="tsel.mask", pipe=V,
       dsl=("pl.block.sel_mask",), doc="bit set in the packed mask ? lhs : rhs (tmp: the hardware's scratch)")

__all__ = ["mask_width", "pack_bits", "unpack_bits"]
