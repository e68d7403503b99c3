"""pto.tbatchmatmul(.acc): the batched matmul on 2-D tiles (rows = the product of the leading dims).
The batch split is recovered from the static shapes as the C++ does (pto/matmul.hpp): K = lhs cols,
rhs batches = rhs rows / K, M = dst rows / that; then the registry reference runs on 3-D views."""

from __future__ import annotations

import numpy as np

from pypto.ops.registry import block_ops
from pypto.pto.model import Op

from .errors import InterpError
from .values import Tile, cast_array


def _split(short: str, a: Tile, b: Tile, dst: Tile) -> tuple[int, int, int]:
    k = a.cols
    if b.rows % k:
        raise InterpError(f"pto.{short}: rhs rows {b.rows} are not a multiple of lhs cols {k}")
    nb = b.rows // k
    m = dst.rows // nb if nb > 1 else dst.rows
    if dst.rows % nb or a.rows % m or (a.rows // m not in (1, nb) and nb != 1):
        raise InterpError(f"pto.{short}: tiles [{a.rows}, {a.cols}] @ [{b.rows}, {b.cols}] -> "
                          f"[{dst.rows}, {dst.cols}] do not split into batches")
    return nb, m, k


def tbatchmatmul(op: Op, ins: list, dst: Tile) -> None:
    short = op.name.split(".", 1)[1]
    if not all(isinstance(t, Tile) for t in ins) or len(ins) not in ((3, 2) if short.endswith(".acc") else (2,)):
        raise InterpError(f"pto.{short}: expected tile operands ([acc,] lhs, rhs), got {len(ins)}")
    acc = (ins[0] if len(ins) == 3 else dst) if short.endswith(".acc") else None
    a, b = ins[-2], ins[-1]
    nb, m, k = _split(short, a, b, dst)
    if nb == 1:  # one rhs matrix: the flattened lhs times it
        a3, b3 = a.arr[None], b.arr[None]
    else:
        a3 = a.arr.reshape(a.rows // m, m, k)
        b3 = b.arr.reshape(nb, k, b.cols)
    res = block_ops.batch_matmul.reference(a3, b3).reshape(dst.rows, dst.cols)
    if acc is not None:
        res = res + acc.arr.astype(res.dtype)
    dst.vr, dst.vc = dst.rows, dst.cols
    dst.arr[:, :] = cast_array(res, dst.arr.dtype)


def batched_trans(ins: list, dst: Tile) -> bool:
    """pto.ttrans of a 3-D tile (src rows != dst cols): each of the nb = src rows / dst cols matrices
    transposed, whole tiles (as pto/memory.hpp TTRANS). False: a plain 2-D transpose."""
    src = ins[0]
    if not isinstance(src, Tile) or src.rows == dst.cols:
        return False
    k, m = dst.cols, src.cols
    if src.rows % k or dst.rows != src.rows // k * m:
        raise InterpError(f"pto.ttrans: tiles [{src.rows}, {src.cols}] -> [{dst.rows}, {dst.cols}] do not split "
                          "into batches")
    res = block_ops.transpose_view.reference(src.arr.reshape(src.rows // k, k, m)).reshape(dst.rows, dst.cols)
    dst.vr, dst.vc = dst.rows, dst.cols
    dst.arr[:, :] = cast_array(res, dst.arr.dtype)
    return True


def texpandclone(op: Op, ins: list, dst: Tile) -> None:
    """pto.texpandclone: src broadcast to [d0, d1, d2, d3] (as pto/memory.hpp TEXPANDCLONE)."""
    if len(ins) != 1 or not isinstance(ins[0], Tile):
        raise InterpError("pto.texpandclone takes one tile")
    d1, d2, mask = (int(op.attrs.get(k, d)) for k, d in (("d1", 1), ("d2", 1), ("bmask", 0)))
    dims = (dst.rows // (d1 * d2), d1, d2, dst.cols)
    sdims = tuple(1 if mask >> i & 1 else d for i, d in enumerate(dims))
    src = ins[0]
    if src.rows * src.cols != int(np.prod(sdims)):
        raise InterpError(f"pto.texpandclone: tile [{src.rows}, {src.cols}] is not the source {list(sdims)}")
    res = np.broadcast_to(src.arr.reshape(sdims), dims).reshape(dst.rows, dst.cols)
    dst.vr, dst.vc = dst.rows, dst.cols
    dst.arr[:, :] = cast_array(res, dst.arr.dtype)


def tsetvalid(op: Op, ins: list, dst: Tile) -> None:
    """pto.tsetvalid: the whole tile copied, the valid extents set (as pto/memory.hpp TSETVALID)."""
    if len(ins) != 3 or not isinstance(ins[0], Tile) or isinstance(ins[1], Tile) or isinstance(ins[2], Tile):
        raise InterpError("pto.tsetvalid takes a tile, a row count and a column count")
    src, r, c = ins[0], int(ins[1]), int(ins[2])
    if not (0 <= r <= dst.rows and 0 <= c <= dst.cols):
        raise InterpError(f"pto.tsetvalid: valid extents [{r}, {c}] outside the tile [{dst.rows}, {dst.cols}]")
    if dst.arr is not src.arr:
        dst.arr[:, :] = cast_array(src.arr, dst.arr.dtype)
    dst.vr, dst.vc = r, c


HANDLERS = {"tsetvalid": tsetvalid, "tbatchmatmul": tbatchmatmul, "tbatchmatmul.acc": tbatchmatmul, "texpandclone": texpandclone}
