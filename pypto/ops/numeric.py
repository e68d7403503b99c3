"""NumPy helpers for the reference semantics.

Reference functions take NumPy arrays (tensors, tiles), Python numbers (scalars) and tuples of
ints (shapes), and return an array. Low-precision floats (fp16, bf16, fp8) are computed in fp32,
as every backend does; the caller casts the result to the op's inferred dtype.
"""

from __future__ import annotations

import numpy as np

_LOW_FLOATS = {"float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"}


def up(x):
    """Widen low-precision floats to fp32 for computing; leave everything else as is."""
    if isinstance(x, np.ndarray) and x.dtype.name in _LOW_FLOATS:
        return x.astype(np.float32)
    if isinstance(x, np.generic) and x.dtype.name in _LOW_FLOATS:
        return np.float32(x)
    return x


def scalar_as(a, s):
    """Scalar operand `s` converted to the compute type of tile / tensor `a` (fp32 for fp16 / bf16;
    a float scalar on an integer tile truncates toward zero), which is what every backend computes
    with: a tile x scalar op keeps the tile's dtype, so `adds(int_tile, 1.5)` adds 1, not 1.5."""
    if isinstance(s, np.ndarray) and s.ndim > 0:
        return s
    ct = up(np.asarray(a)).dtype
    with np.errstate(all="ignore"):
        return np.asarray(s).astype(ct)[()]


def is_float_array(x) -> bool:
    return isinstance(x, np.ndarray) and (x.dtype.kind == "f" or x.dtype.name in _LOW_FLOATS)


def trunc_div(a, b):
    """Division: true division for floats, C-style truncating division for integers."""
    a, b = up(a), up(b)
    if np.result_type(a, b).kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.trunc(np.true_divide(a, b))
            q = np.where(np.asarray(b) == 0, 0, q)
        return q.astype(np.result_type(a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def c_rem(a, b):
    """Remainder with the sign of the dividend (C fmod / %), zero where b == 0 for integers."""
    a, b = up(a), up(b)
    if np.result_type(a, b).kind in "iu":
        bb = np.where(np.asarray(b) == 0, 1, b)
        r = np.fmod(a, bb)
        return np.where(np.asarray(b) == 0, 0, r).astype(np.result_type(a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


def float_unary(fn):
    def ref(x):
        with np.errstate(all="ignore"):
            return fn(up(x).astype(np.float32) if not is_float_array(up(x)) else up(x))
    return ref


def recip(x):
    with np.errstate(divide="ignore"):
        return np.float32(1.0) / up(x)


def rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(1.0) / np.sqrt(up(x))
