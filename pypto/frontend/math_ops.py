"""The rest of the reference's `math.py` family (§1.4) as `pypto.<name>`: trig / hyperbolic / error
functions, sign and the BOOL predicates, pow / atan2 / hypot / copysign, the C- and Python-style
remainders and rounded divisions, gcd, bitwise and logical ops, and the small composites (axpy_,
lrelu, prelu, expand_exp_dif, var). Also the Python operators `** % // & | ^ ~ << >>` on tensors.

Registry ops (pypto/ops/elementwise_math.py, elementwise.py) carry the primitives; `remainder`
etc. are registry ops too (exact in one pass). Composites, and what they are made of:
`logical_and/or/xor` (BOOL masks, then `and_` / `or_` / `xor`), `lrelu` / `prelu` (a compare and
a select), `expand_exp_dif` (`exp(a - b)`), `var` (mean, centred squares, sum), `axpy_`.
A number on either side of a binary op is filled into a tensor of the other operand's shape and
dtype (ops with a scalar form, fmod and the bitwise ops, use it when the number is on the right).
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ops.registry import tensor_ops as T

from . import ops
from .ops import _emit, _filled, _scalar, compare_numeric, to_bool
from .symbolic import SymbolicScalar
from .tensor import Tensor
from .trace import FrontendError, user_span


def _tensor(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise FrontendError(f"pypto.{name}: expected a pypto.Tensor, got {type(x).__name__}", user_span())
    return x


def _need_float(name: str, *ts: Tensor) -> None:
    for t in ts:
        if not t.dtype.is_float:
            raise FrontendError(f"pypto.{name}: needs a floating-point tensor, got {t.dtype.name}", user_span(),
                                hint=f"cast first: pypto.{name}(pypto.cast(x, pypto.DT_FP32))")


def _need_int(name: str, *ts: Tensor) -> None:
    for t in ts:
        if not (t.dtype.is_int or t.dtype is DataType.BOOL):
            raise FrontendError(f"pypto.{name}: needs an integer (or BOOL) tensor, got {t.dtype.name}", user_span(),
                                hint="cast first: pypto.cast(x, pypto.DT_INT32)")


def _pair(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Both operands as tensors: a number takes the other operand's dtype and shape."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a, b
    if isinstance(a, Tensor):
        return a, _filled(b, a)
    if isinstance(b, Tensor):
        return _filled(a, b), b
    raise FrontendError(f"pypto.{name} needs a tensor operand", user_span())


# ---------------------------------------------------------------------------------------------
# unary

def _float_unary(name: str, doc: str):
    def fn(input: Tensor) -> Tensor:  # noqa: A002
        x = _tensor(input, name)
        _need_float(name, x)
        return _emit(getattr(T, name), [x._value()], hint=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"pypto.{name}: {doc}, elementwise (floating-point tensors; computed in fp32)."
    return fn


tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, erfc, cbrt = (
    _float_unary(n, d) for n, d in (
        ("tan", "tangent"), ("asin", "arc sine, NaN outside [-1, 1]"), ("acos", "arc cosine, NaN outside [-1, 1]"),
        ("atan", "arc tangent"), ("sinh", "hyperbolic sine"), ("cosh", "hyperbolic cosine"),
        ("asinh", "inverse hyperbolic sine"), ("acosh", "inverse hyperbolic cosine, NaN below 1"),
        ("atanh", "inverse hyperbolic tangent, +-inf at +-1"), ("erf", "error function"), ("erfc", "1 - erf(x)"),
        ("cbrt", "cube root")))


def sign(input: Tensor) -> Tensor:  # noqa: A002
    """-1, 0 or 1 in the input's dtype (NaN stays NaN)."""
    return _emit(T.sign, [_tensor(input, "sign")._value()], hint="sign")


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: True where the element is NaN."""
    return _emit(T.isnan, [_tensor(input, "isnan")._value()], hint="isnan")


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: True where the element is neither NaN nor infinite."""
    return _emit(T.isfinite, [_tensor(input, "isfinite")._value()], hint="isfinite")


def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: True where the sign bit is set (-0.0 included)."""
    return _emit(T.signbit, [_tensor(input, "signbit")._value()], hint="signbit")


# ---------------------------------------------------------------------------------------------
# binary

def _binary(name: str, a: Any, b: Any, *, float_only: bool = False, int_only: bool = False,
            op_name: str | None = None) -> Tensor:
    x, y = _pair(name, a, b)
    if float_only:
        _need_float(name, x, y)
    if int_only:
        _need_int(name, x, y)
    return _emit(getattr(T, op_name or name), [x._value(), y._value()], hint=name)


def pow(input: Any, exponent: Any, precision_type: Any = None) -> Tensor:  # noqa: A001,A002
    """input ** exponent (floating point); either side may be a number."""
    return _binary("pow", input, exponent, float_only=True)


def atan2(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The angle of the point (other, input), in (-pi, pi]."""
    return _binary("atan2", input, other, float_only=True)


def hypot(input: Any, other: Any) -> Tensor:  # noqa: A002
    """sqrt(input**2 + other**2) without intermediate overflow."""
    return _binary("hypot", input, other, float_only=True)


def copysign(input: Any, other: Any) -> Tensor:  # noqa: A002
    """|input| with the sign bit of other (so -0.0 counts as negative)."""
    return _binary("copysign", input, other, float_only=True)


def fmod(input: Any, other: Any, precision_type: Any = None) -> Tensor:  # noqa: A002
    """C-style remainder: the sign of the dividend (integers: x fmod 0 = 0)."""
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        return _emit(T.fmod_scalar, [input._value(), _scalar(other, input.dtype)], hint="fmod")
    return _binary("fmod", input, other)


def remainder(input: Any, other: Any, precision_type: Any = None) -> Tensor:  # noqa: A002
    """Python-style remainder: the sign of the divisor (integers: x % 0 = 0)."""
    return _binary("remainder", input, other)


def floor_div(input: Any, other: Any) -> Tensor:  # noqa: A002
    """floor(input / other): floats floor the rounded quotient; integers exact (x // 0 = 0)."""
    return _binary("floor_div", input, other)


def ceil_div(input: Any, other: Any) -> Tensor:  # noqa: A002
    """ceil(input / other): integers exact (x / 0 = 0); floats ceil the rounded quotient."""
    return _binary("ceil_div", input, other)


def gcd(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Greatest common divisor of integers, non-negative."""
    return _binary("gcd", input, other, int_only=True)


_BITWISE = {"bitwise_and": (T.and_, T.and_scalar), "bitwise_or": (T.or_, T.or_scalar),
            "bitwise_xor": (T.xor, T.xor_scalar), "bitwise_left_shift": (T.shl, T.shl_scalar),
            "bitwise_right_shift": (T.shr, T.shr_scalar)}


def _bitwise(name: str, a: Any, b: Any) -> Tensor:
    op, scalar_op = _BITWISE[name]
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        _need_int(name, a)
        return _emit(scalar_op, [a._value(), _int_scalar(name, b, a.dtype)], hint=name)
    x, y = _pair(name, a, b)
    _need_int(name, x, y)
    return _emit(op, [x._value(), y._value()], hint=name)


def _int_scalar(name: str, v: Any, dtype: DataType):
    if isinstance(v, float) and not v.is_integer():
        raise FrontendError(f"pypto.{name}: needs an integer operand, got {v}", user_span())
    return _scalar(v, dtype)


def bitwise_and(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _bitwise("bitwise_and", input, other)


def bitwise_or(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _bitwise("bitwise_or", input, other)


def bitwise_xor(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input << other (a count outside [0, bits) gives 0)."""
    return _bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input >> other, arithmetic for signed types."""
    return _bitwise("bitwise_right_shift", input, other)


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """~x for integers; logical not for a BOOL tensor."""
    x = _tensor(input, "bitwise_not")
    _need_int("bitwise_not", x)
    return _emit(T.not_, [x._value()], hint="bitwise_not")


# ---------------------------------------------------------------------------------------------
# logical (BOOL results)

def _as_mask(v: Any, like: Tensor | None, name: str) -> Tensor:
    if isinstance(v, Tensor):
        return to_bool(v) if v.dtype is DataType.BOOL else ops._compare("ne", v, 0)
    if like is None:
        raise FrontendError(f"pypto.{name} needs a tensor operand", user_span())
    return _filled(bool(v), like)


def _logical(name: str, op, a: Any, b: Any) -> Tensor:
    x = _as_mask(a, None, name) if isinstance(a, Tensor) else None
    y = _as_mask(b, x, name)
    x = x if x is not None else _as_mask(a, y, name)
    return _emit(op, [x._value(), y._value()], hint=name)


def logical_and(input: Any, other: Any) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: both non-zero."""
    return _logical("logical_and", T.and_, input, other)


def logical_or(input: Any, other: Any) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: either non-zero."""
    return _logical("logical_or", T.or_, input, other)


def logical_xor(input: Any, other: Any) -> Tensor:  # noqa: A002
    """A DT_BOOL mask: exactly one non-zero."""
    return _logical("logical_xor", T.xor, input, other)


# ---------------------------------------------------------------------------------------------
# composites

def axpy_(y: Tensor, x: Any, alpha: Any = 1.0) -> Tensor:
    """In place: y = alpha * x + y (x may broadcast, y keeps its shape and dtype); returns y."""
    yt = _tensor(y, "axpy_")
    r = ops.add(yt, x if alpha == 1 else ops.mul(x, alpha))
    if tuple(r.shape) != tuple(yt.shape) or r.dtype is not yt.dtype:
        raise FrontendError(f"pypto.axpy_: the result {list(r.shape)} {r.dtype.name} does not fit y "
                            f"{list(yt.shape)} {yt.dtype.name} (y is updated in place; only x broadcasts)", user_span())
    return yt.move(r)


def lrelu(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """x where x > 0, else negative_slope * x."""
    x = _tensor(input, "lrelu")
    _need_float("lrelu", x)
    return _emit(T.sel, [compare_numeric("gt", x, 0)._value(), x._value(), ops.mul(x, negative_slope)._value()],
                 hint="lrelu")


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x where x > 0, else weight * x; weight broadcasts NumPy-style against x (e.g. [C] or [1, C])."""
    x = _tensor(input, "prelu")
    w = _tensor(weight, "prelu")
    _need_float("prelu", x, w)
    if len(w.shape) < len(x.shape):
        w = ops.reshape(w, [1] * (len(x.shape) - len(w.shape)) + list(w.shape))
    return _emit(T.sel, [compare_numeric("gt", x, 0)._value(), x._value(), ops.mul(x, w)._value()], hint="prelu")


def expand_exp_dif(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """exp(input - other), other broadcast (e.g. a row maximum [R, 1] against [R, C])."""
    return ops.exp(ops.sub(input, other))


def var(input: Tensor, dim: Any = None, correction: int = 1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Variance: sum((x - mean)^2) / (n - correction) along `dim` (None: over every element; the result
    then has shape [1], or all-ones dims with keepdim)."""
    x = _tensor(input, "var")
    _need_float("var", x)
    rank = len(x.shape)
    if dim is None:
        flat = ops.reshape(x, [-1])
        r = var(flat, -1, correction, keepdim=True)
        return ops.reshape(r, [1] * rank) if keepdim else r
    d = dim[0] if isinstance(dim, (list, tuple)) and len(dim) == 1 else dim
    if not isinstance(d, int) or not -rank <= d < rank:
        raise FrontendError(f"pypto.var: dim {dim!r} out of range for rank {rank}", user_span())
    n = x.shape[d % rank]
    if isinstance(n, SymbolicScalar) or not isinstance(n, int):
        raise FrontendError(f"pypto.var: dim {d} has a run-time size; the divisor must be known while tracing",
                            user_span())
    if n - correction <= 0:
        raise FrontendError(f"pypto.var: correction {correction} leaves no degrees of freedom for {n} elements",
                            user_span())
    xc = ops.sub(x, ops.mul(ops.sum(x, d, keepdim=True), 1.0 / n))  # (sum: it also reduces dim 0 of a 2-D tensor)
    return ops.mul(ops.sum(ops.mul(xc, xc), d, keepdim), 1.0 / (n - correction))


# ---------------------------------------------------------------------------------------------
# Python operators and method forms on Tensor

def _reflect(fn):
    return lambda self, other: fn(other, self)


for _dunder, _fn in (("pow", pow), ("mod", remainder), ("floordiv", floor_div), ("and", bitwise_and),
                     ("or", bitwise_or), ("xor", bitwise_xor), ("lshift", bitwise_left_shift),
                     ("rshift", bitwise_right_shift)):
    setattr(Tensor, f"__{_dunder}__", _fn)
    setattr(Tensor, f"__r{_dunder}__", _reflect(_fn))
Tensor.__invert__ = bitwise_not

NAMES = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "cbrt", "sign",
         "isnan", "isfinite", "signbit", "pow", "atan2", "hypot", "copysign", "fmod", "remainder", "floor_div",
         "ceil_div", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
         "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "axpy_", "lrelu", "prelu",
         "expand_exp_dif", "var")
for _name in NAMES:
    if _name != "expand_exp_dif":
        setattr(Tensor, _name, globals()[_name])
for _name in ("logical_not", "eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tensor, _name, getattr(ops, _name))
Tensor.greater = ops.gt

__all__ = [*NAMES]
