"""Repeated runs reuse task storage: resident memory and the task pool stay flat."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from pypto.runtime import Runtime, TaskGraph, TaskGraphError

pytestmark = pytest.mark.native


def mixed_graph(n: int) -> tuple[TaskGraph, np.ndarray]:
    x = np.zeros((64, 64))
    acc = np.zeros(8)
    g = TaskGraph()
    for k in range(n):
        i, j = (k // 8) % 8, k % 8
        tile = x[i * 8:(i + 1) * 8, j * 8:(j + 1) * 8]
        if k % 4 == 0:
            g.add("scale_add", tile, 0.5, 1.0)
        elif k % 4 == 1:
            g.add("reduce_sum", tile, acc[i:i + 1])
        elif k % 4 == 2:
            g.add("copy", tile, x[j * 8:(j + 1) * 8, i * 8:(i + 1) * 8])
        else:
            g.add("noop", x[i], kinds=["in"])
    return g, x


def test_repeated_graph_runs_do_not_grow_memory(rss_bytes):
    rt = Runtime(num_workers=2, mode="locality")
    g, x = mixed_graph(2000)
    for k in range(25):  # (warm-up long enough for the allocator's arenas to settle on a loaded machine)
        rt.run_graph(g, trace=k % 2 == 0)
    gc.collect()
    before = rss_bytes()
    for k in range(50):
        r = rt.run_graph(g, trace=k % 2 == 0)
        assert r.stats.tasks == 2000
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 4 << 20, f"resident memory grew by {grown / 2**20:.1f} MiB over 50 runs"
    assert r.stats.pool_slots <= 2048  # slots are reused: never more than the tasks of one run
    rt.close()


def test_deadlock_recovery_does_not_leak_slots():
    rt = Runtime(num_workers=1)
    x = np.zeros(4)
    slots = []
    for _ in range(20):
        try:
            with rt.session() as s:
                s.submit("noop", x, kinds=["out"], hold=True)
                for _ in range(50):
                    s.submit("scale_add", x, 1.0, 1.0)
        except TaskGraphError as e:  # the deadlock is the point
            assert "deadlock" in str(e)
        slots.append(s.result.stats.pool_slots)
    assert len(set(slots)) == 1
    rt.close()
