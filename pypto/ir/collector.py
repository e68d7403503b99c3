"""Pausing Python's cyclic garbage collector while IR is built.

IR nodes are immutable trees: they never form reference cycles, so reference counting frees each
node as soon as it is dropped and the cyclic collector has nothing to find among them. It still
scans them: every few hundred allocations it walks the young objects, and every tenth time all the
objects that survived, which by then include most of the program being compiled. Parsing and the
pass pipeline allocate a few hundred thousand nodes, and those scans cost several percent of the
compile time. `paused_collector()` turns the collector off for such a phase; it is turned back on
(if it was on) when the phase ends, and the next collection then runs as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_collector() -> Iterator[None]:
    if not gc.isenabled():  # already paused (a nested phase) or turned off by the application
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


__all__ = ["paused_collector"]
