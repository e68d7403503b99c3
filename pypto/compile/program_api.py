"""The public PyPTO's `CompiledProgram` surface, as a mixin of ours (pypto/compile/program.py):
calling metadata (`param_names`, `output_indices`, `has_return`), the runtime's objects
(`chip_callable`, `runtime_name`, `runtime_config`, `load()`, `build_call_config`,
`build_orch_args`), `from_dir` and `validate_ir`.

On the CPU the "chip callable" is the program's loaded native library (PTO -> C++ -> shared
object) and the runtime is the native MPMD runtime; `build_orch_args` binds arguments exactly as a
call does (pypto.backend.binding) and hands back what the runtime would run on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pypto.errors import InvalidValue, MissingFile

RUNTIME_NAME = "tensormap_and_ringbuffer"  # (the public default runtime's name; ours tracks tensor regions too)


class PublicProgramAPI:
    """Mixed into CompiledProgram; relies on its `signature`, `output_dir`, `native_library()`."""

    platform: str | None = None
    source_program: Any = None  # a @pl.jit compile's specialised program, before the passes

    # ---- calling metadata --------------------------------------------------------------------

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.signature.params]  # type: ignore[attr-defined]

    @property
    def output_indices(self) -> list[int]:
        """Indices of the pure-output (pl.Out) parameters: what a return-style call allocates."""
        return [i for i, p in enumerate(self.signature.params) if p.dir == "out"]  # type: ignore[attr-defined]

    @property
    def has_return(self) -> bool:
        return bool(self.signature.returns)  # type: ignore[attr-defined]

    @property
    def orchestration_names(self) -> list[str]:
        return [self.signature.entry]  # type: ignore[attr-defined]  (one task program per compile here)

    # ---- the runtime's objects ---------------------------------------------------------------

    @property
    def chip_callable(self) -> Any:
        """The loaded native program (built on first use, then the same object)."""
        return self.native_library()  # type: ignore[attr-defined]

    def load(self) -> Any:
        """Build and load the native program now (instead of on the first call)."""
        return self.native_library()  # type: ignore[attr-defined]

    @property
    def runtime_name(self) -> str:
        return RUNTIME_NAME

    @property
    def runtime_config(self) -> dict[str, Any]:
        from pypto.config import config

        return {"runtime": RUNTIME_NAME, "platform": self.platform or "cpu", "num_workers": config.num_workers,
                "entry": self.signature.entry}  # type: ignore[attr-defined]

    def build_call_config(self, config: Any = None, *, aicpu_thread_num: int | None = None,
                          dfx_dir: str | os.PathLike | None = None) -> Any:
        """The RunConfig a call runs with (`config` or the default), with the overrides applied."""
        from pypto.runtime import RunConfig

        cfg = config if config is not None else RunConfig(platform=self.platform or "cpu")
        changes: dict[str, Any] = {}
        if aicpu_thread_num is not None:
            changes["aicpu_thread_num"] = aicpu_thread_num
        if dfx_dir is not None:
            changes["trace_path"] = Path(dfx_dir) / "trace.json"
        return cfg.replace(**changes) if changes else cfg

    def build_orch_args(self, *args: Any, worker: Any = None) -> tuple[Any, list[Any], bool]:
        """(the bound call, the tensors in parameter order — allocated outputs included —, whether
        the call is return-style), binding `args` as a call would."""
        from pypto.backend.binding import bind

        call = bind(self.signature, args, {})  # type: ignore[attr-defined]
        return_style = any(g is None for g in call.given[:len(self.signature.params)])  # type: ignore[attr-defined]
        coerced = [call.given[i] if call.given[i] is not None else _as_torch(call.values[i], call.torch)
                   for i in range(len(self.signature.params))]  # type: ignore[attr-defined]
        return call, coerced, return_style

    # ---- rebuilding and checking -------------------------------------------------------------

    @classmethod
    def from_dir(cls, output_dir: str | os.PathLike, *, platform: str | None = None, backend_type: Any = None) -> Any:
        """The compiled program an earlier `ir.compile` left in `output_dir` (its `program` is the
        lowered IR read back from lowered.py, if there)."""
        from pypto.backend.signature import Signature
        from pypto.passes.pass_manager import OptimizationStrategy
        from pypto.target import BackendType, target_for

        from .options import backend_for_platform, check_platform
        from .stages import Written

        out = Path(output_dir)
        if not (out / "signature.json").is_file():
            raise MissingFile(f"{out} holds no compiled program (no signature.json)")
        try:
            entry = Signature.load(out).entry
            written = Written.read(out, entry)
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
            raise InvalidValue(f"{out}: the compiled program's files are malformed: {e}") from None
        platform = check_platform(platform)
        backend = backend_for_platform(platform, backend_type or BackendType.PTO)
        obj = str.__new__(cls, os.fspath(out))  # type: ignore[call-overload]
        obj.name = _program_name(out, entry)
        obj.entry = entry
        obj.target = target_for(backend)
        obj.backend_type = backend
        obj.strategy = OptimizationStrategy.Default
        obj.timings = {"from_dir": True}
        obj.last_run, obj.last_times = None, []
        obj._written, obj._native, obj._parsed, obj._program = written, None, None, None
        obj.platform = platform
        return obj

    def validate_ir(self, tensors: dict[str, Any], expected: dict[str, Any], *, rtol: float = 5e-2,
                    atol: float = 5e-2) -> None:
        """Check the compile's pass dumps and its numbers: every `passes_dump/` file must parse back
        into a program, and running the compiled program (interpreter and native) on copies of
        `tensors` must give `expected` (AssertionError naming the output and the platform). This
        build has no per-stage tensor evaluator, so intermediate stages are checked for well-formedness
        only. FileNotFoundError without dumps (compile with dump_passes=True)."""
        import numpy as np

        from pypto.language import parse

        dumps = sorted((Path(str.__str__(self)) / "passes_dump").glob("*.py"))  # type: ignore[arg-type]
        if not dumps:
            raise MissingFile(f"{self} has no passes_dump/ (compile with dump_passes=True)")
        for d in dumps:
            parse(d.read_text(), filename=str(d))
        from pypto.runtime import RunConfig

        names = self.param_names
        for platform in ("interp", "cpu"):
            args = [_copy(tensors[n]) for n in names if n in tensors]
            self(*args, config=RunConfig(platform=platform))  # type: ignore[operator]
            got = dict(zip([n for n in names if n in tensors], args))
            for name, want in expected.items():
                a, b = np.asarray(_np(got[name]), dtype=np.float64), np.asarray(_np(want), dtype=np.float64)
                if not np.allclose(a, b, rtol=rtol, atol=atol):
                    raise AssertionError(f"validate_ir: output '{name}' differs from expected on {platform} "
                                         f"(max abs diff {np.max(np.abs(a - b)):.4g})")


def _program_name(out: Path, entry: str) -> str:
    try:
        return str(json.loads((out / ".pypto-output.json").read_text()).get("program") or entry)
    except (OSError, ValueError, AttributeError):
        return entry


def _as_torch(a: Any, torch_call: bool) -> Any:
    if not torch_call:
        return a
    from pypto.backend.launch import _to_torch

    return _to_torch(a)


def _copy(v: Any) -> Any:
    return v.clone() if hasattr(v, "clone") else v.copy() if hasattr(v, "copy") else v


def _np(v: Any) -> Any:
    if hasattr(v, "detach"):
        return v.detach().float().numpy()
    return v


__all__ = ["RUNTIME_NAME", "PublicProgramAPI"]
