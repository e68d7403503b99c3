"""Build (once, cached by content hash) and load the native runtime library; declare its C API.

The library is `src/runtime.cpp` plus the headers of `src/` and `include/`, compiled through
`pypto.support.native_build` (so a header change rebuilds it). Loading is lazy: importing
`pypto.runtime` compiles nothing.
"""

from __future__ import annotations

import ctypes
import os
import threading

from pypto.errors import InvalidState
from pypto.runtime.abi import (
    ABI_VERSION,
    INCLUDE_DIR,
    SRC_DIR,
    PtoProgram,
    PtoRtStats,
    PtoTraceRecord,
)
from pypto.support.native_build import build_and_load

_LOCK = threading.Lock()
_LIB: ctypes.CDLL | None = None

_P = ctypes.c_void_p
_I32 = ctypes.c_int32
_I64 = ctypes.c_int64
_STR = ctypes.c_char_p

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "pto_rt_abi_version": (_I32, []),
    "pto_rt_create": (_P, [_I32, _I32, _I64]),
    "pto_rt_destroy": (None, [_P]),
    "pto_rt_num_workers": (_I32, [_P]),
    "pto_rt_set_window": (None, [_P, _I64]),
    "pto_rt_run_program": (_I32, [_P, ctypes.POINTER(PtoProgram), _P, _I32, _I32, _STR, _I32]),
    "pto_rt_begin": (_I32, [_P, _I32]),
    "pto_rt_submit": (_I64, [_P, _P, _I32, _P, _I32, _P, _I32, _I32]),
    "pto_rt_add_dep": (_I32, [_P, _I64, _I64]),
    "pto_rt_release": (_I32, [_P, _I64]),
    "pto_rt_wait_all": (_I32, [_P, _STR, _I32]),
    "pto_rt_run_graph": (_I32, [_P, _P, _I64, _I32, _STR, _I32]),
    "pto_rt_error": (_I32, [_P, _STR, _I32]),
    "pto_rt_trace_count": (_I64, [_P]),
    "pto_rt_trace_read": (_I64, [_P, ctypes.POINTER(PtoTraceRecord), _I64]),
    "pto_rt_trace_edge_count": (_I64, [_P]),
    "pto_rt_trace_edges": (_I64, [_P, _P, _I64]),
    "pto_rt_get_stats": (None, [_P, ctypes.POINTER(PtoRtStats)]),
    "pto_rt_lane_counts": (_I32, [_P, _P, _I32]),
    "pto_rt_builtin_count": (_I32, []),
    "pto_rt_builtin_name": (_STR, [_I32]),
    "pto_rt_builtin_kernel": (_P, [_I32]),
}


def library() -> ctypes.CDLL:
    """The loaded runtime library (built on first use, then taken from the cache)."""
    global _LIB
    if _LIB is not None:
        return _LIB
    with _LOCK:
        if _LIB is None:
            source = (SRC_DIR / "runtime.cpp").read_text()
            lib, _ = build_and_load(source, "pto_runtime", include_dirs=(INCLUDE_DIR, SRC_DIR))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            version = lib.pto_rt_abi_version()
            if version != ABI_VERSION:
                raise InvalidState(f"the runtime library implements ABI version {version}, "
                                   f"pypto.runtime expects {ABI_VERSION}")
            _LIB = lib
    return _LIB


def _after_fork_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # a thread that held it (building the library) does not exist in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def builtin_kernels() -> dict[str, tuple[int, int]]:
    """name -> (index, function address) of the kernels compiled into the runtime library."""
    lib = library()
    out: dict[str, tuple[int, int]] = {}
    for i in range(lib.pto_rt_builtin_count()):
        out[lib.pto_rt_builtin_name(i).decode()] = (i, lib.pto_rt_builtin_kernel(i))
    return out


__all__ = ["builtin_kernels", "library"]
