"""Cross-core pipes: the tiles a Group's cube (AIC) and vector (AIV) roles hand each other (pl-head §3.8).

    tile.tpush_to_aiv(tile, split, id)     cube -> vector: put a tile into pipe `id` (C2V)
    tile.tpush_to_aic(tile, split, id)     vector -> cube (V2C)
    tile.tpop_from_aic(shape, ...)         vector side: the next tile of C2V pipe `id`, waiting for it
    tile.tpop_from_aiv(shape, ...)         cube side: the next tile of V2C pipe `id`

A pipe is a FIFO per (direction, id, vector lane) shared by the blocks of one Group call, which run
at the same time (pypto/ir/groups.py; backends: interp/pipes.py, cpu glue/pto_pipes.hpp).
`split` (0 none, 1 up-down, 2 left-right) says how a cube tile is cut between two vector lanes and
how their halves are joined; with one vector lane the whole tile travels. A pop that no block can
ever satisfy is an error naming the pipe, never a hang. The ops have no NumPy reference: their
value is another block's push (tests/language/test_cross_core_pipes.py checks them).
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace, PipeType

from .memory import UNIT
from .registry import arg, attr, define
from .traits import ELEMENT
from .typing import OpError, dims, static_dims, tile_result

SPLITS = (0, 1, 2)


def _check(name: str, kw) -> None:
    if kw["split"] not in SPLITS:
        raise OpError(f"{name}: split must be 0 (none), 1 (up-down) or 2 (left-right), got {kw['split']!r}")
    if kw["id"] < 0:
        raise OpError(f"{name}: the pipe id must be >= 0, got {kw['id']}")


def _push_rule(name: str):
    def infer(args, kw):
        from .typing import expect_shaped

        t = expect_shaped(name, args[0], "tile")
        if len(t.shape) != 2:
            raise OpError(f"{name}: pushes a 2-D tile, got rank {len(t.shape)}")
        _check(name, kw)
        return UNIT
    return infer


def _pop_rule(name: str):
    def infer(args, kw):
        shape = static_dims(name, args[0], "shape")
        if len(shape) != 2 or any(s <= 0 for s in shape):
            raise OpError(f"{name}: pops a 2-D tile of positive static shape, got {list(shape)}")
        _check(name, kw)
        if kw["target_memory"] is MemorySpace.DDR:
            raise OpError(f"{name}: a popped tile lives on chip, not in DDR")
        valid = dims(name, args[1], "valid_shape") if len(args) > 1 else None
        return tile_result(shape, kw["dtype"], memory_space=kw["target_memory"], valid_shape=valid)
    return infer


_PIPE = [attr("split", "int", 0), attr("id", "int", 0)]
# (the pipe that moves the data: a push reads its tile like a store, a pop writes its tile like a load)
TPUSH_TO_AIV = define("block.tpush_to_aiv", [arg("tile", "tile"), *_PIPE], _push_rule("tile.tpush_to_aiv"),
                      traits=ELEMENT, pipe=PipeType.MTE3, dsl=("pl.block.tpush_to_aiv",),
                      doc="cube -> vector: push a tile into C2V pipe `id`")
TPUSH_TO_AIC = define("block.tpush_to_aic", [arg("tile", "tile"), *_PIPE], _push_rule("tile.tpush_to_aic"),
                      traits=ELEMENT, pipe=PipeType.MTE3, dsl=("pl.block.tpush_to_aic",),
                      doc="vector -> cube: push a tile into V2C pipe `id`")
_POP = [arg("shape", "shape"), arg("valid_shape", "shape", optional=True), attr("dtype", "dtype"),
        attr("target_memory", "memspace", MemorySpace.Vec), *_PIPE]
TPOP_FROM_AIC = define("block.tpop_from_aic", _POP, _pop_rule("tile.tpop_from_aic"), traits=ELEMENT,
                       pipe=PipeType.MTE2, dsl=("pl.block.tpop_from_aic",),
                       doc="vector side: the next tile of C2V pipe `id` (waits for the cube's push)")
TPOP_FROM_AIV = define("block.tpop_from_aiv", _POP, _pop_rule("tile.tpop_from_aiv"), traits=ELEMENT,
                       pipe=PipeType.MTE2, dsl=("pl.block.tpop_from_aiv",),
                       doc="cube side: the next tile of V2C pipe `id` (waits for the vector lanes' pushes)")

PUSHES = {TPUSH_TO_AIV: "c2v", TPUSH_TO_AIC: "v2c"}
POPS = {TPOP_FROM_AIC: "c2v", TPOP_FROM_AIV: "v2c"}

__all__ = ["POPS", "PUSHES", "SPLITS", "TPOP_FROM_AIC", "TPOP_FROM_AIV", "TPUSH_TO_AIC", "TPUSH_TO_AIV"]
