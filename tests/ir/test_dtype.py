"""The 20 data types: bit widths, codes, NumPy dtypes (ml_dtypes for bf16, fp8, int4, fp4), text."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import DataType
from pypto.ir.dtype import dtype_from_code

BITS = {"BOOL": 1, "INT4": 4, "UINT4": 4, "INT8": 8, "UINT8": 8, "INT16": 16, "UINT16": 16, "INT32": 32, "UINT32": 32,
        "INT64": 64, "UINT64": 64, "FP16": 16, "BF16": 16, "FP32": 32, "FP4": 4, "FP8E4M3FN": 8, "FP8E5M2": 8,
        "HF4": 4, "HF8": 8, "INDEX": 64}


def test_twenty_types_with_bits():
    assert {d.name for d in DataType} == set(BITS)
    for name, bits in BITS.items():
        assert getattr(pl, name) is DataType[name]
        assert DataType[name].bits == bits


@pytest.mark.parametrize("dt, np_dt", [(DataType.BF16, ml_dtypes.bfloat16), (DataType.FP8E4M3FN, ml_dtypes.float8_e4m3fn),
                                       (DataType.FP8E5M2, ml_dtypes.float8_e5m2), (DataType.INT4, ml_dtypes.int4),
                                       (DataType.FP4, ml_dtypes.float4_e2m1fn), (DataType.FP32, np.float32),
                                       (DataType.INDEX, np.int64), (DataType.BOOL, np.bool_)])
def test_numpy_dtypes(dt, np_dt):
    assert dt.to_numpy() == np.dtype(np_dt)


def test_ascend_formats_have_no_numpy_dtype():
    for dt in (DataType.HF4, DataType.HF8):
        assert dt.numpy is None
        with pytest.raises(TypeError, match="no NumPy equivalent"):
            dt.to_numpy()


def test_codes_round_trip_and_text_names():
    for d in DataType:
        assert dtype_from_code(d.code) is d
        assert DataType.from_text(d.text) is d
    assert DataType.from_text("bfloat16") is DataType.BF16 and DataType.from_text("pl.FP32") is DataType.FP32
    assert DataType.INDEX is not DataType.INT64  # distinct type, same width
    assert DataType.from_numpy(np.float16) is DataType.FP16
    with pytest.raises(TypeError, match="float64"):
        DataType.from_numpy(np.float64)
