"""Parse context: where the source came from (for spans), the Python environment the kernel closes
over, and the lexical scopes of DSL variables."""

from __future__ import annotations

import ast
import builtins
import linecache
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.expr import Expr, Var
from pypto.ir.span import Span

from ..errors import ParserError, UndefinedVariableError


@dataclass
class Source:
    """A piece of source text and where it sits in its file."""

    filename: str
    lines: list[str]  # the whole file's lines (1-based access through line())
    line_offset: int = 0  # added to AST line numbers
    col_offset: int = 0  # added to AST columns (indent removed before parsing)

    def span(self, node: ast.AST) -> Span:
        ln = getattr(node, "lineno", None)
        if ln is None:
            return Span(self.filename, 0, 0, 0, 0)
        col = getattr(node, "col_offset", 0) or 0
        end_ln = getattr(node, "end_lineno", ln) or ln
        end_col = getattr(node, "end_col_offset", col) or col
        return Span(self.filename, ln + self.line_offset, col + self.col_offset, end_ln + self.line_offset,
                    end_col + self.col_offset)

    @staticmethod
    def register_text(filename: str, text: str) -> list[str]:
        """Make text parsed from a string visible to linecache (so later diagnostics can quote it)."""
        lines = text.splitlines(keepends=True)
        linecache.cache[filename] = (len(text), None, lines, filename)
        return lines


class PyEnv:
    """Python names a kernel can see: closure cells, the defining frame's locals, module globals, builtins."""

    def __init__(self, globals_: dict[str, Any], locals_: dict[str, Any] | None = None,
                 closure: dict[str, Any] | None = None):
        self.globals = globals_
        self.locals = dict(locals_ or {})
        self.closure = dict(closure or {})

    _MISSING = object()

    def lookup(self, name: str) -> Any:
        for d in (self.closure, self.locals, self.globals):
            if name in d:
                return d[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return PyEnv._MISSING

    def has(self, name: str) -> bool:
        return self.lookup(name) is not PyEnv._MISSING

    def eval_namespace(self) -> dict[str, Any]:
        ns = dict(self.globals)
        ns.update(self.locals)
        ns.update(self.closure)
        return ns

    def child(self, extra: dict[str, Any]) -> PyEnv:
        e = PyEnv(self.globals, self.locals, self.closure)
        e.closure.update(extra)
        return e


@dataclass
class Binding:
    """A name in a DSL scope: an IR value (usually a Var) or a compile-time Python constant."""

    value: Any
    span: Span
    python: bool = False


@dataclass
class Scope:
    kind: str  # function / for / for_iter / if / if_yield / while / while_iter / with / inline
    leaks: bool
    names: dict[str, Binding] = field(default_factory=dict)


class Scopes:
    def __init__(self) -> None:
        self.stack: list[Scope] = []

    def push(self, kind: str, leaks: bool) -> Scope:
        s = Scope(kind, leaks)
        self.stack.append(s)
        return s

    def pop(self) -> Scope:
        s = self.stack.pop()
        if s.leaks and self.stack:
            self.stack[-1].names.update(s.names)
        return s

    def lookup(self, name: str) -> Binding | None:
        for s in reversed(self.stack):
            b = s.names.get(name)
            if b is not None:
                return b
        return None

    def define(self, name: str, binding: Binding) -> None:
        self.stack[-1].names[name] = binding

    def owner(self, name: str) -> Scope | None:
        for s in reversed(self.stack):
            if name in s.names:
                return s
        return None

    def visible_vars(self) -> dict[str, Var]:
        out: dict[str, Var] = {}
        for s in self.stack:
            for k, b in s.names.items():
                if not b.python and isinstance(b.value, Var):
                    out[k] = b.value
        return out


def undefined(name: str, span: Span, src: Source, env: PyEnv, scopes: Scopes) -> ParserError:
    import difflib

    cands = list(scopes.visible_vars())
    close = difflib.get_close_matches(name, cands, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"define '{name}' before this line, or pass it as a parameter"
    return UndefinedVariableError(f"undefined variable '{name}'", span, hint=hint)


def is_ir(v: Any) -> bool:
    return isinstance(v, Expr)
