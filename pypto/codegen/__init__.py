"""`pypto.codegen`: IR after the pass pipeline -> PTO modules (one per kernel) + the task program."""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.diagnostics import CompileError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.visitor import IRVisitor
from pypto.pto.model import Module

from .kernel import KernelInfo, generate_kernel
from .orchestration import generate_orchestration


@dataclass
class CodegenResult:
    kernels: dict[str, Module] = field(default_factory=dict)
    kernel_info: dict[str, KernelInfo] = field(default_factory=dict)
    orchestration: Module | None = None
    entry: str = ""


class _Callees(IRVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, c: Call) -> None:
        if isinstance(c.op, GlobalVar):
            self.names.add(c.op.name)
        self.generic_visit(c)


def find_entry(program: Program) -> Function:
    """The orchestration function that no other function calls."""
    called: set[str] = set()
    for f in program.functions:
        if f.func_type is FunctionType.InCore:
            continue  # kernels call no functions
        v = _Callees()
        v.visit(f.body)
        called |= v.names
    cands = [f for f in program.functions if f.func_type is not FunctionType.InCore and f.name not in called]
    if not cands:
        kernels = [f for f in program.functions if f.name not in called]
        if len(kernels) == 1:
            return kernels[0]
        raise CompileError(f"program {program.name} has no entry function (an orchestration no one calls)",
                           program.span)
    if len(cands) > 1:
        raise CompileError(f"program {program.name} has several entry functions: "
                           f"{', '.join(f.name for f in cands)}", program.span,
                           hint="keep one orchestration function that calls the others' kernels")
    return cands[0]


def generate(program: Program, arch: str = "cpu") -> CodegenResult:
    from pypto.ir.collector import paused_collector

    with paused_collector():
        return _generate(program, arch)


def _generate(program: Program, arch: str) -> CodegenResult:
    res = CodegenResult()
    for f in program.functions:
        if f.func_type is FunctionType.InCore:
            mod, info = generate_kernel(f, arch)
            res.kernels[f.name] = mod
            res.kernel_info[f.name] = info
    entry = find_entry(program)
    res.entry = entry.name
    if entry.func_type is not FunctionType.InCore:
        res.orchestration = generate_orchestration(entry, res.kernel_info, arch)
    return res


__all__ = ["CodegenResult", "KernelInfo", "find_entry", "generate"]
