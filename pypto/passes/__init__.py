"""`pypto.passes`: the compiler pipeline (see pass_manager.pipeline).

Each pass is a class (`ConvertToSSA()`, ...) and, as in the public PyPTO API, also has a factory
of its snake-case name: `passes.convert_to_ssa()`, `passes.init_mem_ref()`, ... A factory whose
name is also the pass's module name is that module, made callable (so `from
pypto.passes.convert_to_ssa import ConvertToSSA` keeps working).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from .base import FunctionPass, IRProperty, Pass, PassContext, PassError
from .pass_manager import OptimizationStrategy, PassManager, VerificationLevel, pipeline

# factory name -> (module, class)
_FACTORIES = {
    "unroll_loops": ("unroll_loops", "UnrollLoops"),
    "ctrl_flow_transform": ("ctrl_flow_transform", "CtrlFlowTransform"),
    "convert_to_ssa": ("convert_to_ssa", "ConvertToSSA"),
    "flatten_call_expr": ("flatten_call_expr", "FlattenCallExpr"),
    "split_chunked_loops": ("split_chunked_loops", "SplitChunkedLoops"),
    "interchange_chunk_loops": ("interchange_chunk_loops", "InterchangeChunkLoops"),
    "run_verifier": ("run_verifier", "RunVerifier"),
    "inline_functions": ("inline_functions", "InlineFunctions"),
    "scope_tensor_ops": ("scope_tensor_ops", "ScopeTensorOps"),
    "outline_incore_scopes": ("outline_incore_scopes", "OutlineIncoreScopes"),
    "convert_tensor_to_block_ops": ("convert_tensor_to_block_ops", "ConvertTensorToBlockOps"),
    "convert_tensor_to_tile_ops": ("convert_tensor_to_block_ops", "ConvertTensorToBlockOps"),  # the later name
    "init_mem_ref": ("init_memref", "InitMemRef"),
    "memory_reuse": ("memory_reuse", "MemoryReuse"),
    "basic_memory_reuse": ("memory_reuse", "MemoryReuse"),
    "insert_sync": ("insert_sync", "InsertSync"),
    "allocate_memory_addr": ("allocate_memory_addr", "AllocateMemoryAddr"),
    "auto_tile_matmul_l0": ("auto_tile_matmul_l0", "AutoTileMatmulL0"),
}


def _make(cls: type, args: tuple, kwargs: dict) -> Pass:
    if cls.__name__ == "RunVerifier" and args and not kwargs:  # run_verifier(properties): rule names
        props = args[0]
        names = tuple(getattr(p, "name", p) for p in props) if props is not None else None
        return cls(rules=names) if names else cls()
    return cls(*args, **kwargs)


class _FactoryModule(types.ModuleType):
    """A pass module that is also its pass's factory."""

    _pass_class: type

    def __call__(self, *args: Any, **kwargs: Any) -> Pass:
        return _make(self._pass_class, args, kwargs)


def _install() -> None:
    pkg = sys.modules[__name__]
    for factory, (module, cls_name) in _FACTORIES.items():
        mod = importlib.import_module(f"{__name__}.{module}")
        cls = getattr(mod, cls_name)
        if factory == module:
            mod.__class__ = _FactoryModule
            mod._pass_class = cls  # type: ignore[attr-defined]
        else:
            def make(*args: Any, _cls: type = cls, **kwargs: Any) -> Pass:
                return _make(_cls, args, kwargs)
            make.__name__ = factory
            make.__doc__ = f"A new {cls_name} pass."
            setattr(pkg, factory, make)


_install()

__all__ = ["FunctionPass", "IRProperty", "OptimizationStrategy", "Pass", "PassContext", "PassError",
           "PassManager", "VerificationLevel", "pipeline", *_FACTORIES]
