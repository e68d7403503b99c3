"""Runtime lifecycle: interpreter exit, fork, runs inside a session, and the default-runtime cache.

The risky scenarios (a crash at exit, a child blocked after fork, a deadlock) run in a subprocess
with a time limit, so a regression fails the test instead of killing or hanging pytest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pypto import ir
from pypto.runtime import RunConfig, TaskGraph, default_runtime, defaults
from pypto.runtime.native import library
from tests.programs.axpy import Axpy, check

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 90  # below the hang guard of conftest.py

PRELUDE = """\
import os, signal, sys, threading, time
import numpy as np
from pypto import ir
from pypto.runtime import RunConfig, Runtime, TaskGraphError, default_runtime
from tests.programs.axpy import Axpy, check, inputs
compiled = ir.compile(Axpy, output_dir=sys.argv[1])
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(Axpy, output_dir=tmp_path_factory.mktemp("axpy"))


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    """Run PRELUDE + body in a fresh interpreter (the compile is a cache hit after `compiled`)."""
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PYTHONFAULTHANDLER="1")
    try:
        return subprocess.run([sys.executable, str(script), str(tmp_path / "out")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script hung (killed after {LIMIT_S} s); its output:\n{e.stdout}\n{e.stderr}")


def assert_clean(r: subprocess.CompletedProcess, marker: str) -> None:
    detail = f"returncode {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    assert r.returncode == 0, detail
    assert "Fatal Python error" not in r.stderr, detail
    assert marker in r.stdout, detail


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def threads_settled(limit: int) -> int:
    """The thread count once it is at most `limit`, or after 10 s: a joined thread can stay listed
    in /proc for a moment after its join returns."""
    deadline = time.monotonic() + 10
    while (n := threads()) > limit and time.monotonic() < deadline:
        time.sleep(0.01)
    return n


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads via /proc/self/task")


# ----- interpreter exit ---------------------------------------------------------------------------

@pytest.mark.parametrize("config", ["RunConfig(num_workers=n)", "Runtime(n)"])
def test_exit_with_daemon_threads_mid_run_is_clean(compiled, tmp_path, config):
    """The runtimes daemon threads are running on must not be freed under them at exit."""
    r = run_script(tmp_path, f"""
        x, y = inputs(16 * 10000)
        def loop(cfg):
            while True:
                compiled(x, y, 2.0, config=cfg)
        ts = [threading.Thread(target=loop, args=({config},), daemon=True) for n in (1, 2, 3)]
        for t in ts:
            t.start()
        # exit while every daemon is in a native run (its innermost Python frame is run_program's)
        def running(t):
            return getattr(sys._current_frames().get(t.ident), "f_code", None) is Runtime.run_program.__code__
        while not all(running(t) for t in ts):
            time.sleep(0.001)
        print("exiting")
    """)
    assert_clean(r, "exiting")


@needs_proc
def test_runtime_library_has_no_static_destructors():
    """Static objects would be destroyed at exit while a live runtime's workers may still use them."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("needs binutils' nm")
    out = subprocess.run([nm, "-D", "--undefined-only", library()._name], capture_output=True, text=True).stdout
    assert "__cxa_atexit" not in out


# ----- fork ---------------------------------------------------------------------------------------

def test_fork_while_other_threads_hold_runtimes(compiled, tmp_path):
    """The child inherits held locks and native runtimes without workers; its calls must still work."""
    r = run_script(tmp_path, """
        rt = Runtime(2)
        check(compiled, 40, rt)
        x, y = inputs(16 * 5000)
        running, holding, stop = threading.Event(), threading.Event(), threading.Event()
        def loop():  # a program running on `rt` (most likely mid-run at the fork)
            while not stop.is_set():
                compiled(x, y, 2.0, config=rt)
                running.set()
        def hold():  # a session holding the shared default runtime (certainly held at the fork)
            with default_runtime(2).session():
                holding.set()
                stop.wait()
        threads = [threading.Thread(target=loop), threading.Thread(target=hold)]
        for t in threads:
            t.start()
        running.wait(), holding.wait()
        other = Runtime(1)

        def child(s):
            check(compiled, 40, RunConfig(num_workers=2))  # the default runtime held in the parent
            check(compiled, 50, rt)                        # a user's runtime running in the parent
            check(compiled, 60, other, seed=1)             # the runtime of the forking thread's session
            check(compiled, 70, RunConfig(num_workers=3))  # a new default runtime
            try:
                s.submit("noop")
                sys.exit("a session opened before the fork accepted a task in the child")
            except TaskGraphError as e:
                assert "before os.fork()" in str(e), e
            s.__exit__(None, None, None)  # leaves the parent's run alone
            check(compiled, 30, other)

        with other.session() as s:  # a session of the forking thread itself
            pid = os.fork()
            if pid == 0:
                signal.alarm(60)  # never outlive the test if a call blocks
                try:
                    child(s)
                except BaseException as e:
                    print("child failed:", repr(e), flush=True)
                    os._exit(1)
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        stop.set()
        for t in threads:
            t.join()
        check(compiled, 40, rt)
        print("child status", status)
        sys.exit(0 if status == 0 else 1)
    """)
    assert_clean(r, "child status 0")


# ----- runs inside a session ----------------------------------------------------------------------

def test_compiled_call_inside_a_session_of_its_runtime(compiled, tmp_path):
    """A run that would wait for its own thread's session fails clearly; the default runtime works."""
    r = run_script(tmp_path, """
        rt = Runtime(2)
        for what, call in [("run a program", lambda: check(compiled, 40, rt)),
                           ("open a session", lambda: rt.session().__enter__()),
                           ("close", rt.close)]:
            with rt.session() as s:
                try:
                    call()
                    sys.exit(f"{what}: no error")
                except TaskGraphError as e:
                    assert f"cannot {what}" in str(e) and "session" in str(e), e
                s.submit("noop")
        check(compiled, 40, rt)  # usable after the session
        with default_runtime(2).session() as s:  # the shared runtime the call would use: it runs elsewhere
            s.submit("noop")
            check(compiled, 40, RunConfig(num_workers=2))
            check(compiled, 40, None)
        print("ok")
    """)
    assert_clean(r, "ok")


def test_other_threads_wait_for_a_session(compiled, tmp_path):
    r = run_script(tmp_path, """
        rt = Runtime(2)
        x = np.zeros(8)
        done = []
        caller = threading.Thread(target=lambda: done.append(check(compiled, 40, rt)))
        with rt.session() as s:
            caller.start()
            s.submit("fill", x, 3.0)
        caller.join()
        assert done == [None] and (x == 3.0).all()
        print("ok")
    """)
    assert_clean(r, "ok")


# ----- the default-runtime cache ------------------------------------------------------------------

@needs_proc
def test_worker_count_sweep_leaves_bounded_threads(compiled):
    before, budget = threads(), defaults.worker_budget()
    for n in range(1, 65):
        check(compiled, 40, RunConfig(num_workers=n), seed=n)
        assert threads_settled(before + max(budget, n)) <= before + max(budget, n), n
    assert threads_settled(before + budget) <= before + budget
    assert len(defaults._CACHE) <= defaults.MAX_RUNTIMES


@needs_proc
def test_evicted_runtime_finishes_the_run_holding_it():
    rt = default_runtime(3)
    x = np.zeros(64)
    opened, evicted = threading.Event(), threading.Event()

    def session() -> None:
        with rt.session() as s:
            opened.set()
            evicted.wait()
            s.submit("fill", x[:32], 1.0)
            s.submit("fill", x[32:], 2.0)

    t = threading.Thread(target=session)
    t.start()
    opened.wait()
    for n in range(60, 64):  # pushes rt out of the cache while its session runs
        default_runtime(n)
    assert rt not in defaults._CACHE.values()
    with_workers = threads()
    evicted.set()
    t.join()
    assert (x[:32] == 1.0).all() and (x[32:] == 2.0).all()
    assert rt._handle is None  # freed when the session ended
    assert threads_settled(with_workers - 4) <= with_workers - 4  # the session's thread, rt's 3 workers
    g = TaskGraph()
    g.add("fill", x, 5.0)
    rt.run_graph(g)  # still usable: the native runtime is made for the run and freed after
    assert (x == 5.0).all() and rt._handle is None
    assert threads_settled(with_workers - 4) <= with_workers - 4
    assert default_runtime(3) is not rt


def test_closed_default_runtime_is_replaced():
    rt = default_runtime(1, "locality")
    rt.close()
    with pytest.raises(RuntimeError, match="closed"):
        rt.run_graph(TaskGraph())
    again = default_runtime(1, "locality")
    assert again is not rt and again is default_runtime(1, "locality")
