"""The tensor-level frontend: `@pypto.frontend.jit` kernels written over whole tensors, traced into
a `pl` program and compiled by the same pipeline (see docs/frontend.md).

    import pypto

    @pypto.frontend.jit
    def scale(x: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32),
              out: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
        out[:] = pypto.exp(x) * 2.0
"""

from __future__ import annotations

from . import math_ops as _math_ops  # noqa: F401  (its Tensor operators: ** % // & | ^ ~ << >>)
from . import methods as _methods  # noqa: F401  (Tensor operators and indexing)
from .control import (
    cond,
    get_cube_tile_shapes,
    get_vec_tile_shapes,
    is_loop_begin,
    is_loop_end,
    loop,
    loop_unroll,
    set_cube_tile_shapes,
    set_vec_tile_shapes,
)
from .jit import JitArgumentError, JitFunction, dynamic, function, jit
from .symbolic import SymbolicScalar, ceildiv, sym_max, sym_min
from .tensor import DYN, DYNAMIC, STATIC, Tensor, TensorSpec
from .trace import FrontendError

__all__ = ["DYN", "DYNAMIC", "FrontendError", "JitArgumentError", "JitFunction", "STATIC", "SymbolicScalar", "Tensor",
           "TensorSpec", "ceildiv", "cond", "dynamic", "function", "get_cube_tile_shapes", "get_vec_tile_shapes",
           "is_loop_begin", "is_loop_end", "jit", "loop", "loop_unroll", "set_cube_tile_shapes",
           "set_vec_tile_shapes", "sym_max", "sym_min"]
