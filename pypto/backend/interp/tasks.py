"""The task language on the interpreter: `pto.submit` with task operands (reference pl-head §2.5).

Program order satisfies every inferred and explicit edge, so dependencies need nothing here. What
does: a predicate (read when the task is dispatched, i.e. now, after everything before it; false
skips the kernel), spmd grids (the kernel runs once per block with `get_block_idx` = the block),
and grids whose blocks meet at `syncall` (run as threads sharing a barrier). A task id is its
submission number.
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from pypto.pto.model import Op
from pypto.pto.syntax import JOIN_KERNEL, TASK_DIRS

from .errors import InterpError
from .pipes import Pipes

_CMP = {"eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "lt": operator.lt, "ge": operator.ge,
        "le": operator.le}

_block = threading.local()  # the executing block: idx, num, barrier


def block_idx() -> int:
    return getattr(_block, "idx", 0)


def block_num() -> int:
    return getattr(_block, "num", 1)


def syncall() -> None:
    bar = getattr(_block, "barrier", None)
    if bar is not None:
        try:
            bar.wait(timeout=60)
        except threading.BrokenBarrierError:
            raise InterpError("syncall: the blocks of the spmd grid did not all arrive (a block failed or "
                              "skipped the barrier)") from None


def split_operands(op: Op) -> tuple[list, list[str], dict[str, list]]:
    """(kernel operands, their dirs, task operands by dir)."""
    dirs = op.attrs.get("dirs", [])
    kargs, kdirs, task = [], [], {d: [] for d in TASK_DIRS}
    for v, d in zip(op.operands, dirs):
        if d in TASK_DIRS:
            task[d].append(v)
        else:
            kargs.append(v)
            kdirs.append(d)
    return kargs, kdirs, task


def run_task(ex, op: Op, run_one) -> None:
    """Run a submit with task options; `run_one(args)` runs the kernel once."""
    _, _, task = split_operands(op)
    tid = ex.next_task_id
    ex.next_task_id += 1
    if op.results:
        from .values import make_scalar

        ex.env[op.results[0]] = make_scalar(tid, "i64")
    if op.attrs.get("callee").name == JOIN_KERNEL:
        return
    if task["pred"]:
        t = ex.tensor(task["pred"][0])
        idx = tuple(int(i) for i in ex.vals(task["pred_idx"]))
        try:
            elem = t[idx].item()
        except IndexError:
            raise InterpError(f"predicate element {list(idx)} is outside a tensor of shape {list(t.shape)}") from None
        if not _CMP[op.attrs.get("pred_cmp", "ne")](elem, op.attrs.get("pred_value", 0)):
            return
    n = int(ex.vals(task["core_num"])[0]) if task["core_num"] else 1
    if n < 1:
        raise InterpError(f"spmd core_num must be > 0, got {n}")
    if not op.attrs.get("sync") or n == 1:
        for b in range(n):
            _run_block(run_one, b, n, None)
        return
    bar = threading.Barrier(n)
    bar.pipes = Pipes(n)  # the grid's cross-core pipes (a Group call: pipes.py)
    errors: list[BaseException] = []

    def body(b: int) -> None:
        try:
            _run_block(run_one, b, n, bar)
        except BaseException as e:  # noqa: BLE001 - reported below, after every block stopped
            errors.append(e)
            bar.abort()

    threads = [threading.Thread(target=body, args=(b,), daemon=True) for b in range(1, n)]
    for th in threads:
        th.start()
    body(0)
    for th in threads:
        th.join()
    if errors:
        real = [e for e in errors if not (isinstance(e, InterpError) and "did not all arrive" in str(e))
                and not getattr(e, "secondary", False)]
        raise (real or errors)[0]


def _run_block(run_one, b: int, n: int, bar) -> None:
    _block.idx, _block.num, _block.barrier = b, n, bar
    ok = False
    try:
        run_one()
        ok = True
    finally:
        _block.idx, _block.num, _block.barrier = 0, 1, None
        if bar is not None:
            bar.pipes.done(failed=not ok)  # a pop waiting on this block must not wait forever


def pipes() -> Pipes | None:
    """The cross-core pipes of the executing block's grid (None outside a grid that runs at once)."""
    bar = getattr(_block, "barrier", None)
    return getattr(bar, "pipes", None)


def fill(a: np.ndarray, init) -> np.ndarray:
    if init is not None:
        a[...] = init
    return a


__all__ = ["block_idx", "block_num", "pipes", "run_task", "split_operands", "syncall"]
