"""Runtime values of the interpreter: element types, scalars, tiles in byte arenas, DDR windows.

Scalars are NumPy scalars of their PTO type (`index` is int64, `i1` is bool). A tile is a typed
`rows x cols` row-major view of its memory space's arena at its address, so tiles that share an
address share bytes, exactly as on the machine. Tensors are NumPy arrays (possibly strided views).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from pypto.pto.model import TileBufT, Value
from pypto.pto.syntax import FLOAT_BITS, INT_BITS

from ..elements import ELEMENTS
from .errors import InterpError

DTYPES = ELEMENTS  # PTO element type name -> DataType (whose NumPy dtype holds the values)

POISON_BYTE = 0x5A  # arenas start as 0x5A..; float tiles as all-ones bytes (NaN in every float format)
NAN_BYTE = 0xFF


def np_dtype(name: str) -> np.dtype:
    dt = DTYPES.get(name)
    if dt is None or dt.numpy is None:
        raise InterpError(f"element type '{name}' has no NumPy representation")
    return dt.numpy


def is_float_name(name: str) -> bool:
    return name in FLOAT_BITS


def wrap_int(v: int, name: str) -> int:
    """`v` reduced to the range of integer type `name` (two's complement wrap-around)."""
    if name == "i1":
        return v & 1
    bits = INT_BITS[name]
    v &= (1 << bits) - 1
    if not name.startswith("ui") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def make_scalar(v, name: str):
    """A Python / NumPy number as a NumPy scalar of PTO scalar type `name`."""
    if name == "i1":
        return np.bool_(bool(v))
    if name in INT_BITS:
        if isinstance(v, (float, np.floating)) or (isinstance(v, np.generic) and v.dtype.kind == "f"):
            raise InterpError(f"expected an integer for a value of type {name}, got {v!r}")
        return np_dtype(name).type(wrap_int(int(v), name))
    if name in FLOAT_BITS:
        with np.errstate(all="ignore"):
            return np_dtype(name).type(float(v))
    raise InterpError(f"unknown scalar type '{name}'")


def compute_dtype(dt: np.dtype) -> np.dtype:
    """The dtype an instruction computes in for elements of `dt`: fp32 for low-precision floats."""
    if dt.itemsize < 4 and (dt.kind == "f" or dt in _ML_FLOATS):
        return np.dtype(np.float32)
    return dt


_ML_FLOATS = {np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2),
              np.dtype(ml_dtypes.float4_e2m1fn)}


def cast_array(x, dt: np.dtype) -> np.ndarray:
    """Convert instruction results to the destination's element type (C-style: ints wrap)."""
    x = np.asarray(x)
    if x.dtype == dt:
        return x
    with np.errstate(all="ignore"):
        if dt == np.bool_:
            return x != 0
        return x.astype(dt)


# ---------------------------------------------------------------------------------------------
# tiles


@dataclass(eq=False)
class Tile:
    """One `pto.alloc_tile` result: a typed view of its arena plus the valid extents it was given."""

    value: Value
    buf: TileBufT
    addr: int
    arr: np.ndarray  # rows x cols, a view of the arena
    vr: int
    vc: int

    @property
    def loc(self) -> str:
        return self.buf.loc

    @property
    def rows(self) -> int:
        return self.buf.rows

    @property
    def cols(self) -> int:
        return self.buf.cols

    @property
    def nbytes(self) -> int:
        return self.arr.nbytes

    def valid(self) -> np.ndarray:
        return self.arr[: self.vr, : self.vc]

    def label(self) -> str:
        return f"{self.loc}[{self.addr:#x}, {self.addr + self.nbytes:#x}) (tile %{self.value.name})"


def tile_nbytes(buf: TileBufT) -> int:
    dt = np_dtype(buf.dtype)
    if buf.dtype in ("i4", "ui4", "f4"):
        raise InterpError(f"tiles of sub-byte type {buf.dtype} are not supported by the interpreter")
    return buf.rows * buf.cols * dt.itemsize


class Arenas:
    """One byte buffer per on-chip memory space, poisoned before each kernel run."""

    def __init__(self, sizes: dict[str, int], float_ranges: list[tuple[str, int, int]]):
        self.mem: dict[str, np.ndarray] = {}
        for loc, n in sizes.items():
            self.mem[loc] = np.full(n, POISON_BYTE, dtype=np.uint8)
        for loc, lo, hi in float_ranges:
            self.mem[loc][lo:hi] = NAN_BYTE

    def tile(self, value: Value, buf: TileBufT, addr: int, vr: int, vc: int) -> Tile:
        n = tile_nbytes(buf)
        mem = self.mem.get(buf.loc)
        if addr < 0 or mem is None or addr + n > mem.size:
            size = 0 if mem is None else mem.size
            raise InterpError(f"tile %{value.name} at {buf.loc}[{addr:#x}, {addr + n:#x}) lies outside the "
                              f"{buf.loc} arena ({size:#x} bytes)")
        if not (0 <= vr <= buf.rows and 0 <= vc <= buf.cols):
            raise InterpError(f"tile %{value.name}: valid extents [{vr}, {vc}] exceed its shape "
                              f"[{buf.rows}, {buf.cols}]")
        arr = mem[addr:addr + n].view(np_dtype(buf.dtype)).reshape(buf.rows, buf.cols)
        return Tile(value, buf, addr, arr, int(vr), int(vc))


# ---------------------------------------------------------------------------------------------
# DDR


@dataclass(eq=False)
class Window:
    """A tensor view or partition of one: an N-d NumPy view of a kernel argument."""

    arr: np.ndarray
    name: str  # the kernel argument it views
    offsets: tuple[int, ...] = ()

    def label(self) -> str:
        if not self.offsets:
            return f"%{self.name}"
        idx = ", ".join(f"{o}:{o + s}" for o, s in zip(self.offsets, self.arr.shape))
        return f"%{self.name}[{idx}]"

    def as_2d(self) -> tuple[int, int]:
        """(rows, cols) with rows = leading dims flattened (rank 1: one row)."""
        shape = self.arr.shape
        if not shape:
            return 1, 1
        rows = 1
        for d in shape[:-1]:
            rows *= d
        return rows, shape[-1]


def byte_extent(a: np.ndarray) -> tuple[int, int]:
    """[lo, hi) absolute byte addresses an array's elements span."""
    base = a.__array_interface__["data"][0]
    if a.size == 0:
        return base, base
    lo = hi = base
    for n, s in zip(a.shape, a.strides):
        if s >= 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.itemsize


def strided_view(a: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], what: str) -> np.ndarray:
    """`a`'s memory seen with another shape and element strides; refuses to leave `a`'s bytes."""
    if tuple(shape) == a.shape and all(s * a.itemsize == t for s, t in zip(strides, a.strides)):
        return a
    if any(d < 0 for d in shape):
        raise InterpError(f"{what}: negative extent in shape {list(shape)}")
    v = np.lib.stride_tricks.as_strided(a, shape=tuple(shape), strides=tuple(s * a.itemsize for s in strides))
    lo, hi = byte_extent(a)
    vlo, vhi = byte_extent(v)
    if v.size and (vlo < lo or vhi > hi):
        raise InterpError(f"{what}: shape {list(shape)} with strides {list(strides)} reaches outside the "
                          f"argument's memory (an array of shape {list(a.shape)})")
    return v


def window(src: np.ndarray, offsets, sizes, what: str) -> np.ndarray:
    """`src[o0:o0+s0, ...]`, checked to lie inside `src`."""
    if len(offsets) != src.ndim or len(sizes) != src.ndim:
        raise InterpError(f"{what}: a rank-{src.ndim} tensor needs {src.ndim} offsets and sizes, "
                          f"got {len(offsets)} and {len(sizes)}")
    for ax, (o, s, d) in enumerate(zip(offsets, sizes, src.shape)):
        if o < 0 or s < 0 or o + s > d:
            raise InterpError(f"{what}: window [{o}, {o + s}) of axis {ax} is out of range for extent {d}",
                              hint=f"offsets {list(offsets)}, sizes {list(sizes)}, tensor shape {list(src.shape)}")
    return src[tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offsets, sizes))]


__all__ = [
    "DTYPES", "Arenas", "Tile", "Window", "byte_extent", "cast_array", "compute_dtype", "is_float_name",
    "make_scalar", "np_dtype", "strided_view", "tile_nbytes", "window", "wrap_int",
]
