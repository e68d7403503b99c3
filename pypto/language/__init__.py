"""`pypto.language` (imported as `pl`): the language for writing kernels and programs.

Types (`pl.Tensor`, `pl.Tile`, `pl.Scalar`, `pl.Out`, `pl.InOut`), data types (`pl.FP32`, ...),
operations (`pl.add`, `pl.block.load`, `pl.tensor.matmul`, `pl.system.bar_v`, ...; all generated
from the op registry), control flow (`pl.range`, `pl.parallel`, `pl.unroll`, `pl.while_`,
`pl.yield_`, `pl.cond`), scopes (`pl.incore`, `pl.auto_incore`), decorators (`@pl.function`,
`@pl.program`, `@pl.inline`) and text parsing (`pl.parse`, `pl.loads`).
"""

from __future__ import annotations

import types as _types

from pypto.ir.dtype import DataType
from pypto.ir.enums import (
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
from pypto.ir.types import MemRefType, TileView

from . import compat
from . import dsl as _dsl
from .annotations import InOut, Out, Scalar, Tensor, Tile, Tuple, Unknown, dynamic
from .annotations import MemRefAnn as MemRef
from .decorators import InlineFunction, function, inline, loads, loads_program, parse, parse_program, program
from .dsl import (  # noqa: A004
    at,
    auto_incore,
    cond,
    const,
    func_attr,
    incore,
    parallel,
    range,
    static_assert,
    static_print,
    unroll,
    while_,
    yield_,
)
from .errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)
from .hints import AtomicType, SplitMode, cross_core_slot, split
from .placement import Level, Role

# data types
BOOL = DataType.BOOL
INT4, INT8, INT16, INT32, INT64 = DataType.INT4, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64
UINT4, UINT8, UINT16, UINT32, UINT64 = (DataType.UINT4, DataType.UINT8, DataType.UINT16, DataType.UINT32,
                                         DataType.UINT64)
FP16, BF16, FP32, FP4 = DataType.FP16, DataType.BF16, DataType.FP32, DataType.FP4
FP8E4M3FN, FP8E5M2, HF4, HF8 = DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.HF4, DataType.HF8
INDEX = DataType.INDEX

# layouts and spaces
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
Mem = MemorySpace


class _Namespace(_types.SimpleNamespace):
    """`pl.block` / `pl.tensor` / `pl.system`: the namespace's ops, plus any registered op by IR name."""

    def __init__(self, ns: str, ir_prefix: str, spelled: str | None = None):
        spaced = _dsl.make_namespace(ns)
        if spelled is not None:  # another name of the same ops (`pl.tile` for `pl.block`): calls say which
            spaced = _types.SimpleNamespace(**{k: _dsl.DslOp(f"{spelled}.{k}", v.entry) for k, v in vars(spaced).items()})
        super().__init__(**vars(spaced))
        object.__setattr__(self, "_ns", spelled or ns)
        object.__setattr__(self, "_prefix", ir_prefix)

    def __getattr__(self, name: str):
        from pypto.ops import OPS

        op = OPS.get(f"{self._prefix}.{name}")
        if op is None:
            raise AttributeError(f"{self._ns} has no operation '{name}'")
        return _dsl.DslOp(f"{self._ns}.{name}", op)


block = _Namespace("pl.block", "block")
tile = _Namespace("pl.block", "block", spelled="pl.tile")  # the later public name of the tile level
tensor = _Namespace("pl.tensor", "tensor")
system = _Namespace("pl.system", "system")

globals().update(_dsl.top_level_ops())


def __getattr__(name: str):
    """`pl.<op>` for ops defined after this module was imported (pypto.extend)."""
    from pypto.ops import NAMESPACES

    entry = NAMESPACES["pl"].get(name)
    if entry is None:
        raise AttributeError(f"module 'pypto.language' has no attribute '{name}'")
    return _dsl.DslOp(f"pl.{name}", entry)

__all__ = [
    "BF16", "BOOL", "DN", "FP4", "FP8E4M3FN", "FP8E5M2", "FP16", "FP32", "HF4", "HF8", "INDEX", "INT4", "INT8",
    "INT16", "INT32", "INT64", "ND", "NZ", "UINT4", "UINT8", "UINT16", "UINT32", "UINT64", "CastMode", "CmpType",
    "DataType", "ForKind", "FunctionType", "InOut", "InlineFunction", "InvalidOperationError", "LoopOrigin", "Mem",
    "MemRef", "MemRefType", "MemorySpace", "Out", "PadValue", "ParamDirection", "ParserError", "ParserSyntaxError",
    "ParserTypeError", "PipeType", "SSAViolationError", "Scalar", "ScopeIsolationError", "ScopeKind", "Tensor",
    "TensorLayout", "Tile", "TileLayout", "TileView", "Tuple", "UndefinedVariableError", "Unknown",
    "UnsupportedFeatureError", "Level", "Role", "at", "AtomicType", "SplitMode", "compat", "cross_core_slot",
    "func_attr", "split", "static_assert", "static_print", "auto_incore", "block", "cond", "const", "dynamic", "function", "incore", "inline",
    "loads", "loads_program", "parallel", "parse", "parse_program", "program", "range", "system", "tensor", "tile",
    "unroll", "while_", "yield_",
]
