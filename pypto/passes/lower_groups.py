"""LowerGroupFunctions: a `pl.FunctionType.Group` call becomes one task whose cube and vector blocks run
at the same time (pypto/ir/groups.py; docs/cross_core.md).

Pre: SSA. Post: no Group function; each former Group is an InCore kernel dispatching on its block
index (block 0 the cube function, blocks 1.. the vector lanes), its AIC and AIV functions are Opaque
(InlineFunctions splices them in), and each call of it sits in a `sync` task of 1 + lanes blocks.
"""

from __future__ import annotations

from pypto.ir.function import Program
from pypto.ir.groups import lower_groups

from .base import IRProperty, Pass, PassContext


class LowerGroupFunctions(Pass):
    name = "LowerGroupFunctions"
    requires = frozenset({IRProperty.SSAForm})
    produces = frozenset({IRProperty.SSAForm})

    def run(self, program: Program, ctx: PassContext) -> Program:
        fns = {f.name: f for f in program.functions}
        out = lower_groups(fns)
        if out is fns:
            return program
        return program.with_functions(list(out.values()))


__all__ = ["LowerGroupFunctions"]
