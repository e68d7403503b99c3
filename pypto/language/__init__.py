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
from pypto.ir.task_ops import TASK_OPS as _TASK_OPS
from pypto.ir.task_ops import TaskOpRef as _TaskOpRef
from pypto.ir.types import MemRefType, TileView
from pypto.ops.gather_routes import MaskPattern as _MaskPattern

from . import compat
from . import dsl as _dsl
from .annotations import InOut, Out, Scalar, Tensor, TensorView, Tile, Tuple, Unknown, dynamic
from .annotations import MemRefAnn as MemRef
from .decorators import InlineFunction, function, inline, loads, loads_program, parse, parse_program, program
from .dsl import (  # noqa: A004
    at,
    auto_incore,
    cluster,
    cond,
    const,
    dump_tag,
    func_attr,
    incore,
    manual_scope,
    no_dep,
    parallel,
    pipeline,
    range,
    scope,
    spmd,
    spmd_submit,
    static_assert,
    static_print,
    submit,
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
from .placement import Level, Role, ScopeMode

# data types
BOOL = DataType.BOOL
INT4, INT8, INT16, INT32, INT64 = DataType.INT4, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64
UINT4, UINT8, UINT16, UINT32, UINT64 = (DataType.UINT4, DataType.UINT8, DataType.UINT16, DataType.UINT32,
                                         DataType.UINT64)
FP16, BF16, FP32, FP4 = DataType.FP16, DataType.BF16, DataType.FP32, DataType.FP4
FP8E4M3FN, FP8E5M2, HF4, HF8 = DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.HF4, DataType.HF8
INDEX = DataType.INDEX
TASK_ID = DataType.INT64  # a task id is a 64-bit integer on the CPU (-1: no task); docs/tasks.md
# `pl.task.*`: the printed form of the task language's orchestration ops (so printed programs parse back)
task = _types.SimpleNamespace(**{n.split(".")[1]: _TaskOpRef(n) for n in _TASK_OPS})
TaskId = Scalar[TASK_ID]

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
object.__setattr__(system, "task_dummy", _dsl.task_dummy)
object.__setattr__(system, "task_invalid", _dsl.task_invalid)
for _ns in (block, tile):  # pl.tile.MaskPattern.P0101 (gather / scatter masks)
    object.__setattr__(_ns, "MaskPattern", _MaskPattern)

# pl.array / pl.prefetch: parser constructs (pypto/language/parser/arrays.py)
array = _types.SimpleNamespace(create=_dsl.array_create, get_element=_dsl.array_get_element,
                               update_element=_dsl.array_update_element)
prefetch = _types.SimpleNamespace(make_context=_dsl.prefetch_make_context, async_prefetch=_dsl.prefetch_async_prefetch,
                                  session=_dsl.prefetch_session, wait=_dsl.prefetch_wait)

globals().update(_dsl.top_level_ops())

# cross-core and system names (pl-head §3.8; pypto/language/parser/cross_core.py)
from .parser import cross_core as _cross_core  # noqa: E402

AUTO = _cross_core.AUTO
split_aiv, aiv_shard, aic_gather = _cross_core.split_aiv, _cross_core.aiv_shard, _cross_core.aic_gather
for _name, _helper in _cross_core.HELPERS.items():
    if _name in _cross_core.SYSTEM_NAMES:
        object.__setattr__(system, _name, _helper)
    else:
        globals()[_name] = _helper


# `pl.jit` / `pl.RUNTIME` live in pypto.pljit, a layer above the language (it compiles and runs):
# served on first use through this string-keyed table, not imported by the language itself
_UPPER = {"jit": "pypto.pljit", "RUNTIME": "pypto.pljit"}


def __getattr__(name: str):
    """`pl.jit` and `pl.RUNTIME` (see _UPPER); `pl.<op>` for ops defined after this module was
    imported (pypto.extend)."""
    if name in _UPPER:
        import importlib

        value = getattr(importlib.import_module(_UPPER[name]), name)
        globals()[name] = value
        return value
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
    "TensorLayout", "TensorView", "Tile", "TileLayout", "TileView", "Tuple", "UndefinedVariableError", "Unknown",
    "UnsupportedFeatureError", "AtomicType", "Level", "RUNTIME", "Role", "ScopeMode", "SplitMode", "TASK_ID",
    "compat", "cross_core_slot", "func_attr", "split", "TaskId", "array", "at", "cluster", "dump_tag", "jit",
    "manual_scope", "no_dep", "pipeline", "prefetch", "scope", "spmd", "spmd_submit", "submit", "task",
    "static_assert", "static_print", "auto_incore", "block", "cond", "const", "dynamic", "function", "incore", "inline",
    "loads", "loads_program", "parallel", "parse", "parse_program", "program", "range", "system", "tensor", "tile",
    "unroll", "while_", "yield_", "AUTO", "split_aiv", "aiv_shard", "aic_gather", "tpush_to_aiv", "tpush_to_aic",
    "tpop_from_aic", "tpop_from_aiv", "tfree_to_aic", "tfree_to_aiv", "aic_initialize_pipe", "aiv_initialize_pipe",
    "reserve_buffer", "import_peer_buffer",
]
