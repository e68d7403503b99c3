"""One error hierarchy: every exception PyPTO raises on purpose is a `pypto.Error`.

    try:
        compiled = ir.compile(program)
        compiled(x)
    except pypto.Error as e:       # a parse, compile, build, argument or run-time error
        print(e)

Each error also derives from the built-in exception that says what kind of failure it is
(`ValueError`, `TypeError`, `RuntimeError`, `OSError`, ...), so `except ValueError` keeps working.
The errors of each layer are defined next to it (`pypto.language.ParserError`,
`pypto.ir.diagnostics.CompileError`, `pypto.pto.errors.PtoParseError`, `pypto.runtime.TaskGraphError`,
...); this module holds the base, the generic kinds, and the one renderer of errors located in a
source text (a `pl` program or a PTO file):

    Error: use of undefined value %x
      --> kernel.pto:12:15
       |
    12 |     pto.tadd ins(%x, %y : ...) outs(...)
       |                  ^
       = help: define %x before this line

This module imports nothing from PyPTO: every layer may use it.
"""

from __future__ import annotations

from collections.abc import Sequence


class Error(Exception):
    """Base of every exception PyPTO raises on purpose."""


class InvalidValue(Error, ValueError):
    """An argument or setting with a value PyPTO does not accept."""


class InvalidType(Error, TypeError):
    """An argument of a type PyPTO does not accept."""


class InvalidState(Error, RuntimeError):
    """An operation on an object that cannot do it now (closed, already running, ...)."""


class TimedOut(Error, TimeoutError):
    """A wait that did not end in its time (a cross-core pipe pop with nothing pushed)."""


class OutOfRange(Error, OverflowError):
    """A number outside the range of the type that must hold it."""


class MissingFile(Error, FileNotFoundError):
    """A file or directory PyPTO was asked to read and did not find."""


class InvalidSyntax(Error, SyntaxError):
    """Program text PyPTO cannot read (outside the pl parser, which has its own ParserError)."""


class NotFound(Error, KeyError):
    """A name looked up and not found (an op, a memory space, a kernel)."""

    def __str__(self) -> str:  # (KeyError would quote the message)
        return str(self.args[0]) if self.args else ""


_WIDTH = 150  # longest source line shown; longer ones are cut around the caret


def clip_line(line: str, at: int, width: int = _WIDTH) -> tuple[str, int]:
    """A source line cut to `width` characters around index `at` (non-printable characters shown
    as '?'); returns the text and the new index of `at`."""
    line = "".join(c if c.isprintable() or c == "\t" else "?" for c in line[: at + width])
    if len(line) <= width:
        return line, at
    start = max(0, min(at - width // 2, len(line) - width))
    head = "..." if start else ""
    tail = "..." if start + width < len(line) else ""
    return head + line[start:start + width] + tail, at - start + len(head)


def render_located(message: str, location: str | None = None, excerpt: Sequence[tuple[int, str]] = (),
                   caret: tuple[int, int, int] | None = None, hint: str | None = None, note: str | None = None,
                   extra: Sequence[str] = ()) -> str:
    """The text of an error located in a source: the message, `--> file:line:col`, the numbered
    `excerpt` lines with a caret (`caret` = (line number, 0-based column, length)) under the fault,
    `extra` lines, then the hint and the note."""
    out = [f"Error: {message}"]
    if location:
        out.append(f"  --> {location}")
    if excerpt:
        width = len(str(max(n for n, _ in excerpt)))
        bar = " " * width + " |"
        out.append(f"  {bar}")
        for n, text in excerpt:
            if caret is not None and n == caret[0]:
                shown, at = clip_line(text, caret[1])
                out.append(f"  {str(n).rjust(width)} | {shown}")
                # tabs stay tabs under the line, so the caret sits under the right character
                lead = "".join(c if c == "\t" else " " for c in shown[:at])
                length = max(1, min(caret[2], len(shown) - at))
                out.append(f"  {bar} {lead}{'^' * length}")
            else:
                out.append(f"  {str(n).rjust(width)} | {clip_line(text, 0)[0]}")
    out += list(extra)
    if hint:
        out.append(f"   = help: {hint}")
    if note:
        out.append(f"   = note: {note}")
    return "\n".join(out)


__all__ = ["Error", "InvalidState", "InvalidType", "InvalidValue", "NotFound", "OutOfRange", "TimedOut", "clip_line", "render_located"]
