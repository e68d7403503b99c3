"""`pypto.pypto_core.passes`: `pypto.passes` plus the public enums of pass options
(`MemoryPlanner`, `PassDumpLevel`, `DiagnosticPhase`, `DiagnosticCheck`, `RuntimeKind`, see
pypto/compile/options.py) and the L0 tile chooser (`l0_tile_chooser`: pypto/passes/l0_tiling.py)."""

from __future__ import annotations

from typing import Any

from pypto.compile.options import (
    DiagnosticCheck,
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    PassDumpLevel,
    RuntimeKind,
)
from pypto.passes import l0_tiling as l0_tile_chooser
from pypto.passes.pass_manager import OptimizationStrategy, VerificationLevel


def __getattr__(name: str) -> Any:
    import pypto.passes as _passes

    try:
        return getattr(_passes, name)
    except AttributeError:
        raise AttributeError(f"module 'pypto.pypto_core.passes' has no attribute '{name}' (this build has no "
                             "native core; it has the passes of pypto.passes and the L0 tile chooser)") from None


__all__ = ["DiagnosticCheck", "DiagnosticCheckSet", "DiagnosticPhase", "MemoryPlanner", "OptimizationStrategy",
           "PassDumpLevel", "RuntimeKind", "VerificationLevel", "l0_tile_chooser"]
