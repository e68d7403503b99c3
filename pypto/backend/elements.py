"""PTO element type names and the `DataType` each one holds: one table for both backends.

Bytes per element are `DataType.itemsize` (one byte for `i1` and the 4-bit types), the definition
memory planning sizes tiles with, so a backend addresses a tile exactly where the planner put it.
"""

from __future__ import annotations

from pypto.ir.dtype import DataType

ELEMENTS: dict[str, DataType] = {
    "i1": DataType.BOOL, "i4": DataType.INT4, "i8": DataType.INT8, "i16": DataType.INT16, "i32": DataType.INT32,
    "i64": DataType.INT64, "index": DataType.INDEX, "ui4": DataType.UINT4, "ui8": DataType.UINT8,
    "ui16": DataType.UINT16, "ui32": DataType.UINT32, "ui64": DataType.UINT64, "f4": DataType.FP4,
    "f8e4m3": DataType.FP8E4M3FN, "f8e5m2": DataType.FP8E5M2, "f16": DataType.FP16, "bf16": DataType.BF16,
    "f32": DataType.FP32,
}

__all__ = ["ELEMENTS"]
