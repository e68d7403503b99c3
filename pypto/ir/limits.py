"""What the compiler can build: element types that every target stores, and sizes that fit int64.

Every `BackendType` runs on the CPU: as native code (the C++ tile library) or in the NumPy
interpreter. Both store the same element types; the rest of `DataType` (the 4-bit, FP8 and
HiFloat types) can be written in the IR and in PTO text, but neither target can store or compute
them, so a program that uses one is refused before any pass runs instead of failing in a backend.
Dimensions are element counts in `index` (int64) arithmetic, and byte offsets are int64 too: a
dimension must be in [1, 2**63 - 1] and a tensor's size in bytes must fit as well.

One definition, read by the `pl` parser (a located error at the annotation or call) and by the
verifier's SupportedTypes rule (every program at the start of a compile, whatever built it).
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtype import DataType
from .types import ShapedType, TupleType, Type

INT64_MAX = (1 << 63) - 1
TARGETS = "the CPU and interpreter targets"

_FP16_OR_BF16 = "use pl.FP16 or pl.BF16, which hold every {name} value exactly (widen the data on the host: " \
                "a.astype(np.float16)); round results back to {name} on the host with ml_dtypes if needed"
# dtype -> (why no target has it, what to use instead)
_NO_TARGET: dict[DataType, tuple[str, str]] = {
    DataType.INT4: ("neither has 4-bit integer storage or arithmetic",
                    "use pl.INT8, which holds every INT4 value (widen the data on the host: a.astype(np.int8))"),
    DataType.UINT4: ("neither has 4-bit integer storage or arithmetic",
                     "use pl.UINT8, which holds every UINT4 value (widen the data on the host: a.astype(np.uint8))"),
    DataType.FP4: ("neither has FP4 (e2m1) arithmetic or conversions", _FP16_OR_BF16.format(name="FP4")),
    DataType.FP8E4M3FN: ("neither has FP8 arithmetic or conversions", _FP16_OR_BF16.format(name="FP8E4M3FN")),
    DataType.FP8E5M2: ("neither has FP8 arithmetic or conversions", _FP16_OR_BF16.format(name="FP8E5M2")),
    DataType.HF4: ("HiFloat4 has no NumPy type and no arithmetic in either", "use pl.FP16 or pl.BF16"),
    DataType.HF8: ("HiFloat8 has no NumPy type and no arithmetic in either", "use pl.FP16 or pl.BF16"),
}
UNSUPPORTED_DTYPES: frozenset[DataType] = frozenset(_NO_TARGET)


@dataclass(frozen=True)
class Problem:
    """Why a type cannot be built (`message`) and what to do instead (`hint`); `is_dtype`: the
    element type is the problem (else a dimension or the size)."""

    message: str
    hint: str
    is_dtype: bool = False

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}"


def dtype_problem(dt: DataType) -> Problem | None:
    """None when both targets store and compute `dt`."""
    got = _NO_TARGET.get(dt)
    if got is None:
        return None
    why, hint = got
    return Problem(f"element type pl.{dt.name} is not supported by {TARGETS} ({why})", hint, is_dtype=True)


def shape_problem(t: ShapedType) -> Problem | None:
    """None when every static dimension is in [1, 2**63 - 1] and the byte size fits in int64
    (dynamic dimensions count as 1: at least that many elements whatever they are bound to)."""
    from .expr import ConstInt

    n, dynamic = 1, False
    for i, d in enumerate(t.shape):
        if not isinstance(d, ConstInt):
            dynamic = True
            continue
        if not 1 <= d.value <= INT64_MAX:
            return Problem(f"dimension #{i} of {_text(t)} is {d.value}, outside [1, 2**63 - 1]",
                           "a dimension is an element count: give a positive size that fits in int64")
        n *= d.value
    nbytes = n * t.dtype.itemsize
    if nbytes > INT64_MAX:
        least = "at least " if dynamic else ""
        return Problem(f"{_text(t)} holds {least}{n} elements of {t.dtype.itemsize} byte(s) ({least}{nbytes} bytes), "
                       "more than the 2**63 - 1 bytes an int64 offset addresses",
                       "split the data into smaller tensors")
    return None


def type_problem(t: Type | None) -> Problem | None:
    """The first problem of a type: an element type no target has, or a dimension out of range."""
    if isinstance(t, TupleType):
        for x in t.types:
            p = type_problem(x)
            if p is not None:
                return p
        return None
    dt = getattr(t, "dtype", None)
    if isinstance(dt, DataType):
        p = dtype_problem(dt)
        if p is not None:
            return p
    return shape_problem(t) if isinstance(t, ShapedType) else None


def _text(t: ShapedType) -> str:
    from .printer import type_str

    return type_str(t)


__all__ = ["INT64_MAX", "UNSUPPORTED_DTYPES", "Problem", "dtype_problem", "shape_problem", "type_problem"]
