"""The runtime the code from `torch_codegen` calls: every op evaluated by its registry reference.

Generated code holds torch tensors (the caller's, and the results of ops). `op(name, *args, ...)`
hands them to the op's NumPy reference (`OpDef.reference`, the one definition the interpreter and
the numeric tests also use) as zero-copy NumPy views (bf16 through an int16 view and ml_dtypes), and
turns the result back into a torch tensor of the IR result's dtype. So no op is written twice.

What the references cannot say is where a result lives:

- an op that writes into one of its operands (`OpDef.result_reuses`: store, assemble, matmul_acc,
  ...) writes the reference's result back into that operand in place and returns it, so the
  caller's output tensors see the writes, as on the device;
- the aliasing ops (views, reshapes: `Traits.alias`) return torch views of their input (the
  references return copies), so writes through a view reach the viewed tensor.

Synchronization (`system.sync_*`, barriers) and buffer allocation (`block.alloc`) have no effect
on a sequential run and are not emitted by the code generator.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import torch

from pypto.errors import InvalidState
from pypto.ir.dtype import DataType
from pypto.ops.registry import OPS, OpDef, block_ops
from pypto.ops.traits import ShapeClass

from .cross_core_rt import CrossCoreRuntime  # noqa: F401  (re-exported for the generated code)

_BF16 = np.dtype(ml_dtypes.bfloat16)

# DataType -> torch dtype, for the dtypes torch has (the others stay NumPy-typed through int views)
_TORCH: dict[DataType, torch.dtype] = {
    DataType.FP32: torch.float32, DataType.FP16: torch.float16, DataType.BF16: torch.bfloat16,
    DataType.INT8: torch.int8, DataType.INT16: torch.int16, DataType.INT32: torch.int32,
    DataType.INT64: torch.int64, DataType.UINT8: torch.uint8, DataType.BOOL: torch.bool,
    DataType.INDEX: torch.int64,
}
for _name, _td in (("FP64", torch.float64), ("UINT16", torch.uint16), ("UINT32", torch.uint32),
                   ("UINT64", torch.uint64)):
    if hasattr(DataType, _name):
        _TORCH[DataType[_name]] = _td


class TorchRuntimeError(InvalidState):
    """An op of the generated code failed: names the op and the source line of the program."""


# ---------------------------------------------------------------------------------------------
# torch <-> NumPy, without copies


def to_numpy(x: Any) -> Any:
    """A NumPy view of a torch tensor (other values as they are)."""
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu":  # (the ops write the caller's tensors in place through NumPy views)
            raise TorchRuntimeError(f"the generated code runs on CPU tensors, got one on {x.device}; "
                                    "move it with .cpu() and copy the outputs back")
        x = x.detach()
        if x.dtype is torch.bfloat16:
            return x.view(torch.int16).numpy().view(_BF16)
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    return x


def from_numpy(a: Any, dtype: DataType | None = None) -> Any:
    """A torch tensor over a NumPy result, cast to `dtype` (scalars become Python numbers)."""
    if isinstance(a, tuple):
        return tuple(from_numpy(v) for v in a)
    if not isinstance(a, np.ndarray):
        if isinstance(a, np.generic):
            a = a.item()
        return _scalar(a, dtype)
    if dtype is not None:
        want = dtype.to_numpy()
        if a.dtype != want:
            with np.errstate(all="ignore"):
                a = (a != 0) if want == np.bool_ else a.astype(want)
    if not a.flags.writeable or any(s < 0 for s in a.strides):
        a = np.array(a, copy=True)
    if a.dtype == _BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _scalar(v: Any, dtype: DataType | None) -> Any:
    if dtype is None or isinstance(v, (list, tuple)):
        return v
    if dtype is DataType.BOOL:
        return bool(v)
    if dtype.is_float:
        return float(v)
    return int(v)


def scalar(v: Any) -> Any:
    """A Python number from a scalar the program computed (0-d tensors and NumPy scalars too)."""
    if isinstance(v, torch.Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def torch_dtype(dt: DataType) -> torch.dtype:
    try:
        return _TORCH[dt]
    except KeyError:
        raise TorchRuntimeError(f"{dt.name} has no torch dtype") from None


# ---------------------------------------------------------------------------------------------
# ops


def op(name: str, *args: Any, attrs: dict | None = None, result: DataType | None = None,
       valid: Sequence[int] | None = None, where: str = "") -> Any:
    """Evaluate op `name` on `args`: its registry reference on NumPy views of them.

    `attrs` are the IR call's attributes, `result` the dtype of its IR result (the value is cast to
    it), `valid` the valid region of the first tile operand where its type says it is smaller than
    the tile, `where` the program's source line (for errors).
    """
    at = f"{where}: " if where else ""
    od = OPS.get(name)
    if od is None:
        raise TorchRuntimeError(f"{at}unknown op {name!r}")
    special = _SPECIAL.get(name)
    try:
        if special is not None:
            return special(*args, **(attrs or {}))
        if od.reference is None:
            raise TorchRuntimeError(f"{name} has no reference semantics to run")
        # (the code leaves out attributes at their defaults: the registry fills them back in)
        return _region_op(od, list(args), od.normalize_kwargs(dict(attrs or {})), result, valid)
    except TorchRuntimeError:
        raise
    except Exception as e:  # any failure of a reference: say which op, at which line
        raise TorchRuntimeError(f"{at}{name} failed: {type(e).__name__}: {e}") from e


def _run(od: OpDef, args: list, kw: dict, result: DataType | None) -> Any:
    scratch = _scratch(od)
    if scratch and len(args) > min(scratch):  # scratch tiles (`tmp`) are the device's, not the math's
        keep = [i for i in range(len(args)) if i not in scratch]
        reuse = keep.index(od.result_reuses) if od.result_reuses in keep else None
        args = [args[i] for i in keep]
        if reuse is None and od.result_reuses is not None:
            raise TorchRuntimeError(f"{od.name}: its result reuses a scratch operand")
    else:
        reuse = od.result_reuses if od.result_reuses is not None else _WRITES_INTO.get(od.name)
    np_args = [to_numpy(a) for a in args]
    with np.errstate(all="ignore"):
        res = od.reference(*np_args, **kw)
    if reuse is not None and isinstance(args[reuse], torch.Tensor):
        return _write_back(args[reuse], np_args[reuse], res)
    if isinstance(res, np.ndarray) and any(isinstance(a, np.ndarray) and np.may_share_memory(res, a)
                                           for a in np_args):
        res = res.copy()  # (a reference may hand back its operand: a new value must not alias it)
    return from_numpy(res, result)


# element writes change their operand on the device (the references return a changed copy, and the
# registry gives them no `result_reuses`: memory planning keeps their result a value of its own)
_WRITES_INTO = {"tensor.write": 0, "block.write": 0}


def _scratch(od: OpDef) -> frozenset[int]:
    return frozenset(i for i, p in enumerate(od.operands) if p.name == "tmp")


# ---------------------------------------------------------------------------------------------
# tiles and their valid regions
#
# A tile loaded from a window that ends inside it (a view clipped by the tensor, or `valid_shapes`)
# holds data only in its top-left valid region; the device computes reductions and matmuls over
# that region and stores only it. The region rides on the torch tensor as `_pypto_valid`.


def valid_of(t: Any) -> tuple[int, ...] | None:
    return getattr(t, "_pypto_valid", None) if isinstance(t, torch.Tensor) else None


def _mark(t: Any, valid: Sequence[int] | None) -> Any:
    if isinstance(t, torch.Tensor) and valid is not None:
        valid = tuple(int(v) for v in valid)
        if valid != tuple(t.shape):
            t._pypto_valid = valid
    return t


def _region_op(od: OpDef, args: list, kw: dict, result: DataType | None, valid: Sequence[int] | None) -> Any:
    shape_class = od.shape_class
    tiles = [a for a in args if isinstance(a, torch.Tensor)]
    first = tiles[0] if tiles else None
    v_in = tuple(int(v) for v in valid) if valid is not None else valid_of(first)
    if od is block_ops.load:
        res = _run(od, args, kw, result)
        tensor, offsets, shapes = args[0], args[1], args[2]
        want = args[3] if len(args) > 3 else shapes
        clip = [max(0, min(int(w), int(d) - int(o))) for w, d, o in zip(want, tensor.shape, offsets)]
        if kw.get("transpose"):
            clip.reverse()
        return _mark(res, clip)
    if "valid" in _ref_params(od):
        if v_in is not None:
            kw["valid"] = v_in  # store writes, fillpad pads, by the valid region
        return _run(od, args, kw, result)  # (fillpad's result is valid everywhere)
    if v_in is None or all(valid_of(t) is None for t in tiles) and valid is None:
        return _run(od, args, kw, result)
    if shape_class is ShapeClass.MATMUL:
        return _matmul_region(od, args, kw, result)
    if (shape_class in _PER_ELEMENT or shape_class in (ShapeClass.ROW_REDUCE, ShapeClass.COL_REDUCE)) \
            and not od.extra.get("whole_operands") \
            and all(t.shape == first.shape or 1 in t.shape[-2:] for t in tiles):
        return _valid_part(od, args, kw, result, first, v_in)
    if od.name in _OWN_REGIONS:  # each operand's valid region as it is (indices beyond it are dropped)
        return _valid_part(od, [a[tuple(slice(0, v) for v in valid_of(a))] if valid_of(a) else a
                                for a in args], kw, result, first, v_in)
    res = _run(od, args, kw, result)  # layout ops: the whole tile moves, its region with it
    if isinstance(res, torch.Tensor) and all(res is not a for a in args) and res.shape == first.shape:
        _mark(res, v_in)
    return res


# ops whose index operands must not see the padding (a zero there is a real index)
_OWN_REGIONS = frozenset({"block.scatter", "block.gather"})
assert _OWN_REGIONS <= set(OPS)


# shape classes whose result element (i, j) comes from the operands' elements at (i, j) (or row i)
_PER_ELEMENT = frozenset({ShapeClass.ELEMENTWISE, ShapeClass.ROW_EXPAND, ShapeClass.COL_EXPAND,
                          ShapeClass.ROW_WISE})


def _cut(t: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """The top-left [rows, cols] of a tile, a row vector's [1, cols], a column vector's [rows, 1]."""
    return t[: 1 if t.shape[0] == 1 else rows, : 1 if t.shape[-1] == 1 else cols] if t.dim() == 2 else t


def _valid_part(od: OpDef, args: list, kw: dict, result: DataType | None, first: torch.Tensor,
                v_in: tuple[int, ...]) -> Any:
    """The op on the valid regions only (as the device computes it), zero-padded back to the tile."""
    vr, vc = v_in if len(v_in) == 2 else (v_in[0], 1)
    cut = [_cut(a, *(valid_of(a) or (vr, vc))) if isinstance(a, torch.Tensor) else a for a in args]
    reuse = od.result_reuses if od.result_reuses is not None else _WRITES_INTO.get(od.name)
    if reuse is not None:  # (in place on its operand's region)
        _run(od, cut, kw, result)
        return args[reuse]
    part = _run(od, cut, kw, result)
    shape = list(first.shape)
    region = [vr, vc]
    if od.shape_class is ShapeClass.ROW_REDUCE:
        shape[-1] = region[-1] = 1
    elif od.shape_class is ShapeClass.COL_REDUCE:
        shape[0] = region[0] = 1
    if not isinstance(part, torch.Tensor) or list(part.shape) != region[-part.dim():] or part.dim() != len(shape):
        return _run(od, args, kw, result)  # (a result of another shape, e.g. a packed mask: whole tiles)
    out = torch.zeros(shape, dtype=part.dtype)
    out[tuple(slice(0, n) for n in part.shape)] = part
    return _mark(out, tuple(part.shape))


def _matmul_region(od: OpDef, args: list, kw: dict, result: DataType | None) -> Any:
    """A matmul over the valid regions: [m, k] @ [k, n] (+ acc / bias), zero-padded to [M, N]."""
    tiles = [a for a in args if isinstance(a, torch.Tensor)]
    acc = od.result_reuses == 0
    lhs, rhs = (tiles[1], tiles[2]) if acc else (tiles[0], tiles[1])
    m, k = valid_of(lhs) or tuple(lhs.shape)
    n = (valid_of(rhs) or tuple(rhs.shape))[-1]
    cut = {id(lhs): lhs[:m, :k], id(rhs): rhs[:k, :n]}
    for t in tiles:
        cut.setdefault(id(t), _cut(t, m, n))  # (the acc, a bias row)
    part_args = [cut.get(id(a), a) if isinstance(a, torch.Tensor) else a for a in args]
    if acc:
        _run(od, part_args, kw, result)
        return _mark(args[0], (m, n))
    part = _run(od, part_args, kw, result)
    out = torch.zeros((lhs.shape[0], rhs.shape[-1]), dtype=part.dtype)
    out[:m, :n] = part
    return _mark(out, (m, n))


def _ref_params(od: OpDef) -> frozenset[str]:
    got = _PARAMS.get(od.name)
    if got is None:
        try:
            got = frozenset(inspect.signature(od.reference).parameters)
        except (TypeError, ValueError):
            got = frozenset()
        _PARAMS[od.name] = got
    return got


_PARAMS: dict[str, frozenset[str]] = {}


def _write_back(target: torch.Tensor, view: np.ndarray, res: Any) -> torch.Tensor:
    """The op's result written into the operand it reuses (the device writes that buffer)."""
    res = np.asarray(res)
    if res.shape != view.shape:
        res = np.broadcast_to(res, view.shape)
    with np.errstate(all="ignore"):
        view[...] = (res != 0) if view.dtype == np.bool_ else res.astype(view.dtype)
    return target


# views and reshapes alias their input: the references copy, so these few are written here


def _window(x: torch.Tensor, shape, offset, valid_shape=None) -> torch.Tensor:
    index = tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offset, shape))
    view = x[index]
    if valid_shape is not None:
        _mark(view, [min(int(v), d) for v, d in zip(valid_shape, view.shape)])
    return view


def _reshape(x: torch.Tensor, shape) -> torch.Tensor:
    return x.reshape(tuple(int(s) for s in shape))


def _set_valid(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    return _mark(x[...], (rows, cols))  # (a new view: the tensor itself keeps its own region)


_SPECIAL = {"tensor.view": _window, "block.view": _window, "tensor.reshape": _reshape,
            "block.reshape": _reshape, "tensor.set_validshape": _set_valid}


def enum(module: str, cls: str, member: str) -> Any:
    """An attribute's enum member of a class outside pypto.ir.enums (e.g. a gather's mask pattern)."""
    return getattr(getattr(importlib.import_module(module), cls), member)
assert all(n in OPS for n in _SPECIAL)  # (a renamed op must not silently lose its aliasing form)


# ---------------------------------------------------------------------------------------------
# shape checks (check_shapes=True)


def check_shape(x: Any, shape: Sequence[int | None], dtype: DataType | None, what: str,
                window: bool = False) -> None:
    """Assert that `x` is a tensor of `shape` (None: any extent) and `dtype`. With `window` (a
    kernel's parameter) a smaller extent passes too: a view clipped at its tensor's end is handed
    to the kernel as its valid part, which the kernel's loads pad."""
    if not isinstance(x, torch.Tensor):
        raise AssertionError(f"{what}: expected a tensor of shape {list(shape)}, got {type(x).__name__}")
    if len(x.shape) != len(shape) or any(s is not None and (int(s) < d or (int(s) > d and not window))
                                         for s, d in zip(shape, x.shape)):
        raise AssertionError(f"{what}: expected shape {list(shape)}, got {list(x.shape)}")
    if dtype is not None and dtype in _TORCH and x.dtype is not _TORCH[dtype]:
        raise AssertionError(f"{what}: expected dtype {_TORCH[dtype]}, got {x.dtype}")


__all__ = ["CrossCoreRuntime", "TorchRuntimeError", "check_shape", "from_numpy", "op", "scalar", "to_numpy",
           "torch_dtype"]
