"""`pypto.backend`: the assemblers that turn PTO text into something runnable.

`BackendType` and the targets (data, defined in `pypto.target`, below the passes) are re-exported
here for `from pypto.backend import BackendType`; the CPU assembler and the interpreter load on
first use.
"""

from __future__ import annotations

from pypto.target import BackendType, Target, ascend910b, ascend950, cpu, target_for

__all__ = ["BackendType", "Target", "ascend910b", "ascend950", "cpu", "target_for"]
