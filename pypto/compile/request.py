"""The inputs of one `ir.compile` call, checked before anything is written (`Request`)."""

from __future__ import annotations

import datetime
import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.errors import InvalidType, InvalidValue
from pypto.ir.function import Function, Program
from pypto.passes.base import Pass
from pypto.passes.pass_manager import OptimizationStrategy, VerificationLevel
from pypto.target import BackendType, Target, backend_type, target_for

_COUNTER = itertools.count()


@dataclass(frozen=True)
class Request:
    """What to compile, where to, and how. Every field is checked: names are identifiers, the
    strategy, backend type and verification level are the enums, `out` is a path."""

    program: Program
    out: Path  # the output directory (not created yet)
    strategy: OptimizationStrategy
    backend_type: BackendType
    target: Target
    level: VerificationLevel
    dump_passes: bool
    skip_ptoas: bool  # stop after the PTO text: no C++, no native library (built on the first call)
    started: float  # time.perf_counter() when ir.compile was called
    pipeline: tuple[Pass, ...] | None = None  # the passes to run instead of the strategy's
    public: Any = None  # the public options (pypto.compile.options.CompileOptions)

    @property
    def platform(self) -> str | None:
        return self.public.platform if self.public is not None else None

    @property
    def name(self) -> str:
        return self.program.name


def make_request(program: Program | Function, output_dir: str | os.PathLike | None, strategy: Any,
                 dump_passes: bool, backend_type: Any, skip_ptoas: bool, verification_level: Any,
                 options: dict[str, Any], *, pipeline: Any = None, target: Any = None, public: Any = None) -> Request:
    """Check `ir.compile`'s arguments (TypeError / ValueError / CompileError saying what is wrong)."""
    started = time.perf_counter()
    if options:
        raise InvalidType(f"ir.compile got unexpected option(s): {', '.join(sorted(options))}")
    prog = _as_program(program)
    _check_names(prog)
    strategy = _parse_strategy(strategy)
    backend = _parse_backend(backend_type)
    level = _parse_level(verification_level)
    if output_dir is not None and not isinstance(output_dir, (str, os.PathLike)):
        raise InvalidType(f"output_dir must be a path (str or os.PathLike), got {type(output_dir).__name__}")
    out = Path(output_dir) if output_dir is not None else _default_dir(prog.name or "program")
    if target is not None and not isinstance(target, Target):
        raise InvalidType(f"target must be a pypto.target.Target, got {type(target).__name__}")
    return Request(prog, out, strategy, backend, target or target_for(backend), level, dump_passes, skip_ptoas,
                   started, _parse_pipeline(pipeline), public)


def _parse_pipeline(passes: Any) -> tuple[Pass, ...] | None:
    if passes is None:
        return None
    if isinstance(passes, (str, bytes)) or not hasattr(passes, "__iter__"):
        raise InvalidType(f"pipeline must be a list of passes, got {type(passes).__name__}")
    out = tuple(passes)
    for i, p in enumerate(out):
        if not isinstance(p, Pass):
            raise InvalidType(f"pipeline[{i}] is {type(p).__name__}, not a pypto.passes Pass (subclass Pass and "
                            f"implement run(program, ctx))")
    return out


def _default_dir(name: str) -> Path:
    from pypto.config import config
    from pypto.support.files import safe_stem

    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    root = os.environ.get("PYPTO_PROG_BUILD_DIR") or config.output_root  # (the public package's variable)
    base = Path(root) / f"{safe_stem(name or 'program', 64)}_{stamp}"
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
    raise InvalidType(f"ir.compile takes a Program or a Function, got {type(node).__name__}")


def _parse_strategy(s: Any) -> OptimizationStrategy:
    if isinstance(s, OptimizationStrategy):
        return s
    if isinstance(s, str) and s in OptimizationStrategy.__members__:
        return OptimizationStrategy[s]
    raise InvalidValue(f"unknown strategy {s!r}; choose one of {', '.join(OptimizationStrategy.__members__)}")


def _parse_backend(b: Any) -> BackendType:
    b = backend_type(b)
    if not isinstance(b, BackendType):
        raise InvalidType(f"backend_type must be a pypto.backend.BackendType or its name, got {b!r}")
    return b


def _parse_level(v: Any) -> VerificationLevel:
    from pypto.config import config

    if v is None:
        return VerificationLevel.ALL if config.verify_every_pass else VerificationLevel.BASIC
    if isinstance(v, VerificationLevel):
        return v
    if isinstance(v, str) and v.upper() in VerificationLevel.__members__:
        return VerificationLevel[v.upper()]
    raise InvalidValue(f"unknown verification level {v!r}")


__all__ = ["Request", "make_request"]
