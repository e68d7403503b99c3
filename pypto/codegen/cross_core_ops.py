"""Pipe ops (pypto/ops/cross_core.py) -> `pto.tpush` / `pto.tpop`.

    pto.tpush ins(%tile) {dir = "c2v" | "v2c", split, id}     put a copy of the tile into the pipe
    pto.tpop  outs(%tile) {dir, split, id}                    wait for the pipe's next tile, copy it in

`dir` is the direction of the pipe (c2v: cube -> vector). Which block plays which role comes from the
block index at run time (block 0 the cube, blocks 1.. the vector lanes: pypto/ir/groups.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.types import TileType
from pypto.ops.cross_core import POPS, PUSHES
from pypto.pto.model import Op

if TYPE_CHECKING:
    from .kernel import KernelCodegen


def _attrs(c: E.Call, direction: str) -> dict:
    return {"dir": direction, "split": int(c.kwarg("split", 0)), "id": int(c.kwarg("id", 0))}


def _push(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    tile = c.args[0]
    assert isinstance(tile, E.Var) and isinstance(tile.type, TileType)
    cg.emit(Op("pto.tpush", ins=[cg.tile(tile)], attrs=_attrs(c, PUSHES[c.op])))


def _pop(cg: KernelCodegen, c: E.Call, result: E.Var | None) -> None:
    if result is None or not isinstance(result.type, TileType):
        raise CompileError(f"{c.op.name} must be assigned to a tile variable", c.span)
    cg.emit(Op("pto.tpop", outs=[cg.tile(result, True)], attrs=_attrs(c, POPS[c.op])))


HANDLERS = {**{op: _push for op in PUSHES}, **{op: _pop for op in POPS}}

__all__ = ["HANDLERS"]
