"""The names the tensor-level frontend adds to the top-level `pypto` namespace (reference §1):
`pypto.jit`, `pypto.Tensor`, `pypto.tensor`, the `DT_*` dtypes, `pypto.loop`, the ops, ..."""

from __future__ import annotations

import enum

from pypto.ir.dtype import DataType

from . import control, creation, indexing, joining, math_ops, ops, reductions, scaled_matmul, sorting
from . import options as _options
from .graphs import CompStage
from .jit import dynamic, function, jit
from .symbolic import SymbolicScalar, ceildiv, sym_max, sym_min
from .tensor import _DTYPES, DYN, DYNAMIC, STATIC, Tensor


class TileOpFormat(enum.IntEnum):
    """Tensor layouts of the reference (NZ is the matrix unit's fractal layout): accepted, ND here."""

    TILEOP_ND = 0
    TILEOP_NZ = 1


class CastMode(enum.IntEnum):
    """Rounding of `pypto.cast` (reference spellings)."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class Element:
    """A typed scalar (`pypto.Element(pypto.DT_INT32, 3)`): usable wherever a number is."""

    def __init__(self, dtype: DataType, value: float | int):
        self.dtype = dtype
        self.value = value

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __repr__(self) -> str:
        return f"pypto.Element({self.dtype.name}, {self.value!r})"


def bytes_of(dtype: DataType) -> int:
    """Bytes per element of a dtype."""
    return dtype.itemsize


class RunMode(enum.IntEnum):
    """Where a kernel runs: both run natively on this machine's CPU with real numerics."""

    NPU = 0
    SIM = 1


NAMES: dict[str, object] = {
    "jit": jit, "function": function, "dynamic": dynamic, "Tensor": Tensor, "tensor": Tensor,
    "DYNAMIC": DYNAMIC, "DYN": DYN, "STATIC": STATIC, "SymbolicScalar": SymbolicScalar,
    "symbolic_scalar": SymbolicScalar, "ceildiv": ceildiv, "min": sym_min, "max": sym_max, "RunMode": RunMode, "CompStage": CompStage,
    "TileOpFormat": TileOpFormat, "TILEOP_ND": TileOpFormat.TILEOP_ND, "TILEOP_NZ": TileOpFormat.TILEOP_NZ,
    "CastMode": CastMode, "Element": Element, "bytes_of": bytes_of,
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
              "where", "expand_clone"):
    NAMES[_name] = getattr(ops, _name)
for _name in _options.NAMES:
    NAMES[_name] = getattr(_options, _name)
for _mod in (reductions, sorting):
    for _name in ("prod", "argmax", "argmin", "cumsum", "cumprod", "topk", "argsort", "sort32", "mrgsort"):
        if hasattr(_mod, _name):
            NAMES[_name] = getattr(_mod, _name)
NAMES["greater"] = ops.gt
for _name in math_ops.NAMES:
    NAMES[_name] = getattr(math_ops, _name)
for _name in indexing.__all__:
    NAMES[_name] = getattr(indexing, _name)
for _name in joining.__all__:
    NAMES[_name] = getattr(joining, _name)
for _name in creation.__all__:
    NAMES[_name] = getattr(creation, _name)
NAMES["scaled_mm"] = scaled_matmul.scaled_mm
NAMES = {k: v for k, v in NAMES.items() if v is not None}
