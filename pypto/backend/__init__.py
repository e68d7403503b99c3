"""`pypto.backend`: the assemblers that turn PTO text into something runnable.

`BackendType` and the targets (data, defined in `pypto.target`, below the passes) are re-exported
here for `from pypto.backend import BackendType`; the CPU assembler and the interpreter load on
first use.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import InvalidType
from pypto.target import BackendType, Target, ascend910b, ascend950, cpu, target_for

# the public package's process-wide backend setting: recorded for code that sets and reads it; every
# ir.compile here names its own backend_type (default PTO), so it does not change what compiles
_BACKEND: list[BackendType | None] = [None]


def set_backend_type(backend_type: Any) -> None:
    from pypto.target import backend_type as parse

    bt = parse(backend_type)
    if not isinstance(bt, BackendType):
        raise InvalidType(f"set_backend_type takes a BackendType or its name, got {backend_type!r}")
    _BACKEND[0] = bt


def get_backend_type() -> BackendType | None:
    return _BACKEND[0]


def reset_for_testing() -> None:
    _BACKEND[0] = None


def __getattr__(name: str) -> Any:
    if name == "pto_backend":  # `from pypto.backend import pto_backend` without importing it first
        import importlib

        return importlib.import_module("pypto.backend.pto_backend")
    raise AttributeError(f"module 'pypto.backend' has no attribute '{name}'")


__all__ = ["BackendType", "Target", "ascend910b", "ascend950", "cpu", "get_backend_type", "reset_for_testing",
           "set_backend_type", "target_for"]
