"""Data types: the 20 element types of the seed guide, with bit widths, codes and NumPy dtypes.

A `DataType` is an enum member (`DataType.FP32`, re-exported as `pl.FP32` and `pypto.DataType`).
Codes are the values serialization stores; they follow the public PyPTO numbering so files are
readable by people who know it.
"""

from __future__ import annotations

import enum
from functools import cached_property

import ml_dtypes
import numpy as np

from pypto.errors import InvalidType, InvalidValue


class DataType(enum.Enum):
    # name = (code, bits, short text name). The derived facts below are cached on each member: type
    # rules ask for them for every dimension and operand.
    BOOL = (0x00, 1, "bool")
    INT4 = (0x10, 4, "int4")
    INT8 = (0x11, 8, "int8")
    INT16 = (0x12, 16, "int16")
    INT32 = (0x13, 32, "int32")
    INT64 = (0x14, 64, "int64")
    INDEX = (0x15, 64, "index")
    UINT4 = (0x20, 4, "uint4")
    UINT8 = (0x21, 8, "uint8")
    UINT16 = (0x22, 16, "uint16")
    UINT32 = (0x23, 32, "uint32")
    UINT64 = (0x24, 64, "uint64")
    FP4 = (0x30, 4, "fp4")
    FP8E4M3FN = (0x31, 8, "fp8e4m3fn")
    FP8E5M2 = (0x32, 8, "fp8e5m2")
    FP16 = (0x33, 16, "fp16")
    FP32 = (0x34, 32, "fp32")
    BF16 = (0x40, 16, "bfloat16")
    HF4 = (0x41, 4, "hf4")
    HF8 = (0x42, 8, "hf8")

    @cached_property
    def code(self) -> int:
        return self.value[0]

    @cached_property
    def bits(self) -> int:
        return self.value[1]

    @cached_property
    def text(self) -> str:
        """Short lowercase name (`fp32`, `bfloat16`, `index`, ...)."""
        return self.value[2]

    @cached_property
    def is_float(self) -> bool:
        return self in _FLOATS

    @cached_property
    def is_int(self) -> bool:
        """True for signed/unsigned integers and INDEX (not BOOL)."""
        return self in _SIGNED or self in _UNSIGNED

    @cached_property
    def is_signed(self) -> bool:
        return self in _SIGNED or self.is_float

    @cached_property
    def is_unsigned(self) -> bool:
        return self in _UNSIGNED

    @property
    def is_bool(self) -> bool:
        return self is DataType.BOOL

    @property
    def int_range(self) -> tuple[int, int]:
        """(min, max) of an integer type (INDEX is a signed 64-bit integer)."""
        b = self.bits
        return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if self.is_signed else (0, (1 << b) - 1)

    @cached_property
    def itemsize(self) -> int:
        """Bytes per element as stored: in NumPy arrays, in tiles (memory planning) and in the C++
        backend. Sub-byte types (BOOL, the 4-bit ones) take a whole byte each, so this, not `bits`,
        is what every byte size and address computation uses."""
        return max(1, self.bits // 8)

    @cached_property
    def numpy(self) -> np.dtype | None:
        """The NumPy dtype holding values of this type, or None where none exists (HF4/HF8)."""
        return _NUMPY.get(self)

    def to_numpy(self) -> np.dtype:
        dt = self.numpy
        if dt is None:
            raise InvalidType(f"{self.name} has no NumPy equivalent on the CPU")
        return dt

    @staticmethod
    def from_numpy(dtype) -> DataType:
        dt = np.dtype(dtype)
        for k, v in _NUMPY.items():
            if v == dt and k is not DataType.INDEX:
                return k
        if dt == np.float64:
            raise InvalidType("float64 arrays are not supported: PyPTO has no FP64 type; cast to float32")
        raise InvalidType(f"NumPy dtype {dt} has no PyPTO DataType")

    @staticmethod
    def from_text(text: str) -> DataType:
        t = text.strip()
        if t.startswith("pl."):
            t = t[3:]
        if t in DataType.__members__:
            return DataType[t]
        for m in DataType:
            if m.text == t.lower():
                return m
        alias = _TEXT_ALIASES.get(t.lower())
        if alias is not None:
            return alias
        raise InvalidValue(f"unknown data type {text!r}")

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    def __str__(self) -> str:
        return self.text


_FLOATS = frozenset(
    {DataType.FP4, DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.FP16, DataType.FP32, DataType.BF16,
     DataType.HF4, DataType.HF8}
)
_SIGNED = frozenset({DataType.INT4, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64, DataType.INDEX})
_UNSIGNED = frozenset({DataType.UINT4, DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64})

_NUMPY: dict[DataType, np.dtype] = {
    DataType.BOOL: np.dtype(np.bool_),
    DataType.INT4: np.dtype(ml_dtypes.int4),
    DataType.INT8: np.dtype(np.int8),
    DataType.INT16: np.dtype(np.int16),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT64: np.dtype(np.int64),
    DataType.INDEX: np.dtype(np.int64),
    DataType.UINT4: np.dtype(ml_dtypes.uint4),
    DataType.UINT8: np.dtype(np.uint8),
    DataType.UINT16: np.dtype(np.uint16),
    DataType.UINT32: np.dtype(np.uint32),
    DataType.UINT64: np.dtype(np.uint64),
    DataType.FP4: np.dtype(ml_dtypes.float4_e2m1fn),
    DataType.FP8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    DataType.FP8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DataType.FP16: np.dtype(np.float16),
    DataType.FP32: np.dtype(np.float32),
    DataType.BF16: np.dtype(ml_dtypes.bfloat16),
}

_TEXT_ALIASES = {
    "float32": DataType.FP32, "f32": DataType.FP32, "float": DataType.FP32,
    "float16": DataType.FP16, "f16": DataType.FP16, "half": DataType.FP16,
    "bf16": DataType.BF16, "i32": DataType.INT32, "i64": DataType.INT64, "i8": DataType.INT8,
    "i16": DataType.INT16, "u8": DataType.UINT8, "ui8": DataType.UINT8, "int": DataType.INT64,
}

_BY_CODE = {m.code: m for m in DataType}


def dtype_from_code(code: int) -> DataType:
    try:
        return _BY_CODE[code]
    except KeyError:
        raise InvalidValue(f"unknown data type code {code:#x}") from None


def _rank(dt: DataType) -> tuple[int, int, int]:
    """Promotion order: float beats int beats bool; wider beats narrower; signed beats unsigned."""
    kind = 2 if dt.is_float else (1 if dt.is_int else 0)
    return (kind, dt.bits, 1 if dt.is_signed else 0)


def promote(a: DataType, b: DataType) -> DataType:
    """Result type of a binary op on `a` and `b` (reference §1.2 promotion rules).

    float beats int, wider beats narrower, signed beats unsigned of equal width. INDEX with a
    64-bit integer stays INDEX (it is the loop/shape type); BF16 with FP16 gives FP32.
    """
    if a is b:
        return a
    if {a, b} == {DataType.BF16, DataType.FP16}:
        return DataType.FP32
    if a is DataType.INDEX and b.is_int and not b.is_float:
        return a if b.bits <= 64 else b
    if b is DataType.INDEX and a.is_int and not a.is_float:
        return b
    return a if _rank(a) >= _rank(b) else b
