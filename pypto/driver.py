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

from pypto.backend.target import BackendType, target_for
from pypto.ir.function import Function, Program
from pypto.ir.printer import python_print
from pypto.passes.base import PassContext
from pypto.passes.pass_manager import OptimizationStrategy, PassManager, VerificationLevel

_COUNTER = itertools.count()


# What a compile writes into its output directory; an earlier compile's files there are removed
# first, so that the directory always describes one program (the backend reads every .pto in it).
_OUTPUTS = {"kernels": ("*.pto", "*.cpp"), "orchestration": ("*.pto",), "passes_dump": ("[0-9][0-9]_*.py",),
            "report": ("*.json",), "native": ("*.cpp",)}
_OUTPUT_FILES = ("signature.json", "lowered.py", "compile_report.json")


_MARKER = ".pypto-output"  # written by every compile: only such a directory is cleared


def _clear_outputs(out: Path) -> None:
    import shutil

    if not (out / _MARKER).exists():
        (out / _MARKER).write_text("written by pypto ir.compile; its outputs are replaced by the next compile\n")
        return
    for d, patterns in _OUTPUTS.items():  # only the files a compile writes (the rest is not ours)
        if (out / d).is_dir():
            for pat in patterns:
                for f in (out / d).glob(pat):
                    f.unlink(missing_ok=True)
            if not any((out / d).iterdir()):
                shutil.rmtree(out / d)
    for f in _OUTPUT_FILES:
        (out / f).unlink(missing_ok=True)


def _default_dir(name: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    base = Path("build_output") / f"{name}_{stamp}"
    path = base
    while path.exists():
        path = Path(f"{base}_{next(_COUNTER)}")
    return path


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
    """
    if options:
        raise TypeError(f"ir.compile got unexpected option(s): {', '.join(sorted(options))}")
    from pypto.config import config
    from pypto.language import parse as pl_parse

    t0 = time.perf_counter()
    prog = _as_program(program)
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
    out = Path(output_dir) if output_dir is not None else _default_dir(prog.name or "program")
    try:
        out.mkdir(parents=True, exist_ok=True)
        _clear_outputs(out)
    except OSError as e:
        raise ValueError(f"output_dir {str(out)!r}: cannot create the directory ({e.strerror or e})") from None
    target = target_for(backend_type)
    key = None
    if config.compile_cache and not dump_passes:
        from .driver_cache import cache_key, restore

        key = cache_key(python_print(prog), strategy.name, backend_type.name)
        hit = restore(key, out, load_native=not skip_ptoas)
        if hit is not None:
            compiled = CompiledProgram(out)
            compiled._init(prog.name, hit.entry, None, target, backend_type, strategy)
            compiled._native = hit.native
            compiled.timings = {"cached": True, "total_s": time.perf_counter() - t0}
            _pin_signature(compiled)
            return compiled

    ctx = PassContext(target=target, backend_type=backend_type, output_dir=out)
    pm = PassManager.get_strategy(strategy, verification_level=level, reparse=pl_parse)
    lowered = pm.run_passes(prog, dump_ir=dump_passes, output_dir=out, ctx=ctx)
    t_passes = time.perf_counter()

    from pypto.codegen import generate
    from pypto.pto.printer import print_module

    cg = generate(lowered, target.arch)
    texts = {out / "kernels" / f"{name}.pto": print_module(mod) for name, mod in cg.kernels.items()}
    if cg.orchestration is not None:
        texts[out / "orchestration" / f"{cg.entry}.pto"] = print_module(cg.orchestration)
    for path, text in texts.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        if level in (VerificationLevel.ALL, VerificationLevel.ROUNDTRIP):
            _check_pto_roundtrip(path, text)
    t_codegen = time.perf_counter()

    _write_signature(out, lowered, cg)
    (out / "lowered.py").write_text(python_print(lowered))
    compiled = CompiledProgram(out)
    compiled._init(prog.name, cg.entry, lowered, target, backend_type, strategy)
    timings = {"passes_s": t_passes - t0, "codegen_s": t_codegen - t_passes,
               "passes": [{"name": r.name, "s": r.seconds} for r in pm.records]}
    if not skip_ptoas:
        t1 = time.perf_counter()
        native = compiled._build()
        timings["native_s"] = time.perf_counter() - t1
        if backend_type is BackendType.CCE:  # the seed's CCE path: kernels also as C++ sources
            for kname, text in native.assembled.per_kernel.items():
                (out / "kernels" / f"{kname}.cpp").write_text(text + "\n")
    timings["total_s"] = time.perf_counter() - t0
    (out / "compile_report.json").write_text(json.dumps(timings, indent=2))
    compiled.timings = timings
    if key is not None and not skip_ptoas:
        from .driver_cache import store

        store(key, out, cg.entry, compiled._native)
    _pin_signature(compiled)
    return compiled


def _pin_signature(compiled: CompiledProgram) -> None:
    """Read the signature now: a later compile into the same directory must not change what this
    object runs (the interpreter re-reads the .pto files and checks they are still this build's)."""
    from pypto.backend.launch import Signature

    compiled._signature = Signature.load(compiled.output_dir)


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
    (out / "signature.json").write_text(json.dumps({"entry": entry, "params": params, "returns": rets,
                                                    "slots": slots, "build": os.urandom(8).hex()}, indent=2))


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
    """A compiled program: its output directory (as a `str` / `os.PathLike`) and a callable."""

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

    @property
    def program(self) -> Program:
        """The IR after the pass pipeline (read back from lowered.py when the compile was cached)."""
        if self._program is None:
            from pypto.language import loads

            got = loads(self.output_dir / "lowered.py")
            assert isinstance(got, Program)
            self._program = got
        return self._program

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

    def _build(self):
        from pypto.backend.cpu import build_program

        self._native = build_program(self.output_dir, self.name)
        return self._native

    def __call__(self, *args: Any, config: Any = None) -> Any:
        from pypto.backend.launch import run_compiled

        return run_compiled(self, args, config)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.name!r} at {str.__str__(self)!r})"


__all__ = ["CompiledProgram", "compile"]
