"""`CompiledProgram`: what `ir.compile` returns — the output directory's path, and callable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pypto.errors import InvalidValue
from pypto.ir.function import Program

from .program_api import PublicProgramAPI
from .request import Request
from .stages import Built, Lowered, PtoModules, Written, native_program, parse_pto


class CompiledProgram(PublicProgramAPI, str):
    """A compiled program: its output directory (as a `str` / `os.PathLike`) and a callable.

    It is made from a compile's stage artifacts and keeps in memory what it runs — the PTO text of
    its kernels and task program, its calling signature and (once built) its native library — so
    it keeps running its own program when a later compile replaces the directory's files.

    Besides its constructor's inputs it changes only by caching what it derives on first use (the
    lowered IR parsed back, the parsed PTO modules, the native library of a `skip_ptoas` compile)
    and by recording its last native run (`last_run`, `last_times`).
    """

    def __new__(cls, request: Request, *rest: Any, **kw: Any) -> CompiledProgram:
        return super().__new__(cls, os.fspath(request.out))

    def __init__(self, request: Request, written: Written, built: Built | None, timings: dict[str, Any],
                 lowered: Lowered | None = None) -> None:
        self.name = request.name
        self.entry = written.entry
        self.target = request.target
        self.backend_type = request.backend_type
        self.strategy = request.strategy
        self.timings = timings
        self.platform = request.platform
        self.last_run: Any = None  # the last native run's pypto.runtime.RunResult
        self.last_times: list[float] = []  # its seconds per timed run (RunConfig.repeat of them)
        self._written = written
        self._native = built.native if built is not None else None
        self._parsed: PtoModules | None = built.modules if built is not None else None
        self._program = lowered.program if lowered is not None else None

    @property
    def program(self) -> Program:
        """The IR after the pass pipeline (parsed from its printed form when the compile was cached)."""
        if self._program is None:
            from pypto.language import parse

            if self._written.lowered_text is None:
                raise InvalidValue(f"{self!r} holds no lowered program")
            got = parse(self._written.lowered_text, filename=str(self.output_dir / "lowered.py"))
            assert isinstance(got, Program)
            self._program = got
        return self._program

    @property
    def signature(self) -> Any:
        """The calling signature (`pypto.backend.signature.Signature`) this object was compiled with."""
        return self._written.signature

    @property
    def synced(self) -> bool:
        """Whether its kernels carry InsertSync's flags and barriers (the Default strategy), so
        the interpreter checks pipe hazards."""
        return self.strategy.name == "Default"

    def pto_modules(self) -> PtoModules:
        """The kernels (name -> PTO module) and the task program this object runs, parsed from the
        text it compiled."""
        if self._parsed is None:
            self._parsed = parse_pto(self._written.pto, self.output_dir)
        return self._parsed

    def native_library(self) -> Any:
        """The loaded native library (built now, from this object's PTO text, after a `skip_ptoas`
        compile)."""
        if self._native is None:
            self._native = native_program(self.name, self.pto_modules())
        return self._native

    # ---- paths -------------------------------------------------------------------------------

    def __fspath__(self) -> str:
        return str.__str__(self)

    @property
    def output_dir(self) -> Path:
        return Path(str.__str__(self))

    def pto_files(self) -> dict[str, Path]:
        """Kernel name -> its .pto file (plus the orchestration under its entry name)."""
        files = {p.stem: p for p in sorted((self.output_dir / "kernels").glob("*.pto"))}
        for p in sorted((self.output_dir / "orchestration").glob("*.pto")):
            files[p.stem] = p
        return files

    # ---- running -----------------------------------------------------------------------------

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Run the program (the calling convention is in `pypto.backend.launch`)."""
        from pypto.backend.launch import bind, dispatch, run_config, unpack

        cfg = run_config(config)
        call = bind(self.signature, args, kwargs)
        run = dispatch(self, call, cfg)
        if run is not None:  # a native run: keep its statistics, and own its trace
            self.last_run, self.last_times = run.result, run.times
            if run.trace_path is not None:
                from .output import record

                record(self.output_dir, run.trace_path)  # (the next compile there replaces it)
        return unpack(call)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.name!r} at {str.__str__(self)!r})"


__all__ = ["CompiledProgram"]
