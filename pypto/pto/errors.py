"""Errors of the PTO text format: located parse errors and verifier errors.

A parse error renders like the compiler's other located errors:

    Error: use of undefined value %x
      --> kernel.pto:12:15
       |
    12 |     pto.tadd ins(%x, %y : ...) outs(...)
       |                  ^
       = help: define %x before this line, in this region or an enclosing one
"""

from __future__ import annotations

from pypto.errors import Error, render_located


class PtoParseError(Error, ValueError):
    """Text that is not valid PTO. `filename`, `line`, `col` (1-based), `message`, `hint`."""

    def __init__(self, message: str, filename: str = "<pto>", line: int = 0, col: int = 0,
                 source_line: str | None = None, hint: str | None = None):
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line
        self.hint = hint
        super().__init__(self.render())

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"

    def render(self) -> str:
        excerpt = [(self.line, self.source_line)] if self.source_line is not None else []
        caret = (self.line, max(0, self.col - 1), 1) if excerpt else None
        return render_located(self.message, self.location, excerpt, caret, self.hint)

    def __str__(self) -> str:
        return self.render()


class PtoVerifyError(Error, ValueError):
    """A PTO module that breaks a structural rule; `issues` lists every fault found.

    The message lists the issues (at most 20), each followed by the faulty op's text when known.
    """

    def __init__(self, issues: list, op_texts: list[str | None] | None = None):
        self.issues = issues
        texts = op_texts or [None] * len(issues)
        lines = [f"PTO verification failed ({len(issues)} issue{'s' if len(issues) != 1 else ''}):"]
        for issue, text in list(zip(issues, texts))[:20]:
            lines.append(f"  {issue}")
            if text:
                lines.append(f"      | {text}")
        if len(issues) > 20:
            lines.append(f"  ... and {len(issues) - 20} more")
        super().__init__("\n".join(lines))
