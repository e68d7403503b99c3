"""`pypto.scaled_mm`: a 2-D matmul with MX-style block scales (reference §1.4 matmul.py; the block
scale idea of `pl.matmul_mx`), computed on the CPU by dequantising then multiplying in fp32.

Layout (what this implements): K is cut into groups of 32; group g = k // 32 of row i of a is
scaled by `scale_a[i, g // 2, g % 2]`, group g of column j of b by `scale_b[g // 2, j, g % 2]`.
So scale_a is `(n, kScale, 2)` and scale_b `(kScale, m, 2)` with kScale = ceil(K / 64): the last
axis holds the two 32-groups of each 64 of K. `scale_a_trans` / `scale_b_trans` say the scales
come with their first two axes swapped (`(kScale, n, 2)`, `(m, kScale, 2)`); `a_trans` / `b_trans`
that a is given as [K, n] / b as [m, K]. A UINT8 scale holds E8M0 exponents: 2^(e - 127), 255 is
NaN; a float scale is the multiplier itself.

    out = ((a * scale_a per group) @ (b * scale_b per group)), in fp32, cast to out_dtype

Made of registry ops: the operands padded with zeros to K' = 64 * kScale (zeros add nothing), seen
as [rows * kScale, 64] so each half of a row is one 32-group and its scale is a [rows * kScale, 1]
column (a row broadcast), then `matmul(A, B, b_trans=True)`.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType

from . import ops
from .joining import pad
from .tensor import Tensor, to_dtype
from .trace import FrontendError, user_span

_DATA = (DataType.FP32, DataType.FP16, DataType.BF16, DataType.FP8E4M3FN, DataType.FP8E5M2)
_SCALES = (DataType.UINT8, DataType.FP32, DataType.FP16, DataType.BF16)


def _fail(msg: str, hint: str | None = None) -> FrontendError:
    return FrontendError(f"pypto.scaled_mm: {msg}", user_span(), hint=hint)


def _static_shape(name: str, t: Any, rank: int) -> list[int]:
    if not isinstance(t, Tensor):
        raise _fail(f"{name} must be a pypto.Tensor, got {type(t).__name__}")
    shape = list(t.shape)
    if len(shape) != rank:
        raise _fail(f"{name} must have rank {rank}, got shape {shape}")
    if not all(isinstance(d, int) for d in shape):
        raise _fail(f"{name} has a run-time dim ({shape}); scaled_mm needs static shapes")
    return shape


def _multiplier(s: Tensor) -> Tensor:
    """The scale as an fp32 multiplier: 2^(e - 127) for E8M0 bytes (255: NaN), else the value."""
    f = ops.cast(s, DataType.FP32)
    if s.dtype is not DataType.UINT8:
        return f
    return ops.where(ops.eq(f, 255.0), float("nan"), ops.exp2(ops.sub(f, 127.0)))


def _scale_columns(s: Tensor, rows: int, ks: int, rows_first: bool) -> tuple[Tensor, Tensor]:
    """The multipliers of the first and second 32-group of each 64 of K, as [rows * ks, 1] columns
    (row r * ks + q: row r, K block q). `s` is (rows, ks, 2) when rows_first, else (ks, rows, 2)."""
    if rows_first:
        flat = _multiplier(ops.reshape(s, [rows * ks, 2]))
        return tuple(ops.clone(ops.view(flat, [rows * ks, 1], [0, t])) for t in (0, 1))  # type: ignore[return-value]
    flat = _multiplier(ops.reshape(s, [ks, rows * 2]))  # [q, r * 2 + t]
    per_row = ops.reshape(ops.transpose(flat, 0, 1), [rows, 2 * ks])  # [r, t * ks + q]
    return tuple(ops.reshape(ops.clone(ops.view(per_row, [rows, ks], [0, t * ks])), [rows * ks, 1])
                 for t in (0, 1))  # type: ignore[return-value]


def _dequantise(x: Tensor, rows: int, k: int, ks: int, cols: tuple[Tensor, Tensor]) -> Tensor:
    """x [rows, k] (fp32) with each 32-group scaled, zero-padded to [rows, 64 * ks]."""
    if 64 * ks != k:
        x = pad(x, (0, 64 * ks - k))
    blocks = ops.reshape(x, [rows * ks, 64])
    halves = [ops.mul(ops.view(blocks, [rows * ks, 32], [0, 32 * t]), cols[t]) for t in (0, 1)]
    return ops.reshape(ops.concat(halves, dim=-1), [rows, 64 * ks])


def scaled_mm(a: Tensor, b: Tensor, out_dtype: Any, scale_a: Tensor, scale_b: Tensor, *, a_trans: bool = False,
              b_trans: bool = False, scale_a_trans: bool = False, scale_b_trans: bool = False,
              c_matrix_nz: bool = False, extend_params: dict | None = None) -> Tensor:
    """(a * scale_a) @ (b * scale_b) with one scale per 32-wide group of K (module docstring)."""
    sa_shape, sb_shape = _static_shape("a", a, 2), _static_shape("b", b, 2)
    n, k = sa_shape[::-1] if a_trans else sa_shape
    kb, m = sb_shape[::-1] if b_trans else sb_shape
    if k != kb:
        raise _fail(f"a is [{n}, {k}] and b [{kb}, {m}] (after a_trans / b_trans): their K differ")
    for name, t in (("a", a), ("b", b)):
        if t.dtype not in _DATA:
            raise _fail(f"{name} is {t.dtype.name}; the data is FP32, FP16, BF16 or FP8 (E4M3FN / E5M2)")
    ks = -(-k // 64)
    want_a = [ks, n, 2] if scale_a_trans else [n, ks, 2]
    want_b = [m, ks, 2] if scale_b_trans else [ks, m, 2]
    for name, s, want in (("scale_a", scale_a, want_a), ("scale_b", scale_b, want_b)):
        got = _static_shape(name, s, 3)
        if got != want:
            raise _fail(f"{name} has shape {got}; K = {k} has {ks} blocks of 64 (two 32-groups each), so it "
                        f"must be {want}", hint="see docs/frontend.md (scaled_mm) for the scale layout")
        if s.dtype not in _SCALES:
            raise _fail(f"{name} is {s.dtype.name}; scales are UINT8 (E8M0 exponents) or FP32 / FP16 / BF16")
    odt = to_dtype(out_dtype, "pypto.scaled_mm out_dtype")
    if odt not in (DataType.FP32, DataType.FP16, DataType.BF16):
        raise _fail(f"out_dtype {odt.name}: the result is FP32, FP16 or BF16")
    a32, b32 = ops.cast(a, DataType.FP32), ops.cast(b, DataType.FP32)  # (cast first: transposes of fp32)
    a32 = ops.transpose(a32, 0, 1) if a_trans else a32  # [n, k]
    bt32 = b32 if b_trans else ops.transpose(b32, 0, 1)  # [m, k]
    lhs = _dequantise(a32, n, k, ks, _scale_columns(scale_a, n, ks, not scale_a_trans))
    rhs = _dequantise(bt32, m, k, ks, _scale_columns(scale_b, m, ks, scale_b_trans))
    out = ops.matmul(lhs, rhs, DataType.FP32, b_trans=True, extend_params=extend_params)
    return out if odt is DataType.FP32 else ops.cast(out, odt)


__all__ = ["scaled_mm"]
