"""The names `pypto.driver` has always offered; the compile driver lives in `pypto.compile`."""

from __future__ import annotations

from pypto.compile import CompiledProgram, OutputDirError, compile

__all__ = ["CompiledProgram", "OutputDirError", "compile"]
