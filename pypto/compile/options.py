"""`ir.compile`'s options beyond the program, where, strategy and backend: the public PyPTO's enums
(`PassDumpLevel`, `MemoryPlanner`, `DiagnosticPhase`, `DiagnosticCheck`, `RuntimeKind`) and how each
option maps onto this compiler (`CompileOptions`).

    dump_passes                    bool or PassDumpLevel: NONE -> no dumps, CONCISE / EXPLICIT -> passes_dump/
    platform                       a2a3sim / a2a3 / a5sim / a5 -> the Ascend910B / Ascend950 machine
                                   description (planning); every platform runs on the CPU. cpu / interp keep
                                   backend_type. Anything else: ValueError.
    profiling                      also write report/pipeline_profile.{json,txt} (the stage timings)
    diagnostic_phase, disabled_diagnostics
                                   accepted and checked; this compiler's checks are errors, run always
    memory_planner, enable_pypto_l0c_double_buffer
                                   accepted; the CPU compile plans memory one way (MemoryReuse +
                                   AllocateMemoryAddr, i.e. PYPTO)
    distributed_config             accepted for single-chip programs (multi-rank programs are not supported)
    analyze_auto_scopes_for_deps, emit_source_loc, dump_ptoas_passes, runtime
                                   accepted; no effect (no ptoas, no MLIR locations, one runtime ABI)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pypto.errors import InvalidType, InvalidValue


class PassDumpLevel(enum.Enum):
    """How much `dump_passes` writes (every member is truthy, as in the public package)."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


class MemoryPlanner(enum.Enum):
    PYPTO = 0
    DSA_RP = 1
    PTOAS = 2


class DiagnosticPhase(enum.Enum):
    NONE = 0
    PRE_PIPELINE = 1
    POST_PASS = 2
    POST_PIPELINE = 3


class DiagnosticCheck(enum.Enum):
    UnusedVariable = 0
    UnusedControlFlowResult = 1
    TileInnermostDimGranularity = 2
    OutParamWriteDropped = 3


class RuntimeKind(enum.Enum):
    TENSORMAP_AND_RINGBUFFER = 0
    HOST_BUILD_GRAPH = 1


class DiagnosticCheckSet(frozenset):
    """A set of `DiagnosticCheck`s (`disabled_diagnostics=`)."""


PUBLIC_PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")
OWN_PLATFORMS = ("cpu", "interp")


@dataclass(frozen=True)
class CompileOptions:
    """The public options after checking (see the module docstring for what each one does here)."""

    platform: str | None = None
    profiling: bool = False
    diagnostic_phase: DiagnosticPhase | None = None
    disabled_diagnostics: frozenset = frozenset()
    memory_planner: MemoryPlanner | None = None
    enable_pypto_l0c_double_buffer: bool | None = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    emit_source_loc: bool | None = None
    dump_ptoas_passes: bool = False
    runtime: RuntimeKind | None = None


def dump_level(v: Any) -> bool:
    """`dump_passes=` as a bool (PassDumpLevel.NONE -> False)."""
    if isinstance(v, PassDumpLevel):
        return v is not PassDumpLevel.NONE
    if isinstance(v, bool):
        return v
    if v is None or v == 0:
        return False
    raise InvalidType(f"dump_passes must be a bool or a pypto.ir.PassDumpLevel, got {v!r}")


def _enum(cls: type[enum.Enum], v: Any, what: str) -> Any:
    if v is None or isinstance(v, cls):
        return v
    name = getattr(v, "name", v)  # (an equivalent enum of another module: matched by name)
    if isinstance(name, str):
        key = name.upper() if name.upper() in cls.__members__ else name
        if key in cls.__members__:
            return cls[key]
    raise InvalidValue(f"{what} must be a {cls.__name__} ({', '.join(cls.__members__)}), got {v!r}")


def check_platform(platform: Any) -> str | None:
    if platform is None:
        return None
    if platform not in PUBLIC_PLATFORMS + OWN_PLATFORMS:
        raise InvalidValue(f"platform {platform!r} is unknown; choose one of "
                           f"{', '.join(PUBLIC_PLATFORMS + OWN_PLATFORMS)} (all of them run on the CPU here)")
    return str(platform)


def backend_for_platform(platform: str | None, given: Any) -> Any:
    """The backend type a platform implies (the public rule: a5* -> Ascend950, a2a3* -> Ascend910B)."""
    from pypto.target import BackendType

    if platform in PUBLIC_PLATFORMS:
        return BackendType.Ascend950 if platform.startswith("a5") else BackendType.Ascend910B
    return given


def make_options(**kw: Any) -> CompileOptions:
    disabled = kw.get("disabled_diagnostics")
    checks = frozenset(_enum(DiagnosticCheck, c, "disabled_diagnostics entry") for c in (disabled or ()))
    return CompileOptions(
        platform=check_platform(kw.get("platform")),
        profiling=bool(kw.get("profiling", False)),
        diagnostic_phase=_enum(DiagnosticPhase, kw.get("diagnostic_phase"), "diagnostic_phase"),
        disabled_diagnostics=checks,
        memory_planner=_enum(MemoryPlanner, kw.get("memory_planner"), "memory_planner"),
        enable_pypto_l0c_double_buffer=kw.get("enable_pypto_l0c_double_buffer"),
        distributed_config=kw.get("distributed_config"),
        analyze_auto_scopes_for_deps=bool(kw.get("analyze_auto_scopes_for_deps", False)),
        emit_source_loc=kw.get("emit_source_loc"),
        dump_ptoas_passes=bool(kw.get("dump_ptoas_passes", False)),
        runtime=_enum(RuntimeKind, kw.get("runtime"), "runtime"),
    )


__all__ = ["CompileOptions", "DiagnosticCheck", "DiagnosticCheckSet", "DiagnosticPhase", "MemoryPlanner",
           "PassDumpLevel", "RuntimeKind", "backend_for_platform", "check_platform", "dump_level", "make_options"]
