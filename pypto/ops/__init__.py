"""The op registry: every operator defined once (see registry.py). Importing this package
registers all operators with `pypto.ir.op`."""

from pypto.ir import task_ops as _task_ops  # noqa: F401  (the task language's orchestration ops)

from . import (  # noqa: F401  (registration)
    catalogue,  # (imports the families it builds on first)
    catalogue2,
    catalogue4,
    creation,
    cross_core,
    elementwise,
    elementwise_math,
    gather_blocks,
    gather_compare,
    gather_memory,
    gather_paged,
    gather_routes,  # (after indexing / ordering: routes their spellings)
    gather_rows,
    gather_scatter,
    indexing,
    masks,
    matmul,
    memory,
    ordering,
    reduction,
    rng,
    shape,
    system,
)
from .registry import NAMESPACES, OPS, Dispatch, Level, OpDef, Param, get_def, lookup_dsl, ops_by_pto

__all__ = ["NAMESPACES", "OPS", "Dispatch", "Level", "OpDef", "Param", "get_def", "lookup_dsl", "ops_by_pto"]
