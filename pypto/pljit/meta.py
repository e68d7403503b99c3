"""What a `@pl.jit` call specialises on: each parameter's kind and, per call, its metadata.

A parameter's annotation says what it is (`ParamSpec`): a tensor (bare `pl.Tensor`, `pl.Out[...]`,
`pl.InOut[...]` or a full `pl.Tensor[[M, 128], pl.FP32]`, whose `pl.dynamic` dims and layout are
kept), a `pl` scalar (`pl.Scalar[pl.INT32]` or a bare dtype), or a Python constant (no `pl`
annotation). A call's argument then gives the rest (`TensorMeta`: shape, dtype; a scalar's value).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pypto.errors import InvalidState, InvalidType
from pypto.ir.dtype import DataType
from pypto.ir.enums import ParamDirection, TensorLayout
from pypto.ir.expr import DynVar, Expr

from ..language.annotations import DirectionAnn, ScalarAnn, Tensor, TensorAnn
from ..language.annotations import Scalar as _ScalarAnnClass


class _Runtime(_ScalarAnnClass):
    """`pl.RUNTIME`: the default of a scalar parameter that stays a real runtime parameter in a
    signature-mode `kernel.compile(...)` (its value is supplied at each call of the artifact)."""

    _instance: _Runtime | None = None

    def __new__(cls) -> _Runtime:  # type: ignore[misc]
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pl.RUNTIME"

    def _refuse(self, *a: Any, **k: Any) -> Any:
        raise InvalidState("pl.RUNTIME is a marker for kernel.compile(...) scalar parameters; it has no value "
                           "and cannot be used in an expression")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = _refuse
    __mod__ = __neg__ = __int__ = __float__ = __index__ = __bool__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = object.__hash__


RUNTIME = _Runtime()

_TORCH_DTYPES: dict[Any, DataType] | None = None


def torch_dtype_map() -> dict[Any, DataType]:
    """torch dtype -> pl dtype, for the dtypes this torch has (built on first use)."""
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch

        m = {torch.float16: DataType.FP16, torch.float32: DataType.FP32, torch.bfloat16: DataType.BF16,
             torch.int8: DataType.INT8, torch.int16: DataType.INT16, torch.int32: DataType.INT32,
             torch.int64: DataType.INT64, torch.uint8: DataType.UINT8, torch.bool: DataType.BOOL}
        for name, dt in (("float8_e4m3fn", DataType.FP8E4M3FN), ("float8_e5m2", DataType.FP8E5M2)):
            if hasattr(torch, name):
                m[getattr(torch, name)] = dt
        _TORCH_DTYPES = m
    return _TORCH_DTYPES


def is_torch_tensor(v: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a jit function, from its annotation."""

    name: str
    kind: str  # "tensor" | "scalar" | "const" (a Python value: specialised, not a parameter of the program)
    direction: ParamDirection = ParamDirection.In
    dims: tuple | None = None  # a full annotation's shape (ints and DynVars); None for a bare pl.Tensor
    dtype: DataType | None = None
    layout: TensorLayout | None = None


def param_spec(name: str, ann: Any, jit_name: str) -> ParamSpec:
    """Classify a parameter by its (evaluated) annotation; TypeError for annotations @pl.jit refuses."""
    direction = ParamDirection.In
    inner = ann
    if isinstance(ann, DirectionAnn):
        direction, inner = ann.direction, ann.inner
    if inner is Tensor:
        return ParamSpec(name, "tensor", direction)
    if isinstance(inner, TensorAnn):
        if inner.memref is not None:
            raise InvalidType(f"{jit_name}: parameter '{name}' has a MemRef in its annotation; @pl.jit parameters "
                            "are plain tensors")
        if inner.view is not None:
            raise InvalidType(f"{jit_name}: parameter '{name}' has a pl.TensorView in its annotation; @pl.jit takes "
                              "pl.Tensor[[...], dtype(, layout)] (TensorView is for @pl.function)")
        return ParamSpec(name, "tensor", direction, tuple(inner.shape), inner.dtype, inner.layout)
    if direction is not ParamDirection.In:
        raise InvalidType(f"{jit_name}: parameter '{name}' is pl.{direction.name}[...] of {inner!r}; only tensors "
                        "can be outputs")
    if isinstance(inner, ScalarAnn):
        return ParamSpec(name, "scalar", dtype=inner.dtype)
    if isinstance(inner, DataType):
        return ParamSpec(name, "scalar", dtype=inner)
    if inner is _ScalarAnnClass:
        return ParamSpec(name, "scalar")  # dtype from the value
    if _is_tensor_view(inner):
        raise InvalidType(f"{jit_name}: parameter '{name}' is annotated with a pl.TensorView; @pl.jit takes "
                        "pl.Tensor[[...], dtype(, layout)] (TensorView is for @pl.function)")
    return ParamSpec(name, "const")


def _is_tensor_view(x: Any) -> bool:
    return type(x).__name__ == "TensorView"


@dataclass(frozen=True)
class TensorMeta:
    """A tensor argument as the specialisation sees it: each dim an int or the DynVar it is bound to
    (whose extent at this call is kept in `extents` for places that need a number)."""

    shape: tuple  # int | DynVar per dim
    dtype: DataType
    layout: TensorLayout
    extents: tuple[int, ...]  # the call's concrete extents (signature mode: 0 where unknown)

    def key(self) -> tuple:
        return (tuple(None if isinstance(d, Expr) else d for d in self.shape), self.dtype.name, self.layout.name)


def tensor_meta(spec: ParamSpec, value: Any, dynamic: dict[int, DynVar], jit_name: str) -> TensorMeta:
    """The meta of a tensor argument (a torch tensor or a NumPy array)."""
    if is_torch_tensor(value):
        dt = torch_dtype_map().get(value.dtype)
        if dt is None:
            raise InvalidType(f"{jit_name}: argument '{spec.name}' has torch dtype {value.dtype}, which PyPTO does "
                            "not map")
        extents = tuple(int(d) for d in value.shape)
    else:
        import numpy as np

        if not isinstance(value, np.ndarray):
            raise InvalidType(f"{jit_name}: parameter '{spec.name}' is a tensor; got {type(value).__name__}")
        dt = DataType.from_numpy(value.dtype)
        extents = tuple(int(d) for d in value.shape)
    if spec.dtype is not None and spec.dtype is not dt:
        raise InvalidType(f"{jit_name}: parameter '{spec.name}' is annotated {spec.dtype.name} but the argument is "
                        f"{dt.name}")
    if spec.dims is not None and len(spec.dims) != len(extents):
        raise InvalidType(f"{jit_name}: parameter '{spec.name}' is annotated with rank {len(spec.dims)} but the "
                        f"argument has shape {list(extents)}")
    shape: list[Any] = list(extents)
    for i, d in enumerate(spec.dims or ()):
        if isinstance(d, DynVar):
            shape[i] = d
    for i, dv in dynamic.items():
        if i >= len(shape):
            raise InvalidType(f"{jit_name}: {spec.name}.bind_dynamic({i}, ...) but '{spec.name}' has rank {len(shape)}")
        shape[i] = dv
    return TensorMeta(tuple(shape), dt, spec.layout or TensorLayout.ND, extents)


def signature_meta(spec: ParamSpec, dynamic: dict[int, DynVar], jit_name: str) -> TensorMeta:
    """Signature-mode compile: the meta from a full annotation alone."""
    if spec.dims is None or spec.dtype is None:
        raise InvalidType(f"{jit_name}.compile() with no tensor arguments takes shapes from the annotations, but "
                        f"parameter '{spec.name}' is a bare pl.Tensor; annotate it pl.Tensor[[...], dtype] or pass "
                        "sample tensors")
    shape = list(spec.dims)
    for i, dv in dynamic.items():
        shape[i] = dv
    extents = tuple(0 if isinstance(d, Expr) else d for d in shape)
    return TensorMeta(tuple(shape), spec.dtype, spec.layout or TensorLayout.ND, extents)


def scalar_dtype(spec: ParamSpec, value: Any) -> DataType:
    if spec.dtype is not None:
        return spec.dtype
    if isinstance(value, bool):
        return DataType.BOOL
    if isinstance(value, float):
        return DataType.FP32
    return DataType.INDEX


__all__ = ["RUNTIME", "ParamSpec", "TensorMeta", "is_torch_tensor", "param_spec", "scalar_dtype",
           "signature_meta", "tensor_meta", "torch_dtype_map"]
