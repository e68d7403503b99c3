"""Joining, mutating and structural ops of the tensor level (reference §1.4 joining.py,
mutating.py, operation.py, other.py): interleave / deinterleave, permute, pack / unpack,
atomic_add, pad, fillpad, one_hot. Each is built from registry ops (`gather_mask`, `scatter`,
`reinterpret_view`, `transpose`, `concat`, `full`, `assemble`, `fillpad`).
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import PadValue
from pypto.ir.expr import Call, ConstInt
from pypto.ir.stmt import AssignStmt
from pypto.ops.registry import tensor_ops as T

from . import ops
from .indexing import gathermask, scatter
from .tensor import Tensor, to_dtype
from .trace import FrontendError, current, user_span


def _fail(what: str, msg: str, hint: str | None = None) -> FrontendError:
    return FrontendError(f"pypto.{what}: {msg}", user_span(), hint=hint)


def _tensor(what: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise _fail(what, f"expected a pypto.Tensor, got {type(x).__name__}")
    return x


def _rows(x: Tensor) -> Tensor:
    return x if len(x.shape) == 2 else ops.reshape(x, [-1, x.shape[-1]] if len(x.shape) > 1 else [1, x.shape[0]])


def interleave(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """c = a[..., 0], b[..., 0], a[..., 1], b[..., 1], ... along the last dim, returned as its two halves
    (each shaped like a)."""
    _tensor("interleave", a), _tensor("interleave", b)
    if a.dtype is not b.dtype or len(a.shape) != len(b.shape) or list(a.shape) != list(b.shape):
        raise _fail("interleave", f"a and b must have the same shape and dtype, got {a.shape} {a.dtype.name} and "
                    f"{b.shape} {b.dtype.name}")
    n = a.shape[-1]
    if not isinstance(n, int):
        raise _fail("interleave", f"the last dim must be static, got {n}")
    flat = _prod(list(a.shape))
    pairs = ops.concat([ops.reshape(a, [flat, 1]), ops.reshape(b, [flat, 1])], dim=-1)  # [a_i, b_i] rows
    c = ops.reshape(pairs, [*a.shape[:-1], 2 * n])
    lead = [0] * (len(a.shape) - 1)
    return ops.view(c, list(a.shape), [*lead, 0]), ops.view(c, list(a.shape), [*lead, n])


def deinterleave(a: Tensor, b: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of interleave: the even and the odd elements along the last dim of a (of a's and
    b's halves joined, when b is given)."""
    _tensor("deinterleave", a)
    c = a if b is None else ops.concat([a, _tensor("deinterleave", b)], dim=-1)
    if not isinstance(c.shape[-1], int) or c.shape[-1] % 2:
        raise _fail("deinterleave", f"the (joined) last dim must be a static even size, got {c.shape[-1]}")
    return gathermask(c, 1), gathermask(c, 2)


def permute(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """The axes reordered: out.shape[k] = input.shape[dims[k]]. A tile transposes only its last two
    axes, so: a rotation of the axes is one 2-D transpose of the tensor seen as [prefix, suffix];
    with the first axis in place, each of its (static) slices is permuted on its own."""
    rank = len(_tensor("permute", input).shape)
    order = [d % rank if isinstance(d, int) and -rank <= d < rank else None for d in dims]
    if len(order) != rank or sorted(o for o in order if o is not None) != list(range(rank)):
        raise _fail("permute", f"dims {list(dims)} is not a permutation of the {rank} axes")
    return _permute(input, order)


def _permute(x: Tensor, order: list[int]) -> Tensor:
    rank, shape = len(order), list(x.shape)
    if order == list(range(rank)):
        return x
    if rank == 2:
        return ops.transpose(x, 0, 1)
    k = order[0]
    if k:  # rotate the axes left by k: [d0..dk-1 | dk..] -> [dk.. | d0..dk-1]
        pre, post = _prod(shape[:k]), _prod(shape[k:])
        x = ops.reshape(ops.transpose(ops.reshape(x, [pre, post]), 0, 1), shape[k:] + shape[:k])
        order = [(o - k) % rank for o in order]
        shape = shape[k:] + shape[:k]
    rest = [o - 1 for o in order[1:]]
    if rest == list(range(rank - 1)):
        return x
    if not isinstance(shape[0], int):
        raise _fail("permute", f"the permutation needs a static leading dim here, got {shape[0]}")
    out_shape = [shape[0]] + [shape[1:][o] for o in rest]
    out = ops.create_tensor(out_shape, x.dtype)
    for i in range(shape[0]):
        part = _permute(ops.reshape(ops.view(x, [1, *shape[1:]], [i] + [0] * (rank - 1)), shape[1:]), rest)
        ops.assemble(ops.reshape(part, [1, *out_shape[1:]]), [i] + [0] * (rank - 1), out)
    return out


def _prod(dims: list[Any]) -> Any:
    n = 1
    for d in dims:
        n = n * d
    return n


def pack(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor's bytes as a flat uint8 tensor."""
    x = _tensor("pack", input)
    if x.dtype.itemsize < 1:
        raise _fail("pack", f"{x.dtype.name} is narrower than a byte")
    r = ops._emit(T.reinterpret_view, [_rows(x)._value()], {"target_type": DataType.UINT8}, hint="pack")
    return ops.reshape(r, [-1])


def unpack(input: Tensor, dtype: Any) -> Tensor:  # noqa: A002
    """The inverse of pack: uint8 bytes read as `dtype` (flat; a 2-D input keeps its rows)."""
    x = _tensor("unpack", input)
    dt = to_dtype(dtype, "pypto.unpack")
    if x.dtype is not DataType.UINT8:
        raise _fail("unpack", f"expects uint8 bytes, got {x.dtype.name}")
    if not isinstance(x.shape[-1], int) or x.shape[-1] % dt.itemsize:
        raise _fail("unpack", f"the last dim ({x.shape[-1]}) must be a static multiple of {dt.itemsize} bytes")
    r = ops._emit(T.reinterpret_view, [_rows(x)._value()], {"target_type": dt}, hint="unpack")
    return ops.reshape(r, [-1]) if len(x.shape) == 1 else r if len(x.shape) == 2 else \
        ops.reshape(r, [*x.shape[:-1], x.shape[-1] // dt.itemsize])


def atomic_add(src: Tensor, offsets: Any, dst: Tensor) -> None:
    """dst[offsets : offsets + src.shape] += src, in place. Inside a loop each iteration's task reads and
    writes its region; the runtime orders tasks whose regions overlap, so iterations adding into the
    same region all count."""
    _tensor("atomic_add", src), _tensor("atomic_add", dst)
    if len(offsets) != len(dst.shape) or len(src.shape) != len(dst.shape):
        raise _fail("atomic_add", f"src, offsets and dst must have dst's rank {len(dst.shape)}")
    if src.dtype is not dst.dtype:
        raise _fail("atomic_add", f"src is {src.dtype.name}, dst {dst.dtype.name}")
    ops.assemble(ops.add(ops.view(dst, list(src.shape), list(offsets)), src), list(offsets), dst)


def pad(input: Tensor, padding: Any, mode: str = "constant", value: Any = 0) -> Tensor:  # noqa: A002
    """Constant padding after the end of the last two dims. `padding` as in torch's F.pad:
    (left, right) for the last dim, then (top, bottom) for the one before; left and top must be 0."""
    x = _tensor("pad", input)
    if mode != "constant":
        raise _fail("pad", f"mode {mode!r}: only 'constant' padding")
    p = list(padding)
    if len(p) % 2 or not all(isinstance(v, int) and v >= 0 for v in p):
        raise _fail("pad", f"padding must be pairs of non-negative ints, got {list(padding)}")
    if any(p[4:]) or len(p) // 2 > len(x.shape):
        raise _fail("pad", f"padding {list(padding)} pads dim {len(x.shape) - 1 - max(k // 2 for k, v in enumerate(p) if v)}"
                    " of a rank-" + f"{len(x.shape)} tensor: only the last two dims are padded",
                    hint="pad the other dims with pypto.full and pypto.assemble")
    if p[0] or (len(p) > 2 and p[2]):
        raise _fail("pad", f"padding {list(padding)}: only right / bottom padding (left and top must be 0)")
    shape = list(x.shape)
    shape[-1] = shape[-1] + p[1]
    if len(p) > 2:
        shape[-2] = shape[-2] + p[3]
    out = ops.full(shape, value, x.dtype)
    ops.assemble(x, [0] * len(shape), out)
    return out


def _valid_shape(x: Tensor) -> list[Any] | None:
    """The valid shape `pypto.view(..., valid_shape=)` gave x, if x is such a view."""
    var = x._value()
    for block in reversed(current("pypto.fillpad").blocks):
        for st in block.stmts:
            if isinstance(st, AssignStmt) and st.var is var and isinstance(st.value, Call) \
                    and st.value.op is T.view and len(st.value.args) > 3:
                return list(st.value.args[3].elements)
    return None


def fillpad(input: Tensor, mode: str = "constant", value: Any = 0) -> Tensor:  # noqa: A002
    """x with everything outside its valid shape (`pypto.view(..., valid_shape=)`) set to `value`; same
    shape. A valid shape known while tracing takes any value; a run-time one 0, inf or -inf."""
    x = _tensor("fillpad", input)
    if mode != "constant":
        raise _fail("fillpad", f"mode {mode!r}: only 'constant'")
    valid = _valid_shape(x)
    if valid is None:
        return ops.clone(x)  # (everything is valid)
    if all(isinstance(v, ConstInt) for v in valid):
        out = ops.full(list(x.shape), value, x.dtype)
        ops.assemble(ops.view(x, [v.value for v in valid], [0] * len(valid)), [0] * len(valid), out)
        return out
    pads = {0: PadValue.zero, float("inf"): PadValue.max, float("-inf"): PadValue.min}
    if float(value) not in pads:
        raise _fail("fillpad", f"a run-time valid shape fills with 0, inf or -inf, got {value}")
    return ops._emit(T.fillpad, [x._value()], {"pad_value": pads[float(value)]}, hint="fillpad")


def one_hot(input: Tensor, num_classes: int) -> Tensor:  # noqa: A002
    """out[..., c] = 1 where input[...] == c, else 0 (int32; shape input.shape + [num_classes]). An
    index outside [0, num_classes) gives a row of zeros."""
    x = _tensor("one_hot", input)
    if x.dtype is not DataType.INT32:
        raise _fail("one_hot", f"the index must hold int32 values, got {x.dtype.name}")
    if not isinstance(num_classes, int) or num_classes < 1:
        raise _fail("one_hot", f"num_classes must be a positive int, got {num_classes!r}")
    flat = _prod(list(x.shape))
    rows = ops.reshape(x, [flat, 1])
    out = scatter(ops.full([flat, num_classes], 0, DataType.INT32), -1, rows, 1)
    return ops.reshape(out, [*x.shape, num_classes])


for _name in ("permute", "pad", "fillpad"):  # method forms (reference §1.2)
    setattr(Tensor, _name, globals()[_name])

__all__ = ["atomic_add", "deinterleave", "fillpad", "interleave", "one_hot", "pack", "pad", "permute", "unpack"]
