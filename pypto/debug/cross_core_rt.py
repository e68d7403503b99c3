"""Cross-core queues for the code from `torch_codegen`: tpush / tpop between cube and vector kernels.

On the device a mixed kernel runs as one cube (AIC) task and one or two vector (AIV) lanes that
hand tiles to each other through hardware pipes: `tpush_to_aiv` / `tpop_from_aic` (cube to
vector) and `tpush_to_aic` / `tpop_from_aiv` (vector to cube). In the generated PyTorch code those
ops become calls on one `CrossCoreRuntime` (`_cross_core_rt`), the kernels of a group run in
threads (`launch`, then `join`), and a pop blocks until its push arrived.

The split mode says how a tile is shared between the two vector lanes (pto-isa's TileSplitAxis):
0 none (every lane gets the whole tile), 1 UP_DOWN (lane 0 the top half of the rows, lane 1 the
bottom), 2 LEFT_RIGHT (the column halves). A cube pop under a split gathers the lanes' halves.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import torch

from pypto.errors import InvalidState, InvalidValue, TimedOut

SPLIT_NONE, SPLIT_UP_DOWN, SPLIT_LEFT_RIGHT = 0, 1, 2


def split_code(split: Any) -> int:
    """A split mode (int, enum member or name such as "UP_DOWN") as its TileSplitAxis code."""
    if split is None:
        return SPLIT_NONE
    if isinstance(split, bool):
        raise InvalidValue(f"invalid split mode {split!r}")
    if isinstance(split, int):
        code = split
    else:
        text = str(getattr(split, "name", split)).split(".")[-1].upper().replace("-", "_")
        table = {"NONE": 0, "NOSPLIT": 0, "NO_SPLIT": 0, "UP_DOWN": 1, "UPDOWN": 1, "LEFT_RIGHT": 2,
                 "LEFTRIGHT": 2}
        if text not in table:
            raise InvalidValue(f"invalid split mode {split!r}: expected NONE, UP_DOWN or LEFT_RIGHT")
        code = table[text]
    if code not in (0, 1, 2):
        raise InvalidValue(f"invalid split mode {split!r}: expected 0 (none), 1 (UP_DOWN) or 2 (LEFT_RIGHT)")
    return code


def _halves(tile: torch.Tensor, split: int, lane_stride: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Lane 0's and lane 1's parts: the halves, or the first `lane_stride` rows (columns) and the rest."""
    axis = 0 if split == SPLIT_UP_DOWN else 1
    n = tile.shape[axis]
    if lane_stride is None:
        if n % 2:
            raise InvalidValue(f"a split tile needs an even extent along axis {axis}, got shape {list(tile.shape)}")
        lane_stride = n // 2
    if not 0 < lane_stride < n:
        raise InvalidValue(f"lane_stride {lane_stride} does not cut axis {axis} of extent {n} in two")
    first, second = torch.split(tile, [lane_stride, n - lane_stride], dim=axis)
    return first.clone(), second.clone()


class _Handle:
    def __init__(self, thread: threading.Thread, box: dict):
        self._thread, self._box = thread, box

    def result(self) -> Any:
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        return self._box.get("value")


class CrossCoreRuntime:
    """Blocking FIFO channels between the cube kernel and the vector lanes of a group."""

    def __init__(self, timeout: float = 30.0):
        self.timeout = timeout
        self._cond = threading.Condition()
        self._queues: dict[tuple[str, int], deque] = {}
        self._local = threading.local()
        self._running: list[_Handle] = []

    # -- lanes and threads

    def lane(self) -> int:
        """The vector lane this thread runs (0 outside a dual-lane launch): `get_subblock_idx`."""
        return getattr(self._local, "lane", 0)

    def launch(self, fn: Callable[..., Any], args: tuple, lanes: int = 1) -> _Handle:
        """Start `fn(*args)` in threads, one per vector lane; the handle's result is lane 0's."""
        handles = []
        for lane in range(lanes):
            box: dict = {}

            def body(lane=lane, box=box):
                self._local.lane = lane
                try:
                    box["value"] = fn(*args)
                except BaseException as e:  # re-raised by join() in the launching thread
                    box["error"] = e
                    with self._cond:
                        self._cond.notify_all()

            t = threading.Thread(target=body, name=f"{getattr(fn, '__name__', 'kernel')}[lane {lane}]", daemon=True)
            t.start()
            handles.append(_Handle(t, box))
        self._running.extend(handles)
        return handles[0]

    def join(self) -> None:
        """Wait for every launched kernel; re-raise the first failure."""
        running, self._running = self._running, []
        errors = []
        for h in running:
            try:
                h.result()
            except BaseException as e:
                errors.append(e)
        if errors:
            raise errors[0]
        left = {k: len(q) for k, q in self._queues.items() if q}
        self._queues.clear()
        if left:
            raise InvalidState(f"cross-core group ended with tiles pushed but never popped: {left}")

    # -- channels

    def _put(self, key: tuple[str, int, int], tile: Any) -> None:
        with self._cond:
            self._queues.setdefault(key, deque()).append(tile)
            self._cond.notify_all()

    def _get(self, key: tuple[str, int, int], what: str) -> Any:
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._queues.get(key)), timeout=self.timeout):
                depths = {f"{d}[lane {lane}, id {i}]": len(q) for (d, lane, i), q in self._queues.items()}
                raise TimedOut(f"{what}: nothing was pushed within {self.timeout}s (queue depths {depths})")
            return self._queues[key].popleft()

    # one FIFO per (direction, lane, pipe id)

    def push_to_aiv(self, tile: torch.Tensor, split: Any = 0, lane_stride: int | None = None, id: int = 0) -> None:
        """Cube -> vector: the whole tile to lane 0 (no split), or its halves to lanes 0 and 1."""
        code = split_code(split)
        if code == SPLIT_NONE:
            self._put(("aiv", 0, id), tile.clone())
            return
        for lane, half in enumerate(_halves(tile, code, lane_stride)):
            self._put(("aiv", lane, id), half)

    def pop_from_aic(self, split: Any = 0, lane_stride: int | None = None, id: int = 0) -> torch.Tensor:
        """Vector lane: the next tile (or half tile) the cube pushed to this lane."""
        split_code(split)
        lane = self.lane()
        return self._get(("aiv", lane, id), f"tpop_from_aic on lane {lane}")

    def push_to_aic(self, tile: torch.Tensor, split: Any = 0, id: int = 0) -> None:
        """Vector lane -> cube: this lane's tile (under a split, its half of the cube's tile)."""
        split_code(split)
        self._put(("aic", self.lane(), id), tile.clone())

    def pop_from_aiv(self, split: Any = 0, id: int = 0) -> torch.Tensor:
        """Cube: the next tile from lane 0, or the two lanes' halves joined (split)."""
        code = split_code(split)
        if code == SPLIT_NONE:
            return self._get(("aic", 0, id), "tpop_from_aiv")
        parts = [self._get(("aic", lane, id), f"tpop_from_aiv (lane {lane})") for lane in (0, 1)]
        return torch.cat(parts, dim=0 if code == SPLIT_UP_DOWN else 1)


__all__ = ["CrossCoreRuntime", "SPLIT_LEFT_RIGHT", "SPLIT_NONE", "SPLIT_UP_DOWN", "split_code"]
