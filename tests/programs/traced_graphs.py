"""Task graphs with a known dependency shape, for the trace tests (tests/runtime)."""

from __future__ import annotations

import numpy as np

from pypto.runtime import TaskGraph


def spin_rows_graph(rows: int = 4, depth: int = 3) -> TaskGraph:
    """Independent chains of slow tasks, one per row, joined by a final reader of everything."""
    x = np.zeros((rows, 16))
    g = TaskGraph()
    for _ in range(depth):
        for i in range(rows):
            g.add("spin", 200_000, x[i], kinds=["i64", "inout"])
    g.add("reduce_sum", x, x[0, :1].copy())
    return g


def gated_rows_run(rt, rows: int = 4, depth: int = 3):
    """The same shape through a session, behind a held gate: every edge exists whatever the OS does
    with the submitting thread (on a small machine busy workers may delay it past whole tasks)."""
    x = np.zeros((rows, 16))
    with rt.session(trace=True) as s:
        gate = s.submit("noop", x, kinds=["inout"], hold=True)
        for _ in range(depth):
            for i in range(rows):
                s.submit("spin", 200_000, x[i], kinds=["i64", "inout"])
        s.submit("reduce_sum", x, x[0, :1].copy())
        s.release(gate)
        result = s.wait()
    return result
