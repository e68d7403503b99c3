"""Creation ops that compute their values from positions: `ci` (`pl.arange`), consecutive numbers
along the last axis.

    ci(start, shape, dtype=INT32, descending=False, step=1)
        out[..., j] = start + j * step   (start - j * step when descending)

Every leading axis of `shape` is 1 (one row: the values depend only on the column), so the op is
row-local: a row-tiled kernel recomputes the same [1, N] row in each block, and a [1, N] row
broadcasts against [R, N] tiles like any other row operand. Integer dtypes compute in 64-bit and
wrap; float dtypes compute in double from the start and step rounded to fp32 (the scalars' dtype),
then round once to the result dtype.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.expr import ConstFloat
from pypto.ir.types import TensorType

from .registry import arg, attr, define
from .traits import ShapeClass, Traits
from .typing import OpError, dims, expect_scalar, static_dim, static_dims, tile_result

# the result dtypes (pl's ci takes INT16 / INT32 / UINT16 / UINT32; the float ones serve arange(0.0, 1.0, 0.25))
CI_DTYPES = frozenset({DataType.INT16, DataType.INT32, DataType.UINT16, DataType.UINT32, DataType.FP32, DataType.FP16,
                       DataType.BF16})


def _ci_rule(name: str, level: str):
    def infer(args, kw):
        if len(args) < 3:
            raise OpError(f"{name}: needs start, shape and step operands (the DSL fills step=1)")
        st = expect_scalar(name, args[0], "start")
        sp = expect_scalar(name, args[2], "step")
        shape = (static_dims if level == "block" else dims)(name, args[1], "shape")
        dt = kw["dtype"]
        if dt not in CI_DTYPES:
            raise OpError(f"{name}: dtype {dt.name} is not one of "
                          f"{', '.join(sorted(d.name for d in CI_DTYPES))}")
        if not dt.is_float:
            for what, t, e in (("start", st, args[0]), ("step", sp, args[2])):
                if t.dtype.is_float or isinstance(e, ConstFloat):
                    raise OpError(f"{name}: an integer range ({dt.name}) needs an integer {what}, got a "
                                  f"{t.dtype.name} scalar", hint="pass dtype=pl.FP32 for a float range")
        if not shape or (level == "block" and len(shape) > 2):
            raise OpError(f"{name}: shape must have {'1 or 2' if level == 'block' else 'at least 1'} "
                          f"dims, got {len(shape)}")
        n = static_dim(shape[-1]) if level == "tensor" else shape[-1]
        if n is None or n <= 0:
            raise OpError(f"{name}: the last dim must be a static positive size, got {shape[-1]!r}")
        lead = [static_dim(d) if level == "tensor" else d for d in shape[:-1]]
        if any(d != 1 for d in lead):
            raise OpError(f"{name}: every dim but the last must be 1 (the values run along the last dim), got "
                          f"shape {[static_dim(d) if level == 'tensor' else d for d in shape]}",
                          hint="broadcast the [1, N] row against the wider tensor instead")
        if level == "block":
            return tile_result(shape, dt)
        return TensorType(shape, dt)
    return infer


def ci_ref(start, shape, step=1, *, dtype=DataType.INT32, descending=False):
    """The values start + j * step along the last axis (start - j * step when descending)."""
    n = int(tuple(shape)[-1])
    j = np.arange(n, dtype=np.int64)
    if dtype.is_float:
        s0, st = float(np.float32(start)), float(np.float32(step))  # the scalars are fp32
        vals = s0 + j.astype(np.float64) * (-st if descending else st)
    else:
        s0, st = int(start), int(step)
        with np.errstate(over="ignore"):
            vals = np.int64(s0) + j * np.int64(-st if descending else st)
    return np.broadcast_to(vals.astype(dtype.to_numpy()), tuple(int(d) for d in shape)).copy()


def _ci_binder(args, kwargs):
    """pl's `(start, shape, dtype=INT32, descending=False)` plus `step`: after start and shape, a
    positional dtype is the dtype, a bool descending, anything else the step (the printed form)."""
    if len(args) > 5:
        raise OpError(f"ci takes at most 5 positional arguments, got {len(args)}")
    out = dict(zip(["start", "shape"], args[:2]))
    for v in args[2:]:
        key = "dtype" if isinstance(v, (DataType, str)) else "descending" if isinstance(v, bool) else "step"
        if key in out:
            raise OpError(f"ci got argument {key!r} twice")
        out[key] = v
    for k, v in kwargs.items():
        if k in out:
            raise OpError(f"ci got argument {k!r} twice")
        out[k] = v
    return out


def _params(kind_shape: str):
    return [arg("start", "scalar"), arg(kind_shape, "shape"), attr("dtype", "dtype", DataType.INT32),
            attr("descending", "bool", False), arg("step", "scalar", default=1)]


_ROW = Traits(ShapeClass.FILL, row_local=True)  # one row that depends on the column only
_block_ci = define("block.ci", _params("shape"), _ci_rule("block.ci", "block"), traits=_ROW, reference=ci_ref,
                   pto="tci", pipe=PipeType.V, aliases=("block.arange", "tile.arange"),
                   dsl=("pl.block.ci", "pl.block.arange"), binder=_ci_binder, pto_attrs=("descending",),
                   doc="a [1, N] tile of start + j * step (start - j * step when descending)")
define("tensor.ci", _params("shape"), _ci_rule("tensor.ci", "tensor"), traits=_ROW, reference=ci_ref,
       tile_form=_block_ci, binder=_ci_binder, aliases=("tensor.arange",), dsl=("pl.tensor.ci", "pl.tensor.arange", "pl.arange"),
       doc="a [..., 1, N] tensor of start + j * step (start - j * step when descending)")
