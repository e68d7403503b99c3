"""`pypto.ir.pass_manager`: the public path of the pass manager (it lives in `pypto.passes`).

Loaded by name so that the IR core has no import edge to the passes layer.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = ("OptimizationStrategy", "PassManager", "VerificationLevel", "pipeline")


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module("pypto.passes.pass_manager"), name)
    raise AttributeError(f"module 'pypto.ir.pass_manager' has no attribute '{name}'")


__all__ = list(_NAMES)
