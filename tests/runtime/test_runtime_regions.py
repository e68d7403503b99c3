"""Region overlap: the edges the runtime derives, checked against byte sets computed in NumPy.

All tasks are submitted held, so none finishes while the graph is built: the access lists keep
everything they are allowed to keep, and the derived edges can be compared with the conflicts.
Safety: every conflicting pair (overlapping bytes, at least one writer) is ordered by a path of
edges. Precision (for views whose geometry the runtime models exactly): every edge is a conflict.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.native

ROOT_SHAPE = (12, 16)


def byte_mask(v: np.ndarray, root: np.ndarray) -> np.ndarray:
    mask = np.zeros(root.nbytes, dtype=bool)
    if v.size == 0:
        return mask
    idx = np.indices(v.shape).reshape(v.ndim, -1)
    off = v.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    first = off + (idx * np.array(v.strides)[:, None]).sum(axis=0)
    mask[(first[:, None] + np.arange(v.itemsize)).ravel()] = True
    return mask


def exact_view(rng, x):
    """Tiles, rows, columns, row blocks: boxes in one chain, modelled exactly by the runtime."""
    h, w = x.shape
    k = int(rng.integers(0, 4))
    if k == 0:
        r, c = int(rng.integers(0, h - 3)), int(rng.integers(0, w - 4))
        return x[r:r + int(rng.integers(1, 4)), c:c + int(rng.integers(1, 5))]
    if k == 1:
        return x[int(rng.integers(0, h))]
    if k == 2:
        return x[:, int(rng.integers(0, w))]
    r = int(rng.integers(0, h - 2))
    return x[r:r + int(rng.integers(1, 4))]


def any_view(rng, x):
    """Anything: flips, transposes, other dtypes over the same bytes, flat views, empty views,
    every-4th-row views (the runtime may fall back to conservative overlap tests for these)."""
    k = int(rng.integers(0, 8))
    if k < 3:
        return exact_view(rng, x)
    if k == 3:
        return exact_view(rng, x)[::-1].T
    if k == 4:
        f = x.view(np.float32)
        r, c = int(rng.integers(0, 10)), int(rng.integers(0, 28))
        return f[r:r + 2, c:c + int(rng.integers(1, 5))]
    if k == 5:
        flat = x.reshape(-1)
        a = int(rng.integers(0, flat.size - 1))
        return flat[a:a + int(rng.integers(0, 20))]
    if k == 6:
        r = int(rng.integers(0, 4))
        return x[r::4, int(rng.integers(0, 14)):][:, :2]  # every 4th row: tiles cross its blocks
    return x[int(rng.integers(0, 12)), ::-3]


def derive_edges(runtimes, views, kinds):
    rt = runtimes(2, "fifo")
    with rt.session(trace=True) as s:
        ids = [s.submit("noop", v, kinds=[k], hold=True) for v, k in zip(views, kinds)]
        for t in ids:
            s.release(t)
        result = s.wait()
    return result.trace.edges


def conflicts(views, kinds, root):
    m = np.stack([byte_mask(v, root) for v in views]).astype(np.int32)
    overlap = (m @ m.T) > 0
    writes = np.array([k != "in" for k in kinds])
    return overlap & (writes[:, None] | writes[None, :])


def reachability(n, edges):
    reach = [0] * n
    preds = [[] for _ in range(n)]
    for a, b in edges.tolist():
        assert a < b, "edges must point forward"
        preds[b].append(a)
    for b in range(n):
        for a in preds[b]:
            reach[b] |= reach[a] | (1 << a)
    return reach


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("exact", [True, False])
def test_edges_order_every_conflict(runtimes, seed, exact):
    rng = np.random.default_rng(seed)
    x = np.zeros(ROOT_SHAPE)
    n = 150
    make = exact_view if exact else any_view
    views = [make(rng, x) for _ in range(n)]
    kinds = [str(rng.choice(["in", "in", "out", "inout"])) for _ in range(n)]
    edges = derive_edges(runtimes, views, kinds)
    conf = conflicts(views, kinds, x)
    reach = reachability(n, edges)
    missing = [(i, j) for j in range(n) for i in range(j) if conf[i, j] and not (reach[j] >> i) & 1]
    assert not missing, f"conflicting pairs without a path: {missing[:10]}"
    if exact:
        spurious = [(a, b) for a, b in edges.tolist() if not conf[a, b]]
        assert not spurious, f"edges between tasks that do not conflict: {spurious[:10]}"


@pytest.mark.parametrize("a,b,edge", [
    ((slice(0, 4), slice(0, 4)), (slice(0, 4), slice(4, 8)), False),   # side-by-side tiles
    ((slice(0, 4), slice(0, 4)), (slice(2, 6), slice(2, 6)), True),    # overlapping tiles
    ((1, slice(None)), (slice(0, 4), slice(4, 8)), True),              # row through a tile
    ((5, slice(None)), (slice(0, 4), slice(4, 8)), False),             # row below a tile
    ((slice(None), 0), (slice(0, 4), slice(4, 8)), False),             # column beside a tile
    ((slice(None), 5), (slice(0, 4), slice(4, 8)), True),              # column through a tile
    ((slice(0, None, 2), slice(None)), (slice(1, None, 2), slice(None)), False),  # even/odd rows
])
def test_precise_cases(runtimes, a, b, edge):
    x = np.zeros((8, 8))
    edges = derive_edges(runtimes, [x[a], x[b]], ["out", "out"])
    assert (len(edges) == 1) == edge


def test_covering_write_prunes_but_keeps_order(runtimes):
    """Readers of tiles, then one write over everything, then a reader: a chain through the write."""
    x = np.zeros((8, 8))
    views = [x[i * 2:(i + 1) * 2] for i in range(4)] + [x, x[3:5, 3:5]]
    kinds = ["in"] * 4 + ["out", "in"]
    edges = derive_edges(runtimes, views, kinds)
    assert sorted(map(tuple, edges.tolist())) == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 5)]
