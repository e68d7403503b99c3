"""The matmul family. Tile forms read Left/Right tiles and write an Acc tile; float inputs
accumulate in FP32, integer inputs in INT32. The tensor form carries transposes and out dtype."""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PipeType
from pypto.ir.types import TensorType

from . import numeric as nm
from .registry import arg, attr, define, unified
from .traits import MATMUL
from .typing import OpError, dim_eq, expect_tensor, expect_tile, tile_result

M = PipeType.M


def acc_dtype(a: DataType, b: DataType, name: str) -> DataType:
    if a is not b:
        raise OpError(f"{name}: lhs and rhs need the same dtype, got {a.name} and {b.name}",
                      hint="cast one side with pl.cast(...)")
    if a.is_float:
        return DataType.FP32
    if a.is_int:
        return DataType.INT32
    raise OpError(f"{name}: unsupported dtype {a.name}")


def _mm_shapes(name: str, lhs, rhs, a_trans: bool = False, b_trans: bool = False):
    if lhs.rank != 2 or rhs.rank != 2:
        raise OpError(f"{name}: needs 2-D operands, got ranks {lhs.rank} and {rhs.rank}")
    m, k = (lhs.shape[1], lhs.shape[0]) if a_trans else (lhs.shape[0], lhs.shape[1])
    k2, n = (rhs.shape[1], rhs.shape[0]) if b_trans else (rhs.shape[0], rhs.shape[1])
    if dim_eq(k, k2) is False:
        raise OpError(f"{name}: inner dimensions differ ({k!r} vs {k2!r})")
    return m, k, n


_ROLE_SPACE = {"lhs": MemorySpace.Left, "rhs": MemorySpace.Right}


def _spaces(name: str, **tiles) -> None:
    """The cube unit reads Left / Right tiles (a Right tile has the packed layout the unit needs). A Mat
    (L1) operand is accepted too: AutoTileMatmulL0 moves it into L0, in pieces if it does not fit."""
    for role, t in tiles.items():
        want = _ROLE_SPACE[role]
        have = getattr(t, "memory_space", None)  # unset: decided later
        if have is not None and have is not want and have is not MemorySpace.Mat:
            raise OpError(f"{name}: {role} must be a {want.name} tile, got a {have.name} tile",
                          hint=f"load it with target_memory=pl.Mem.{want.name}, or move it: "
                               f"pl.move(t, target_memory=pl.Mem.{want.name})")


def _tile_valid(name, lhs, rhs):
    lv, rv = lhs.valid_shape, rhs.valid_shape
    return (lv[0], rv[1])


def _matmul_rule(args, kw):
    a = expect_tile("block.matmul", args[0], "lhs")
    b = expect_tile("block.matmul", args[1], "rhs")
    _spaces("block.matmul", lhs=a, rhs=b)
    m, _, n = _mm_shapes("block.matmul", a, b)
    dt = acc_dtype(a.dtype, b.dtype, "block.matmul")
    return tile_result((m, n), dt, memory_space=MemorySpace.Acc, valid_shape=_tile_valid("block.matmul", a, b))


def _matmul_acc_rule(args, kw):
    acc = expect_tile("block.matmul_acc", args[0], "acc")
    a = expect_tile("block.matmul_acc", args[1], "lhs")
    b = expect_tile("block.matmul_acc", args[2], "rhs")
    _spaces("block.matmul_acc", lhs=a, rhs=b)
    if acc.memory_space is not None and acc.memory_space is not MemorySpace.Acc:
        raise OpError(f"block.matmul_acc: acc must be an Acc tile, got a {acc.memory_space.name} tile",
                      hint="start the accumulation with pl.matmul(...) (its result is an Acc tile)")
    m, _, n = _mm_shapes("block.matmul_acc", a, b)
    if acc.rank != 2 or dim_eq(acc.shape[0], m) is False or dim_eq(acc.shape[1], n) is False:
        raise OpError("block.matmul_acc: acc shape does not match lhs @ rhs")
    dt = acc_dtype(a.dtype, b.dtype, "block.matmul_acc")
    if acc.dtype is not dt:
        raise OpError(f"block.matmul_acc: acc must be {dt.name}, got {acc.dtype.name}")
    return tile_result(acc.shape, dt, memory_space=acc.space, like=acc)


def _matmul_bias_rule(args, kw):
    a = expect_tile("block.matmul_bias", args[0], "lhs")
    b = expect_tile("block.matmul_bias", args[1], "rhs")
    bias = expect_tile("block.matmul_bias", args[2], "bias")
    _spaces("block.matmul_bias", lhs=a, rhs=b)
    m, _, n = _mm_shapes("block.matmul_bias", a, b)
    if bias.rank != 2 or dim_eq(bias.shape[-1], n) is False:
        raise OpError("block.matmul_bias: bias must be [1, N] or [M, N]")
    dt = acc_dtype(a.dtype, b.dtype, "block.matmul_bias")
    return tile_result((m, n), dt, memory_space=MemorySpace.Acc, valid_shape=_tile_valid("", a, b))


def _mm(a, b):
    a, b = nm.up(a), nm.up(b)
    if a.dtype.kind in "iu":
        return a.astype(np.int64) @ b.astype(np.int64)
    return a.astype(np.float64) @ b.astype(np.float64)


_block_matmul = define("block.matmul", [arg("lhs", "tile"), arg("rhs", "tile")], _matmul_rule, traits=MATMUL,
                       reference=_mm,
       pto="tmatmul", pipe=M, doc="C = A @ B into an Acc tile (fp32 / int32 accumulation)")
_block_matmul_acc = define("block.matmul_acc", [arg("acc", "tile"), arg("lhs", "tile"), arg("rhs", "tile")],
                           _matmul_acc_rule, traits=MATMUL, reference=lambda c, a, b: c + _mm(a, b), pto="tmatmul.acc", pipe=M, result_reuses=0,
       dsl=("pl.block.matmul_acc",), doc="acc + A @ B, in place on the Acc tile")
define("block.matmul_bias", [arg("lhs", "tile"), arg("rhs", "tile"), arg("bias", "tile")], _matmul_bias_rule,
       traits=MATMUL, reference=lambda a, b, bias: _mm(a, b) + nm.up(bias), pto="tmatmul.bias", pipe=M,
       dsl=("pl.block.matmul_bias", "pl.matmul_bias"), doc="A @ B + bias")


def _gemv_rule(name, with_acc=False, with_bias=False):
    def infer(args, kw):
        base = 1 if with_acc else 0
        a = expect_tile(name, args[base], "lhs")
        expect_tile(name, args[base + 1], "rhs")
        s = a.static_shape()
        if a.rank != 2 or (s is not None and s[0] != 1):
            raise OpError(f"{name}: lhs must be [1, K]")
        if with_acc:
            return _matmul_acc_rule(args, kw)
        if with_bias:
            return _matmul_bias_rule(args, kw)
        return _matmul_rule(args, kw)
    return infer


define("block.gemv", [arg("lhs", "tile"), arg("rhs", "tile")], _gemv_rule("block.gemv"), traits=MATMUL, reference=_mm,
       pto="tgemv", pipe=M, dsl=("pl.block.gemv", "pl.gemv"), doc="[1, K] @ [K, N]")
define("block.gemv_acc", [arg("acc", "tile"), arg("lhs", "tile"), arg("rhs", "tile")],
       _gemv_rule("block.gemv_acc", with_acc=True), traits=MATMUL, reference=lambda c, a, b: c + _mm(a, b), pto="tgemv.acc",
       pipe=M, result_reuses=0, dsl=("pl.block.gemv_acc", "pl.gemv_acc"), doc="acc + [1, K] @ [K, N]")
define("block.gemv_bias", [arg("lhs", "tile"), arg("rhs", "tile"), arg("bias", "tile")],
       _gemv_rule("block.gemv_bias", with_bias=True), traits=MATMUL, reference=lambda a, b, bias: _mm(a, b) + nm.up(bias),
       pto="tgemv.bias", pipe=M, dsl=("pl.block.gemv_bias", "pl.gemv_bias"), doc="[1, K] @ [K, N] + bias")


def batch_dims(name: str, a, b, a_trans: bool = False, b_trans: bool = False) -> tuple[int, ...]:
    """The broadcast leading dims of a batched matmul. The CPU tile is 2-D (rows = the product of the
    leading dims), so each side's batch must be the whole broadcast batch or a single matrix."""
    if max(a.rank, b.rank) < 3 or min(a.rank, b.rank) < 2:
        raise OpError(f"{name}: needs 3-D (or higher) operands, got ranks {a.rank} and {b.rank}",
                      hint="for 2-D operands use pl.matmul")
    sa, sb = a.static_shape(), b.static_shape()
    if sa is None or sb is None:
        raise OpError(f"{name}: a batched matmul needs static shapes")
    sa, sb = [int(d) for d in sa], [int(d) for d in sb]
    if a_trans:
        sa[-2:] = sa[-1], sa[-2]
    if b_trans:
        sb[-2:] = sb[-1], sb[-2]
    try:
        out = tuple(int(d) for d in np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    except ValueError:
        raise OpError(f"{name}: leading dims {sa[:-2]} and {sb[:-2]} do not broadcast") from None
    total = int(np.prod(out, dtype=np.int64))
    for side, dims in (("lhs", sa[:-2]), ("rhs", sb[:-2])):
        if int(np.prod(dims, dtype=np.int64)) not in (1, total):
            raise OpError(f"{name}: {side}'s leading dims {dims} broadcast partly to {list(out)}; "
                          "supported: the whole batch or a single matrix")
    if sa[-1] != sb[-2]:
        raise OpError(f"{name}: inner dimensions differ ({sa[-1]} vs {sb[-2]})")
    return (*out, sa[-2], sb[-1])


def _batch_rule(args, kw):
    a = expect_tile("block.batch_matmul", args[0], "lhs")
    b = expect_tile("block.batch_matmul", args[1], "rhs")
    shape = batch_dims("block.batch_matmul", a, b)
    dt = acc_dtype(a.dtype, b.dtype, "block.batch_matmul")
    return tile_result(shape, dt, memory_space=MemorySpace.Acc)


def _batch_acc_rule(args, kw):
    acc = expect_tile("block.batch_matmul_acc", args[0], "acc")
    a = expect_tile("block.batch_matmul_acc", args[1], "lhs")
    b = expect_tile("block.batch_matmul_acc", args[2], "rhs")
    want = batch_dims("block.batch_matmul_acc", a, b)
    dt = acc_dtype(a.dtype, b.dtype, "block.batch_matmul_acc")
    if acc.static_shape() is None or tuple(int(d) for d in acc.static_shape()) != want:
        raise OpError(f"block.batch_matmul_acc: acc must be {list(want)}, got {list(acc.shape)}")
    if acc.dtype is not dt:
        raise OpError(f"block.batch_matmul_acc: acc must be {dt.name}, got {acc.dtype.name}")
    return tile_result(acc.shape, dt, memory_space=acc.space, like=acc)


def _bmm(a, b):
    a, b = nm.up(a), nm.up(b)
    if a.dtype.kind in "iu":
        return np.matmul(a.astype(np.int64), b.astype(np.int64))
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


# (pto: our own instructions; the batch split is recovered from the 2-D tiles' static shapes, see
# pto/matmul.hpp TBATCHMATMUL and interp/batch_ops.py)
_block_bmm = define("block.batch_matmul", [arg("lhs", "tile"), arg("rhs", "tile")], _batch_rule, traits=MATMUL,
                    reference=_bmm, pto="tbatchmatmul", pipe=M, dsl=("pl.block.batch_matmul", "pl.batch_matmul"),
                    doc="C[b] = A[b] @ B[b] over the broadcast leading dims, into an Acc tile")
define("block.batch_matmul_acc", [arg("acc", "tile"), arg("lhs", "tile"), arg("rhs", "tile")], _batch_acc_rule,
       traits=MATMUL, reference=lambda c, a, b: c + _bmm(a, b), pto="tbatchmatmul.acc", pipe=M, result_reuses=0,
       dsl=("pl.block.batch_matmul_acc",), doc="acc[b] + A[b] @ B[b], in place on the Acc tile")


# ---------------------------------------------------------------------------------------------
# tensor level


def _tensor_matmul_rule(args, kw):
    a = expect_tensor("tensor.matmul", args[0], "lhs")
    b = expect_tensor("tensor.matmul", args[1], "rhs")
    acc_dtype(a.dtype, b.dtype, "tensor.matmul")  # (checks the operand dtypes)
    dt = kw["out_dtype"] or a.dtype  # reference §1.2: out_dtype, or the (equal) operand dtype
    if max(a.rank, b.rank) > 2:  # batched over the broadcast leading dims (tiling.py: block.batch_matmul)
        return TensorType(batch_dims("tensor.matmul", a, b, kw["a_trans"], kw["b_trans"]), dt)
    m, _, n = _mm_shapes("tensor.matmul", a, b, kw["a_trans"], kw["b_trans"])
    return TensorType((m, n), dt)


def _tensor_matmul_acc_rule(args, kw):
    acc = expect_tensor("tensor.matmul_acc", args[0], "acc")
    a = expect_tensor("tensor.matmul_acc", args[1], "lhs")
    b = expect_tensor("tensor.matmul_acc", args[2], "rhs")
    if max(a.rank, b.rank) > 2:
        want = batch_dims("tensor.matmul_acc", a, b, kw["a_trans"], kw["b_trans"])
        if acc.static_shape() is None or tuple(int(d) for d in acc.static_shape()) != want:
            raise OpError(f"tensor.matmul_acc: acc must be {list(want)}, got {list(acc.shape)}")
        return acc
    m, _, n = _mm_shapes("tensor.matmul_acc", a, b, kw["a_trans"], kw["b_trans"])
    if acc.rank != 2 or dim_eq(acc.shape[0], m) is False or dim_eq(acc.shape[1], n) is False:
        raise OpError("tensor.matmul_acc: acc shape does not match lhs @ rhs")
    return acc


def _tmm_ref(a, b, *, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False):
    return _mm(np.swapaxes(a, -1, -2) if a_trans else a, np.swapaxes(b, -1, -2) if b_trans else b)


_tensor_matmul = define("tensor.matmul", [arg("lhs", "tensor"), arg("rhs", "tensor"), attr("out_dtype", "dtype", None),
                         attr("a_trans", "bool", False), attr("b_trans", "bool", False),
                         attr("c_matrix_nz", "bool", False)],
       _tensor_matmul_rule, traits=MATMUL, reference=_tmm_ref, tile_form=_block_matmul, doc="C = op(A) @ op(B)")
_tensor_matmul_acc = define("tensor.matmul_acc", [arg("acc", "tensor"), arg("lhs", "tensor"), arg("rhs", "tensor"),
                             attr("a_trans", "bool", False), attr("b_trans", "bool", False)],
       _tensor_matmul_acc_rule, traits=MATMUL,
       reference=lambda c, a, b, *, a_trans=False, b_trans=False: c + _tmm_ref(a, b, a_trans=a_trans,
                                                                                 b_trans=b_trans),
       tile_form=_block_matmul_acc, result_reuses=0, doc="acc + op(A) @ op(B)")
unified("matmul", tensor=_tensor_matmul, tile=_block_matmul, doc="matrix product")
unified("matmul_acc", tensor=_tensor_matmul_acc, tile=_block_matmul_acc, doc="acc + matrix product")
