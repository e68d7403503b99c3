"""Errors that point at user source: `file:line:col`, the line with a caret, and what to do.

    Error: <message>
      --> kernels.py:12:15
       |
    12 |     z = pl.add(x, y)
       |                   ^
       = help: <hint>

Parser errors (`pypto.language`) and compile errors raised by passes share this rendering, which is
`pypto.errors.render_located` (PTO parse errors use it too).
"""

from __future__ import annotations

import linecache

from pypto.errors import Error, render_located

from .span import Span


class LocatedError(Error):
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

    def excerpt(self, span: Span) -> tuple[list[tuple[int, str]], tuple[int, int, int] | None]:
        """The numbered source lines around `span` (two before, two after) and its caret."""
        if not span.is_known:
            return [], None
        lines: list[tuple[int, str]] = []
        caret = None
        for n in range(max(1, span.begin_line - 2), span.begin_line + 3):
            line = self._line(span.filename, n)
            if line is None:
                if n > span.begin_line:
                    break
                continue
            lines.append((n, line))
            if n == span.begin_line:
                start = span.begin_col
                if span.end_line == span.begin_line and span.end_col > start:
                    length = span.end_col - start
                else:
                    length = max(1, len(line.rstrip()) - start)
                caret = (n, start, length)
        return lines, caret

    def snippet(self, span: Span) -> list[str]:
        """The excerpt of `span` as lines (for extra blocks, such as a previous definition)."""
        text = render_located("", None, *self.excerpt(span))
        return [line[2:] for line in text.split("\n")[1:]]

    def extra_lines(self) -> list[str]:
        return []

    def render(self) -> str:
        known = self.span is not None and self.span.is_known
        lines, caret = self.excerpt(self.span) if known else ([], None)  # type: ignore[arg-type]
        return render_located(self.message, str(self.span) if known else None, lines, caret, self.hint, self.note,
                              self.extra_lines())

    def __str__(self) -> str:
        return self.render()


class CompileError(LocatedError):
    """A program the compiler cannot turn into code (raised by passes and code generation)."""


__all__ = ["CompileError", "LocatedError"]
