"""`RunConfig`: how to compile-and-run a program (platform, tolerances, compile options, tracing,
runtime sizing) — the public PyPTO's 27 fields, then this package's own (workers, scheduling,
trace file, benchmarking runs).

Platforms: "cpu" (the native runtime, the default) and "interp" (the NumPy interpreter) are this
package's; the public names "a2a3sim", "a2a3", "a5sim", "a5" are accepted and run on the CPU (the
first such run says so once). `backend_type` follows the platform as in the public package
(a5* -> Ascend950, a2a3* -> Ascend910B). It is plain data: the compile-side values (strategy,
memory planner, diagnostics) are kept as given and checked by `ir.compile`. Unknown fields raise
a TypeError that lists the valid ones.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import warnings
from dataclasses import dataclass, field, fields
from typing import Any

from pypto.errors import InvalidType, InvalidValue

_SCHED_MODES = ("fifo", "locality")
PUBLIC_PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")
PLATFORMS = ("cpu", "interp") + PUBLIC_PLATFORMS


def _default_strategy() -> Any:
    import importlib  # (string-keyed: the runtime sits below the passes)

    return importlib.import_module("pypto.passes.pass_manager").OptimizationStrategy.Default


@dataclass
class RunConfig:
    # ---- the public PyPTO's fields, in its order ----
    platform: str = "cpu"              # cpu / interp, or a2a3sim / a2a3 / a5sim / a5 (run on the CPU)
    device_id: int = 0                 # (no devices: kept for the public API)
    rtol: float = 1e-5                 # tolerances when comparing against a golden reference
    atol: float = 1e-5
    strategy: Any = field(default_factory=_default_strategy)  # ir.compile's strategy
    backend_type: Any = None           # follows the platform (a5* -> Ascend950, a2a3* -> Ascend910B); else PTO
    dump_passes: Any = False           # bool or pypto.ir.PassDumpLevel: IR after each pass (passes_dump/)
    save_kernels: bool = False         # keep the compile output (the CPU build always writes it)
    save_kernels_dir: str | os.PathLike[str] | None = None   # ir.compile's output_dir
    codegen_only: bool = False         # compile without running (pypto.runtime.run)
    enable_chip_swimlane: int = 0      # 0-4 (True -> 4): a per-task trace (the CPU runtime's Chrome trace)
    enable_dump_args: int = 0          # 0 off / 1 dump_tag-marked / 2 all task args (accepted; CPU: no dump)
    enable_pmu: int = 0                # AICore PMU event (no PMU on the CPU: accepted, ignored)
    enable_dep_gen: bool = False       # task dependencies (the CPU trace records them)
    enable_scope_stats: bool = False   # ring-fill statistics (no rings on the CPU: ignored)
    compile_profiling: bool = False    # ir.compile(profiling=True): per-stage timings
    diagnostic_phase: Any = None       # ir.compile's diagnostics gate
    disabled_diagnostics: Any = None
    golden_data_dir: str | os.PathLike[str] | None = None   # harness golden data location
    aicpu_thread_num: int | None = None  # scheduler threads: the CPU runtime's workers unless num_workers is set
    ring_task_window: Any = None       # runtime ring sizing (validated; the CPU runtime has no rings)
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None     # multi-rank compile (pypto.language.distributed: not supported here)
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None         # PYPTO / DSA_RP / PTOAS (the CPU compile plans memory one way)
    dump_ptoas_passes: bool = False    # (no ptoas here: accepted, ignored)
    # ---- this package's fields ----
    num_workers: int | None = None     # None: aicpu_thread_num, else pypto.config.num_workers
    sched_mode: str = "fifo"           # "fifo" or "locality"
    enable_trace: bool = False         # record a per-task trace
    trace_path: str | os.PathLike[str] | None = None   # where to write the Chrome trace JSON
    warmup: int = 0                    # untimed runs before the timed ones (cpu; each one writes the outputs)
    repeat: int = 1                    # timed runs; their seconds are in compiled.last_times

    def __post_init__(self) -> None:
        if not isinstance(self.platform, str) or not self.platform:
            raise InvalidValue(f"RunConfig.platform must be a non-empty string, got {self.platform!r}")
        if self.platform not in PLATFORMS:
            raise InvalidValue(f"RunConfig.platform {self.platform!r} is unknown; choose one of {', '.join(PLATFORMS)}")
        if not isinstance(self.device_id, int) or self.device_id < 0:
            raise InvalidValue(f"RunConfig.device_id must be an int >= 0, got {self.device_id!r}")
        for name in ("rtol", "atol"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or v < 0:
                raise InvalidValue(f"RunConfig.{name} must be a number >= 0, got {v!r}")
        self.backend_type = _backend_for(self.platform, self.backend_type)
        if self.enable_chip_swimlane is True:
            self.enable_chip_swimlane = 4
        if not isinstance(self.enable_chip_swimlane, int) or not 0 <= self.enable_chip_swimlane <= 4:
            raise InvalidValue(f"RunConfig.enable_chip_swimlane must be 0-4 (or a bool), got "
                               f"{self.enable_chip_swimlane!r}")
        if self.enable_dump_args not in (0, 1, 2):
            raise InvalidValue(f"RunConfig.enable_dump_args must be 0, 1 or 2, got {self.enable_dump_args!r}")
        if self.aicpu_thread_num is not None and (not isinstance(self.aicpu_thread_num, int)
                                                  or self.aicpu_thread_num < 1):
            raise InvalidValue(f"RunConfig.aicpu_thread_num must be None or an int >= 1, got {self.aicpu_thread_num!r}")
        for name in ("ring_task_window", "ring_heap", "ring_dep_pool"):
            _check_ring(name, getattr(self, name))
        if self.num_workers is not None and (not isinstance(self.num_workers, int) or self.num_workers < 0):
            raise InvalidValue(f"RunConfig.num_workers must be None or an int >= 0, got {self.num_workers!r}")
        if self.sched_mode not in _SCHED_MODES:
            raise InvalidValue(f"RunConfig.sched_mode must be one of {_SCHED_MODES}, got {self.sched_mode!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise InvalidValue(f"RunConfig.warmup must be an int >= 0, got {self.warmup!r}")
        if not isinstance(self.repeat, int) or self.repeat < 1:
            raise InvalidValue(f"RunConfig.repeat must be an int >= 1, got {self.repeat!r}")
        if self.enable_chip_swimlane or self.enable_dep_gen:
            self.enable_trace = True  # (the CPU runtime's per-task trace is its swimlane)
        if self.trace_path is not None:
            self.enable_trace = True
        if self.enable_chip_swimlane or self.enable_dump_args or self.enable_pmu or self.enable_dep_gen \
                or self.enable_scope_stats:
            self.save_kernels = True  # (as the public package: any DFX switch keeps the artifacts)

    @property
    def workers(self) -> int | None:
        """The runtime's worker count: num_workers, else aicpu_thread_num, else None (the default)."""
        return self.num_workers if self.num_workers is not None else self.aicpu_thread_num

    @property
    def runs_on(self) -> str:
        """"interp" or "cpu": where this config's runs execute."""
        return "interp" if self.platform == "interp" else "cpu"

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed (unknown fields raise TypeError)."""
        _check_fields(changes)
        return dataclasses.replace(self, **changes)


def _backend_for(platform: str, given: Any) -> Any:
    if platform in PUBLIC_PLATFORMS:
        import importlib

        bt = importlib.import_module("pypto.target").BackendType
        return bt.Ascend950 if platform.startswith("a5") else bt.Ascend910B
    return given


def _check_ring(name: str, v: Any) -> None:
    if v is None:
        return
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    if isinstance(v, (list, tuple)) and len(items) != 4:
        raise InvalidValue(f"RunConfig.{name} takes one int or a list of 4 (one per ring), got {v!r}")
    for x in items:
        if not isinstance(x, int) or isinstance(x, bool) or x <= 0 or x & (x - 1):
            raise InvalidValue(f"RunConfig.{name} sizes must be powers of two, got {v!r}")


_FIELDS = tuple(f.name for f in fields(RunConfig))
_generated_init = RunConfig.__init__


def _check_fields(kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(kwargs) - set(_FIELDS))
    if unknown:
        raise InvalidType(f"RunConfig has no field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                        f"valid fields: {', '.join(_FIELDS)}")


def _init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    if "enable_l2_swimlane" in kwargs:  # the public package's deprecated name
        warnings.warn("RunConfig(enable_l2_swimlane=...) is deprecated; use enable_chip_swimlane", DeprecationWarning,
                      stacklevel=2)
        old = kwargs.pop("enable_l2_swimlane")
        kwargs.setdefault("enable_chip_swimlane", 4 if old is True else int(old or 0))
    _check_fields(kwargs)
    if len(args) > len(_FIELDS):
        raise InvalidType(f"RunConfig takes at most {len(_FIELDS)} positional arguments ({', '.join(_FIELDS)})")
    _generated_init(self, *args, **kwargs)


_init.__doc__ = _generated_init.__doc__
_init.__signature__ = inspect.signature(_generated_init)  # type: ignore[attr-defined]
RunConfig.__init__ = _init  # type: ignore[method-assign]

__all__ = ["PLATFORMS", "PUBLIC_PLATFORMS", "RunConfig"]
