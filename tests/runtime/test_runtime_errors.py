"""Malformed tasks, cycles and deadlocks give clear errors, never hangs or crashes."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pypto.runtime import Runtime, TaskGraph, TaskGraphError, builtin_kernel
from pypto.runtime.abi import ArgKind, PtoArg
from pypto.runtime.marshal import pack_args
from pypto.runtime.native import library

BUF = np.zeros((4, 8))


def raw_submit(rt: Runtime, args: ctypes.Array, nargs: int, fn: int | None = None) -> tuple[int, str]:
    """Submit one task through the C API directly (no Python-side checks); returns (id, error)."""
    lib = library()
    h = rt.handle
    assert lib.pto_rt_begin(h, 0) == 0
    k = builtin_kernel("noop")
    tid = lib.pto_rt_submit(h, k.fn if fn is None else fn, 0, ctypes.addressof(args), nargs, None, 0, 0)
    err = ctypes.create_string_buffer(1024)
    rc = lib.pto_rt_wait_all(h, err, 1024)
    assert (rc != 0) == (tid < 0)
    return tid, err.value.decode()


def good_arg() -> tuple[ctypes.Array, list]:
    return pack_args([BUF], ["inout"])


@pytest.fixture
def rt(runtimes):
    return runtimes(2, "fifo")


@pytest.mark.native
def test_well_formed_raw_submission_runs(rt):
    args, keep = good_arg()
    tid, err = raw_submit(rt, args, 1)
    assert tid == 0 and err == ""


@pytest.mark.native
@pytest.mark.parametrize("mutate,message", [
    (lambda a: setattr(a[0], "kind", 9), "arg 0 has kind 9"),
    (lambda a: setattr(a[0], "kind", -1), "arg 0 has kind -1"),
    (lambda a: a[0].t.shape.__setitem__(1, -2), "shape[1] is -2"),
    (lambda a: setattr(a[0].t, "ndim", 9), "ndim is 9"),
    (lambda a: setattr(a[0].t, "dtype_bytes", 0), "dtype_bytes is 0"),
    (lambda a: setattr(a[0].t, "data", a[0].t.data + 8), "outside its root buffer"),
    (lambda a: setattr(a[0].t, "root_nbytes", 16), "outside its root buffer"),
    (lambda a: setattr(a[0].t, "root", None), "root pointer is NULL"),
    (lambda a: a[0].t.strides.__setitem__(0, 1 << 62), "overflows"),
])
def test_malformed_argument(rt, mutate, message):
    args, keep = good_arg()
    mutate(args)
    tid, err = raw_submit(rt, args, 1)
    assert tid < 0
    assert message in err and "task 0" in err
    # the runtime is fine afterwards
    args, keep = good_arg()
    assert raw_submit(rt, args, 1) == (0, "")


@pytest.mark.native
def test_null_kernel_and_bad_arg_count(rt):
    args, keep = good_arg()
    lib = library()
    assert lib.pto_rt_begin(rt.handle, 0) == 0
    assert lib.pto_rt_submit(rt.handle, None, 0, ctypes.addressof(args), 1, None, 0, 0) < 0
    err = ctypes.create_string_buffer(512)
    assert lib.pto_rt_wait_all(rt.handle, err, 512) != 0
    assert b"kernel function is NULL" in err.value
    tid, msg = raw_submit(rt, args, -3)
    assert tid < 0 and "-3 arguments" in msg


@pytest.mark.native
def test_overlapping_distinct_roots(rt):
    x = np.zeros(16)
    args = (PtoArg * 2)()
    a, _ = pack_args([x[:8]], ["in"])
    b, _ = pack_args([x[4:]], ["out"])  # a root of its own that overlaps the first
    args[0], args[1] = a[0], b[0]
    args[1].t.root = x.ctypes.data + 8
    args[1].t.root_nbytes = 120
    tid, err = raw_submit(rt, args, 2)
    assert tid < 0 and "overlap" in err


@pytest.mark.native
def test_one_root_with_two_sizes(rt):
    x = np.zeros(16)
    args = (PtoArg * 2)()
    a, _ = pack_args([x[:8]], ["in"])
    args[0] = args[1] = a[0]
    args[1].t.root_nbytes = 64
    tid, err = raw_submit(rt, args, 2)
    assert tid < 0 and "two sizes" in err


@pytest.mark.native
def test_dependency_on_later_task_is_a_cycle(rt):
    g = TaskGraph()
    g.add("noop")
    g.add("noop", deps=[2])
    g.add("noop")
    with pytest.raises(TaskGraphError, match="close a cycle"):
        rt.run_graph(g)
    g = TaskGraph()
    g.add("noop")
    g.add("noop", deps=[1])  # itself
    with pytest.raises(TaskGraphError, match="close a cycle"):
        rt.run_graph(g)


@pytest.mark.native
def test_dependency_on_unknown_task(rt):
    g = TaskGraph()
    g.add("noop", deps=[-4])
    with pytest.raises(TaskGraphError, match="unknown task -4"):
        rt.run_graph(g)
    with pytest.raises(TaskGraphError, match="unknown task 7"):
        g.add_dep(0, 7)


@pytest.mark.native
def test_explicit_edges_are_honoured(runtimes):
    rt = runtimes(2, "locality")
    x, y = np.zeros(4), np.zeros(4)
    g = TaskGraph()
    g.add("spin", 3_000_000, x, kinds=["i64", "in"])     # no data relation with the fill below
    g.add("fill", y, 1.0)
    g.add_dep(0, 1)
    r = rt.run_graph(g, trace=True)
    rec = {int(t["task"]): t for t in r.trace.records}
    assert rec[0]["end_ns"] <= rec[1]["start_ns"]
    assert r.stats.edges <= 1  # 0 if the OS delayed the submitting thread past the spin


@pytest.mark.native
def test_session_edges_and_cycles(rt):
    with pytest.raises(TaskGraphError, match="close a cycle"):
        with rt.session() as s:
            a = s.submit("noop")
            b = s.submit("noop", hold=True)
            s.add_dep(b, a)
    with pytest.raises(TaskGraphError, match="is not held"):
        with rt.session() as s:
            a = s.submit("noop")
            b = s.submit("noop")
            s.add_dep(a, b)
    with pytest.raises(TaskGraphError, match="no such held task"):
        with rt.session() as s:
            s.release(5)
    with pytest.raises(TaskGraphError, match="unknown task 9"):
        with rt.session() as s:
            s.submit("noop", hold=True)
            s.add_dep(9, 0)


@pytest.mark.native
def test_held_task_never_released_is_a_deadlock(runtimes):
    for workers, mode in [(0, "fifo"), (2, "fifo"), (2, "locality")]:
        rt = runtimes(workers, mode)
        x = np.zeros(4)
        with pytest.raises(TaskGraphError, match=r"deadlock: 2 task\(s\).*task 0 \(kernel 0\) is held"):
            with rt.session() as s:
                s.submit("noop", x, kinds=["out"], hold=True)
                s.submit("fill", x, 1.0)
        # the runtime recovers: its slots are reclaimed and the next run works
        g = TaskGraph()
        for _ in range(100):
            g.add("scale_add", x, 1.0, 1.0)
        rt.run_graph(g)
        assert (x == 100).all()


@pytest.mark.native
def test_held_tasks_run_after_release(rt):
    x = np.zeros(4)
    with rt.session() as s:
        a = s.submit("fill", x, 2.0, hold=True)
        b = s.submit("scale_add", x, 3.0, 1.0)      # after a (RAW/WAW)
        c = s.submit("fill", x[:1], 5.0, hold=True)
        s.add_dep(b, c)
        s.release(a)
        s.release(c)
        s.wait()
    np.testing.assert_array_equal(x, [5, 7, 7, 7])


@pytest.mark.native
def test_error_cancels_queued_work_and_refuses_submissions(rt):
    x = np.zeros(4)
    lib = library()
    args, keep = pack_args([x], ["inout"])
    spin = builtin_kernel("spin")
    fill = builtin_kernel("fill")
    with pytest.raises(TaskGraphError, match="shape\\[0\\] is -1") as info:
        with rt.session() as s:
            s.submit(spin, 20_000_000, x, kinds=["i64", "inout"])
            s.submit(fill, x, 1.0)                     # queued behind the spin
            bad, _ = pack_args([x], ["inout"])
            bad[0].t.shape[0] = -1
            assert lib.pto_rt_submit(rt.handle, fill.fn, 0, ctypes.addressof(bad), 1, None, 0, 0) < 0
            with pytest.raises(TaskGraphError, match="shape"):
                s.submit(fill, x, 2.0)                 # refused: the run has failed
    assert info.value.result.stats.tasks == 2
    assert (x == 0).all()                               # the queued fill was skipped


@pytest.mark.native
def test_python_side_checks():
    x32, x64 = np.zeros(4, np.float32), np.zeros(4)
    g = TaskGraph()
    with pytest.raises(TypeError, match="float32 or float64 arrays of one dtype"):
        g.add("copy", x32, x64)
    with pytest.raises(ValueError, match="equal shapes"):
        g.add("copy", x64, np.zeros(5))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        g.add("fill", x64)
    with pytest.raises(TypeError, match="argument 1 must be f64"):
        g.add("fill", x64, x64, kinds=["out", "inout"])
    with pytest.raises(KeyError, match="no built-in kernel"):
        g.add("nope")
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4)
        ro.flags.writeable = False
        g.add("fill", ro, 1.0)
    assert ArgKind.parse("inout") is ArgKind.INOUT
    with pytest.raises(ValueError, match="unknown argument kind"):
        ArgKind.parse("sideways")


def test_bad_runtime_arguments():
    with pytest.raises(ValueError):
        Runtime(num_workers=-1)
    with pytest.raises(ValueError, match="expected 'fifo' or 'locality'"):
        Runtime(num_workers=1, mode="random")
