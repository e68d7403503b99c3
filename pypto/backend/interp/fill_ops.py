"""Instructions that make a tile from its coordinates (pto.ttri; pto.tci is in tile_ops): no tile operands, so the
generic reference path (operands cut from source tiles) does not apply; the registry reference
computes the destination's valid region from the scalar operand and the attributes."""

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


HANDLERS = {"ttri": ttri}

__all__ = ["HANDLERS"]
