"""`@pl.function(type=..., external_source=path)`: a kernel whose body is a hand-written C++ file.

The public package compiles that file as the function's device kernel (an Ascend AIC/AIV kernel:
`__aicore__` entry, `__gm__` pointers, PTO-ISA intrinsics, the Ascend kernel ABI). The CPU backend
compiles kernels from PyPTO IR only, so such a function is refused where it is declared, with the
reason, as a `@pl.jit.extern` kernel is (docs/pl_jit.md).
"""

from __future__ import annotations

import os
from typing import Any

from pypto.errors import InvalidType
from pypto.ir.span import Span

from .errors import ParserError

_ASCEND_MARKS = ("__aicore__", "__gm__", "kernel_operator.h", "pto/pto-inst.hpp", "AscendC", "__global__")


class ExternalSourceError(ParserError, NotImplementedError):
    """`external_source=` names a hand-written device kernel: refused on the CPU (names the declaration)."""


def refuse_external_source(fn: Any, source: Any) -> None:
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    if path is None:
        raise InvalidType(f"pl.function external_source= takes a path to a .cpp file, got {source!r}")
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        what = f"its source {path} cannot be read ({e.strerror or e})"
    else:
        marks = [m for m in _ASCEND_MARKS if m in text]
        what = (f"{path} is an Ascend device kernel ({', '.join(marks)})" if marks
                else f"{path} is hand-written C++")
    code = getattr(fn, "__code__", None)
    span = Span(code.co_filename, code.co_firstlineno, 1, code.co_firstlineno, 1) if code is not None else None
    raise ExternalSourceError(
        f"@pl.function(external_source=...) '{getattr(fn, '__name__', fn)}': {what}; the CPU backend compiles "
        "kernels from PyPTO IR only and cannot build or call a hand-written device kernel", span,
        hint="write the kernel's body in pl (a @pl.function(type=pl.FunctionType.InCore) method)")


__all__ = ["ExternalSourceError", "refuse_external_source"]
