"""Errors that point at user source: `file:line:col`, the line with a caret, and what to do.

    Error: <message>
      --> kernels.py:12:15
       |
    12 |     z = pl.add(x, y)
       |                   ^
       = help: <hint>

Parser errors (`pypto.language`) and compile errors raised by passes share this rendering.
"""

from __future__ import annotations

import linecache

from .span import Span


class LocatedError(Exception):
    """An error about the user's program, located at a source span."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None, note: str | None = None,
                 source_lines: list[str] | None = None):
        self.message = message
        self.span = span
        self.hint = hint
        self.note = note
        self.source_lines = source_lines
        super().__init__(self.render())

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

    def _line(self, filename: str, n: int) -> str | None:
        if self.source_lines is not None and (self.span is None or filename == self.span.filename):
            return self.source_lines[n - 1].rstrip("\n") if 0 < n <= len(self.source_lines) else None
        text = linecache.getline(filename, n)
        return text.rstrip("\n") if text else None

    def snippet(self, span: Span) -> list[str]:
        out: list[str] = []
        if not span.is_known:
            return out
        first = max(1, span.begin_line - 2)
        last = span.begin_line + 2
        width = len(str(last))
        bar = " " * width + " |"
        out.append(bar)
        for n in range(first, last + 1):
            line = self._line(span.filename, n)
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
                out.append(f"{bar} {' ' * start}{'^' * length}")
        return out

    def extra_lines(self) -> list[str]:
        return []

    def render(self) -> str:
        lines = [f"Error: {self.message}"]
        if self.span is not None and self.span.is_known:
            lines.append(f"  --> {self.span}")
            lines += ["  " + s for s in self.snippet(self.span)]
        lines += self.extra_lines()
        if self.hint:
            lines.append(f"   = help: {self.hint}")
        if self.note:
            lines.append(f"   = note: {self.note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class CompileError(LocatedError):
    """A program the compiler cannot turn into code (raised by passes and code generation)."""


__all__ = ["CompileError", "LocatedError"]
