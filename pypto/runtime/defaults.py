"""`default_runtime`: the shared runtimes compiled programs run on when no `Runtime` is passed.

There is one per (num_workers, mode), but not forever: each owns `num_workers` threads, so a sweep
over worker counts would otherwise keep them all (1..64 workers: 2,080 idle threads). The cache
keeps the most recently used few: at most `MAX_RUNTIMES`, with at most `worker_budget()` worker
threads in all (the newest is kept whatever its size). An evicted runtime frees its native runtime as soon as no run
holds it: a run in progress on another thread finishes first and frees it when it ends. A caller
still holding an evicted runtime can keep using it; each of its runs then makes the native runtime
again and frees it after, so it holds no idle threads.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from pypto.runtime.abi import SchedMode
from pypto.runtime.runtime import Runtime

MAX_RUNTIMES = 4
MAX_WORKERS = 128  # the worker budget, unless twice config.num_workers is more (a machine with many cores)

_CACHE: OrderedDict[tuple[int, SchedMode], Runtime] = OrderedDict()
_LOCK = threading.Lock()


def default_runtime(num_workers: int | None = None, mode: SchedMode | str = "fifo") -> Runtime:
    """The shared runtime for (num_workers, mode), created on first use (`None`: config.num_workers).

    If this thread has a session open on the shared one, a private runtime is returned instead: the
    shared one stays busy until that session ends, so a run on it from here would wait forever.
    """
    from pypto.config import config

    key = (config.num_workers if num_workers is None else int(num_workers), SchedMode.parse(mode))
    with _LOCK:
        rt = _CACHE.get(key)
        if rt is None or rt.closed:
            rt = _CACHE[key] = Runtime(key[0], key[1])
        _CACHE.move_to_end(key)
        evicted = _evict()
    for old in evicted:
        old._retire_when_idle()
    if rt._run.held_here():
        rt = Runtime(key[0], key[1])
        rt._retire = True  # its threads live only while it runs (it is garbage collected after anyway)
    return rt


def worker_budget() -> int:
    """Worker threads the cached runtimes may hold in all (room for the default and a few others)."""
    from pypto.config import config

    return max(MAX_WORKERS, 2 * config.num_workers)


def _evict() -> list[Runtime]:
    out = []
    budget = worker_budget()
    while len(_CACHE) > 1 and (len(_CACHE) > MAX_RUNTIMES
                               or sum(r.num_workers for r in _CACHE.values()) > budget):
        out.append(_CACHE.popitem(last=False)[1])
    return out


def _after_fork_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # a thread that held it does not exist in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ["MAX_RUNTIMES", "MAX_WORKERS", "default_runtime", "worker_budget"]
