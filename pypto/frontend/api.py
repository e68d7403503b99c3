"""The names the tensor-level frontend adds to the top-level `pypto` namespace (reference §1):
`pypto.jit`, `pypto.Tensor`, `pypto.tensor`, the `DT_*` dtypes, `pypto.loop`, the ops, ..."""

from __future__ import annotations

import enum

from pypto.ir.dtype import DataType

from . import control, ops
from . import options as _options
from .graphs import CompStage
from .jit import dynamic, function, jit
from .symbolic import SymbolicScalar, ceildiv, sym_max, sym_min
from .tensor import _DTYPES, DYN, DYNAMIC, STATIC, Tensor


class RunMode(enum.IntEnum):
    """Where a kernel runs: both run natively on this machine's CPU with real numerics."""

    NPU = 0
    SIM = 1


NAMES: dict[str, object] = {
    "jit": jit, "function": function, "dynamic": dynamic, "Tensor": Tensor, "tensor": Tensor,
    "DYNAMIC": DYNAMIC, "DYN": DYN, "STATIC": STATIC, "SymbolicScalar": SymbolicScalar,
    "symbolic_scalar": SymbolicScalar, "ceildiv": ceildiv, "min": sym_min, "max": sym_max, "RunMode": RunMode, "CompStage": CompStage,
    "DT_FP64": DataType.FP64 if hasattr(DataType, "FP64") else None,
}
NAMES.update(_DTYPES)
for _name in ("loop", "loop_unroll", "cond", "is_loop_begin", "is_loop_end", "set_vec_tile_shapes",
              "get_vec_tile_shapes", "set_cube_tile_shapes", "get_cube_tile_shapes"):
    NAMES[_name] = getattr(control, _name)
for _name in ("add", "sub", "mul", "div", "maximum", "minimum", "exp", "log", "sqrt", "rsqrt", "reciprocal", "neg",
              "abs", "relu", "softplus", "clip", "cast", "amax", "amin", "sum", "mean", "full", "zeros", "ones",
              "view", "assemble", "reshape", "unsqueeze", "squeeze", "transpose", "clone", "concat", "matmul",
              "sigmoid", "softmax", "rms_norm", "layer_norm", "tanh", "sin", "cos", "exp2", "expm1", "log2", "log10",
              "log1p", "floor", "ceil", "trunc", "round", "eq", "ne", "lt", "le", "gt", "ge", "logical_not",
              "where"):
    NAMES[_name] = getattr(ops, _name)
for _name in _options.names():
    NAMES[_name] = getattr(_options, _name)
NAMES["greater"] = ops.gt
NAMES = {k: v for k, v in NAMES.items() if v is not None}
