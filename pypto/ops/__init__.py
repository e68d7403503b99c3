"""The op registry: every operator defined once (see registry.py). Importing this package
registers all operators with `pypto.ir.op`."""

from . import (  # noqa: F401  (registration)
    elementwise,
    elementwise_math,
    indexing,
    masks,
    matmul,
    memory,
    ordering,
    reduction,
    shape,
    system,
)
from .registry import NAMESPACES, OPS, Dispatch, Level, OpDef, Param, get_def, lookup_dsl, ops_by_pto

__all__ = ["NAMESPACES", "OPS", "Dispatch", "Level", "OpDef", "Param", "get_def", "lookup_dsl", "ops_by_pto"]
