"""`pypto.backend`: targets (data) and the assemblers that turn PTO text into something runnable.

`BackendType` and the targets are imported eagerly; the CPU assembler and the interpreter load on
first use so that passes can read targets without pulling in code generation for a machine.
"""

from __future__ import annotations

from .target import BackendType, Target, ascend910b, ascend950, cpu, target_for

__all__ = ["BackendType", "Target", "ascend910b", "ascend950", "cpu", "target_for"]
