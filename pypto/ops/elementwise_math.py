"""Elementwise math of the tensor level's `math.py` family (reference §1.4) that is more than the
basic arithmetic of elementwise.py: trig, hyperbolic and error-function unary ops, `sign`, the BOOL
predicates `isnan` / `isfinite` / `signbit`, and the binary `pow` `atan2` `hypot` `copysign`
`fmod` (C-style, the `pl` name) `remainder` (Python-style) `floor_div` `ceil_div` `gcd`.

Accuracy: the transcendental ones are computed lane by lane in fp32 through the C library (the CPU
backend) or in float64 and rounded once (the NumPy reference the interpreter runs); the op table
(tests/programs/op_table.py) holds the CPU within 2 ulp of that reference in the result dtype (4
for pow). The rest (sign, predicates, copysign, fmod, remainder, floor_div, ceil_div, gcd) are
exact. References compute low-precision floats in fp32, as the backends do.
"""

from __future__ import annotations

import math

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType

from . import numeric as nm
from .elementwise import binary, unary
from .registry import arg, define, unified
from .traits import elementwise
from .typing import expect_tensor, expect_tile, result_like


def _f64(fn):
    """`fn` in float64 on the fp32 compute value (the caller rounds to the result dtype once)."""
    def ref(*xs):
        with np.errstate(all="ignore"):
            return fn(*[np.asarray(nm.up(x)).astype(np.float32).astype(np.float64) for x in xs])
    return ref


def _vec(fn):
    v = np.vectorize(fn, otypes=[np.float64])
    return lambda x: v(x)


# ---------------------------------------------------------------------------------------------
# unary

for _name, _fn, _doc in (("tan", np.tan, "tangent"), ("asin", np.arcsin, "arc sine (NaN outside [-1, 1])"),
                         ("acos", np.arccos, "arc cosine (NaN outside [-1, 1])"), ("atan", np.arctan, "arc tangent"),
                         ("sinh", np.sinh, "hyperbolic sine"), ("cosh", np.cosh, "hyperbolic cosine"),
                         ("asinh", np.arcsinh, "inverse hyperbolic sine"),
                         ("acosh", np.arccosh, "inverse hyperbolic cosine (NaN below 1)"),
                         ("atanh", np.arctanh, "inverse hyperbolic tangent (+-inf at +-1, NaN beyond)"),
                         ("erf", _vec(math.erf), "error function"), ("erfc", _vec(math.erfc), "1 - erf(x), accurate for large x"),
                         ("cbrt", np.cbrt, "cube root (negative for negative x)")):
    unary(_name, _f64(_fn), f"t{_name}", tensor=True, float_only=True, doc=_doc)


def _sign(x):
    u = nm.up(x)
    with np.errstate(all="ignore"):
        return np.sign(u).astype(u.dtype)


unary("sign", _sign, "tsign", tensor=True, doc="-1, 0 or 1 by the sign of x (NaN stays NaN; -0.0 gives 0)")


def _predicate_rule(level: str):
    name = f"{level}.pred"

    def infer(args, kw):
        a = expect_tile(name, args[0], "operand") if level == "block" else expect_tensor(name, args[0], "operand")
        return result_like(a, dtype=DataType.BOOL)
    return infer


def _predicate(name: str, fn, doc: str) -> None:
    """`block.<name>` / `tensor.<name>` / `pl.<name>`: a BOOL mask of the same shape, any numeric input."""
    def ref(x):
        return fn(nm.up(np.asarray(x)))
    tile = define(f"block.{name}", [arg("input", "tile")], _predicate_rule("block"), traits=elementwise(),
                  reference=ref, pto=f"t{name}", pipe=PipeType.V, family=name, doc=doc)
    tensor = define(f"tensor.{name}", [arg("input", "tensor")], _predicate_rule("tensor"), traits=elementwise(),
                    reference=ref, family=name, tile_form=tile, doc=doc)
    unified(name, tensor=tensor, tile=tile, doc=doc)


_predicate("isnan", np.isnan, "True where x is NaN (BOOL)")
_predicate("isfinite", np.isfinite, "True where x is neither NaN nor +-inf (BOOL)")
_predicate("signbit", np.signbit, "True where the sign bit is set, -0.0 and -NaN included (BOOL)")


# ---------------------------------------------------------------------------------------------
# binary

binary("pow", _f64(np.power), "tpow", tensor=True, float_only=True, doc="a ** b")
binary("atan2", _f64(np.arctan2), "tatan2", tensor=True, float_only=True, doc="the angle of (b, a), quadrant-aware")
binary("hypot", _f64(np.hypot), "thypot", tensor=True, float_only=True, doc="sqrt(a*a + b*b) without overflow")
binary("copysign", _f64(np.copysign), "tcopysign", tensor=True, float_only=True,
       doc="|a| with the sign bit of b")
binary("fmod", nm.c_rem, "tfmod", scalar_pto="tfmods", tensor=True, tensor_scalar_names=("fmod_scalar", "fmods"),
       doc="remainder with the sign of the dividend (C fmod; integers: x fmod 0 = 0)")


def _int_pair(a, b):
    a, b = nm.up(a), nm.up(b)
    dt = np.result_type(a, b)
    return np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64), dt


def _wrap(v, dt):
    """int64 results back to `dt`, wrapping (MIN / -1 = MIN, as the backends compute)."""
    return np.asarray(v).astype(np.int64).astype(dt)


def _remainder(a, b):
    """Python-style remainder: the sign of the divisor. Floats as NumPy (a zero result takes the
    divisor's sign); integers x % 0 = 0."""
    if np.result_type(nm.up(a), nm.up(b)).kind in "iub":
        a64, b64, dt = _int_pair(a, b)
        with np.errstate(all="ignore"):
            r = np.where(b64 == 0, 0, np.remainder(a64, np.where(b64 == 0, 1, b64)))
        return _wrap(r, dt)
    with np.errstate(all="ignore"):
        return np.remainder(nm.up(a), nm.up(b))


def _rounded_div(floor: bool):
    def ref(a, b):
        if np.result_type(nm.up(a), nm.up(b)).kind in "iub":
            a64, b64, dt = _int_pair(a, b)
            safe = np.where(b64 == 0, 1, b64)
            with np.errstate(all="ignore"):
                q = np.floor_divide(a64, safe) if floor else -np.floor_divide(-a64, safe)
            return _wrap(np.where(b64 == 0, 0, q), dt)
        with np.errstate(all="ignore"):  # the quotient rounded to the compute type, then floored / ceiled
            q = np.true_divide(nm.up(a), nm.up(b))
            return np.floor(q) if floor else np.ceil(q)
    return ref


def _gcd(a, b):
    a64, b64, dt = _int_pair(a, b)
    return _wrap(np.gcd(a64, b64), dt)


binary("remainder", _remainder, "tremainder", tensor=True,
       doc="remainder with the sign of the divisor (Python %; integers: x % 0 = 0)")
binary("floor_div", _rounded_div(True), "tfloordiv", tensor=True,
       doc="floor(a / b) (floats: of the rounded quotient; integers exact, x // 0 = 0)")
binary("ceil_div", _rounded_div(False), "tceildiv", tensor=True,
       doc="ceil(a / b) (floats: of the rounded quotient; integers exact, x / 0 = 0)")
binary("gcd", _gcd, "tgcd", tensor=True, int_only=True, commutative=True,
       doc="greatest common divisor, non-negative (gcd(0, 0) = 0)")
