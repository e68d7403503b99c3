"""Cube tiling of `pypto.matmul` (reference §1.5, §2.3): with `set_cube_tile_shapes(m, k, n)` in
force, a matmul whose operands exceed the L1 tile sizes becomes a grid of [mL1, nL1] output tiles,
each a chain over K: the first K block through `matmul` (into an fp32 / int32 accumulator), the rest
through `matmul_acc`, so the partial sums stay in the accumulator and every operand piece fits the
matrix unit's Left / Right spaces. The chains are unrolled while tracing (static shapes), inside
the kernel being traced; tails (a dim not a multiple of its tile) get smaller last pieces.

Without cube tile shapes a matmul is one tile-level matmul of its whole operands, as before.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.op import create_op_call
from pypto.ops.registry import tensor_ops as T
from pypto.ops.typing import OpError

from .symbolic import simplify
from .tensor import Tensor
from .trace import FrontendError, current, user_span


def cube_tiles() -> tuple[int, int, int] | None:
    """The L1 tile sizes (m, k, n) set by `set_cube_tile_shapes` in the kernel being traced."""
    tr = current("pypto.matmul")
    shapes = tr.cube_tile_shapes
    if not shapes:
        return None
    m, k, n = shapes[0], shapes[1], shapes[2]
    return m[1], k[1], n[1]


def _pieces(size: int, tile: int) -> list[tuple[int, int]]:
    return [(o, min(tile, size - o)) for o in range(0, size, tile)]


def tiled_matmul(emit, a: Tensor, b: Tensor, kw: dict[str, Any], args: list[Any]) -> Tensor | None:
    """`a @ b` as cube tiles, or None when the cube tiles do not split it (no tile shapes set,
    dynamic dims, or operands within one tile). `emit(op, args, kwargs, hint)` records a tensor op."""
    tiles = cube_tiles()
    if tiles is None:
        return None
    try:  # the whole product's type: checks the operands and gives the result dtype
        out_dtype = create_op_call(T.matmul, args, kw).type.dtype
    except OpError as e:
        raise FrontendError(str(e).removeprefix("Error: "), user_span()) from None
    return _tiled(emit, a, b, kw, args, out_dtype, tiles)


def _tiled(emit, a: Tensor, b: Tensor, kw: dict[str, Any], args: list[Any], out_dtype: DataType,
           tiles: tuple[int, int, int], valid_rows: Any = None, store: Any = None) -> Tensor | None:
    """The static split; `valid_rows`: a's rows that hold data (a clipped last row block); `store(i,
    mi, j, nj, tile)`: where each output tile goes (then nothing is returned)."""
    a_t, b_t = kw["a_trans"], kw["b_trans"]
    if len(a.shape) != 2 or len(b.shape) != 2:
        return None
    dims = [simplify(d) for d in (*a.shape, *b.shape)]
    m, k = (dims[1], dims[0]) if a_t else (dims[0], dims[1])
    n = dims[2] if b_t else dims[3]
    if not (isinstance(k, int) and isinstance(n, int)):
        return None
    tm, tk, tn = tiles
    if not isinstance(m, int):  # a dynamic row count: a run-time loop over row blocks of tm
        return None if a_t else _row_blocks(emit, a, b, kw, args, out_dtype, m, tiles)
    if m <= tm and k <= tk and n <= tn:
        return None
    acc_dt = DataType.FP32 if a.dtype.is_float else DataType.INT32

    def a_piece(i: int, mi: int, kk: int, ki: int) -> Tensor:
        if valid_rows is not None:  # (pieces of a clipped block keep its valid rows)
            from .ops import view
            from .symbolic import sym_max, sym_min

            return view(a, [mi, ki], [i, kk], valid_shape=[sym_max(0, sym_min(mi, valid_rows - i)), ki])
        return a[kk:kk + ki, i:i + mi] if a_t else a[i:i + mi, kk:kk + ki]

    def b_piece(kk: int, ki: int, j: int, nj: int) -> Tensor:
        return b[j:j + nj, kk:kk + ki] if b_t else b[kk:kk + ki, j:j + nj]

    def chain(i: int, mi: int, j: int, nj: int) -> Tensor:
        acc = None
        for kk, ki in _pieces(k, tk):
            args = [a_piece(i, mi, kk, ki)._value(), b_piece(kk, ki, j, nj)._value()]
            flags = {"a_trans": a_t, "b_trans": b_t}
            acc = (emit(T.matmul, args, {**flags, "out_dtype": acc_dt}, "matmul") if acc is None
                   else emit(T.matmul_acc, [acc._value(), *args], flags, "matmul_acc"))
        if acc.dtype is not out_dtype:
            acc = emit(T.cast, [acc._value()], {"target_type": out_dtype}, "matmul")
        return acc

    rows, cols = _pieces(m, tm), _pieces(n, tn)
    if store is not None:  # each output tile goes straight to its place (a clipped row block)
        for i, mi in rows:
            for j, nj in cols:
                store(i, mi, j, nj, chain(i, mi, j, nj))
        return None
    if len(rows) == 1 and len(cols) == 1:
        return chain(0, m, 0, n)
    from .ops import assemble, create_tensor

    out = create_tensor([m, n], out_dtype)
    for i, mi in rows:
        for j, nj in cols:
            assemble(chain(i, mi, j, nj), [i, j], out)
    return out


def _row_blocks(emit, a: Tensor, b: Tensor, kw: dict[str, Any], args: list[Any], out_dtype: DataType, m: Any,
                tiles: tuple[int, int, int]) -> Tensor:
    """`a @ b` with a dynamic row count: a `pypto.loop` over blocks of mL1 rows (one task each; the
    last block's rows clipped to the tensor), each block split over K and N as a static product."""
    from .control import loop
    from .ops import create_tensor, view
    from .symbolic import ceildiv, sym_min

    tm, k = tiles[0], a.shape[1]
    out = create_tensor([m, b.shape[0] if kw["b_trans"] else b.shape[1]], out_dtype)
    n = out.shape[1]
    for i in loop(0, ceildiv(m, tm), name="matmul_rows"):
        valid = sym_min(tm, m - i * tm)
        rows = view(a, [tm, k], [i * tm, 0], valid_shape=[valid, k])

        def store(r: int, mr: int, j: int, nj: int, tile: Tensor, i=i) -> None:
            out[i * tm + r:i * tm + r + mr, j:j + nj] = tile  # (clipped to the tensor: the valid rows)

        if isinstance(k, int) and (k > tiles[1] or n > tiles[2]):
            _tiled(emit, rows, b, kw, [rows._value(), args[1]], out_dtype, tiles, valid_rows=valid, store=store)
        else:  # (the block is one tile)
            store(0, tm, 0, n, emit(T.matmul, [rows._value(), args[1]], kw, "matmul"))
    return out
