"""`@pl.jit` and its family: functions written with plain `pl.Tensor` annotations, specialised per
call on the arguments' shapes and dtypes into a `@pl.program`, compiled with `ir.compile`, cached,
and run in place. See docs/pl_jit.md.

    @pl.jit                      the entry (an Orchestration function): kernel(a, b, out, config=...)
    @pl.jit.incore(level=...)    a device kernel (InCore), specialised where the entry calls it
    @pl.jit.inline               a helper spliced into its caller
    @pl.jit.opaque               a function of its own (may hold loops and pl.at scopes)
    @pl.jit.host                 a host-level entry (on the CPU: an orchestration entry)
    @pl.jit.extern(source=...)   a hand-written Ascend C++ kernel: refused on the CPU (see JITFunction)

    function.py    JITFunction: cache key, `_cache`, call plans, compile / lower / __call__
    meta.py        parameter kinds from annotations, tensor metas from arguments, pl.RUNTIME
    rewrite.py     the AST rewrite of one specialisation (the source map: nodes keep their lines)
    specialize.py  classification, the program build, dependencies specialised at their call sites
    run_script.py  debug/run.py: a self-contained re-runner written beside each jit compile
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from pypto.errors import InvalidType, InvalidValue

from .function import CacheKey, JitCache, JITFunction
from .meta import RUNTIME


def _caller_locals(depth: int) -> dict[str, Any]:
    try:
        return dict(sys._getframe(depth + 1).f_locals)
    except ValueError:
        return {}


def _check_fn(fn: Any, what: str) -> None:
    if not isinstance(fn, types.FunctionType):
        raise InvalidType(f"@{what} decorates a function, got {fn!r}")


def _decorator(kind: str, what: str, allowed: tuple[str, ...]) -> Any:
    def make(fn: Any = None, /, **kw: Any) -> Any:
        bad = sorted(set(kw) - set(allowed))
        if bad:
            hint = {"auto_scope": "only @pl.jit, .host and .inline take auto_scope=",
                    "level": "only @pl.jit.incore takes level="}
            raise InvalidType(f"@{what} got unexpected keyword(s) {', '.join(bad)}"
                            + "".join(f" ({hint[b]})" for b in bad if b in hint))
        frame_locals = _caller_locals(1)

        def deco(f: Any) -> JITFunction:
            _check_fn(f, what)
            return JITFunction(f, kind, auto_scope=kw.get("auto_scope", True), level=kw.get("level"),
                               frame_locals=frame_locals)

        return deco if fn is None else deco(fn)

    make.__name__ = what
    return make


class _Jit:
    """`pl.jit` (callable as a decorator, with or without options) and its variants."""

    def __init__(self) -> None:
        self._entry = _decorator("orchestration", "pl.jit", ("auto_scope",))
        self.incore = _decorator("incore", "pl.jit.incore", ("level",))
        self.inline = _decorator("inline", "pl.jit.inline", ("auto_scope",))
        self.opaque = _decorator("opaque", "pl.jit.opaque", ())
        self.host = _decorator("host", "pl.jit.host", ("auto_scope",))

    def __call__(self, fn: Any = None, /, **kw: Any) -> Any:
        return self._entry(fn, **kw)

    def extern(self, fn: Any = None, /, *, source: str | None = None, core_type: str = "aiv",
               aic_source: str | None = None, aiv_source: str | None = None, dual_aiv_dispatch: bool = False,
               include_dirs: Any = None) -> Any:
        """A signature-only stub backed by a hand-written C++ kernel. Accepted at decoration (so modules
        that define one import); a program that calls it is refused at specialisation: the source is an
        Ascend device kernel, which the CPU backend cannot build."""
        if core_type not in ("aic", "aiv", "mixed"):
            raise InvalidValue(f"@pl.jit.extern core_type must be 'aic', 'aiv' or 'mixed', got {core_type!r}")
        info = {"source": source, "core_type": core_type, "aic_source": aic_source, "aiv_source": aiv_source,
                "dual_aiv_dispatch": dual_aiv_dispatch, "include_dirs": include_dirs}

        def deco(f: Any) -> JITFunction:
            _check_fn(f, "pl.jit.extern")
            for k in ("source", "aic_source", "aiv_source"):
                if info[k] is not None:
                    p = Path(info[k])
                    if not p.is_absolute():
                        p = Path(f.__code__.co_filename).parent / p
                    info[k] = str(p)
            return JITFunction(f, "extern", extern=info)

        return deco if fn is None else deco(fn)

    def __repr__(self) -> str:
        return "pl.jit"


jit = _Jit()

__all__ = ["RUNTIME", "CacheKey", "JITFunction", "JitCache", "jit"]
