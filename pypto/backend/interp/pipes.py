"""Cross-core pipes on the interpreter (`pto.tpush` / `pto.tpop`, pypto/ops/cross_core.py).

A Group call is a grid whose blocks run at once on threads (tasks.py): block 0 is the cube (AIC),
blocks 1.. the vector lanes. The grid owns one `Pipes`: a FIFO per (direction, pipe id, lane),
unbounded (a push never waits). A pop waits for its tile; when every block still running is waiting
too (or has finished), no push can come, and the pop fails naming the pipe instead of hanging.

Split (pto-isa TileSplitAxis): with two vector lanes a cube push with split 1 (up-down) / 2
(left-right) gives each lane its half of the rows / columns, and the cube's pop joins the lanes'
halves; split 0 gives each lane the whole tile, and the cube's pop takes lane 0's (the lanes agree).
With one vector lane the whole tile travels.
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from .errors import InterpError

_WAIT_LIMIT_S = 120.0  # (a safety net: a real deadlock is found at once, see Pipes.wait)


class PipeError(InterpError):
    def __init__(self, message: str, secondary: bool = False):
        super().__init__(message)
        self.secondary = secondary  # caused by another block's failure (that error is the one to report)


class _Entry:
    __slots__ = ("arr", "vr", "vc")

    def __init__(self, arr: np.ndarray, vr: int, vc: int):
        self.arr, self.vr, self.vc = arr, vr, vc


class Pipes:
    def __init__(self, nblocks: int):
        self.cv = threading.Condition()
        self.alive = nblocks
        self.waiting: set[int] = set()
        self.failed: str | None = None
        self.q: dict[tuple[str, int, int], deque] = {}

    def done(self, failed: bool) -> None:
        with self.cv:
            self.alive -= 1
            if failed and self.failed is None:
                self.failed = "another block of the group failed"
            self.cv.notify_all()

    def _depths(self) -> str:
        return ", ".join(f"{d}[id {i}, lane {ln}]: {len(v)}" for (d, i, ln), v in sorted(self.q.items())) or "all empty"

    def wait(self, keys: list[tuple[str, int, int]], what: str) -> list[_Entry]:
        me = threading.get_ident()
        start = time.monotonic()
        with self.cv:
            while not all(self.q.get(k) for k in keys):
                if self.failed is not None:
                    self.waiting.discard(me)
                    raise PipeError(f"{what}: stopped waiting ({self.failed})", secondary=True)
                # `waiting`: blocks that wait with nothing pushed since (a push clears it)
                if len(self.waiting - {me}) + 1 >= self.alive:
                    self.failed = f"{what} could not get its tile"
                    self.cv.notify_all()
                    raise PipeError(f"{what} waits for a tile that no block will push: every other block of the "
                                    f"group has finished or is waiting too (pipe depths: {self._depths()})")
                if time.monotonic() - start >= _WAIT_LIMIT_S:
                    self.failed = f"{what} timed out"
                    self.cv.notify_all()
                    raise PipeError(f"{what}: no tile after {_WAIT_LIMIT_S:.0f} s (pipe depths: {self._depths()})")
                self.waiting.add(me)
                self.cv.wait(timeout=1.0)
            self.waiting.discard(me)
            return [self.q[k].popleft() for k in keys]

    def put(self, key: tuple[str, int, int], e: _Entry) -> None:
        with self.cv:
            self.q.setdefault(key, deque()).append(e)
            self.waiting.clear()
            self.cv.notify_all()


def _halves(e: _Entry, axis: int, what: str) -> list[_Entry]:
    n = e.arr.shape[axis]
    if n % 2:
        raise PipeError(f"{what}: split {axis + 1} halves {'rows' if axis == 0 else 'columns'}, but the tile has {n}")
    h = n // 2
    out = []
    for lane in (0, 1):
        part = e.arr[lane * h:(lane + 1) * h] if axis == 0 else e.arr[:, lane * h:(lane + 1) * h]
        v = min(max((e.vr if axis == 0 else e.vc) - lane * h, 0), h)
        out.append(_Entry(part.copy(), v, e.vc) if axis == 0 else _Entry(part.copy(), e.vr, v))
    return out


def _side(direction: str, push: bool) -> str:
    return "cube" if (direction == "c2v") == push else "vector"


def transfer(pipes: Pipes | None, block: int, nblocks: int, name: str, direction: str, pipe_id: int, split: int,
             tile, push: bool) -> None:
    """Run one pipe op of block `block` on `tile` (an interp Tile: `.arr`, `.vr`, `.vc`)."""
    what = f"{name} (pipe id {pipe_id})"
    if pipes is None or nblocks < 2:
        raise PipeError(f"{what}: a pipe op outside a Group function (the pipe has no peer); call the cube and "
                        "vector functions from a pl.FunctionType.Group function")
    side = _side(direction, push)
    if (block == 0) != (side == "cube"):
        raise PipeError(f"{what} runs on the {side} side, but block {block} is "
                        f"{'the cube' if block == 0 else 'a vector lane'}")
    lanes, lane = nblocks - 1, max(block - 1, 0)
    if push:
        e = _Entry(tile.arr.copy(), tile.vr, tile.vc)
        if direction == "v2c":
            pipes.put((direction, pipe_id, lane), e)
        elif split == 0 or lanes == 1:
            for ln in range(lanes):
                pipes.put((direction, pipe_id, ln), _Entry(e.arr.copy(), e.vr, e.vc))
        else:
            for ln, part in enumerate(_halves(e, split - 1, what)):
                pipes.put((direction, pipe_id, ln), part)
        return
    if direction == "c2v":
        what = f"{what} on vector lane {lane}"
        (e,) = pipes.wait([(direction, pipe_id, lane)], what)
    elif lanes == 1 or split == 0:
        got = pipes.wait([(direction, pipe_id, ln) for ln in range(lanes)], what)
        e = got[0]
    else:
        a, b = pipes.wait([(direction, pipe_id, 0), (direction, pipe_id, 1)], what)
        e = _Entry(np.concatenate([a.arr, b.arr], axis=split - 1), a.vr + b.vr if split == 1 else a.vr,
                   a.vc + b.vc if split == 2 else a.vc)
    if e.arr.shape != tile.arr.shape or e.arr.dtype != tile.arr.dtype:
        raise PipeError(f"{what}: the pipe holds a {list(e.arr.shape)} {e.arr.dtype} tile, the pop is declared "
                        f"{list(tile.arr.shape)} {tile.arr.dtype}")
    tile.arr[...] = e.arr


__all__ = ["PipeError", "Pipes", "transfer"]
