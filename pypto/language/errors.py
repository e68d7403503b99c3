"""Parser diagnostics: every error names file:line:col, shows the source line with a caret under the
fault, and says what to do.

    Error: undefined variable 'y'
      --> kernels.py:12:15
       |
    12 |     z = pl.add(x, y)
       |                   ^
       = help: define 'y' before this line, or pass it as a parameter
"""

from __future__ import annotations

from pypto.ir.diagnostics import LocatedError
from pypto.ir.span import Span


class ParserError(LocatedError):
    """Base of all errors raised while turning `pl` source into IR."""

    code = "E000"


class ParserSyntaxError(ParserError):
    """A construct the `pl` language does not have (wrong loop form, bad assignment target, ...)."""

    code = "E001"


class PythonSyntaxError(ParserSyntaxError, SyntaxError):
    """Text given to `pl.parse` that is not valid Python; also a `SyntaxError`, as callers of the
    public API catch it."""


class ParseTextError(ParserError, ValueError):
    """Text given to `pl.parse` that defines no program or function, or several functions and no
    program (which one to return is ambiguous); also a `ValueError`, as in the public API."""


class ParserTypeError(ParserError):
    """A value of the wrong type, a bad annotation, or an op applied to operands it does not accept."""

    code = "E100"


class UndefinedVariableError(ParserError):
    code = "E200"


class SSAViolationError(ParserError):
    """A variable assigned twice under `strict_ssa=True`."""

    code = "E201"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None, note: str | None = None,
                 source_lines: list[str] | None = None, previous_span: Span | None = None):
        self.previous_span = previous_span
        super().__init__(message, span, hint, note, source_lines)

    def extra_lines(self) -> list[str]:
        if self.previous_span is None or not self.previous_span.is_known:
            return []
        out = ["   = note: Previous definition was here:", f"  --> {self.previous_span}"]
        out += ["  " + s for s in self.snippet(self.previous_span)]
        return out


class UnsupportedFeatureError(ParserError):
    """Python that is valid but has no meaning in a `pl` kernel (try/except, classes, ...)."""

    code = "E301"


class InvalidOperationError(ParserError):
    """An operation used where it is not allowed (pl.yield_ outside a loop, pl.cond not first, ...)."""

    code = "E302"


class ScopeIsolationError(ParserError):
    code = "E202"


__all__ = [
    "InvalidOperationError", "ParseTextError", "ParserError", "ParserSyntaxError", "ParserTypeError",
    "PythonSyntaxError", "SSAViolationError",
    "ScopeIsolationError", "UndefinedVariableError", "UnsupportedFeatureError",
]
