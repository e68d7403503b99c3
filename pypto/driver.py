"""`ir.compile`: frontend IR -> passes -> PTO code -> (CPU) native code; returns a compiled program.

The compiled program is the output directory's path (a `str`, and `os.PathLike`, so code that
treats `ir.compile(...)` as a path keeps working) and it is callable: `compiled(*args)` runs the
program on the CPU (or, with `config=RunConfig(platform="interp")`, in the NumPy interpreter).

Output directory layout:

    passes_dump/00_frontend.py, NN_after_<Pass>.py   (dump_passes=True)
    kernels/<kernel>.pto                             one PTO module per InCore kernel
    orchestration/<entry>.pto                        the task program
    report/memory.json                               buffers per kernel and memory space
    native/<program>.cpp                             generated C++ (CPU target)
    compile_report.json                              timings per stage
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

from pypto.ir.function import Function, Program
from pypto.ir.printer import python_print
from pypto.passes.base import PassContext
from pypto.passes.pass_manager import OptimizationStrategy, PassManager, VerificationLevel
from pypto.support.files import safe_stem
from pypto.target import BackendType, target_for

_COUNTER = itertools.count()


def _default_dir(name: str) -> Path:
    from pypto.config import config
    from pypto.support.files import safe_stem

    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    base = Path(config.output_root) / f"{safe_stem(name or 'program', 64)}_{stamp}"
    path = base
    while path.exists():
        path = Path(f"{base}_{next(_COUNTER)}")
    return path


def _check_names(prog: Program) -> None:
    """Names become PTO symbols, C++ strings and file names: each must be an identifier (unicode
    letters are fine, `../x` is not)."""
    from pypto.ir.diagnostics import CompileError

    if prog.name and not prog.name.isidentifier():
        raise CompileError(f"program name {prog.name!r} is not an identifier", prog.span,
                           hint="name programs and functions like Python identifiers")
    for fn in prog.functions:
        if not fn.name.isidentifier():
            raise CompileError(f"function name {fn.name!r} is not an identifier", fn.span,
                               hint="name programs and functions like Python identifiers")


def _as_program(node: Program | Function) -> Program:
    if isinstance(node, Program):
        return node
    if isinstance(node, Function):
        from pypto.language.decorators import function_deps

        return Program(node.name, (node, *function_deps(node)), span=node.span)
    raise TypeError(f"ir.compile takes a Program or a Function, got {type(node).__name__}")


def _parse_strategy(s: Any) -> OptimizationStrategy:
    if isinstance(s, OptimizationStrategy):
        return s
    if isinstance(s, str) and s in OptimizationStrategy.__members__:
        return OptimizationStrategy[s]
    raise ValueError(f"unknown strategy {s!r}; choose one of {', '.join(OptimizationStrategy.__members__)}")


def _parse_level(v: Any) -> VerificationLevel:
    from pypto.config import config

    if v is None:
        return VerificationLevel.ALL if config.verify_every_pass else VerificationLevel.BASIC
    if isinstance(v, VerificationLevel):
        return v
    if isinstance(v, str) and v.upper() in VerificationLevel.__members__:
        return VerificationLevel[v.upper()]
    raise ValueError(f"unknown verification level {v!r}")


def compile(program: Program | Function, output_dir: str | os.PathLike | None = None,  # noqa: A001
            strategy: OptimizationStrategy | str = OptimizationStrategy.Default, dump_passes: bool = False,
            backend_type: BackendType | str = BackendType.PTO, skip_ptoas: bool = False,
            verification_level: VerificationLevel | str | None = None, **options: Any) -> CompiledProgram:
    """Compile a `pl` program. See the module docstring for what the output directory holds.

    A compile whose program text and options were compiled before (by this or another process) is
    served from the compile cache (`pypto.config.compile_cache`): its artifacts are copied into the
    output directory and its native library loaded, skipping passes, codegen and the C++ build.
    The compile works in a private staging directory and publishes it when done
    (`pypto.driver_output`): it never replaces files an earlier compile did not record as its own.
    """
    if options:
        raise TypeError(f"ir.compile got unexpected option(s): {', '.join(sorted(options))}")
    from pypto.support.files import FileWriteError

    from .driver_output import OutputDirError, claim, discard, publish, stage

    t0 = time.perf_counter()
    prog = _as_program(program)
    _check_names(prog)
    strategy = _parse_strategy(strategy)
    if isinstance(backend_type, str):
        try:
            backend_type = BackendType[backend_type]
        except KeyError:
            raise ValueError(f"unknown backend type {backend_type!r}; choose one of "
                             f"{', '.join(b.name for b in BackendType)}") from None
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"backend_type must be a pypto.backend.BackendType or its name, got {backend_type!r}")
    level = _parse_level(verification_level)
    if output_dir is not None and not isinstance(output_dir, (str, os.PathLike)):
        raise TypeError(f"output_dir must be a path (str or os.PathLike), got {type(output_dir).__name__}")
    out = Path(output_dir) if output_dir is not None else _default_dir(prog.name or "program")
    try:
        claim(out, prog.name)
        staged = stage(out)
        try:
            compiled = _compile_staged(prog, out, staged, strategy, backend_type, level, dump_passes, skip_ptoas,
                                       t0)
            publish(out, staged, prog.name)
        finally:
            discard(staged)
    except FileWriteError as e:  # (a full disk, a read-only mount: the message names the file)
        raise OutputDirError(f"output_dir {str(out)!r}: {e}") from None
    return compiled


def _compile_staged(prog: Program, out: Path, staged: Path, strategy: OptimizationStrategy,
                    backend_type: BackendType, level: VerificationLevel, dump_passes: bool, skip_ptoas: bool,
                    t0: float) -> CompiledProgram:
    """Everything a compile writes goes to `staged` (private to this call); the compiled program
    keeps in memory what it runs (PTO text, signature, native library), so a later compile into
    the same output directory cannot change it."""
    from pypto.config import config
    from pypto.language import parse as pl_parse

    target = target_for(backend_type)
    key = None
    if config.compile_cache and not dump_passes:
        from .driver_cache import cache_key, restore

        key = cache_key(python_print(prog), strategy.name, backend_type.name)
        hit = restore(key, staged, load_native=not skip_ptoas)
        if hit is not None:
            compiled = CompiledProgram(out)
            compiled._init(prog.name, hit.entry, None, target, backend_type, strategy)
            compiled._pin(staged)
            compiled._native = hit.native
            compiled.timings = {"cached": True, "total_s": time.perf_counter() - t0}
            return compiled

    ctx = PassContext(target=target, backend_type=backend_type, output_dir=staged)
    pm = PassManager.get_strategy(strategy, verification_level=level, reparse=pl_parse)
    lowered = pm.run_passes(prog, dump_ir=dump_passes, output_dir=staged, ctx=ctx)
    t_passes = time.perf_counter()

    from pypto.codegen import generate
    from pypto.pto.printer import print_module

    cg = generate(lowered, target.arch)
    texts = {staged / "kernels" / f"{safe_stem(name)}.pto": print_module(mod) for name, mod in cg.kernels.items()}
    if cg.orchestration is not None:
        texts[staged / "orchestration" / f"{safe_stem(cg.entry)}.pto"] = print_module(cg.orchestration)
    for path, text in texts.items():
        _write(path, text)
        if level in (VerificationLevel.ALL, VerificationLevel.ROUNDTRIP):
            _check_pto_roundtrip(path, text)
    t_codegen = time.perf_counter()

    _write_signature(staged, lowered, cg)
    _write(staged / "lowered.py", python_print(lowered))
    compiled = CompiledProgram(out)
    compiled._init(prog.name, cg.entry, lowered, target, backend_type, strategy)
    compiled._pin(staged)
    timings = {"passes_s": t_passes - t0, "codegen_s": t_codegen - t_passes,
               "passes": [{"name": r.name, "s": r.seconds} for r in pm.records]}
    if not skip_ptoas:
        t1 = time.perf_counter()
        native = _build_with_runtime(compiled, staged)
        timings["native_s"] = time.perf_counter() - t1
        if backend_type is BackendType.CCE:  # the seed's CCE path: kernels also as C++ sources
            for kname, text in native.assembled.per_kernel.items():
                _write(staged / "kernels" / f"{safe_stem(kname)}.cpp", text + "\n")
    timings["total_s"] = time.perf_counter() - t0
    _write(staged / "compile_report.json", json.dumps(timings, indent=2))
    compiled.timings = timings
    if key is not None and not skip_ptoas:
        from .driver_cache import store

        store(key, staged, cg.entry, compiled._native)
    return compiled


def _build_with_runtime(compiled: CompiledProgram, staged: Path) -> Any:
    """Build the program's library, and the runtime library beside it (in parallel: two compiler
    processes) so that the compile's time includes all of a first call's building."""
    import threading

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
        native = compiled._build(keep_source_in=staged / "native")
    finally:
        t.join()
    if failure:
        raise failure[0]
    return native


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


def _write_signature(out: Path, program: Program, cg: Any) -> None:
    """signature.json: the entry's parameters and results (and which parameter, or which extra output,
    each result lands in), for argument checking at call time."""
    from pypto.backend.cpu.emit_orchestration import return_slots
    from pypto.ir.expr import ConstInt, DynVar
    from pypto.ir.types import ScalarType, TensorType

    entry = cg.entry
    fn = program.get_function(entry)
    if fn is None:
        return
    slots = []
    if cg.orchestration is not None:
        slots = [[s.param, s.output] for s in return_slots(cg.orchestration.funcs[0])]

    def dims(t) -> list:
        return [d.value if isinstance(d, ConstInt) else (d.name if isinstance(d, DynVar) else "?") for d in t.shape]

    written = _written_params(cg.orchestration.funcs[0]) if cg.orchestration is not None else set()
    params = []
    for i, (p, d) in enumerate(zip(fn.params, fn.param_directions)):
        t = p.type
        if isinstance(t, TensorType):
            params.append({"name": p.name, "kind": "tensor", "dtype": t.dtype.name, "shape": dims(t),
                           "dir": d.name.lower(), "written": i in written})
        elif isinstance(t, ScalarType):
            params.append({"name": p.name, "kind": "scalar", "dtype": t.dtype.name})
    rets = []
    for t in fn.return_types:
        if isinstance(t, TensorType):
            rets.append({"kind": "tensor", "dtype": t.dtype.name, "shape": dims(t)})
        elif isinstance(t, ScalarType):
            rets.append({"kind": "scalar", "dtype": t.dtype.name})
    _write(out / "signature.json", json.dumps({"entry": entry, "params": params, "returns": rets, "slots": slots,
                                               "build": os.urandom(8).hex()}, indent=2))


def _written_params(orch: Any) -> set[int]:
    """Entry parameters some task writes (through views, reshapes and loop-carried or branch-joined
    values of them) or the task program writes an element of. An `In` one of those is handed a copy
    at call time: the caller's array is input only."""
    root: dict[int, int] = {id(a): i for i, a in enumerate(orch.args)}
    out: set[int] = set()

    def alias(dst: Any, src: Any) -> None:
        r = root.get(id(src))
        if r is not None:
            root[id(dst)] = r

    def visit(block: Any) -> None:
        for op in block.ops:
            n = op.name
            if n in ("pto.tensor_slice", "pto.tensor_reshape") and op.operands and op.results:
                alias(op.results[0], op.operands[0])
            elif n == "pto.submit":
                for v, d in zip(op.operands, op.attrs.get("dirs", [])):
                    if d in ("out", "inout") and id(v) in root:
                        out.add(root[id(v)])
            elif n == "pto.tensor_write" and len(op.operands) > 1 and id(op.operands[1]) in root:
                out.add(root[id(op.operands[1])])
            elif n == "scf.for":
                inits = op.operands[3:]
                for k, v in enumerate(inits):
                    if op.regions and k + 1 < len(op.regions[0].args):
                        alias(op.regions[0].args[k + 1], v)
                    if k < len(op.results):
                        alias(op.results[k], v)
            elif n == "scf.while":
                for reg in op.regions:
                    for k, v in enumerate(op.operands):
                        if k < len(reg.args):
                            alias(reg.args[k], v)
                for k, v in enumerate(op.operands):
                    if k < len(op.results):
                        alias(op.results[k], v)
            for reg in op.regions:
                visit(reg)
                last = reg.ops[-1] if reg.ops else None
                if n == "scf.if" and last is not None and last.name == "scf.yield":
                    for k, v in enumerate(last.operands):
                        if k < len(op.results):
                            alias(op.results[k], v)

    visit(orch.body)
    return out


class CompiledProgram(str):
    """A compiled program: its output directory (as a `str` / `os.PathLike`) and a callable.

    It keeps in memory what it runs — the PTO text of its kernels and task program, its calling
    signature and (once built) its native library — so it keeps running its own program when a
    later compile replaces the directory's files.
    """

    def __new__(cls, path: str | os.PathLike) -> CompiledProgram:
        return super().__new__(cls, os.fspath(path))

    def _init(self, name: str, entry: str, program: Program | None, target, backend_type: BackendType,
              strategy: OptimizationStrategy) -> None:
        self.name = name
        self.entry = entry
        self._program = program
        self.target = target
        self.backend_type = backend_type
        self.strategy = strategy
        self.timings: dict[str, Any] = {}
        self._native = None
        self._signature = None
        self._pto: dict[str, str] = {}  # "kernels/<k>.pto" / "orchestration/<e>.pto" -> text
        self._lowered_text: str | None = None
        self._parsed: tuple[dict[str, Any], Any] | None = None

    def _pin(self, staged: Path) -> None:
        """Read what this compile wrote (in its private staging directory) into memory."""
        from pypto.backend.launch import Signature

        self._pto = {f"{d}/{p.name}": p.read_text() for d in ("kernels", "orchestration")
                     for p in sorted((staged / d).glob("*.pto"))}
        lowered = staged / "lowered.py"
        self._lowered_text = lowered.read_text() if lowered.exists() else None
        self._signature = Signature.load(staged)

    @property
    def program(self) -> Program:
        """The IR after the pass pipeline (parsed from its printed form when the compile was cached)."""
        if self._program is None:
            from pypto.language import parse

            if self._lowered_text is None:
                raise ValueError(f"{self!r} holds no lowered program")
            got = parse(self._lowered_text, filename=str(self.output_dir / "lowered.py"))
            assert isinstance(got, Program)
            self._program = got
        return self._program

    def pto_modules(self) -> tuple[dict[str, Any], Any]:
        """The kernels (name -> PTO module) and the task program this object runs, parsed from the
        text it compiled."""
        from pypto.backend.cpu import parse_modules

        if self._parsed is None:
            self._parsed = parse_modules({str(self.output_dir / rel): text for rel, text in self._pto.items()})
        return self._parsed

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

    def _build(self, keep_source_in: Path | None = None):
        """Assemble this program's PTO text into C++ and build (or fetch from the cache) its library."""
        from pypto.backend.cpu import assemble, build
        from pypto.support.files import atomic_write, make_dirs

        kernels, orch = self.pto_modules()
        asm = assemble(self.name, kernels, orch)
        if keep_source_in is not None:
            make_dirs(keep_source_in)
            atomic_write(keep_source_in / f"{safe_stem(self.name)}.cpp", asm.source)
        self._native = build(asm)
        return self._native

    def _record_output(self, path: Path) -> None:
        """A run wrote `path` (its trace): if it lies in the output directory, the next compile
        there replaces it."""
        from .driver_output import record

        record(self.output_dir, path)

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        from pypto.backend.launch import run_compiled

        return run_compiled(self, args, config, kwargs)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.name!r} at {str.__str__(self)!r})"


__all__ = ["CompiledProgram", "compile"]
