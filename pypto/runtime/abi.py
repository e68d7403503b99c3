"""ctypes mirrors of the C ABI in `include/pto_runtime.h` and `include/pto_runtime_host.h`.

The layouts are checked against the C side (`tests/runtime/test_abi.py` compiles the header and
compares sizes and offsets), so keep these in step with the headers.
"""

from __future__ import annotations

import ctypes
import enum
from pathlib import Path

import numpy as np

from pypto.errors import InvalidValue

ABI_VERSION = 2
MAX_DIMS = 8
MAX_ARGS = 1024

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
SRC_DIR = Path(__file__).resolve().parent / "src"


def include_dir() -> Path:
    """The folder holding `pto_runtime.h`, for compiling programs against the runtime ABI."""
    return INCLUDE_DIR


class ArgKind(enum.IntEnum):
    """`pto_arg.kind`: the access direction of a tensor argument, or the type of a scalar."""

    IN = 0
    OUT = 1
    INOUT = 2
    I64 = 3
    F64 = 4

    @property
    def is_tensor(self) -> bool:
        return self <= ArgKind.INOUT

    @classmethod
    def parse(cls, kind: ArgKind | str | int) -> ArgKind:
        if isinstance(kind, ArgKind):
            return kind
        if isinstance(kind, str):
            try:
                return _KIND_NAMES[kind.lower()]
            except KeyError:
                raise InvalidValue(f"unknown argument kind {kind!r}; expected one of "
                                 f"{', '.join(sorted(_KIND_NAMES))}") from None
        return cls(int(kind))


_KIND_NAMES = {"in": ArgKind.IN, "out": ArgKind.OUT, "inout": ArgKind.INOUT, "i64": ArgKind.I64,
               "f64": ArgKind.F64, "int": ArgKind.I64, "float": ArgKind.F64}


class SchedMode(enum.IntEnum):
    """Scheduling policy of a runtime (`pto_sched_mode`)."""

    FIFO = 0
    LOCALITY = 1

    @classmethod
    def parse(cls, mode: SchedMode | str | int) -> SchedMode:
        if isinstance(mode, SchedMode):
            return mode
        if isinstance(mode, str):
            try:
                return cls[mode.upper()]
            except KeyError:
                raise InvalidValue(f"unknown scheduling mode {mode!r}; expected 'fifo' or 'locality'") from None
        return cls(int(mode))


RUN_TRACE = 1
SUBMIT_HOLD = 1


class PtoTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype_bytes", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("strides", ctypes.c_int64 * MAX_DIMS),
        ("root", ctypes.c_void_p),
        ("root_nbytes", ctypes.c_int64),
    ]


class _PtoArgValue(ctypes.Union):
    _fields_ = [("t", PtoTensor), ("i", ctypes.c_int64), ("f", ctypes.c_double)]


class PtoArg(ctypes.Structure):
    _anonymous_ = ("v",)
    _fields_ = [("kind", ctypes.c_int32), ("reserved", ctypes.c_int32), ("v", _PtoArgValue)]


# The same layout as a NumPy record, for filling many arguments at once (scalars are stored in the
# `data` field's bytes, which the C union shares with `i` / `f`).
ARG_DTYPE = np.dtype({
    "names": ["kind", "reserved", "data", "dtype_bytes", "ndim", "shape", "strides", "root", "root_nbytes"],
    "formats": ["<i4", "<i4", "<u8", "<i4", "<i4", ("<i8", (MAX_DIMS,)), ("<i8", (MAX_DIMS,)), "<u8", "<i8"],
    "offsets": [0, 4, 8, 16, 20, 24, 88, 152, 160],
    "itemsize": 168,
})

KERNEL_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(PtoArg), ctypes.c_int32, ctypes.c_char_p)


class PtoProgram(ctypes.Structure):
    """The table of a program's entry points (`pto_program`); all fields are function pointers."""

    _fields_ = [
        ("abi_version", ctypes.c_void_p),
        ("num_kernels", ctypes.c_void_p),
        ("kernel_name", ctypes.c_void_p),
        ("kernel", ctypes.c_void_p),
        ("scratch_bytes", ctypes.c_void_p),
        ("run", ctypes.c_void_p),
    ]


class PtoTraceRecord(ctypes.Structure):
    _fields_ = [("task", ctypes.c_int64), ("kernel_id", ctypes.c_int32), ("worker", ctypes.c_int32),
                ("start_ns", ctypes.c_int64), ("end_ns", ctypes.c_int64)]


TRACE_DTYPE = np.dtype([("task", "<i8"), ("kernel_id", "<i4"), ("worker", "<i4"), ("start_ns", "<i8"),
                        ("end_ns", "<i8")])


class PtoRtStats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in
                ("tasks", "edges", "elapsed_ns", "max_live", "pool_slots", "steals", "helped", "roots")]


class PtoTaskDesc(ctypes.Structure):
    _fields_ = [
        ("fn", ctypes.c_void_p),
        ("args", ctypes.c_void_p),
        ("deps", ctypes.c_void_p),
        ("kernel_id", ctypes.c_int32),
        ("nargs", ctypes.c_int32),
        ("ndeps", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


TASK_DESC_DTYPE = np.dtype({
    "names": ["fn", "args", "deps", "kernel_id", "nargs", "ndeps", "reserved"],
    "formats": ["<u8", "<u8", "<u8", "<i4", "<i4", "<i4", "<i4"],
    "offsets": [0, 8, 16, 24, 28, 32, 36],
    "itemsize": 40,
})

assert ctypes.sizeof(PtoTensor) == 160 and ctypes.sizeof(PtoArg) == 168 == ARG_DTYPE.itemsize
assert ctypes.sizeof(PtoTraceRecord) == 32 == TRACE_DTYPE.itemsize
assert ctypes.sizeof(PtoTaskDesc) == 40 == TASK_DESC_DTYPE.itemsize

__all__ = ["ABI_VERSION", "ARG_DTYPE", "INCLUDE_DIR", "KERNEL_FN", "MAX_ARGS", "MAX_DIMS", "RUN_TRACE",
           "SUBMIT_HOLD", "TASK_DESC_DTYPE", "TRACE_DTYPE", "ArgKind", "PtoArg", "PtoProgram", "PtoRtStats",
           "PtoTaskDesc", "PtoTensor", "PtoTraceRecord", "SchedMode", "include_dir"]
