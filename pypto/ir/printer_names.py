"""What the printer names and declares: unique, valid Python names for variables (one namespace
per function, sanitized, keywords and `pl` builtins avoided), the dynamic dimensions a program
declares at the top, and the order functions print in (callees first).
"""

from __future__ import annotations

import functools

from .expr import Call, DynVar, GlobalVar, MemRef, Var
from .function import Function, Program
from .node import Node
from .visitor import IRVisitor


class PrintedNames:
    """Unique, deterministic printed names for variable objects."""

    def __init__(self, reserved: frozenset[str] = frozenset()):
        self.names: dict[Var, str] = {}
        self.reserved = reserved  # shared, never changed (a printer is made for every expr_str)
        self.added: set[str] = set()

    @property
    def taken(self) -> frozenset[str]:
        return self.reserved | self.added

    def get(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None:
            base = sanitize(v.name)
            n = base
            k = 1
            while n in self.added or n in self.reserved:
                n = f"{base}_{k}"
                k += 1
            self.added.add(n)
            self.names[v] = n
        return n


RESERVED = frozenset({"pl", "self", "True", "False", "None", "and", "or", "not", "if", "else", "for", "in", "while",
                      "return", "def", "class", "with", "pass", "break", "continue", "lambda", "yield", "import",
                      "from", "as", "is", "global", "nonlocal", "try", "except", "finally", "raise", "del", "assert",
                      "elif", "async", "await", "range", "min", "max", "abs", "float", "int", "tuple"})


@functools.lru_cache(maxsize=4096)
def sanitize(name: str) -> str:
    n = "".join(c if (c.isalnum() or c == "_") else "_" for c in (name or "v"))
    if not n or n[0].isdigit():
        n = "v_" + n
    if n in RESERVED:
        n = n + "_"
    return n


class _DynCollector(IRVisitor):
    visit_types = True

    def __init__(self):
        self.found: list[DynVar] = []
        self.seen: set[int] = set()

    def visit_DynVar(self, v: DynVar) -> None:
        if id(v) not in self.seen:
            self.seen.add(id(v))
            self.found.append(v)

    def visit_def(self, var: Var) -> None:
        if isinstance(var, DynVar):
            self.visit_DynVar(var)
        super().visit_def(var)

    def visit_Var(self, var: Var) -> None:
        if isinstance(var, DynVar):
            self.visit_DynVar(var)
        elif var.type is not None and not isinstance(var, MemRef):
            self.visit(var.type)

    def visit_Function(self, f: Function) -> None:
        for p in f.params:
            self.visit_def(p)
        for t in f.return_types:
            self.visit(t)
        self.visit(f.body)


def collect_dynvars(node: Node) -> list[DynVar]:
    c = _DynCollector()
    c.visit(node)
    return c.found


class _Calls(IRVisitor):
    """The functions of `names` a body calls, in order of first call."""

    def __init__(self, names: dict[str, Function]) -> None:
        self.names = names
        self.out: list[str] = []

    def visit_Call(self, c: Call) -> None:
        if isinstance(c.op, GlobalVar) and c.op.name in self.names and c.op.name not in self.out:
            self.out.append(c.op.name)
        self.generic_visit(c)


def callee_order(prog: Program) -> list[Function]:
    """Functions with every callee before its callers (ties by name), cycles broken by name."""
    by_name = {f.name: f for f in prog.functions}
    calls: dict[str, list[str]] = {}
    for f in prog.functions:
        v = _Calls(by_name)
        v.visit(f.body)
        calls[f.name] = sorted(v.out)
    order: list[Function] = []
    state: dict[str, int] = {}

    def visit(n: str) -> None:
        if state.get(n):
            return
        state[n] = 1
        for c in calls[n]:
            visit(c)
        state[n] = 2
        order.append(by_name[n])

    for f in prog.functions:
        visit(f.name)
    return order


__all__ = ["RESERVED", "PrintedNames", "callee_order", "collect_dynvars", "sanitize"]
