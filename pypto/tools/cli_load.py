"""`pypto` command helpers: find the program a user names on the command line, and compile it
with progress lines.

    FILE.py            the one `@pl.program` class in the file (else its one `@pl.function`)
    FILE.py:Name       the program (or function) bound to `Name` in the file

The file is imported as a module (so helper code, constants and `pl.dynamic` names work); a file
that does not import but holds `pl` source text as `ir.python_print` writes it is parsed instead.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pypto.errors import Error


class CliError(Error):
    """A user mistake on the command line (exit code 2, one line, no traceback)."""


def split_spec(spec: str) -> tuple[Path, str | None]:
    """`FILE.py[:Name]` -> (path, name). A colon that is part of an existing path (C:\\...) is kept."""
    if ":" in spec and not Path(spec).exists():
        path, _, name = spec.rpartition(":")
        if not name.isidentifier():
            raise CliError(f"{spec!r}: after the colon comes a program name, got {name!r}")
        return Path(path), name
    return Path(spec), None


def _candidates(namespace: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    from pypto.ir.function import Function, Program

    progs = {k: v for k, v in namespace.items() if isinstance(v, Program)}
    funcs = {k: v for k, v in namespace.items() if isinstance(v, Function)}
    return progs, funcs


def _import(path: Path) -> dict[str, Any] | None:
    """The module's globals, or None if it does not import (then it may still be pl text)."""
    mod_name = f"_pypto_cli_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # (the pl parser reads class sources through inspect, which needs it)
    sys.path.insert(0, str(path.resolve().parent))  # (its sibling modules import as in `python FILE.py`)
    try:
        spec.loader.exec_module(module)
    except Error:
        raise  # a pl parse error in a decorated class: the user's mistake, located by the parser
    except Exception:  # noqa: BLE001 - not importable Python: fall back to the pl text parser
        sys.modules.pop(mod_name, None)
        return None
    finally:
        sys.path.remove(str(path.resolve().parent))
    return vars(module)


def load_program(spec: str) -> Any:
    """The `Program` (or `Function`) that `spec` names; a `CliError` saying what is missing."""
    path, name = split_spec(spec)
    if not path.is_file():
        raise CliError(f"no such file: {path}")
    namespace = _import(path) if path.suffix == ".py" else None
    if namespace is None:
        return _parse_text(path, name)
    progs, funcs = _candidates(namespace)
    if name is not None:
        if name in progs or name in funcs:
            return progs.get(name) or funcs[name]
        have = sorted(progs) + sorted(funcs)
        raise CliError(f"{path}: no program or function named {name!r} (found: {', '.join(have) or 'none'})")
    if len(progs) == 1:
        return next(iter(progs.values()))
    if len(progs) > 1:
        raise CliError(f"{path} defines {len(progs)} programs ({', '.join(sorted(progs))}); "
                       f"name one: {path}:{sorted(progs)[0]}")
    if len(funcs) == 1:
        return next(iter(funcs.values()))
    if funcs:
        raise CliError(f"{path} defines {len(funcs)} functions ({', '.join(sorted(funcs))}) and no "
                       f"@pl.program; name one: {path}:{sorted(funcs)[0]}")
    raise CliError(f"{path}: no @pl.program or @pl.function in it")


def _parse_text(path: Path, name: str | None) -> Any:
    import pypto.language as pl

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"cannot read {path}: {e}") from None
    prog = pl.loads(text)
    if name is not None and getattr(prog, "name", None) != name:
        raise CliError(f"{path}: holds program {getattr(prog, 'name', '?')!r}, not {name!r}")
    return prog


class Progress:
    """Stage lines on stderr: always with `-v`, else only once a step takes more than `delay` s
    (a short compile stays quiet; a long build says what it is doing)."""

    def __init__(self, verbose: bool, delay: float = 1.0):
        self.verbose, self.delay = verbose, delay
        self.shown = verbose
        self._timer: threading.Timer | None = None

    def step(self, what: str) -> None:
        self.done()
        if self.verbose:
            self._say(what)
            return
        self._timer = threading.Timer(self.delay, self._late, (what,))
        self._timer.daemon = True
        self._timer.start()

    def _late(self, what: str) -> None:
        self.shown = True
        self._say(f"{what} (still working)")

    def _say(self, text: str) -> None:
        print(f"pypto: {text}", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def timings(self, compiled: Any) -> None:
        """After a compile that showed progress: the seconds of each stage."""
        self.done()
        if not self.shown:
            return
        for stage, secs in (getattr(compiled, "timings", None) or {}).items():
            if isinstance(secs, (int, float)):
                self._say(f"  {stage:<14} {secs:8.3f} s")


def compile_spec(spec: str, progress: Progress, **kw: Any) -> Any:
    """Load and compile `spec` (keyword arguments go to `ir.compile`)."""
    from pypto import ir

    progress.step(f"loading {spec}")
    prog = load_program(spec)
    progress.step(f"compiling {getattr(prog, 'name', spec)} (passes, code generation, C++ build)")
    if kw.get("output_dir") is not None:  # (printed paths are absolute: they are clicked and copied)
        kw["output_dir"] = Path(kw["output_dir"]).resolve()
    t0 = time.perf_counter()
    compiled = ir.compile(prog, **kw)
    progress.timings(compiled)
    if progress.shown:
        progress._say(f"compiled in {time.perf_counter() - t0:.2f} s")
    return compiled


def parse_assignments(items: list[str] | None, what: str) -> dict[str, str]:
    """`NAME=VALUE` options -> dict (a `CliError` naming a malformed one)."""
    out: dict[str, str] = {}
    for it in items or []:
        name, eq, value = it.partition("=")
        if not eq or not name or not value:
            raise CliError(f"{what} takes NAME=VALUE, got {it!r}")
        out[name] = value
    return out


__all__ = ["CliError", "Progress", "compile_spec", "load_program", "parse_assignments", "split_spec"]
