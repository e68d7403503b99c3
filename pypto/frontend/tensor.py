"""`pypto.Tensor`: an annotation of a kernel parameter outside a trace, a traced graph value inside.

    x: pypto.Tensor((b, 64), pypto.DT_FP32)          # call form
    x: pypto.Tensor[[pypto.DYNAMIC, 64], pypto.DT_FP32]  # bracket form
    out = pypto.tensor((b, 64), pypto.DT_FP32)        # inside a kernel: a new (uninitialised) tensor

Dims are ints (static), `pypto.DYNAMIC` / `pypto.DYN` (a dynamic dim), `pypto.STATIC` (the size of
the first call's tensor, fixed), a `SymbolicScalar` (`pypto.frontend.dynamic("b")`: dynamic and
named, usable in the body), or `...` as the last entry (any remaining dims, sizes taken from the
argument). Indexing and operators are those of reference §1.2 (see docs/frontend.md).
"""

from __future__ import annotations

import enum
from typing import Any

from pypto.errors import InvalidType, InvalidValue
from pypto.ir.dtype import DataType
from pypto.ir.expr import Expr, Var, const_value
from pypto.ir.types import TensorType

from .symbolic import SymbolicScalar, as_expr, simplify
from .trace import FrontendError, active, current, user_span


class StatusType(enum.Enum):
    DYNAMIC = "dynamic"
    STATIC = "static"
    DYN = "dynamic"


DYNAMIC = DYN = StatusType.DYNAMIC
STATIC = StatusType.STATIC


# dtypes by their reference names; ones the CPU cannot hold map to None (refused when used)
_DTYPES = {
    "DT_INT8": DataType.INT8, "DT_INT16": DataType.INT16, "DT_INT32": DataType.INT32, "DT_INT64": DataType.INT64,
    "DT_UINT8": DataType.UINT8, "DT_UINT16": DataType.UINT16, "DT_UINT32": DataType.UINT32,
    "DT_UINT64": DataType.UINT64, "DT_FP16": DataType.FP16, "DT_FP32": DataType.FP32, "DT_BF16": DataType.BF16,
    "DT_BOOL": DataType.BOOL,
}


_TORCH = {"float32": DataType.FP32, "float16": DataType.FP16, "bfloat16": DataType.BF16, "int8": DataType.INT8,
          "int16": DataType.INT16, "int32": DataType.INT32, "int64": DataType.INT64, "uint8": DataType.UINT8,
          "bool": DataType.BOOL}


def to_dtype(d: Any, what: str = "dtype") -> DataType:
    if isinstance(d, DataType):
        return d
    torch_name = str(d).removeprefix("torch.") if type(d).__name__ == "dtype" else None
    if torch_name in _TORCH:
        return _TORCH[torch_name]
    raise InvalidType(f"{what}: expected a pypto.DT_* dtype, got {d!r}")


def _dim_ok(d: Any) -> bool:
    return (isinstance(d, (int, SymbolicScalar, StatusType)) and not isinstance(d, bool)) or d is Ellipsis


class TensorSpec:
    """What a parameter annotation asks of its argument: dims (see the module docstring), a dtype
    (None: any), a name."""

    def __init__(self, shape: Any, dtype: Any, name: str = ""):
        if shape is None:
            self.dims = None
        else:
            dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
            for i, d in enumerate(dims):
                if not _dim_ok(d):
                    raise InvalidType(f"pypto.Tensor shape entry {i}: expected an int, pypto.DYNAMIC, pypto.STATIC, "
                                      f"a SymbolicScalar or ..., got {d!r}")
                if d is Ellipsis and i != len(dims) - 1:
                    raise InvalidValue("pypto.Tensor shape: `...` may only be the last entry")
                if isinstance(d, int) and not isinstance(d, bool) and d < 0 and d != -1:
                    raise InvalidValue(f"pypto.Tensor shape entry {i}: negative size {d}")
            self.dims = [DYNAMIC if (isinstance(d, int) and d == -1) else d for d in dims]
        self.dtype = None if dtype is None else to_dtype(dtype, "pypto.Tensor dtype")
        self.name = name

    def __repr__(self) -> str:
        return f"pypto.Tensor({self.dims}, {self.dtype})"


class Tensor:
    """A tensor of the tensor-level frontend (see the module docstring)."""

    # handles of a trace: `_var` the current IR value, `_depth` the loop depth that made it
    __slots__ = ("_spec", "_var", "_depth", "_hint", "_escaped", "_param", "_storage", "_written", "__weakref__")

    def __init__(self, shape: Any = None, dtype: Any = None, name: str = "", format: Any = None,  # noqa: A002
                 data_ptr: Any = None, device: Any = None, ori_shape: Any = None):
        tr = active()
        dtype = DataType.FP32 if dtype is None and tr is not None else dtype
        spec = TensorSpec(shape, dtype, name)
        self._reset(spec, None, name or "t", 0)
        if tr is not None:  # a new tensor inside a kernel
            if spec.dims is None or any(d is Ellipsis or isinstance(d, StatusType) for d in spec.dims):
                raise FrontendError("pypto.tensor inside a kernel needs its full shape (ints or symbolic sizes)",
                                    user_span())
            from .ops import create_tensor

            create_tensor(spec.dims, spec.dtype, into=self)

    @classmethod
    def __class_getitem__(cls, item: Any) -> TensorSpec:
        items = item if isinstance(item, tuple) else (item,)
        if not items or items == ((),) or items[0] is Ellipsis and len(items) == 1:
            return TensorSpec(None, None)
        shape = items[0]
        dtype = items[1] if len(items) > 1 and not isinstance(items[1], (str, dict)) else None
        name = next((x for x in items[1:] if isinstance(x, str)), "")
        return TensorSpec(None if shape == [] else shape, dtype, name)

    # --- traced handles
    @classmethod
    def _wrap(cls, var: Var, hint: str = "t", depth: int | None = None) -> Tensor:
        t = object.__new__(cls)
        tr = current("a tensor")
        t._reset(None, var, hint, tr.depth if depth is None else depth)
        tr.handles.append(t)
        return t

    def _reset(self, spec: TensorSpec | None, var: Var | None, hint: str, depth: int) -> None:
        self._spec = spec
        self._var = var
        self._hint = hint
        self._depth = depth
        self._param = False  # a kernel parameter (the caller's array)
        self._storage = False  # a tensor with storage of its own (pypto.tensor)
        self._written = False  # written through region views (its value is not carried)
        self._escaped = None  # the span of the loop or branch it was made in, once that has closed

    def _set(self, var: Var, depth: int) -> None:
        self._var = var
        self._depth = depth
        self._escaped = None

    def _value(self) -> Var:
        """The IR value, checked usable at this point of the trace."""
        if self._var is None:
            raise FrontendError(f"{self!r} is a parameter annotation, not a value of this kernel", user_span())
        if self._escaped is not None:
            raise FrontendError(f"tensor `{self._var.name}` was computed inside the pypto.loop ending at line "
                                f"{self._escaped.begin_line} and is used after it", user_span(),
                                hint="write it into a tensor made before the loop (pypto.assemble, out[...] = x, "
                                     "x.move(...)); values computed in a loop body do not outlive it")
        return self._var

    @property
    def _type(self) -> TensorType:
        t = self._value().type
        if not isinstance(t, TensorType):
            raise FrontendError(f"`{self._var.name}` is not a tensor", user_span())
        return t

    # --- properties
    @property
    def shape(self) -> list[Any]:
        if self._var is None:
            return list(self._spec.dims or [])
        return [_dim(d) for d in self._type.shape]

    @property
    def dtype(self) -> DataType:
        return self._spec.dtype if self._var is None else self._type.dtype

    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        return self._var.name if self._var is not None else self._spec.name

    @property
    def valid_shape(self) -> list[Any]:
        return self.shape

    def is_empty(self) -> bool:
        return any(isinstance(d, int) and d == 0 for d in self.shape)

    def __repr__(self) -> str:
        if self._var is None:
            return repr(self._spec)
        return f"pypto.Tensor({self.name}: {self.shape}, {self.dtype.name})"

    def __iter__(self):
        raise FrontendError("a tensor is not iterable; loop with pypto.loop or range over its shape", user_span())

    def __bool__(self):
        raise FrontendError("a tensor has no truth value while tracing; compare it element-wise or branch with "
                            "pypto.cond on a scalar", user_span())

    def __len__(self) -> int:
        d = self.shape[0]
        if not isinstance(d, int):
            raise FrontendError("len() of a tensor with a dynamic first dim; use .shape[0]", user_span())
        return d


def _dim(d: Expr) -> Any:
    c = const_value(d)
    return int(c) if c is not None else SymbolicScalar(d)


def dims_expr(dims: Any) -> list[Expr]:
    return [as_expr(simplify(d)) for d in dims]


# operators and methods are attached in ops.py (one definition per op)
__all__ = ["DYN", "DYNAMIC", "STATIC", "StatusType", "Tensor", "TensorSpec", "dims_expr", "to_dtype"]
