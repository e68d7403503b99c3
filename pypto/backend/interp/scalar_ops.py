"""`arith` and `math` operations on scalars (the S pipe), with MLIR's semantics.

Integers are computed exactly on Python ints and wrapped to their type; floats are computed in
double precision and rounded once to their type (exact for + - * / of fp32 and narrower).
"""

from __future__ import annotations

import math

import numpy as np

from pypto.pto.model import Op, ScalarT
from pypto.pto.syntax import INT_BITS

from .errors import InterpError
from .values import is_float_name, make_scalar, np_dtype, wrap_int


def _tname(v) -> str:
    t = v.type
    if not isinstance(t, ScalarT):
        raise InterpError(f"expected a scalar operand, got %{v.name} of type {type(t).__name__}")
    return t.name


def _u(x: int, name: str) -> int:
    return int(x) & ((1 << INT_BITS[name]) - 1) if name != "i1" else int(x) & 1


def _s(x: int, name: str) -> int:
    return wrap_int(int(x), name)


def _need_nonzero(b: int) -> None:
    if b == 0:
        raise InterpError("integer division by zero")


def _trunc_div(a: int, b: int) -> int:
    _need_nonzero(b)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _shift(v: int, n: int, bits: int, left: bool) -> int:
    if n < 0 or n >= bits:
        return 0
    return v << n if left else v >> n


def _int_binary(name: str, a: int, b: int, t: str) -> int:
    bits = INT_BITS[t]
    if name in ("divui", "remui", "minui", "maxui", "shrui"):
        ua, ub = _u(a, t), _u(b, t)
        if name == "divui":
            _need_nonzero(ub)
            return ua // ub
        if name == "remui":
            _need_nonzero(ub)
            return ua % ub
        if name == "minui":
            return min(ua, ub)
        if name == "maxui":
            return max(ua, ub)
        return _shift(ua, ub, bits, False)
    sa, sb = _s(a, t), _s(b, t)
    ops = {
        "addi": lambda: sa + sb, "subi": lambda: sa - sb, "muli": lambda: sa * sb,
        "divsi": lambda: _trunc_div(sa, sb), "remsi": lambda: sa - sb * _trunc_div(sa, sb),
        "floordivsi": lambda: (_need_nonzero(sb), sa // sb)[1],
        "ceildivsi": lambda: (_need_nonzero(sb), -((-sa) // sb))[1],
        "minsi": lambda: min(sa, sb), "maxsi": lambda: max(sa, sb),
        "andi": lambda: sa & sb, "ori": lambda: sa | sb, "xori": lambda: sa ^ sb,
        "shli": lambda: _shift(sa, _u(b, t), bits, True),
        "shrsi": lambda: (sa >> min(_u(b, t), bits)) if _u(b, t) < bits else (-1 if sa < 0 else 0),
        "ipowi": lambda: _ipow(sa, sb),
    }
    fn = ops.get(name)
    if fn is None:
        raise InterpError(f"arith.{name} is not defined on integer type {t}")
    return fn()


def _ipow(a: int, b: int) -> int:
    if b < 0:
        return {1: 1, -1: 1 if b % 2 == 0 else -1}.get(a, 0) if a != 0 else 0
    return a ** b


def _fmin(a: float, b: float) -> float:
    return math.nan if a != a or b != b else min(a, b)


def _fmax(a: float, b: float) -> float:
    return math.nan if a != a or b != b else max(a, b)


_FLOAT_BINARY = {
    "addf": lambda a, b: a + b, "subf": lambda a, b: a - b, "mulf": lambda a, b: a * b,
    "divf": lambda a, b: float(np.float64(a) / np.float64(b)),
    "minimumf": _fmin, "maximumf": _fmax,
    "minnumf": lambda a, b: b if a != a else (a if b != b else min(a, b)),
    "maxnumf": lambda a, b: b if a != a else (a if b != b else max(a, b)),
    "remf": lambda a, b: float(np.fmod(np.float64(a), np.float64(b))),
    "powf": lambda a, b: float(np.power(np.float64(a), np.float64(b))),
    "copysign": math.copysign, "atan2": math.atan2,
}

_FLOAT_UNARY = {
    "negf": lambda x: -x, "absf": abs, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "sin": np.sin,
    "cos": np.cos, "erf": lambda x: math.erf(x), "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc,
    "round": lambda x: math.copysign(math.floor(abs(x) + 0.5), x) if math.isfinite(x) else x,
    "roundeven": np.rint,
}

_CMPI = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b, "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b,
}

_CMPF = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
         "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _cmpf(pred: str, a: float, b: float) -> bool:
    if pred in ("true", "false"):
        return pred == "true"
    unordered = a != a or b != b
    if pred == "ord":
        return not unordered
    if pred == "uno":
        return unordered
    fn = _CMPF.get(pred[1:])
    if fn is None or pred[0] not in "ou":
        raise InterpError(f"unknown arith.cmpf predicate '{pred}'")
    if unordered:
        return pred[0] == "u"
    return fn(a, b)


def _cast(name: str, x, src: str, dst: str):
    if name in ("index_cast", "extsi", "trunci"):
        return make_scalar(_s(x, src), dst)
    if name in ("index_castui", "extui"):
        return make_scalar(_u(x, src), dst)
    if name == "sitofp":
        return make_scalar(float(_s(x, src)), dst)
    if name == "uitofp":
        return make_scalar(float(_u(x, src)), dst)
    if name in ("fptosi", "fptoui"):
        f = float(x)
        if not math.isfinite(f):
            raise InterpError(f"arith.{name} of {f}: not representable in {dst}")
        return make_scalar(math.trunc(f), dst)
    if name in ("extf", "truncf"):
        return make_scalar(float(x), dst)
    if name == "bitcast":
        s, d = np_dtype(src), np_dtype(dst)
        if s.itemsize != d.itemsize:
            raise InterpError(f"arith.bitcast between {src} and {dst} of different widths")
        return np.asarray(x, dtype=s).reshape(1).view(d)[0]
    raise InterpError(f"unknown cast arith.{name}")


def eval_scalar(op: Op, vals: list, form: str):
    """The result of one scalar op (`form` from `pto.syntax.SCALAR_OPS`), as a NumPy scalar."""
    rt = _tname(op.results[0]) if op.results else None
    short = op.name.split(".", 1)[1]
    if form == "constant":
        v = op.attrs.get("value")
        if v is None:
            raise InterpError("arith.constant without a value")
        return make_scalar(v, rt)
    if form == "select":
        return vals[1] if bool(vals[0]) else vals[2]
    if form == "cmp":
        t = _tname(op.operands[0])
        pred = op.attrs.get("predicate")
        if op.name == "arith.cmpf":
            return np.bool_(_cmpf(str(pred), float(vals[0]), float(vals[1])))
        fn = _CMPI.get(str(pred))
        if fn is None:
            raise InterpError(f"unknown arith.cmpi predicate '{pred}'")
        conv = _u if str(pred).startswith("u") else _s
        return np.bool_(fn(conv(vals[0], t), conv(vals[1], t)))
    if form == "cast":
        return _cast(short, vals[0], _tname(op.operands[0]), rt)
    if is_float_name(rt):
        f = [float(v) for v in vals]
        with np.errstate(all="ignore"):
            if form == "binary":
                fn = _FLOAT_BINARY.get(short)
                args = f
            else:
                fn = _FLOAT_UNARY.get(short)
                args = f[:1]
            if fn is None:
                raise InterpError(f"{op.name} is not defined on floating-point type {rt}")
            return make_scalar(float(fn(*args)), rt)
    if form == "unary":
        if short != "absi":
            raise InterpError(f"{op.name} is not defined on integer type {rt}")
        return make_scalar(abs(_s(vals[0], rt)), rt)
    return make_scalar(_int_binary(short, int(vals[0]), int(vals[1]), rt), rt)


__all__ = ["eval_scalar"]
