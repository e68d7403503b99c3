"""What the verifier reports, and how: `Diagnostic` (one fault), `VerificationError` (all of them)
and the rendering of its message, which shows the IR around each fault (`excerpt`) as the printer
prints it (in its message dialect, `pypto.ir.message_text`, where the printer cannot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import Error

from ..function import Function, Program
from ..message_text import stmt_text
from ..span import Span
from ..stmt import ForStmt, IfStmt, ScopeStmt, Stmt, WhileStmt
from ..walk import body_stmts, child_bodies


@dataclass(frozen=True, eq=False)
class Diagnostic:
    rule: str
    code: int
    message: str
    span: Span
    node: Any = None  # the offending node
    stmt: Stmt | None = None  # the statement holding it (for the IR excerpt)
    function: str | None = None
    hint: str | None = None  # what to do about it, where a rule knows

    def __str__(self) -> str:
        return f"[{self.rule} {self.code}] {self.message} ({self.span})"


class VerificationError(Error):
    """The IR broke the invariants the rules check; `diagnostics` lists every fault."""

    def __init__(self, diagnostics: list[Diagnostic], root: Any = None) -> None:
        self.diagnostics = list(diagnostics)
        self.root = root
        super().__init__(render_diagnostics(self.diagnostics, root))


def _names(vs: Any) -> str:
    return ", ".join(v.name for v in vs)


def _stmt_line(s: Stmt) -> str:
    """The printer's first line for `s` (` ...` after a compound statement's header); the message
    dialect's line when the printer cannot print it (the IR a diagnostic shows may be malformed)."""
    try:
        from ..printer import python_print  # at call time: without it, excerpts still render

        lines = [ln for ln in python_print(s).strip("\n").splitlines() if ln.strip()]
        if lines:
            compound = len(lines) > 1 and isinstance(s, (ForStmt, WhileStmt, IfStmt, ScopeStmt))
            return lines[0].strip() + (" ..." if compound else "")
    except Exception:  # any failure falls back to the message dialect, which never fails
        pass
    return stmt_text(s)


def _locate(root: Any, target: Stmt) -> tuple[list[Stmt], int, list[Any]] | None:
    """(the block holding `target`, its index there, the chain of enclosing function/statements)."""

    def search(body: Stmt, chain: list[Any]) -> tuple[list[Stmt], int, list[Any]] | None:
        block = body_stmts(body)
        for i, x in enumerate(block):
            if x is target:
                return block, i, chain
            for c in child_bodies(x):
                got = search(c, chain + [x])
                if got is not None:
                    return got
        return None

    fns = root.functions if isinstance(root, Program) else [root] if isinstance(root, Function) else []
    for f in fns:
        got = search(f.body, [f]) if f.body is not None else None
        if got is not None:
            return got
    return search(root, []) if isinstance(root, Stmt) else None


def excerpt(root: Any, stmt: Stmt | None, context: int = 3) -> list[str]:
    """Lines showing the statements around `stmt` (marked with `>`) inside `root`."""
    if stmt is None or root is None:
        return []
    found = _locate(root, stmt)
    if found is None:
        return [f"  > {_stmt_line(stmt)}"]
    block, i, chain = found
    out: list[str] = []
    indent = ""
    for c in chain:
        out.append(f"    {indent}" + (f"def {c.name}({_names(c.params)}):" if isinstance(c, Function)
                                      else _stmt_line(c)))
        indent += "    "
    lo, hi = max(0, i - context), min(len(block), i + context + 1)
    if lo > 0:
        out.append(f"    {indent}...")
    for j in range(lo, hi):
        mark = "  > " if j == i else "    "
        out.append(f"{mark}{indent}{_stmt_line(block[j])}")
    if hi < len(block):
        out.append(f"    {indent}...")
    return out


def render_diagnostics(diags: list[Diagnostic], root: Any = None) -> str:
    lines = [f"IR verification failed with {len(diags)} error(s):"]
    for d in diags:
        where = f" in function {d.function}" if d.function else ""
        lines.append(f"error [{d.rule} {d.code}]{where}: {d.message}")
        lines.append(f"  --> {d.span}")
        src = d.span.source_line() if d.span.is_known else None
        if src:
            lines.append(f"   | {src.strip()}")
        lines.extend(excerpt(root, d.stmt))
        if d.hint:
            lines.append(f"   = help: {d.hint}")
    return "\n".join(lines)
