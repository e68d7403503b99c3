"""`ProgramHandle`: a compiled program shared object, ready to hand to `Runtime.run_program`.

A program exports the `pto_program_*` entry points of `include/pto_runtime.h`. The handle loads
the library (or takes an already loaded `ctypes.CDLL`), checks the ABI version, and fills the
`pto_program` table of function pointers that the runtime calls.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from pypto.errors import InvalidType
from pypto.runtime.abi import ABI_VERSION, PtoProgram

_ENTRY_POINTS = ("abi_version", "num_kernels", "kernel_name", "kernel", "scratch_bytes", "run")


class ProgramHandle:
    """A loaded program: its entry-point table, kernel names and scratch needs."""

    def __init__(self, library: ctypes.CDLL | str | os.PathLike[str]):
        if isinstance(library, ctypes.CDLL):
            lib = library
        else:
            from pypto.support.native_build import load_library

            lib = load_library(Path(library))
        self.library = lib
        table = PtoProgram()
        for name in _ENTRY_POINTS:
            sym = f"pto_program_{name}"
            try:
                fn = getattr(lib, sym)
            except AttributeError:
                raise InvalidType(f"{getattr(lib, '_name', lib)} is not a PyPTO program: it does not export "
                                f"{sym} (see pypto/runtime/include/pto_runtime.h)") from None
            setattr(table, name, ctypes.cast(fn, ctypes.c_void_p).value)
        self.table = table
        lib.pto_program_abi_version.restype = ctypes.c_int32
        lib.pto_program_num_kernels.restype = ctypes.c_int32
        lib.pto_program_kernel_name.restype = ctypes.c_char_p
        lib.pto_program_kernel_name.argtypes = [ctypes.c_int32]
        lib.pto_program_scratch_bytes.restype = ctypes.c_int64
        self.abi_version = int(lib.pto_program_abi_version())
        if self.abi_version != ABI_VERSION:
            raise InvalidType(f"program {getattr(lib, '_name', lib)} was built for runtime ABI version "
                            f"{self.abi_version}, this runtime implements {ABI_VERSION}; rebuild it")
        n = int(lib.pto_program_num_kernels())
        self.kernel_names: dict[int, str] = {}
        for i in range(n):
            raw = lib.pto_program_kernel_name(i)
            self.kernel_names[i] = raw.decode() if raw else f"kernel {i}"
        self.scratch_bytes = int(lib.pto_program_scratch_bytes())
        # optional: programs built by the CPU assembler report kernel errors (e.g. out-of-bounds windows)
        self._kerr = getattr(lib, "pto_program_kernel_error", None)
        self._kerr_clear = getattr(lib, "pto_program_clear_kernel_error", None)
        if self._kerr is not None:
            self._kerr.restype = ctypes.c_char_p

    def take_kernel_error(self) -> str | None:
        """The first error a kernel reported since the last call (None if none), and clear it."""
        if self._kerr is None:
            return None
        raw = self._kerr()
        if raw is None:
            return None
        if self._kerr_clear is not None:
            self._kerr_clear()
        return raw.decode(errors="replace")

    @property
    def num_kernels(self) -> int:
        return len(self.kernel_names)

    def __repr__(self) -> str:
        return (f"ProgramHandle({getattr(self.library, '_name', '?')!r}, kernels={list(self.kernel_names.values())}, "
                f"scratch_bytes={self.scratch_bytes})")


__all__ = ["ProgramHandle"]
