"""`pypto.ir.compiled_program`: where the public PyPTO keeps `CompiledProgram` (what `ir.compile`
returns). Ours lives in `pypto.compile` (a layer above the IR); it is served from here by name on
first use (string-keyed, so the IR core imports nothing above it)."""

from __future__ import annotations

from typing import Any

_NAMES = {"CompiledProgram": ("pypto.compile.program", "CompiledProgram"),
          "PartialCodegenError": ("pypto.backend.pto_backend", "PartialCodegenError")}


def __getattr__(name: str) -> Any:
    import importlib

    target = _NAMES.get(name)
    if target is None:
        raise AttributeError(f"module 'pypto.ir.compiled_program' has no attribute '{name}'")
    return getattr(importlib.import_module(target[0]), target[1])


__all__ = ["CompiledProgram"]  # noqa: F822  (served by __getattr__)
