"""Source locations. Every IR expression and statement carries one; equality ignores them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    filename: str
    begin_line: int
    begin_col: int
    end_line: int = -1
    end_col: int = -1

    @staticmethod
    def unknown() -> Span:
        return UNKNOWN_SPAN

    @property
    def is_known(self) -> bool:
        return self.begin_line > 0

    def __str__(self) -> str:
        if not self.is_known:
            return "<unknown>"
        return f"{self.filename}:{self.begin_line}:{self.begin_col + 1}"

    def source_line(self) -> str | None:
        """The text of the first line of this span, if the file is readable."""
        if not self.is_known:
            return None
        import linecache

        line = linecache.getline(self.filename, self.begin_line)
        return line.rstrip("\n") if line else None


UNKNOWN_SPAN = Span("<unknown>", 0, 0, 0, 0)
