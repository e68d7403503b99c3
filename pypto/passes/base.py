"""The pass abstraction: a named Program -> Program transform with declared IR properties.

A pass states what it needs (`requires`), what it establishes (`produces`) and what it breaks
(`invalidates`). The pass manager tracks the properties along the pipeline and refuses to run a pass
whose requirements are missing, so a reordered pipeline fails loudly instead of miscompiling.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pypto.ir.diagnostics import CompileError
from pypto.ir.function import Function, Program
from pypto.target import BackendType, Target, target_for


class IRProperty(enum.Enum):
    TypeChecked = "TypeChecked"
    StructuredCtrlFlow = "StructuredCtrlFlow"
    SSAForm = "SSAForm"
    NoNestedCalls = "NoNestedCalls"
    NoUnrollLoops = "NoUnrollLoops"
    NoChunkedLoops = "NoChunkedLoops"
    SplitIncoreOrch = "SplitIncoreOrch"
    IncoreBlockOps = "IncoreBlockOps"
    HasMemRefs = "HasMemRefs"
    SyncInserted = "SyncInserted"
    AllocatedMemoryAddr = "AllocatedMemoryAddr"


@dataclass
class PassContext:
    """What a pass may read besides the program: the target, options, and where to write reports."""

    target: Target = field(default_factory=lambda: target_for(None))
    backend_type: BackendType = BackendType.PTO
    output_dir: Path | None = None
    reports: dict[str, object] = field(default_factory=dict)  # e.g. "memory" -> report dict


class PassError(CompileError):
    """A pass found a program it cannot handle (user error), located at the offending source."""


class Pass:
    """Base class. Subclasses set `name` and the property sets and implement `run`."""

    name: ClassVar[str] = ""
    requires: ClassVar[frozenset[IRProperty]] = frozenset()
    produces: ClassVar[frozenset[IRProperty]] = frozenset()
    invalidates: ClassVar[frozenset[IRProperty]] = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:  # pragma: no cover - abstract
        raise NotImplementedError(f"pass {self.name} does not implement run()")

    def __call__(self, program: Program, ctx: PassContext | None = None) -> Program:
        return self.run(program, ctx or PassContext())

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class FunctionPass(Pass):
    """A pass that rewrites each function on its own."""

    def run(self, program: Program, ctx: PassContext) -> Program:
        fns = [self.run_on_function(f, program, ctx) for f in program.functions]
        if all(a is b for a, b in zip(fns, program.functions)):
            return program
        return program.with_functions(fns)

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:  # pragma: no cover
        raise NotImplementedError(f"pass {self.name} does not implement run_on_function()")


__all__ = ["FunctionPass", "IRProperty", "Pass", "PassContext", "PassError"]
