"""The stages of `ir.compile`, each a function returning a frozen artifact:

    lower(request, staged)                       -> Lowered    the pass pipeline
    generate(request, lowered)                   -> Generated  PTO modules + the calling signature
    write(request, lowered, generated, staged)   -> Written    .pto files, signature.json, lowered.py
    build(request, written, staged)              -> Built      C++ from the written PTO text, native library
    report(request, ..., staged)                 -> timings    compile_report.json

Everything a stage writes goes into `staged`, the compile's private staging directory (published
as the output directory when the compile succeeds): the passes' dumps and memory report, then the
files `write` and `build` name. `Written` is also what the compiled program keeps in memory, so it
runs its own program whatever later happens to the directory's files.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pypto.backend.signature import Param, Signature
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.printer import python_print
from pypto.passes.pass_manager import PassRecord, VerificationLevel
from pypto.pto.model import Module
from pypto.support.files import safe_stem

from .request import Request

PtoModules = tuple[dict[str, Module], Module | None]  # kernels by function name, the task program


@dataclass(frozen=True)
class Lowered:
    program: Program  # the IR after the pass pipeline
    records: tuple[PassRecord, ...]  # per pass: its name and seconds
    seconds: float


@dataclass(frozen=True)
class Generated:
    entry: str  # the entry function (the task program's name, or the one kernel's)
    kernels: Mapping[str, Module]  # one PTO module per InCore kernel, by name
    orchestration: Module | None  # the task program (None: the entry is a kernel)
    pto: Mapping[str, str]  # "kernels/<k>.pto" / "orchestration/<entry>.pto" -> the module's text
    signature: Signature
    seconds: float


@dataclass(frozen=True)
class Written:
    """What the staging directory holds that running needs, held in memory."""

    entry: str
    pto: Mapping[str, str]  # as Generated.pto
    signature: Signature
    lowered_text: str | None  # lowered.py (None when the cache entry had none)
    seconds: float = 0.0

    @staticmethod
    def read(staged: Path, entry: str) -> Written:
        """The artifacts of a compile restored into `staged` (from the compile cache)."""
        pto = {f"{d}/{p.name}": p.read_text() for d in ("kernels", "orchestration")
               for p in sorted((staged / d).glob("*.pto"))}
        lowered = staged / "lowered.py"
        text = lowered.read_text() if lowered.exists() else None
        return Written(entry, MappingProxyType(pto), Signature.load(staged), text)


@dataclass(frozen=True)
class Built:
    native: Any  # the loaded library: an object with `.handle` (pypto.runtime.ProgramHandle)
    modules: PtoModules | None  # the PTO modules it was assembled from (None: served by the cache)
    seconds: float


def lower(req: Request, staged: Path) -> Lowered:
    """Run the strategy's pass pipeline. With `dump_passes` the IR after each pass goes into
    `staged/passes_dump`; memory planning writes `staged/report/memory.json`."""
    from pypto.language import parse as pl_parse
    from pypto.passes.base import PassContext
    from pypto.passes.pass_manager import PassManager

    t0 = time.perf_counter()
    ctx = PassContext(target=req.target, backend_type=req.backend_type, output_dir=staged)
    if req.pipeline is not None:
        pm = PassManager(list(req.pipeline), req.strategy, verification_level=req.level, reparse=pl_parse)
    else:
        pm = PassManager.get_strategy(req.strategy, verification_level=req.level, reparse=pl_parse)
    program = pm.run_passes(req.program, dump_ir=req.dump_passes, output_dir=staged, ctx=ctx)
    return Lowered(program, tuple(pm.records), time.perf_counter() - t0)


def generate(req: Request, lowered: Lowered) -> Generated:
    """PTO modules for the kernels and the task program, their text, and the calling signature."""
    from pypto.codegen import generate as codegen
    from pypto.pto.printer import print_module

    t0 = time.perf_counter()
    cg = codegen(lowered.program, req.target.arch)
    pto = {f"kernels/{safe_stem(name)}.pto": print_module(mod) for name, mod in cg.kernels.items()}
    if cg.orchestration is not None:
        pto[f"orchestration/{safe_stem(cg.entry)}.pto"] = print_module(cg.orchestration)
    fn = lowered.program.get_function(cg.entry)
    assert fn is not None, cg.entry  # (codegen's entry is one of the program's functions)
    orig = req.program.get_function(cg.entry)  # (as the user wrote it: the pipeline retypes the entry)
    sig = _signature(fn, cg.orchestration, in_place=_public_style(orig))
    return Generated(cg.entry, MappingProxyType(dict(cg.kernels)), cg.orchestration, MappingProxyType(pto), sig,
                     time.perf_counter() - t0)


def write(req: Request, lowered: Lowered, gen: Generated, staged: Path) -> Written:
    """Write the PTO text (checked to survive parse -> print when the verification level asks for
    round trips), `signature.json` and `lowered.py` (the lowered IR as `pl` source)."""
    t0 = time.perf_counter()
    for rel, text in gen.pto.items():
        path = staged / rel
        _write(path, text)
        if req.level in (VerificationLevel.ALL, VerificationLevel.ROUNDTRIP):
            _check_pto_roundtrip(path, text)
    _write(staged / "signature.json", gen.signature.to_json())
    _write(staged / "kernel_config.py", kernel_config(gen))
    lowered_text = python_print(lowered.program)
    _write(staged / "lowered.py", lowered_text)
    return Written(gen.entry, gen.pto, gen.signature, lowered_text, time.perf_counter() - t0)


_CUBE_SPACES = ("loc=left", "loc=right", "loc=acc")


def kernel_config(gen: Generated) -> str:
    """`kernel_config.py`: the kernels and the task program of the output directory, in the public
    project's file of that name (KERNELS with func_id / name / source / core_type, ORCHESTRATION,
    RUNTIME_CONFIG), for tools that read it. A kernel holding Left / Right / Acc tiles is a cube
    ("aic") kernel, as the public orchestration decides; the CPU runs both kinds on every worker."""
    kernels = []
    for i, name in enumerate(sorted(gen.kernels)):
        rel = f"kernels/{safe_stem(name)}.pto"
        text = gen.pto.get(rel, "")
        core = "aic" if any(sp in text for sp in _CUBE_SPACES) else "aiv"
        kernels.append({"func_id": i, "name": name, "source": rel, "core_type": core})
    orch = None
    if gen.orchestration is not None:
        orch = {"name": gen.entry, "source": f"orchestration/{safe_stem(gen.entry)}.pto"}
    lines = ['"""The kernels of this output directory (written by pypto.ir.compile)."""', "",
             f"RUNTIME_CONFIG = {json.dumps({'runtime': 'pypto-mpmd'})}", "",
             f"ORCHESTRATION = {json.dumps(orch)}".replace("null", "None"), "", "KERNELS = ["]
    lines += [f"    {json.dumps(k)}," for k in kernels]
    lines += ["]", ""]
    return "\n".join(lines)


def build(req: Request, written: Written, staged: Path) -> Built:
    """Assemble the written PTO text into C++ (`native/<program>.cpp`; with the CCE backend type
    also `kernels/<kernel>.cpp`) and build its library, the runtime's library beside it (in
    parallel: two compiler processes), so that the compile's time includes a first call's building."""
    t0 = time.perf_counter()
    modules = parse_pto(written.pto, req.out)
    failure: list[BaseException] = []

    def runtime_library() -> None:
        try:
            from pypto.runtime.native import library

            library()
        except BaseException as e:  # noqa: BLE001 - re-raised on the calling thread
            failure.append(e)

    t = threading.Thread(target=runtime_library, name="pypto-runtime-build", daemon=True)
    t.start()
    try:
        native = native_program(req.name, modules, keep_source_in=staged / "native")
    finally:
        t.join()
    if failure:
        raise failure[0]
    from pypto.target import BackendType

    if req.backend_type is BackendType.CCE:  # the seed's CCE path: kernels also as C++ sources
        for kname, text in native.assembled.per_kernel.items():
            _write(staged / "kernels" / f"{safe_stem(kname)}.cpp", text + "\n")
    return Built(native, modules, time.perf_counter() - t0)


def report(req: Request, lowered: Lowered, gen: Generated, written: Written, built: Built | None,
           staged: Path) -> dict[str, Any]:
    """The compile's timings, also written as `compile_report.json`."""
    timings: dict[str, Any] = {"passes_s": lowered.seconds, "codegen_s": gen.seconds + written.seconds,
                               "passes": [{"name": r.name, "s": r.seconds} for r in lowered.records]}
    if built is not None:
        timings["native_s"] = built.seconds
    timings["total_s"] = time.perf_counter() - req.started
    _write(staged / "compile_report.json", json.dumps(timings, indent=2))
    return timings


def parse_pto(pto: Mapping[str, str], out: Path) -> PtoModules:
    """Parse a compile's PTO text (errors name the files as they are in the output directory)."""
    from pypto.backend.cpu import parse_modules

    return parse_modules({str(out / rel): text for rel, text in pto.items()})


def native_program(name: str, modules: PtoModules, keep_source_in: Path | None = None) -> Any:
    """Assemble PTO modules into C++ (kept as `keep_source_in/<name>.cpp` when given) and build
    (or fetch from the native build cache) and load its library."""
    from pypto.backend.cpu import assemble
    from pypto.backend.cpu import build as build_native
    from pypto.support.files import atomic_write, make_dirs

    kernels, orch = modules
    asm = assemble(name, kernels, orch)
    if keep_source_in is not None:
        make_dirs(keep_source_in)
        atomic_write(keep_source_in / f"{safe_stem(name)}.cpp", asm.source)
    return build_native(asm)


def _public_style(orig: Function | None) -> bool:
    """An entry written as the public project writes one: an Orchestration function, or an Opaque one
    holding a `pl.at(level=CORE_GROUP)` / `pl.incore()` region (outlined, it is orchestration). Its
    written In tensors are written in place, as the public runtime (buffer addresses) does."""
    from pypto.ir.enums import ScopeKind
    from pypto.ir.stmt import ScopeStmt
    from pypto.ir.walk import walk_stmts

    if orig is None:
        return False
    if orig.func_type is FunctionType.Orchestration:
        return True
    return orig.func_type is FunctionType.Opaque and any(
        isinstance(s, ScopeStmt) and s.kind is ScopeKind.InCore for s in walk_stmts(orig))


def _signature(fn: Function, orchestration: Module | None, in_place: bool = False) -> Signature:
    """The entry's parameters and results, and which parameter (or which extra output) each
    result lands in, from the task program's analysis."""
    from pypto.ir.expr import ConstInt, DynVar
    from pypto.ir.types import ScalarType, TensorType
    from pypto.pto.analysis import analyze_task_program

    info = analyze_task_program(orchestration.funcs[0]) if orchestration is not None else None
    slots = tuple((s.param, s.output) for s in info.slots) if info is not None else ()
    written = info.written if info is not None else frozenset()

    def dims(t: Any) -> tuple:
        return tuple(d.value if isinstance(d, ConstInt) else (d.name if isinstance(d, DynVar) else "?")
                     for d in t.shape)

    # a public-style entry (written as an Orchestration function) writes an In tensor it writes in place,
    # as the public runtime (which passes buffer addresses) does; other entries work on a copy (the
    # caller's array is input)
    params = []
    for i, (p, d) in enumerate(zip(fn.params, fn.param_directions)):
        t = p.type
        if isinstance(t, TensorType):
            direction = d.name.lower()
            if direction == "in" and i in written and in_place:
                direction = "inout"
            params.append(Param(p.name, "tensor", t.dtype, dims(t), direction, i in written and not in_place))
        elif isinstance(t, ScalarType):
            params.append(Param(p.name, "scalar", t.dtype, (), "scalar"))
    rets: list[Param] = []  # (named and directed as Signature.load names them)
    for t in fn.return_types:
        if isinstance(t, TensorType):
            rets.append(Param(f"result{len(rets)}", "tensor", t.dtype, dims(t), "scalar"))
        elif isinstance(t, ScalarType):
            rets.append(Param(f"result{len(rets)}", "scalar", t.dtype, (), "scalar"))
    return Signature(fn.name, tuple(params), tuple(rets), slots, os.urandom(8).hex())


def _write(path: Path, text: str) -> None:
    """Write an artifact (errors name the path: a full disk is not a bare OSError)."""
    from pypto.support.files import atomic_write, make_dirs

    make_dirs(path.parent)
    atomic_write(path, text)


def _check_pto_roundtrip(path: Path, text: str) -> None:
    """The PTO boundary is text: what we wrote must parse back and print identically."""
    from pypto.ir.diagnostics import CompileError
    from pypto.pto.parser import parse_module
    from pypto.pto.printer import print_module

    again = print_module(parse_module(text, filename=str(path)))
    if again != text:
        raise CompileError(f"{path}: the PTO text does not survive parse -> print (codegen/printer bug)")


__all__ = ["Built", "Generated", "Lowered", "Written", "build", "generate", "lower", "native_program", "parse_pto",
           "report", "write"]
