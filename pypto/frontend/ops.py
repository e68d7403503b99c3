"""The tensor-level ops (`pypto.add`, `pypto.amax`, `pypto.matmul`, ...): each records the registry
op it means (`pypto.ops`, level tensor) on the traced graph, or, for composites (`sigmoid`,
`softmax`, `rms_norm`, `layer_norm`), the ops it is made of. Semantics follow reference §1.4;
what the registry cannot express yet raises a FrontendError naming the op and the user's line.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType
from pypto.ir.expr import Add, ConstFloat, ConstInt, Expr, MakeTuple, Min, Mul, Sub
from pypto.ir.op import create_op_call
from pypto.ops.registry import tensor_ops as T
from pypto.ops.traits import ShapeClass

from .control import check_vec_tile
from .cube import tiled_matmul
from .symbolic import SymbolicScalar, as_expr, build, simplify
from .tensor import Tensor, dims_expr, to_dtype
from .tile_expand import note_region_write
from .trace import FrontendError, current, user_span


def _tuple(values: Any) -> MakeTuple:
    return MakeTuple(tuple(dims_expr(values)))


def _val(x: Any, what: str) -> Any:
    if not isinstance(x, Tensor):
        raise FrontendError(f"{what}: expected a pypto.Tensor, got {type(x).__name__}", user_span())
    return x._value()


_VECTOR = (ShapeClass.ELEMENTWISE, ShapeClass.ROW_REDUCE, ShapeClass.ROW_EXPAND, ShapeClass.COL_EXPAND,
           ShapeClass.ROW_WISE)


def _emit(op, args: list, kwargs: dict | None = None, hint: str = "t") -> Tensor:
    tr = current(f"pypto.{op.name.split('.', 1)[1]}")
    v = tr.call(op, args, kwargs, hint=hint)
    if op.shape_class in _VECTOR:  # the vec tile shape set for it must fit its result
        check_vec_tile(f"pypto.{hint}", list(v.type.shape), v.type.dtype.itemsize)
    return Tensor._wrap(v, hint)


def _scalar(v: Any, dtype: DataType) -> Expr:
    """A Python number, `pypto.Element` or SymbolicScalar as a scalar operand next to a tensor of
    `dtype`."""
    if isinstance(v, SymbolicScalar):
        return v.expr
    if type(v).__name__ == "Element" and hasattr(v, "value"):
        v = v.value
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, float) or dtype.is_float:
        if not dtype.is_float and isinstance(v, float) and not v.is_integer():
            raise FrontendError(f"a float scalar {v} next to an {dtype.name} tensor", user_span())
        return ConstFloat(float(v), dtype if dtype.is_float else DataType.FP32)
    if isinstance(v, int):
        return ConstInt(v, dtype)
    raise FrontendError(f"expected a tensor or a number, got {type(v).__name__}", user_span())


def create_tensor(dims: Any, dtype: DataType, into: Tensor | None = None) -> Tensor:
    tr = current("pypto.tensor")
    v = tr.call(T.create, [_tuple(dims)], {"dtype": dtype}, hint=into._hint if into is not None else "t")
    t = Tensor._wrap(v) if into is None else into
    if into is not None:
        into._var, into._depth, into._spec = v, tr.depth, None
        tr.handles.append(into)
    t._storage = True
    return t


# ---------------------------------------------------------------------------------------------
# elementwise

_BINARY = {"add": (T.add, T.add_scalar), "sub": (T.sub, T.sub_scalar), "mul": (T.mul, T.mul_scalar),
           "div": (T.div, T.div_scalar), "maximum": (T.maximum, T.maximum_scalar), "minimum": (T.minimum, T.minimum_scalar)}


def _binary(name: str, a: Any, b: Any) -> Tensor:
    op, scalar_op = _BINARY[name]
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return _emit(op, [a._value(), b._value()], hint=name)
    if isinstance(a, Tensor):
        return _emit(scalar_op, [a._value(), _scalar(b, a.dtype)], hint=name)
    if isinstance(b, Tensor):
        if name in ("add", "mul", "maximum", "minimum"):
            return _binary(name, b, a)
        if name == "sub":  # s - x = (-x) + s
            return _binary("add", neg(b), a)
        return _binary("mul", reciprocal(b), a)  # s / x
    raise FrontendError(f"pypto.{name} needs a tensor operand", user_span())


def add(input: Any, other: Any, alpha: Any = 1) -> Tensor:  # noqa: A002
    return _binary("add", input, other if alpha == 1 else mul(other, alpha))


def sub(input: Any, other: Any, alpha: Any = 1) -> Tensor:  # noqa: A002
    return _binary("sub", input, other if alpha == 1 else mul(other, alpha))


def mul(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _binary("mul", input, other)


def div(input: Any, other: Any, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _binary("div", input, other)


def maximum(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _binary("maximum", input, other)


def minimum(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _binary("minimum", input, other)


def _unary(op, x: Tensor, name: str) -> Tensor:
    return _emit(op, [_val(x, f"pypto.{name}")], hint=name)


def exp(input: Tensor, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _unary(T.exp, input, "exp")


def log(input: Tensor, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _unary(T.log, input, "log")


def sqrt(input: Tensor, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _unary(T.sqrt, input, "sqrt")


def rsqrt(input: Tensor, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _unary(T.rsqrt, input, "rsqrt")


def reciprocal(input: Tensor, precision_type: Any = None) -> Tensor:  # noqa: A002
    return _unary(T.recip, input, "reciprocal")


def neg(input: Tensor) -> Tensor:  # noqa: A002
    return _unary(T.neg, input, "neg")


def abs(input: Tensor) -> Tensor:  # noqa: A001,A002
    return _unary(T.abs, input, "abs")


def relu(input: Tensor) -> Tensor:  # noqa: A002
    return _unary(T.relu, input, "relu")


def softplus(input: Tensor) -> Tensor:  # noqa: A002
    return _unary(T.softplus, input, "softplus")


def _math(name: str, op_name: str | None = None):
    def fn(input: Tensor) -> Tensor:  # noqa: A002
        return _unary(getattr(T, op_name or name), input, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"pypto.{name}: elementwise, computed in fp32 (floating-point tensors)."
    return fn


tanh, sin, cos, exp2, expm1, log2, log10, log1p, floor, ceil, trunc = (
    _math(n) for n in ("tanh", "sin", "cos", "exp2", "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc"))


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001,A002
    """Round half to even; `decimals` digits after the point (negative: before it)."""
    if decimals == 0:
        return _unary(T.rint, input, "round")
    scale = 10.0 ** decimals
    return div(_unary(T.rint, mul(input, scale), "round"), scale)


def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A001,A002
    out = input
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def cast(input: Tensor, dtype: Any, mode: Any = None, satmode: Any = None) -> Tensor:  # noqa: A002
    dt = to_dtype(dtype, "pypto.cast")
    cm = _cast_mode(mode)
    if cm is CastMode.none:  # the reference's CAST_NONE: truncate float -> int, round to nearest otherwise
        cm = CastMode.trunc if input.dtype.is_float and not dt.is_float else CastMode.rint
    return _emit(T.cast, [_val(input, "pypto.cast")], {"target_type": dt, "mode": cm}, hint="cast")


def _cast_mode(mode: Any) -> CastMode:
    if mode is None or isinstance(mode, CastMode):
        return mode or CastMode.none
    name = str(getattr(mode, "name", mode)).lower().removeprefix("cast_")  # (pypto.CastMode.CAST_RINT, "rint")
    if name == "odd":
        raise FrontendError("pypto.cast: CAST_ODD (round to odd) is not supported on the CPU backend", user_span())
    modes = {"none": CastMode.none, "rint": CastMode.rint, "round": CastMode.round, "floor": CastMode.floor,
             "ceil": CastMode.ceil, "trunc": CastMode.trunc}
    if name not in modes:
        raise FrontendError(f"pypto.cast: unknown cast mode {mode!r}", user_span())
    return modes[name]


# ---------------------------------------------------------------------------------------------
# comparisons and selection: masks are DT_BOOL tensors (reference §1.2); `where` takes a BOOL or a
# numeric (non-zero) mask

_CMP = {"eq": CmpType.EQ, "ne": CmpType.NE, "lt": CmpType.LT, "le": CmpType.LE, "gt": CmpType.GT, "ge": CmpType.GE}
_SWAPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _compare(name: str, a: Any, b: Any) -> Tensor:
    """A BOOL mask: the registry compare (1 / 0 in the compared dtype), converted to BOOL."""
    return to_bool(compare_numeric(name, a, b))


def compare_numeric(name: str, a: Any, b: Any) -> Tensor:
    """The registry compare's 1 / 0 mask in the compared (promoted) dtype: what composites select with."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return _emit(T.cmp, [a._value(), b._value()], {"cmp_type": _CMP[name]}, hint=name)
    if isinstance(a, Tensor):
        return _emit(T.cmps, [a._value(), _scalar(b, a.dtype)], {"cmp_type": _CMP[name]}, hint=name)
    if isinstance(b, Tensor):
        return compare_numeric(_SWAPPED[name], b, a)
    raise FrontendError(f"pypto.{name} needs a tensor operand", user_span())


def to_bool(t: Tensor) -> Tensor:
    """`t` as a DT_BOOL mask (non-zero -> True)."""
    if t.dtype is DataType.BOOL:
        return t
    return _emit(T.cast, [t._value()], {"target_type": DataType.BOOL, "mode": CastMode.rint}, hint=t._hint)


def eq(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("eq", input, other)


def ne(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("ne", input, other)


def lt(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("lt", input, other)


def le(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("le", input, other)


def gt(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("gt", input, other)


def ge(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("ge", input, other)


def logical_not(input: Tensor) -> Tensor:  # noqa: A002
    """A BOOL mask: True where `input` is zero (False)."""
    if isinstance(input, Tensor) and input.dtype is DataType.BOOL:
        return _emit(T.not_, [input._value()], hint="logical_not")
    return _compare("eq", input, 0)


def where(condition: Tensor, input: Any, other: Any) -> Tensor:  # noqa: A002
    """`input` where `condition` is True (a BOOL mask) or non-zero (a numeric one), else `other`
    (tensors broadcast; a number fills)."""
    like = input if isinstance(input, Tensor) else other if isinstance(other, Tensor) else condition
    a, b = (_filled(v, like) for v in (input, other))
    return _emit(T.sel, [_val(condition, "pypto.where"), a._value(), b._value()], hint="where")


def _filled(v: Any, like: Tensor) -> Tensor:
    if isinstance(v, Tensor):
        return v
    return _emit(T.expands, [like._value(), _scalar(v, like.dtype)], hint="fill")


# ---------------------------------------------------------------------------------------------
# reductions: over any dim (reductions.py: row / column ops, or a fold over a non-trailing dim)

def _axis(x: Tensor, dim: Any, name: str) -> int:
    from .reductions import axis

    return axis(x, dim, name)


def _reduce(op, x: Tensor, dim: Any, keepdim: bool, name: str) -> Tensor:
    from .reductions import reduce_dim

    return reduce_dim(x, dim, keepdim, name)


def amax(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _reduce(T.row_max, input, dim, keepdim, "amax")


def amin(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _reduce(T.row_min, input, dim, keepdim, "amin")


def sum(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    return _reduce(T.row_sum, input, dim, keepdim, "sum")


def mean(input: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A002
    n = input.shape[_axis(input, dim, "mean")]
    return mul(sum(input, dim, keepdim), 1.0 / n)


# ---------------------------------------------------------------------------------------------
# creation, structure

def full(size: Any, fill_value: Any, dtype: Any = None, *, valid_shape: Any = None) -> Tensor:
    dt = DataType.FP32 if dtype is None else to_dtype(dtype, "pypto.full")
    dims = list(size) if isinstance(size, (list, tuple)) else [size]
    if isinstance(fill_value, SymbolicScalar):
        raise FrontendError("pypto.full with a run-time fill value is not supported yet", user_span())
    value = float(fill_value) if dt.is_float else int(fill_value)
    return _emit(T.full, [_tuple(dims)], {"dtype": dt, "value": value}, hint="full")


def zeros(*size: Any, dtype: Any = None) -> Tensor:
    dims = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return full(dims, 0.0 if dtype is None or to_dtype(dtype).is_float else 0, dtype)


def ones(*size: Any, dtype: Any = None) -> Tensor:
    dims = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return full(dims, 1.0 if dtype is None or to_dtype(dtype).is_float else 1, dtype)


def view(input: Tensor, shape: Any = None, offsets: Any = None, *, valid_shape: Any = None,  # noqa: A002
         dtype: Any = None) -> Tensor:
    if dtype is not None:
        raise FrontendError("pypto.view(dtype=...): bit reinterpretation is not supported on the CPU backend yet",
                            user_span())
    shape = list(input.shape) if shape is None else list(shape)
    offsets = [0] * len(shape) if offsets is None else list(offsets)
    if len(shape) != len(input.shape) or len(offsets) != len(shape):
        raise FrontendError(f"pypto.view: shape {shape} and offsets {offsets} must have the tensor's rank "
                            f"{len(input.shape)}", user_span())
    args = [_val(input, "pypto.view"), _tuple(shape), _tuple(offsets)]
    if valid_shape is not None:
        args.append(_tuple(valid_shape))
    return _emit(T.view, args, hint="view")


def assemble(src: Any, offsets: Any = None, dst: Tensor | None = None, parallel: bool = False) -> None:
    """Write `src` into `dst` at `offsets` (in place: `dst` now holds the result). List form:
    `assemble([(src, offsets), ...], dst)`."""
    if isinstance(src, list):
        dst = offsets if dst is None else dst
        for s, o in src:
            assemble(s, o, dst)
        return
    if not isinstance(dst, Tensor):
        raise FrontendError("pypto.assemble(src, offsets, dst): dst must be a pypto.Tensor", user_span())
    tr = current("pypto.assemble")
    sv = _val(src, "pypto.assemble")
    if _writes_in_place(dst, tr):
        _write_region(tr, dst, sv, offsets)
        return
    v = tr.call(T.assemble, [dst._value(), sv, _tuple(offsets)], hint=dst._hint)
    dst._set(v, tr.depth)


def _writes_in_place(dst: Tensor, tr) -> bool:
    """A write into a tensor with storage (a parameter or a pypto.tensor) from inside a loop that
    tensor was made outside of: it goes straight into a region of the tensor (a view), so each
    iteration's task writes only its region and iterations run in parallel (the runtime orders
    tasks by the regions they touch); the tensor's value is not carried through the loop."""
    return (dst._param or dst._storage) and dst._depth < tr.depth


def _write_region(tr, dst: Tensor, src, offsets: Any) -> None:
    span = user_span()
    shape = list(src.type.shape)
    if len(shape) != len(dst._value().type.shape):
        raise FrontendError(f"assemble: a rank-{len(shape)} value into a rank-{len(dst.shape)} tensor", span)
    dims = list(dst._value().type.shape)
    offs = [as_index(o) for o in offsets]
    args = [dst._value(), MakeTuple(tuple(shape)), MakeTuple(tuple(offs))]
    if not all(within(tr, o, n, d) for o, n, d in zip(offs, shape, dims)):
        # a tail may reach past the end: the region is clipped to the tensor (the valid shape)
        args.append(MakeTuple(tuple(n if within(tr, o, n, d) else build(Min, n, build(Sub, d, o))
                                    for o, n, d in zip(offs, shape, dims))))
    view = create_op_call(T.view, args, {}, span=span)
    region = tr.let_early(f"{dst._hint}_part", view, span)
    dst._written = True
    done = tr.call(T.assemble, [region, src, _tuple([0] * len(shape))], hint=f"{dst._hint}_part", span=span)
    if len(args) == 3:
        note_region_write(tr, region, src, done, span)  # tiled by set_vec_tile_shapes when its block closes


def reshape(input: Tensor, shape: Any, *, valid_shape: Any = None, inplace: bool = False) -> Tensor:  # noqa: A002
    dims = list(shape)
    holes = [i for i, d in enumerate(dims) if isinstance(d, int) and d == -1]  # (a symbolic dim is never -1)
    if len(holes) > 1:
        raise FrontendError(f"pypto.reshape: at most one -1 in the shape, got {dims}", user_span())
    if holes:
        known = 1
        for d in input.shape:
            known = known * d
        rest = 1
        for i, d in enumerate(dims):
            if i != holes[0]:
                rest = rest * d
        dims[holes[0]] = simplify(known // rest)
    return _emit(T.reshape, [_val(input, "pypto.reshape"), _tuple(dims)], hint="reshape")


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    dims = list(input.shape)
    d = dim % (len(dims) + 1)
    return reshape(input, dims[:d] + [1] + dims[d:])


def squeeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    dims = list(input.shape)
    d = dim % len(dims)
    return reshape(input, dims[:d] + dims[d + 1:])


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    rank = len(input.shape)
    return _emit(T.transpose, [_val(input, "pypto.transpose")], {"axis1": dim0 % rank, "axis2": dim1 % rank},
                 hint="transpose")


def expand_clone(input: Tensor, shape: Any, *, valid_shape: Any = None) -> Tensor:  # noqa: A002
    """The tensor broadcast (size-1 dims repeated) to `shape`, materialised."""
    return add(zeros(list(shape), dtype=input.dtype), input)


def clone(input: Tensor) -> Tensor:  # noqa: A002
    return add(input, 0)


def concat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    if len(tensors) < 1:
        raise FrontendError("pypto.concat needs at least one tensor", user_span())
    rank = len(tensors[0].shape)
    out = tensors[0]
    for t in tensors[1:]:
        if dim % rank == rank - 1:
            out = _emit(T.concat, [out._value(), _val(t, "pypto.concat")], hint="concat")
        else:  # along another dim: assemble the pieces into a new tensor
            return _concat_by_assemble(tensors, dim % rank)
    return out


def _concat_by_assemble(tensors: list[Tensor], d: int) -> Tensor:
    shape = list(tensors[0].shape)
    total = 0
    for t in tensors:
        total = total + t.shape[d]
    shape[d] = simplify(total)
    out = create_tensor(shape, tensors[0].dtype)
    off = 0
    for t in tensors:
        offs = [0] * len(shape)
        offs[d] = off
        assemble(t, offs, out)
        off = simplify(off + t.shape[d])
    return out


def matmul(input: Tensor, mat2: Tensor, out_dtype: Any = None, *, a_trans: bool = False,  # noqa: A002
           b_trans: bool = False, c_matrix_nz: bool = False, extend_params: dict | None = None) -> Tensor:
    kw: dict[str, Any] = {"a_trans": bool(a_trans), "b_trans": bool(b_trans)}
    if out_dtype is not None:
        kw["out_dtype"] = to_dtype(out_dtype, "pypto.matmul out_dtype")
    args = [_val(input, "pypto.matmul"), _val(mat2, "pypto.matmul")]
    r = tiled_matmul(lambda op, a, k, h: _emit(op, a, k, hint=h), input, mat2, kw, args)
    if r is None:  # no cube tile shapes split it: one matmul of the whole operands
        r = _emit(T.matmul, args, kw, hint="matmul")
    ext = extend_params or {}
    if ext.get("bias_tensor") is not None:
        r = add(r, ext["bias_tensor"])
    if ext.get("scale") is not None:
        r = mul(r, float(ext["scale"]))
    if ext.get("relu_type") not in (None, 0) and "NO_RELU" not in str(ext.get("relu_type")):
        r = relu(r)
    return r


# ---------------------------------------------------------------------------------------------
# composites

def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return reciprocal(add(exp(neg(input)), 1.0))


def softmax(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    m = amax(input, dim, keepdim=True)
    e = exp(sub(input, m))
    return mul(e, reciprocal(sum(e, dim, keepdim=True)))  # (one division per row, not per element)


def rms_norm(input: Tensor, gamma: Tensor | None = None, epsilon: float = 1e-6) -> Tensor:  # noqa: A002
    n = input.shape[-1]
    ms = add(mul(sum(mul(input, input), -1, keepdim=True), 1.0 / n), float(epsilon))
    out = mul(input, rsqrt(ms))
    return out if gamma is None else mul(out, gamma)


def layer_norm(input: Tensor, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               epsilon: float = 1e-5, eps: float | None = None) -> Tensor:
    n = input.shape[-1]
    eps_ = float(epsilon if eps is None else eps)
    mu = mul(sum(input, -1, keepdim=True), 1.0 / n)
    xc = sub(input, mu)
    var = mul(sum(mul(xc, xc), -1, keepdim=True), 1.0 / n)
    out = mul(xc, rsqrt(add(var, eps_)))
    if weight is not None:
        out = mul(out, weight)
    if bias is not None:
        out = add(out, bias)
    return out


def read_scalar(t: Tensor, indices: list[Any]) -> SymbolicScalar:
    tr = current("a tensor element read")
    v = tr.call(T.read, [_val(t, "read"), _tuple(indices)], hint="val")
    return SymbolicScalar(v)


def write_scalar(t: Tensor, indices: list[Any], value: Any) -> None:
    tr = current("a tensor element write")
    v = tr.call(T.write, [t._value(), _tuple(indices), _scalar(value, t.dtype) if not isinstance(value, SymbolicScalar)
                          else value.expr], hint=t._hint)
    t._set(v, tr.depth)


def within(tr, off: Expr, size: Expr, dim: Expr) -> bool:
    """Is [off, off + size) inside [0, dim) for every value of the open loops' indices? (Each index
    at its largest, stop - 1, for a positive coefficient, at its start for a negative one.)"""
    from .symbolic import _lin

    lin = _lin(off)
    if lin is None:
        return False
    terms, const = lin
    hi: Expr = ConstInt(const)
    for v, k in terms.items():
        rng = tr.loop_ranges.get(v)
        if rng is None or _lin(rng[0]) is None or (_lin(rng[0])[0] or _lin(rng[0])[1] < 0):
            return False  # not a loop index with a known non-negative start
        at = build(Sub, rng[1], 1) if k > 0 else rng[0]
        hi = build(Add, hi, build(Mul, at, k))
    slack = _lin(build(Sub, build(Add, hi, size), dim))
    return slack is not None and not slack[0] and slack[1] <= 0


def as_index(v: Any) -> Expr:
    return as_expr(simplify(v))
