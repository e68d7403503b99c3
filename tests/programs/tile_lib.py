"""Build-and-call harness for the C++ tile-instruction library tests.

A test module describes its cases as `Entry`s (tile declarations + one C++ statement); the harness
turns a whole table into one translation unit, builds it through `pypto.support.native_build`
(cached by content hash) and calls entries through ctypes with NumPy buffers.

Every entry has the C signature `void f(void** p, int* iv, double* dv)`: p[i] is the
buffer of tile i (a full Rows x Cols array), iv[2i], iv[2i+1] its valid rows / cols; iv[2n:] and dv
carry extra integer / floating arguments.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

import pypto
from pypto.backend.cpu.lowering import instruction_source
from pypto.support.native_build import build_and_load

INCLUDE = Path(pypto.__file__).parent / "backend" / "cpu" / "include"

# PTO type name -> (C++ type, NumPy dtype)
DT = {
    "f32": ("float", np.dtype(np.float32)),
    "f16": ("pto::half", np.dtype(np.float16)),
    "bf16": ("pto::bf16", np.dtype(ml_dtypes.bfloat16)),
    "i8": ("int8_t", np.dtype(np.int8)),
    "i16": ("int16_t", np.dtype(np.int16)),
    "i32": ("int32_t", np.dtype(np.int32)),
    "i64": ("int64_t", np.dtype(np.int64)),
    "ui8": ("uint8_t", np.dtype(np.uint8)),
    "ui16": ("uint16_t", np.dtype(np.uint16)),
    "ui32": ("uint32_t", np.dtype(np.uint32)),
    "ui64": ("uint64_t", np.dtype(np.uint64)),
    "i1": ("bool", np.dtype(np.bool_)),
}

PRELUDE = """#include "pto/pto.hpp"
""" + instruction_source() + """#define EXPORT extern "C" __attribute__((visibility("default")))
EXPORT const char* pto_isa() { return pto::kIsa; }
"""


@dataclass(frozen=True)
class TileSpec:
    dtype: str
    rows: int
    cols: int
    loc: str = "Vec"

    @property
    def cpp(self) -> str:
        return f"pto::Tile<{DT[self.dtype][0]}, {self.rows}, {self.cols}, pto::Loc::{self.loc}>"

    @property
    def np(self) -> np.dtype:
        return DT[self.dtype][1]


@dataclass(frozen=True)
class Entry:
    name: str
    tiles: tuple[TileSpec, ...]
    body: str  # C++ using t0, t1, ..., iv, dv, p

    def source(self) -> str:
        n = len(self.tiles)
        decls = "".join(f"  {t.cpp} t{i}(p[{i}], iv[{2 * i}], iv[{2 * i + 1}]);\n" for i, t in enumerate(self.tiles))
        return (f"EXPORT void {self.name}(void** p, int* iv, double* dv) {{\n{decls}"
                f"  int* ix = iv + {2 * n}; (void)ix; (void)dv;\n  {self.body};\n}}\n")


@dataclass
class Lib:
    entries: dict[str, Entry]
    cdll: ctypes.CDLL
    isa: str = field(default="")

    def call(self, name: str, bufs: list[np.ndarray], valid: list[tuple[int, int]], ints=(), dbls=()):
        ptrs = (ctypes.c_void_p * max(1, len(bufs)))(*[b.ctypes.data for b in bufs])
        iv_list = [x for rc in valid for x in rc] + list(ints)
        iv = (ctypes.c_int * max(1, len(iv_list)))(*iv_list)
        dv = (ctypes.c_double * max(1, len(dbls)))(*dbls)
        fn = getattr(self.cdll, name)
        fn.restype = None
        fn(ptrs, iv, dv)


def build(entries: list[Entry], name: str, flags: tuple[str, ...] = ()) -> Lib:
    src = PRELUDE + "".join(e.source() for e in entries)
    cdll, _ = build_and_load(src, name, include_dirs=(INCLUDE,), extra_flags=flags)
    fn = cdll.pto_isa
    fn.restype = ctypes.c_char_p
    return Lib({e.name: e for e in entries}, cdll, fn().decode())


# ---------------------------------------------------------------------------------------------
# data

def rand(dtype: np.dtype, shape, rng: np.random.Generator, lo=-4.0, hi=4.0) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a, b = max(info.min, int(lo * 16)), min(info.max, int(hi * 16))
        return rng.integers(a, b + 1, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(dtype)


def sentinel(dtype: np.dtype, shape) -> np.ndarray:
    """A recognisable fill for destination padding (must survive unchanged)."""
    if dtype == np.bool_:
        return np.ones(shape, np.bool_)
    if dtype.kind in "iu":
        return np.full(shape, 77, dtype)
    return np.full(shape, -1234.5, np.float32).astype(dtype)


def garbage(arr: np.ndarray, valid: tuple[int, int], rng) -> np.ndarray:
    """Fill a source's padding with values that would poison results if read (NaN / extremes)."""
    out = arr.copy()
    mask = np.ones(arr.shape, bool)
    mask[: valid[0], : valid[1]] = False
    if arr.dtype.kind in "iu":
        out[mask] = np.iinfo(arr.dtype).max
    elif arr.dtype != np.bool_:
        out[mask] = np.nan
    return out


def same_bits_or_nan(got: np.ndarray, want: np.ndarray) -> bool:
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype.kind in "iub" or g.dtype == np.bool_:
        return bool(np.array_equal(g, w))
    g32, w32 = g.astype(np.float32), w.astype(np.float32)
    return bool(np.all((g32 == w32) | (np.isnan(g32) & np.isnan(w32))))


def ulp_diff(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of `got`'s dtype (NaN==NaN and inf==inf count 0)."""
    dt = got.dtype
    w = np.asarray(want).astype(np.float64)
    g = got.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w.astype(dt).astype(np.float64))
    same = (g == w.astype(dt).astype(np.float64)) | both_nan
    spacing = np.abs(np.spacing(np.abs(w).astype(dt) if dt != ml_dtypes.bfloat16 else
                                np.abs(w).astype(dt))).astype(np.float64)
    if dt == ml_dtypes.bfloat16:
        spacing = np.abs(w).astype(np.float32) * 2.0 ** -7 + 1e-40
    d = np.where(same, 0.0, np.abs(g - w) / np.maximum(spacing, 1e-45))
    return np.where(np.isfinite(d), d, np.where(same, 0.0, np.inf))
