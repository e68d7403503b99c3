"""`pypto.ir`: the IR (types, expressions, statements, functions, programs), its printer, parser
hooks, structural equality, serialization and verifier, plus the compile entry point.

The toolkit every later stage uses lives here too, one module per job: `walk` (statement lists and
walks), `variables` (uses, definitions, def-use), `rewrite` (statement rewriter, substitution,
cloning), `names` (fresh names), `evaluate` (constant folding, the reference evaluator),
`message_text` (the printer's dialect for diagnostics).

`ir.compile`, `ir.OptimizationStrategy` and friends live in higher layers (passes, pypto.compile); they
are loaded on first use so that the IR core itself imports nothing above it.
"""

from __future__ import annotations

from typing import Any

from .dtype import DataType, promote
from .enums import (
    CastMode,
    CmpType,
    ForKind,
    FunctionType,
    LoopOrigin,
    MemorySpace,
    PadValue,
    ParamDirection,
    PipeType,
    ScopeKind,
    TensorLayout,
    TileLayout,
)
from .expr import *  # noqa: F403
from .function import Function, Program
from .node import FieldKind, Node, node_fields
from .op import OpError, create_op_call, get_op, is_op_registered, register_op, registered_op_names
from .printer import python_print
from .span import Span
from .stmt import *  # noqa: F403
from .structural import StructuralMismatch, assert_structural_equal, structural_equal, structural_hash
from .types import (
    MemRefType,
    ScalarType,
    ShapedType,
    TensorType,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)
from .visitor import IRMutator, IRVisitor

# names served by upper layers (see the module docstring)
_LAZY = {
    "compile": ("pypto.compile", "compile"),
    "CompiledProgram": ("pypto.compile", "CompiledProgram"),
    "OptimizationStrategy": ("pypto.passes.pass_manager", "OptimizationStrategy"),
    "VerificationLevel": ("pypto.passes.pass_manager", "VerificationLevel"),
    "PassDumpLevel": ("pypto.compile.options", "PassDumpLevel"),
    "MemoryPlanner": ("pypto.compile.options", "MemoryPlanner"),
    "DiagnosticPhase": ("pypto.compile.options", "DiagnosticPhase"),
    "DiagnosticCheck": ("pypto.compile.options", "DiagnosticCheck"),
    "DiagnosticCheckSet": ("pypto.compile.options", "DiagnosticCheckSet"),
    "RuntimeKind": ("pypto.compile.options", "RuntimeKind"),
    "PassManager": ("pypto.passes.pass_manager", "PassManager"),
    "serialize": ("pypto.ir.serialization", "serialize"),
    "deserialize": ("pypto.ir.serialization", "deserialize"),
    "serialize_to_file": ("pypto.ir.serialization", "serialize_to_file"),
    "deserialize_from_file": ("pypto.ir.serialization", "deserialize_from_file"),
    "IRBuilder": ("pypto.ir.builder", "IRBuilder"),
    "verify": ("pypto.ir.verifier", "verify"),
    "VerificationError": ("pypto.ir.verifier", "VerificationError"),
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in ("pass_manager", "compiled_program"):  # `ir.<submodule>.X` without importing it first
        return importlib.import_module(f"pypto.ir.{name}")
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'pypto.ir' has no attribute '{name}'")
    return getattr(importlib.import_module(target[0]), target[1])


__all__ = [
    "CastMode", "CmpType", "DataType", "FieldKind", "ForKind", "Function", "FunctionType", "LoopOrigin",
    "MemRefType", "MemorySpace", "Node", "OpError", "PadValue", "ParamDirection", "PipeType", "Program",
    "ScalarType", "ScopeKind", "ShapedType", "Span", "StructuralMismatch", "TensorLayout", "TensorType",
    "TileLayout", "TileType", "TileView", "TupleType", "Type", "UnknownType", "IRMutator", "IRVisitor",
    "assert_structural_equal", "create_op_call", "get_op", "is_op_registered", "node_fields", "promote",
    "python_print", "register_op", "registered_op_names", "structural_equal", "structural_hash",
]
