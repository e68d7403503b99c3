"""DedupKernels: isomorphic kernels share one function.

Pre:  kernels lowered to tile ops (ConvertTensorToBlockOps).
Post: no two InCore functions are structurally equal up to the names of their variables; every
      call of a removed duplicate calls the kept one (the first by name). Later passes plan memory,
      synchronise and generate code once per distinct kernel.

Tensor-level programs make many such kernels: a Python loop over weight slices, the tiles of
`set_vec_tile_shapes`, the same op chain in two places; each is outlined as its own function.
"""

from __future__ import annotations

from collections import defaultdict

from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.node import replace
from pypto.ir.structural import structural_equal, structural_hash
from pypto.ir.visitor import IRMutator

from .base import IRProperty, Pass, PassContext


class _Redirect(IRMutator):
    def __init__(self, to: dict[str, str]) -> None:
        super().__init__()
        self.to = to

    def visit_Call(self, c: Call) -> Call:
        new = self.generic_visit(c)
        op = new.op
        if isinstance(op, GlobalVar) and op.name in self.to:
            return replace(new, op=GlobalVar(self.to[op.name]))
        return new


def duplicates(program: Program) -> dict[str, str]:
    """Kernel name -> the name of the first (by name) kernel it is isomorphic to."""
    groups: dict[int, list[Function]] = defaultdict(list)
    for f in program.functions:  # (sorted by name)
        if f.func_type is FunctionType.InCore and f.body is not None:
            groups[structural_hash(replace(f, name=""), enable_auto_mapping=True)].append(f)
    out: dict[str, str] = {}
    for members in groups.values():
        kept: list[Function] = []
        for f in members:
            same = next((k for k in kept if structural_equal(replace(f, name=k.name), k, enable_auto_mapping=True)),
                        None)
            if same is None:
                kept.append(f)
            else:
                out[f.name] = same.name
    return out


class DedupKernels(Pass):
    """Keep one of each set of isomorphic kernels (see the module docstring)."""

    name = "DedupKernels"
    requires = frozenset({IRProperty.IncoreBlockOps})
    produces = frozenset()
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        to = duplicates(program)
        if not to:
            return program
        redirect = _Redirect(to)
        functions = tuple(redirect.visit(f) if f.func_type is not FunctionType.InCore else f
                          for f in program.functions if f.name not in to)
        return Program(program.name, functions, span=program.span)


__all__ = ["DedupKernels", "duplicates"]
