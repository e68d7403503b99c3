"""Position-valued ops of the tensor level (reference §1.4 creation.py `arange`, math.py `triu` /
`tril`, matmul.py `scaled_mm`).

`arange` is the registry's `ci` (`pl.arange`): a [1, N] row of start + j * step, reshaped to 1-D.
`triu` / `tril` compare column minus row indices with the diagonal and select: the column index is
`ci` over the last dim ([1, N]); the row index is `ci` over the rows reshaped into a column
([M, 1]); both broadcast against x, so positions count within x itself (a view of a bigger tensor
too). `scaled_mm` dequantises each 32-wide K group of a and b by its block scale, then multiplies in
fp32 (see its docstring for the scale layout).
"""

from __future__ import annotations

import math
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstFloat, ConstInt, MakeTuple
from pypto.ops.registry import tensor_ops as T

from . import ops
from .ops import _emit
from .symbolic import SymbolicScalar
from .tensor import Tensor, to_dtype
from .trace import FrontendError, user_span


def _fail(what: str, msg: str, hint: str | None = None) -> FrontendError:
    return FrontendError(f"pypto.{what}: {msg}", user_span(), hint=hint)


def _number(what: str, name: str, v: Any) -> int | float:
    if type(v).__name__ == "Element" and hasattr(v, "value"):
        v = v.value
    if isinstance(v, SymbolicScalar):
        raise _fail(what, f"{name} is a run-time value; the length of a range must be known while tracing",
                    hint="use Python numbers (or static dims) for start, end and step")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _fail(what, f"{name} must be a number, got {type(v).__name__}")
    return v


def ci_row(what: str, start: int | float, n: int, step: int | float, dtype: DataType) -> Tensor:
    """The registry `ci`: a [1, n] tensor of start + j * step."""
    if dtype.is_float:
        s0, st = ConstFloat(float(start), DataType.FP32), ConstFloat(float(step), DataType.FP32)
    else:
        s0, st = ConstInt(int(start), DataType.INDEX), ConstInt(int(step), DataType.INDEX)
    shape = MakeTuple((ConstInt(1, DataType.INDEX), ConstInt(n, DataType.INDEX)))
    return _emit(T.ci, [s0, shape, st], {"dtype": dtype, "descending": False}, hint=what)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None) -> Tensor:
    """`arange(end)`, `arange(start, end)`, `arange(start, end, step)`: the 1-D tensor start, start +
    step, ... up to (not including) end; int32 when every argument is an int, else fp32, or `dtype`."""
    if end is None:
        start, end = 0, start
    s0, e, st = (_number("arange", n, v) for n, v in (("start", start), ("end", end), ("step", step)))
    if st == 0:
        raise _fail("arange", "step must not be 0")
    floats = any(isinstance(v, float) for v in (s0, e, st))
    dt = (DataType.FP32 if floats else DataType.INT32) if dtype is None else to_dtype(dtype, "pypto.arange")
    if dt not in (DataType.INT32, DataType.INT16, DataType.FP32, DataType.FP16, DataType.BF16):
        raise _fail("arange", f"dtype {dt.name}: a range is INT32, INT16, FP32, FP16 or BF16")
    if not dt.is_float and floats and not all(float(v).is_integer() for v in (s0, st)):
        raise _fail("arange", f"an {dt.name} range needs integer start and step, got {s0} and {st}")
    n = math.ceil((e - s0) / st) if floats else -((s0 - e) // st)  # (integers: exact ceil division)
    if n <= 0:
        raise _fail("arange", f"the range [{s0}, {e}) with step {st} is empty",
                    hint="a positive step needs start < end, a negative one start > end")
    return ops.reshape(ci_row("arange", s0, n, st, dt), [n])


# ---------------------------------------------------------------------------------------------
# triu / tril


def _static(what: str, d: Any, which: str) -> int:
    if not isinstance(d, int):
        raise _fail(what, f"the {which} count of x is {d}, a run-time size; {what} builds its row and column "
                    "indices as tensors of a static length",
                    hint="take a view with a static number of rows (e.g. inside a pypto.loop over row blocks)")
    return d


def _tri(what: str, x: Any, diagonal: Any, upper: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise _fail(what, f"expected a pypto.Tensor, got {type(x).__name__}")
    shape = list(x.shape)
    if len(shape) < 2:
        raise _fail(what, f"needs a tensor of at least 2 dims, got rank {len(shape)}")
    if not isinstance(diagonal, (int, SymbolicScalar)) or isinstance(diagonal, bool):
        raise _fail(what, f"diagonal must be an int or a SymbolicScalar, got {type(diagonal).__name__}")
    n = _static(what, shape[-1], "column")
    lead = [_static(what, d, "row" if k == len(shape) - 2 else "leading dim") for k, d in enumerate(shape[:-1])]
    m, rows = lead[-1], math.prod(lead)
    col = ci_row(what, 0, n, 1, DataType.INT32)  # [1, N]
    row = ci_row(what, 0, rows, 1, DataType.INT32)  # [1, rows]: the row of x within its matrix ...
    if rows != m:
        row = ops._emit(T.fmod_scalar, [row._value(), ConstInt(m, DataType.INT32)], hint=what)  # ... (mod M)
    row = ops.reshape(row, [rows, 1])  # [rows, 1]: the same bytes seen as a column
    diff = ops.sub(col, row)  # [rows, N]: j - i
    keep = ops.ge(diff, diagonal) if upper else ops.le(diff, diagonal)
    flat = x if len(shape) == 2 else ops.reshape(x, [rows, n])
    out = ops.where(keep, flat, 0)
    return out if len(shape) == 2 else ops.reshape(out, shape)


def triu(input: Tensor, diagonal: Any = 0) -> Tensor:  # noqa: A002
    """x with the elements below the `diagonal`-th diagonal zeroed (kept where column - row >= diagonal),
    over the last two dims."""
    return _tri("triu", input, diagonal, True)


def tril(input: Tensor, diagonal: Any = 0) -> Tensor:  # noqa: A002
    """x with the elements above the `diagonal`-th diagonal zeroed (kept where column - row <= diagonal),
    over the last two dims."""
    return _tri("tril", input, diagonal, False)


for _name in ("triu", "tril"):  # method forms (reference §1.2)
    setattr(Tensor, _name, globals()[_name])


__all__ = ["arange", "tril", "triu"]
