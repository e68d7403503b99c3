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

import linecache
import os

from pypto.ir.span import Span


class ParserError(Exception):
    """Base of all errors raised while turning `pl` source into IR."""

    code = "E000"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None, note: str | None = None,
                 source_lines: list[str] | None = None):
        self.message = message
        self.span = span
        self.hint = hint
        self.note = note
        self.source_lines = source_lines
        super().__init__(self.render(color=False))

    @property
    def location(self) -> str:
        return str(self.span) if self.span is not None else "<unknown>"

    @property
    def lineno(self) -> int | None:
        return self.span.begin_line if self.span is not None and self.span.is_known else None

    @property
    def col(self) -> int | None:
        """1-based column of the fault."""
        return self.span.begin_col + 1 if self.span is not None and self.span.is_known else None

    def _line(self, n: int) -> str | None:
        if self.source_lines is not None:
            return self.source_lines[n - 1].rstrip("\n") if 0 < n <= len(self.source_lines) else None
        if self.span is None:
            return None
        text = linecache.getline(self.span.filename, n)
        return text.rstrip("\n") if text else None

    def _snippet(self, span: Span, color: bool) -> list[str]:
        out: list[str] = []
        if not span.is_known:
            return out
        first = max(1, span.begin_line - 2)
        last = span.begin_line + 2
        width = len(str(last))
        bar = " " * width + " |"
        out.append(bar)
        for n in range(first, last + 1):
            line = self._line(n)
            if line is None:
                if n > span.begin_line:
                    break
                continue
            out.append(f"{str(n).rjust(width)} | {line}")
            if n == span.begin_line:
                start = span.begin_col
                if span.end_line == span.begin_line and span.end_col > start:
                    length = span.end_col - start
                else:
                    length = max(1, len(line.rstrip()) - start)
                caret = " " * start + "^" * length
                if color:
                    caret = f"\x1b[1;31m{caret}\x1b[0m"
                out.append(f"{bar} {caret}")
        return out

    def render(self, color: bool = False) -> str:
        head = f"Error: {self.message}"
        if color:
            head = f"\x1b[1;31merror\x1b[0m: {self.message}"
        lines = [head]
        if self.span is not None and self.span.is_known:
            lines.append(f"  --> {self.span}")
            lines += ["  " + s for s in self._snippet(self.span, color)]
        lines += self._extra(color)
        if self.hint:
            lines.append(f"   = help: {self.hint}")
        if self.note:
            lines.append(f"   = note: {self.note}")
        return "\n".join(lines)

    def _extra(self, color: bool) -> list[str]:
        return []

    def __str__(self) -> str:
        return self.render(color=_use_color())


def _use_color() -> bool:
    return False if os.environ.get("NO_COLOR") else False  # plain text: errors end up in logs and tests


class ParserSyntaxError(ParserError):
    """A construct the `pl` language does not have (wrong loop form, bad assignment target, ...)."""

    code = "E001"


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

    def _extra(self, color: bool) -> list[str]:
        if self.previous_span is None or not self.previous_span.is_known:
            return []
        out = ["   = note: Previous definition was here:", f"  --> {self.previous_span}"]
        out += ["  " + s for s in self._snippet(self.previous_span, color)]
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
    "InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError", "SSAViolationError",
    "ScopeIsolationError", "UndefinedVariableError", "UnsupportedFeatureError",
]
