"""The public PyPTO's `pypto.runtime` functions and specs on this package:

    run(program, *tensors, config=None)       compile with the config's options, then run (unless
                                              codegen_only or no tensors); returns the CompiledProgram
    compile_program(program, work_dir, ...)   ir.compile into work_dir, returns None
    execute_compiled(work_dir, args, ...)     run the program an earlier compile left in work_dir
    TensorSpec, ScalarSpec                    argument descriptions (the harness's protocol)
    configure_log, log_level                  the "pypto" logger's level
    ensure_pto_isa_root, pto_isa_include_dir  the PTO-ISA headers: here, the CPU runtime's include dir

The compile side is served by name (the runtime sits below the compile driver).
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.errors import InvalidValue

_SCALAR_CTYPES = ("int64", "int32", "uint64", "uint32", "float", "double")


def _compile(*a: Any, **k: Any) -> Any:
    return importlib.import_module("pypto.compile").compile(*a, **k)


def _compile_options(config: Any) -> dict[str, Any]:
    return importlib.import_module("pypto.pljit.function").compile_options(config)


def run(program: Any, *tensors: Any, config: Any = None, tensor_specs: Any = None, golden: Any = None) -> Any:
    """Compile `program` with the config's compile options; run it on `tensors` (unless none are
    given or `config.codegen_only`). Returns the CompiledProgram.

    The March 2026 form `run(program, tensor_specs, golden, config=None)` (a list of TensorSpec
    first, or `tensor_specs=`) compiles, runs, checks against the golden and returns a RunResult
    (see golden_run.py)."""
    from .golden_run import is_spec_list, run_with_golden
    from .run_config import RunConfig

    if tensor_specs is not None or (tensors and is_spec_list(tensors[0])):
        rest = list(tensors)
        specs = tensor_specs if tensor_specs is not None else rest.pop(0)
        if golden is None and rest:
            golden = rest.pop(0)
        if config is None and rest:
            config = rest.pop(0)
        if rest:
            raise InvalidValue(f"run(program, tensor_specs, golden, config): {len(rest)} extra argument(s)")
        return run_with_golden(program, specs, golden, config)

    cfg = config if config is not None else RunConfig()
    compiled = _compile(program, **_compile_options(cfg))
    if tensors and not cfg.codegen_only:
        compiled(*tensors, config=cfg)
    return compiled


def compile_program(program: Any, work_dir: str | os.PathLike, *, strategy: Any = None, backend_type: Any = None,
                    dump_passes: Any = False, dump_ptoas_passes: bool = False, diagnostic_phase: Any = None,
                    disabled_diagnostics: Any = None, profiling: bool = False,
                    analyze_auto_scopes_for_deps: bool = False, memory_planner: Any = None,
                    enable_pypto_l0c_double_buffer: bool | None = None) -> None:
    """`ir.compile` into `work_dir` (the public helper returns nothing; the directory holds it all)."""
    kw: dict[str, Any] = {"dump_passes": dump_passes, "dump_ptoas_passes": dump_ptoas_passes,
                          "diagnostic_phase": diagnostic_phase, "disabled_diagnostics": disabled_diagnostics,
                          "profiling": profiling, "analyze_auto_scopes_for_deps": analyze_auto_scopes_for_deps,
                          "memory_planner": memory_planner,
                          "enable_pypto_l0c_double_buffer": enable_pypto_l0c_double_buffer}
    if strategy is not None:
        kw["strategy"] = strategy
    if backend_type is not None:
        kw["backend_type"] = backend_type
    _compile(program, output_dir=work_dir, **kw)


def execute_compiled(work_dir: str | os.PathLike, args: Any, *, platform: str = "cpu", device_id: int = 0,
                     dfx: Any = None, level: int = 2, aicpu_thread_num: int | None = None, **_ignored: Any) -> Any:
    """Run the compiled program in `work_dir` on `args` (in parameter order; outputs in place)."""
    from .run_config import RunConfig

    cp = importlib.import_module("pypto.compile.program").CompiledProgram.from_dir(work_dir, platform=platform)
    return cp(*args, config=RunConfig(platform=platform, device_id=device_id, aicpu_thread_num=aicpu_thread_num))


@dataclass
class TensorSpec:
    """A named tensor argument: shape, dtype (a pl DataType or a torch dtype), how to fill it
    (None: zeros; a number; a tensor; a callable such as torch.randn), and whether it is an output."""

    name: str
    shape: list[int]
    dtype: Any
    init_value: Any = None
    is_output: bool = False

    def create_tensor(self) -> Any:
        import torch

        DataType = importlib.import_module("pypto.ir.dtype").DataType  # noqa: N806  (the runtime sits below the IR)
        dt = self.dtype
        if isinstance(dt, DataType):
            inv = {v: k for k, v in importlib.import_module("pypto.pljit.meta").torch_dtype_map().items()}
            dt = inv.get(dt)
            if dt is None:
                raise InvalidValue(f"TensorSpec {self.name!r}: {self.dtype.name} has no torch dtype")
        shape = [int(d) for d in self.shape]
        iv = self.init_value
        if iv is None:
            return torch.zeros(shape, dtype=dt)
        if isinstance(iv, (bool, int, float)):
            return torch.full(shape, iv, dtype=dt)
        if isinstance(iv, torch.Tensor):
            return iv.detach().clone().to(dt).reshape(shape)
        if callable(iv):
            try:
                return iv(shape, dtype=dt)
            except TypeError:
                return torch.as_tensor(iv()).to(dt).reshape(shape)
        return torch.as_tensor(iv).to(dt).reshape(shape)


@dataclass
class ScalarSpec:
    name: str
    value: Any
    ctype: str = "int64"

    def __post_init__(self) -> None:
        if self.ctype not in _SCALAR_CTYPES:
            raise InvalidValue(f"ScalarSpec.ctype must be one of {', '.join(_SCALAR_CTYPES)}, got {self.ctype!r}")


_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL}


def configure_log(level: Any = "ERROR") -> None:
    """Set the level of the "pypto" logger (a name such as "INFO" or a logging level number)."""
    lv = _LEVELS.get(str(level).upper(), level) if not isinstance(level, int) else level
    if not isinstance(lv, int):
        raise InvalidValue(f"unknown log level {level!r}; use one of {', '.join(_LEVELS)}")
    logging.getLogger("pypto").setLevel(lv)


def log_level() -> str:
    return logging.getLevelName(logging.getLogger("pypto").getEffectiveLevel())


def pto_isa_include_dir() -> Path:
    """Where the kernels' ISA headers are: on the CPU, the runtime's C++ headers."""
    from .abi import include_dir

    return Path(include_dir())


def ensure_pto_isa_root() -> Path:
    """The PTO-ISA root (nothing to download on the CPU: the runtime ships its headers)."""
    return pto_isa_include_dir().parent


@dataclass(frozen=True)
class TraceSpan:
    """One task's run in a trace: name, worker, start and end (microseconds)."""

    name: str
    worker: int
    start_us: float
    end_us: float


@dataclass(frozen=True)
class TraceInvocation:
    """One run's spans (see pypto.runtime.Trace for the CPU runtime's own trace)."""

    spans: tuple[TraceSpan, ...]


class DistributedWorker:
    """Multi-rank execution (`pypto.language.distributed`) is not supported by this build."""

    def __init__(self, *a: Any, **k: Any) -> None:
        raise NotImplementedError("DistributedWorker: multi-rank (pypto.language.distributed) programs are not "
                                  "supported by this CPU build")


DistributedRunHandle = DistributedWorker

__all__ = ["DistributedRunHandle", "DistributedWorker", "ScalarSpec", "TensorSpec", "TraceInvocation", "TraceSpan",
           "compile_program", "configure_log", "ensure_pto_isa_root", "execute_compiled", "log_level",
           "pto_isa_include_dir", "run"]
