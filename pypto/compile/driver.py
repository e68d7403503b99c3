"""`ir.compile`: a `pl` program -> passes -> PTO text -> native library, as a list of stages.

Each stage (pypto/compile/stages.py) returns a frozen artifact; `_compile_into` is the list. A
compile whose program text and options were compiled before is served from the compile cache
instead (pypto/compile/cache.py). Everything is written into a private staging directory, which
is published as the output directory when the compile succeeds (pypto/compile/output.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pypto.passes.base import Pass
from pypto.passes.pass_manager import OptimizationStrategy, VerificationLevel
from pypto.target import BackendType, Target

from .program import CompiledProgram
from .request import Request, make_request
from .stages import Built, Written, build, generate, lower, report, write


def compile(program: Any, output_dir: str | os.PathLike | None = None,  # noqa: A001
            strategy: OptimizationStrategy | str = OptimizationStrategy.Default, dump_passes: Any = False,
            backend_type: BackendType | str = BackendType.PTO, skip_ptoas: bool = False,
            verification_level: VerificationLevel | str | None = None, diagnostic_phase: Any = None,
            disabled_diagnostics: Any = None, memory_planner: Any = None,
            enable_pypto_l0c_double_buffer: bool | None = None, profiling: bool = False, platform: str | None = None,
            distributed_config: Any = None, analyze_auto_scopes_for_deps: bool = False,
            emit_source_loc: bool | None = None, dump_ptoas_passes: bool = False, runtime: Any = None, *,
            pipeline: Sequence[Pass] | None = None, target: Target | None = None, **options: Any) -> CompiledProgram:
    """Compile a `pl` program (a `Program`, or a `Function` with the functions it calls). See
    `pypto.compile` for what the output directory holds.

    The parameters are the public PyPTO's, in its order; pypto/compile/options.py says what each of
    the options after `verification_level` does here. `dump_passes` takes a bool or a
    `PassDumpLevel`; `platform` (a2a3sim / a2a3 / a5sim / a5, or cpu / interp) sets the backend type
    of the public names; `output_dir=None` makes `$PYPTO_PROG_BUILD_DIR/<name>_<time>` (else under
    `pypto.config.output_root`).

    `pipeline` replaces the strategy's passes (start from `pypto.passes.pipeline(strategy)` and
    insert your own; such compiles skip the compile cache). `target` replaces the backend type's
    machine description (`pypto.target.Target`: memory spaces and capacities, cores, pipes): the
    compiler plans for it, and the program still runs on the CPU. See docs/extending.md.

    A compile whose program text and options were compiled before (by this or another process) is
    served from the compile cache (`pypto.config.compile_cache`): its artifacts are copied into the
    output directory and its native library loaded, skipping passes, codegen and the C++ build.
    The compile works in a private staging directory and publishes it when done
    (`pypto.compile.output`): it never replaces files an earlier compile did not record as its own.
    """
    from pypto.support.files import FileWriteError

    from .options import backend_for_platform, dump_level, make_options
    from .output import OutputDirError, staging

    public = make_options(diagnostic_phase=diagnostic_phase, disabled_diagnostics=disabled_diagnostics,
                          memory_planner=memory_planner, enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                          profiling=profiling, platform=platform, distributed_config=distributed_config,
                          analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps, emit_source_loc=emit_source_loc,
                          dump_ptoas_passes=dump_ptoas_passes, runtime=runtime)
    backend_type = backend_for_platform(public.platform, backend_type)
    req = make_request(program, output_dir, strategy, dump_level(dump_passes), backend_type, skip_ptoas,
                       verification_level, options, pipeline=pipeline, target=target, public=public)
    try:
        with staging(req.out, req.name) as staged:
            compiled = _compile_into(req, staged)
    except FileWriteError as e:  # (a full disk, a read-only mount: the message names the file)
        raise OutputDirError(f"output_dir {str(req.out)!r}: {e}") from None
    if public.profiling:
        _write_profile(compiled)
    return compiled


def _write_profile(compiled: CompiledProgram) -> None:
    """`profiling=True`: the stage timings as report/pipeline_profile.{json,txt} (recorded files)."""
    import json

    from .output import record

    report = compiled.output_dir / "report"
    report.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in compiled.timings.items() if isinstance(v, (int, float, bool, str))}
    (report / "pipeline_profile.json").write_text(json.dumps(data, indent=1) + "\n")
    (report / "pipeline_profile.txt").write_text("".join(f"{k:<24} {v}\n" for k, v in data.items()))
    for name in ("pipeline_profile.json", "pipeline_profile.txt"):
        record(compiled.output_dir, report / name)


def _compile_into(req: Request, staged: Path) -> CompiledProgram:
    key = _cache_key(req)
    if key is not None:
        hit = _restore(req, key, staged)
        if hit is not None:
            return hit
    lowered = lower(req, staged)  # the pass pipeline (dumps, memory report)
    generated = generate(req, lowered)  # PTO modules, the calling signature
    written = write(req, lowered, generated, staged)  # .pto files, signature.json, lowered.py
    built = None if req.skip_ptoas else build(req, written, staged)  # C++, native library
    timings = report(req, lowered, generated, written, built, staged)  # compile_report.json
    if key is not None and built is not None:
        from .cache import store

        store(key, staged, written.entry, built.native)
    return CompiledProgram(req, written, built, timings, lowered)


def _cache_key(req: Request) -> str | None:
    """The compile cache's key for this request; None when the cache is off or the compile must run
    (dump_passes asks for the passes' output)."""
    from pypto.config import config
    from pypto.ir.printer import python_print

    if not config.compile_cache or req.dump_passes or req.pipeline is not None:
        return None  # (a custom pipeline's passes are Python code the key cannot cover)
    from .cache import cache_key

    return cache_key(python_print(req.program), req.strategy.name, req.backend_type.name, req.target.fingerprint())


def _restore(req: Request, key: str, staged: Path) -> CompiledProgram | None:
    """The cache short-cut: a hit's files copied into `staged`, its library loaded (not with
    `skip_ptoas`); None on a miss."""
    from .cache import restore

    hit = restore(key, staged, load_native=not req.skip_ptoas)
    if hit is None:
        return None
    written = Written.read(staged, hit.entry)
    built = Built(hit.native, None, 0.0) if hit.native is not None else None
    return CompiledProgram(req, written, built, {"cached": True, "total_s": time.perf_counter() - req.started})


__all__ = ["compile"]
