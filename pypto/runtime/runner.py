"""`pypto.runtime.runner`: the public PyPTO's module of `RunConfig`, `RunResult`, `run` and
`compile_program`. `RunResult` here is the harness's record of a test case (passed, error, time),
not the native runtime's result of a run (`pypto.runtime.RunResult`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.runtime.public import compile_program, execute_compiled, run
from pypto.runtime.run_config import RunConfig


@dataclass
class RunResult:
    passed: bool
    test_name: str | None = None
    error: str | None = None
    execution_time: float | None = None
    profile: Any = None

    def __str__(self) -> str:
        state = "PASS" if self.passed else "FAIL"
        t = f" ({self.execution_time:.2f}s)" if self.execution_time is not None else ""
        return f"{state}: {self.test_name or '<test>'}{t}" + (f"\n  {self.error}" if self.error else "")


__all__ = ["RunConfig", "RunResult", "compile_program", "execute_compiled", "run"]
