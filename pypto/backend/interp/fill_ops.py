"""Instructions that make a tile from its coordinates (pto.ttri; pto.tci is in tile_ops): no tile operands, so the
generic reference path (operands cut from source tiles) does not apply; the registry reference
computes the destination's valid region from the scalar operand and the attributes. Also the partial
binary ops (pto.tpart*), whose second operand counts only over its own valid region."""

from __future__ import annotations

import numpy as np

from pypto.ops.registry import block_ops
from pypto.pto.model import Op

from .errors import InterpError
from .values import DTYPES, Tile, cast_array


def _int_scalar(ins: list, short: str) -> int:
    if len(ins) != 1 or isinstance(ins[0], Tile) or not np.issubdtype(np.asarray(ins[0]).dtype, np.integer):
        raise InterpError(f"pto.{short} takes one integer scalar operand")
    return int(ins[0])


def ttri(op: Op, ins: list, dst: Tile) -> None:
    diag = _int_scalar(ins, "ttri")
    res = block_ops.tri.reference(diag, (dst.vr, dst.vc), dtype=DTYPES[dst.buf.dtype],
                                  upper=bool(op.attrs.get("upper", 0)))
    dst.arr[: dst.vr, : dst.vc] = cast_array(res, dst.arr.dtype)


def tpart(op: Op, ins: list, dst: Tile) -> None:
    """pto.tpart*: over a's valid region, the op where b is valid too, a elsewhere (dst: a's valid region)."""
    short = op.name.split(".", 1)[1]
    if len(ins) != 2 or not all(isinstance(t, Tile) for t in ins):
        raise InterpError(f"pto.{short} takes two tiles")
    a, b = ins
    vr, vc = a.vr, a.vc
    bb = np.zeros((vr, vc), dtype=b.arr.dtype)
    br, bc = min(b.vr, vr, b.rows), min(b.vc, vc, b.cols)
    bb[:br, :bc] = b.arr[:br, :bc]
    res = getattr(block_ops, "part_" + short[5:]).reference(a.arr[:vr, :vc], bb, valid_b=(br, bc))
    dst.vr, dst.vc = vr, vc
    dst.arr[:vr, :vc] = cast_array(res, dst.arr.dtype)


def trandom(op: Op, ins: list, dst: Tile) -> None:
    """pto.trandom: the whole tile from the six seed scalars (ops/rng.py's Philox convention)."""
    if len(ins) != 6 or any(isinstance(v, Tile) for v in ins):
        raise InterpError("pto.trandom takes six scalar operands (key0, key1, c0, c1, c2, c3)")
    res = block_ops.random.reference(*(int(v) for v in ins), (dst.rows, dst.cols), dtype=DTYPES[dst.buf.dtype],
                                     rounds=int(op.attrs.get("rounds", 10)))
    dst.arr[:, :] = res.view(dst.arr.dtype)


HANDLERS = {"trandom": trandom, "ttri": ttri, "tpartadd": tpart, "tpartmul": tpart, "tpartmax": tpart, "tpartmin": tpart}

__all__ = ["HANDLERS"]
