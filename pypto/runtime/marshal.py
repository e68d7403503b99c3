"""Marshal NumPy arrays (and PyTorch CPU tensors) and Python numbers into `pto_arg` structs.

Tensors are passed zero-copy: the struct holds the array's data pointer, shape and strides (in
elements). Its *root buffer* -- what the runtime tracks dependencies on -- is the memory of the
array at the end of its `.base` chain, so views of one array share a root. Roots that overlap in
memory without being the same (two arrays made separately over one buffer) are merged into one
root covering both, within one `pack_args` call (or one task graph), so the runtime never sees
overlapping distinct roots.

Requirements, checked here: at most 8 dimensions, elements of at most 64 bytes, the data pointer
aligned to the element size, strides multiples of the element size, and writeable memory for
`out` / `inout` arguments.
"""

from __future__ import annotations

import bisect
import ctypes
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pypto.errors import InvalidType, InvalidValue, OutOfRange
from pypto.runtime.abi import ARG_DTYPE, MAX_DIMS, ArgKind, PtoArg

_U64 = (1 << 64) - 1


def as_ndarray(value: Any) -> np.ndarray | None:
    """`value` as an ndarray sharing its memory, or None if it is not array-like.

    Accepts NumPy arrays and PyTorch CPU tensors (bfloat16 and other dtypes NumPy lacks are viewed
    as integers of the same width: the runtime only needs the element size).
    """
    if isinstance(value, np.ndarray):
        return value
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise InvalidValue(f"tensor on device {value.device} cannot be passed to the CPU runtime; "
                             "move it with .cpu() first")
        t = value.detach()
        try:
            return t.numpy()
        except TypeError:
            ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
            return t.view(ints[t.element_size()]).numpy()
    return None


def _extent(a: np.ndarray) -> tuple[int, int]:
    """[lo, hi) byte addresses spanned by `a`."""
    ptr = a.__array_interface__["data"][0]
    if a.size == 0:
        return ptr, ptr
    lo = hi = ptr
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + a.itemsize


def root_range(a: np.ndarray) -> tuple[int, int]:
    """[lo, hi) byte addresses of the allocation `a` is a view of (the end of its `.base` chain)."""
    b = a
    while isinstance(b.base, np.ndarray):
        b = b.base
    lo, hi = _extent(b)
    if b is not a:  # a view of a base whose own bounds do not cover it (unusual strides tricks)
        alo, ahi = _extent(a)
        lo, hi = min(lo, alo), max(hi, ahi)
    return lo, hi


class RootMap:
    """Assigns each array a root (address, size), merging roots that overlap in memory."""

    def __init__(self, arrays: Iterable[np.ndarray]):
        ranges = sorted({root_range(a) for a in arrays})
        self._lo: list[int] = []
        self._hi: list[int] = []
        for lo, hi in ranges:
            if self._lo and lo < self._hi[-1]:
                self._hi[-1] = max(self._hi[-1], hi)
            else:
                self._lo.append(lo)
                self._hi.append(hi)

    def root_of(self, a: np.ndarray) -> tuple[int, int]:
        lo, _ = root_range(a)
        i = bisect.bisect_right(self._lo, lo) - 1
        return self._lo[i], self._hi[i] - self._lo[i]


def infer_kind(value: Any) -> ArgKind:
    """Default kind of a value: arrays are `inout` (the conservative choice), ints i64, floats f64."""
    if as_ndarray(value) is not None:
        return ArgKind.INOUT
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return ArgKind.I64
    if isinstance(value, (float, np.floating)):
        return ArgKind.F64
    raise InvalidType(f"cannot pass a {type(value).__name__} to a kernel: expected a NumPy array, a "
                    "PyTorch CPU tensor, an int or a float")


def tensor_row(kind: ArgKind, a: np.ndarray, root: tuple[int, int], where: str = "") -> tuple:
    """The ARG_DTYPE record of tensor argument `a`."""
    at = f" ({where})" if where else ""
    if a.ndim > MAX_DIMS:
        raise InvalidValue(f"array{at} has {a.ndim} dimensions; the runtime supports at most {MAX_DIMS}")
    if a.dtype.hasobject or a.itemsize == 0 or a.itemsize > 64:
        raise InvalidType(f"array{at} has dtype {a.dtype}, which cannot be passed to a kernel")
    item = a.itemsize
    ptr = a.__array_interface__["data"][0]
    if ptr % item:
        raise InvalidValue(f"array{at} is not aligned to its element size {item} (address {ptr:#x}); "
                         "pass an aligned copy (np.ascontiguousarray / .copy())")
    if any(s % item for s in a.strides):
        raise InvalidValue(f"array{at} has strides {a.strides} that are not multiples of its element size "
                         f"{item}; pass a copy")
    if kind != ArgKind.IN and not a.flags.writeable:
        raise InvalidValue(f"array{at} is read-only but passed as {kind.name.lower()}")
    pad = (0,) * (MAX_DIMS - a.ndim)
    shape = tuple(a.shape) + pad
    strides = tuple(s // item for s in a.strides) + pad
    return (int(kind), 0, ptr, item, a.ndim, shape, strides, root[0], root[1])


def scalar_row(kind: ArgKind, value: Any, where: str = "") -> tuple:
    """The ARG_DTYPE record of a scalar argument (its bits live in the `data` field)."""
    at = f" ({where})" if where else ""
    if kind == ArgKind.I64:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise InvalidType(f"i64 argument{at} got the non-integer {value!r}")
        v = int(value)
        if not -(1 << 63) <= v < (1 << 63):
            raise OutOfRange(f"i64 argument{at} {v} does not fit in 64 bits")
        bits = v & _U64
    elif kind == ArgKind.F64:
        if not isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
            raise InvalidType(f"f64 argument{at} got a {type(value).__name__}")
        bits = int(np.float64(value).view(np.uint64))
    else:  # pragma: no cover - callers dispatch tensors elsewhere
        raise AssertionError(kind)
    return (int(kind), 0, bits, 0, 0, (0,) * MAX_DIMS, (0,) * MAX_DIMS, 0, 0)


def resolve(values: Sequence[Any], kinds: Sequence[ArgKind | str | int] | None,
            where: str = "") -> list[tuple[ArgKind, Any]]:
    """Pair each value with its kind (given or inferred) and convert tensors to ndarrays."""
    if kinds is not None and len(kinds) != len(values):
        raise InvalidValue(f"{len(values)} values but {len(kinds)} kinds{f' ({where})' if where else ''}")
    out: list[tuple[ArgKind, Any]] = []
    for i, v in enumerate(values):
        kind = infer_kind(v) if kinds is None else ArgKind.parse(kinds[i])
        arr = as_ndarray(v)
        if kind.is_tensor:
            if arr is None:
                raise InvalidType(f"argument {i}{f' of {where}' if where else ''} is {kind.name.lower()} "
                                f"(a tensor) but got a {type(v).__name__}")
            if kind != ArgKind.IN and not arr.flags.writeable:
                raise InvalidValue(f"argument {i}{f' of {where}' if where else ''} is read-only but passed as "
                                 f"{kind.name.lower()}")
            out.append((kind, arr))
        else:
            if arr is not None:
                if arr.ndim != 0:
                    raise InvalidType(f"argument {i}{f' of {where}' if where else ''} is a scalar "
                                    f"({kind.name.lower()}) but got an array of shape {arr.shape}")
                v = arr.item()
            out.append((kind, v))
    return out


def fill_rows(records: np.ndarray, start: int, resolved: Sequence[tuple[ArgKind, Any]], roots: RootMap,
              where: str = "") -> None:
    """Write the records of one argument list into `records[start:]`."""
    for i, (kind, v) in enumerate(resolved):
        here = f"{where}arg {i}"
        if kind.is_tensor:
            records[start + i] = tensor_row(kind, v, roots.root_of(v), here)
        else:
            records[start + i] = scalar_row(kind, v, here)


def pack_args(values: Sequence[Any], kinds: Sequence[ArgKind | str | int] | None = None,
              ) -> tuple[ctypes.Array, list[Any]]:
    """Build a `pto_arg` array from NumPy arrays / PyTorch CPU tensors and Python numbers.

    `kinds` gives each value's kind ("in", "out", "inout", "i64", "f64" or `ArgKind`); by default
    arrays are "inout", integers "i64" and floats "f64". Returns the ctypes array and a keepalive
    list: hold it for as long as the runtime may touch the arguments (the arrays are not copied).
    """
    resolved = resolve(values, kinds)
    arr = (PtoArg * max(1, len(resolved)))()
    if resolved:
        records = np.frombuffer(arr, dtype=ARG_DTYPE)
        roots = RootMap(v for k, v in resolved if k.is_tensor)
        fill_rows(records, 0, resolved, roots)
    return arr, [v for _, v in resolved] + list(values)


__all__ = ["RootMap", "as_ndarray", "fill_rows", "infer_kind", "pack_args", "resolve", "root_range",
           "scalar_row", "tensor_row"]
