"""Dependencies from regions: parallel runs give exactly the serial (submission-order) result."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.runtime import TaskGraph

pytestmark = pytest.mark.native

SHAPE = (24, 40)


def _view(buf: np.ndarray, r0: int, c0: int, h: int, w: int, flip: int, step: int, transpose: bool):
    v = buf[r0:r0 + h * step:step, c0:c0 + w]
    if flip & 1:
        v = v[::-1]
    if flip & 2:
        v = v[:, ::-1]
    return v.T if transpose else v


def _random_views(rng, bufs, n):
    """`n` views of one shape, each at a random place of a random buffer (they may overlap)."""
    h, w = int(rng.integers(1, 6)), int(rng.integers(1, 9))
    step = int(rng.choice([1, 1, 2]))
    transpose = bool(rng.integers(0, 4) == 0)
    out = []
    for _ in range(n):
        buf = bufs[int(rng.integers(0, len(bufs)))]
        r0 = int(rng.integers(0, buf.shape[0] - (h - 1) * step))
        c0 = int(rng.integers(0, buf.shape[1] - w + 1))
        out.append(_view(buf, r0, c0, h, w, int(rng.integers(0, 4)), step, transpose))
    return out


def random_graph(seed: int, ntasks: int):
    """A graph of order-sensitive kernels over overlapping views of three buffers and accumulators."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(SHAPE) for _ in range(3)]
    bufs = [x.copy() for x in init]
    acc = np.zeros(16)
    g = TaskGraph()
    # A slow gate that writes everything: the whole graph is submitted while it runs, so the
    # workers then face thousands of tasks ordered by nothing but the derived dependencies.
    g.add("spin", 3_000_000, *bufs, acc, kinds=["i64"] + ["inout"] * 4)
    for _ in range(ntasks):
        op = rng.choice(["scale_add", "scale_add", "axpy", "copy", "fill", "reduce_sum", "add"])
        if op == "scale_add":
            (v,) = _random_views(rng, bufs, 1)
            g.add("scale_add", v, float(rng.choice([0.5, -0.5, 0.75])), float(rng.uniform(-1, 1)))
        elif op == "axpy":
            x, y = _random_views(rng, bufs, 2)
            g.add("axpy", x, y, float(rng.choice([0.1, -0.2])))
        elif op == "copy":
            x, y = _random_views(rng, bufs, 2)
            g.add("copy", x, y)
        elif op == "fill":
            (v,) = _random_views(rng, bufs, 1)
            g.add("fill", v, float(rng.uniform(-1, 1)))
        elif op == "reduce_sum":
            (v,) = _random_views(rng, bufs, 1)
            k = int(rng.integers(0, len(acc)))
            g.add("reduce_sum", v, acc[k:k + 1])
        else:
            x, y, z = _random_views(rng, bufs, 3)
            g.add("add", x, y, z)
    state = [*bufs, acc]
    init_state = [*init, np.zeros_like(acc)]
    return g, state, init_state


def run_and_snapshot(rt, g, state, init_state):
    for s, i in zip(state, init_state):
        s[...] = i
    rt.run_graph(g)
    return [s.copy() for s in state]


_GRAPHS: list = []


@pytest.fixture
def graphs(serial):
    if not _GRAPHS:
        for seed in (1, 2):
            g, state, init_state = random_graph(seed, 2500)
            expected = run_and_snapshot(serial, g, state, init_state)
            _GRAPHS.append((g, state, init_state, expected))
    return _GRAPHS


def test_random_hazards_match_serial(graphs, parallel):
    rt = parallel
    for g, state, init_state, expected in graphs:
        for _ in range(2):
            got = run_and_snapshot(rt, g, state, init_state)
            for e, a in zip(expected, got):
                np.testing.assert_array_equal(a, e)


def test_serial_matches_numpy_reference(serial):
    """The serial runtime itself against a plain NumPy interpretation of the same calls."""
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
    rx, ry = x.copy(), y.copy()
    g = TaskGraph()
    for k in range(200):
        r, c = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        g.add("scale_add", x[r:r + 3, c:c + 3][::-1], 0.5, float(k))
        rx[r:r + 3, c:c + 3][::-1] = rx[r:r + 3, c:c + 3][::-1] * 0.5 + k
        g.add("axpy", x[c:c + 2, r:r + 2].T, y[r:r + 2, c:c + 2], 0.25)
        ry[r:r + 2, c:c + 2] += 0.25 * rx[c:c + 2, r:r + 2].T
        g.add("copy", y[r, c:c + 2], x[c:c + 2, r])
        rx[c:c + 2, r] = ry[r, c:c + 2]
    serial.run_graph(g)
    np.testing.assert_allclose(x, rx, rtol=1e-12)
    np.testing.assert_allclose(y, ry, rtol=1e-12)


def test_long_chain_on_one_element(parallel):
    x = np.zeros(4)
    g = TaskGraph()
    for k in range(3000):
        g.add("scale_add", x[1:2], 0.5, float(k % 7))
    parallel.run_graph(g)
    ref = 0.0
    for k in range(3000):
        ref = ref * 0.5 + (k % 7)
    assert x[1] == ref and x[0] == x[2] == x[3] == 0


def test_diamonds_and_write_after_read(parallel):
    n = 500
    a, b, c, d = (np.zeros((n, 4)) for _ in range(4))
    g = TaskGraph()
    for i in range(n):
        g.add("fill", a[i], float(i))                 # top
        g.add("copy", a[i], b[i])                     # left  (RAW on a)
        g.add("copy", a[i], c[i])                     # right (RAW on a)
        g.add("add", b[i], c[i], d[i])                # bottom (RAW on b, c)
        g.add("fill", a[i], -1.0)                     # WAR against both copies
        g.add("scale_add", d[i], 1.0, 1.0)            # after the add (WAW/RAW on d)
    parallel.run_graph(g)
    idx = np.arange(n, dtype=float)[:, None]
    np.testing.assert_array_equal(b, np.broadcast_to(idx, (n, 4)))
    np.testing.assert_array_equal(c, np.broadcast_to(idx, (n, 4)))
    np.testing.assert_array_equal(d, np.broadcast_to(2 * idx + 1, (n, 4)))
    assert (a == -1).all()


@pytest.mark.parametrize("workers,mode", [(2, "fifo"), (2, "locality"), (4, "fifo")])
def test_war_and_waw_against_a_slow_predecessor(runtimes, workers, mode):
    """Without the WAR / WAW edges the later, fast writes would overtake the slow tasks."""
    rt = runtimes(workers, mode)
    for _ in range(3):
        a = np.full(8, 3.0)
        b = np.zeros(8)
        g = TaskGraph()
        g.add("spin", 2_000_000, a, kinds=["i64", "inout"])   # writes a (for the graph)
        g.add("copy", a, b)                                   # RAW: waits 2 ms
        g.add("fill", a, 5.0)                                 # WAR on a with the copy
        g.add("spin", 2_000_000, b, kinds=["i64", "in"])      # reads b
        g.add("fill", b[2:4], 7.0)                            # WAR on b with the slow reader
        g.add("spin", 1_000_000, a[0:2], kinds=["i64", "inout"])
        g.add("fill", a[1:3], 9.0)                            # WAW on a[1] with the slow writer
        rt.run_graph(g)
        np.testing.assert_array_equal(b, [3, 3, 7, 7, 3, 3, 3, 3])
        np.testing.assert_array_equal(a, [5, 9, 9, 5, 5, 5, 5, 5])


def test_float32_and_3d_views(serial, parallel):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((6, 7, 8)).astype(np.float32)
    x = base.copy()
    g = TaskGraph()
    for k in range(600):
        i, j = int(rng.integers(0, 5)), int(rng.integers(0, 6))
        v = x[i:i + 2, j:j + 2, ::3] if k % 2 else x[i:i + 2, :, j:j + 3].transpose(2, 0, 1)
        g.add("scale_add", v, 0.5, float(k % 5))
    serial.run_graph(g)
    expected = x.copy()
    x[...] = base
    parallel.run_graph(g)
    np.testing.assert_array_equal(x, expected)


def test_independent_tiles_have_no_edges(runtimes):
    x = np.zeros((64, 64))
    g = TaskGraph()
    for i in range(8):
        for j in range(8):
            g.add("spin", 20_000, x[i * 8:(i + 1) * 8, j * 8:(j + 1) * 8], kinds=["i64", "out"])
    r = runtimes(2, "fifo").run_graph(g)
    assert r.stats.edges == 0 and r.stats.tasks == 64


def test_window_bounds_live_tasks():
    from pypto.runtime import Runtime

    rt = Runtime(num_workers=1, window=64)
    x = np.zeros(10_000)
    g = TaskGraph()
    for i in range(5000):
        g.add("scale_add", x[i:i + 1], 2.0, 1.0)
    r = rt.run_graph(g)
    assert (x[:5000] == 1).all() and (x[5000:] == 0).all()
    assert r.stats.pool_slots <= 256  # one chunk of slots suffices
    rt.close()


def test_python_callback_kernels(runtimes):
    """Any pto_kernel_fn works in the direct API, including a ctypes callback (the GIL is released
    while the runtime runs, so workers can call back into Python)."""
    import ctypes
    import threading

    from pypto.runtime import Kernel
    from pypto.runtime.abi import KERNEL_FN

    order: list[int] = []
    threads: set[int] = set()

    @KERNEL_FN
    def record(args, nargs, scratch):
        order.append(args[1].i)
        threads.add(threading.get_ident())

    k = Kernel("record", ctypes.cast(record, ctypes.c_void_p).value, 0)
    x = np.zeros(4)
    g = TaskGraph()
    for i in range(200):
        g.add(k, x[i % 2: i % 2 + 1], i, kinds=["inout", "i64"])
    runtimes(2, "fifo").run_graph(g)
    assert sorted(order) == list(range(200))
    evens = [v for v in order if v % 2 == 0]
    assert evens == sorted(evens)  # one chain per element: order kept within it
