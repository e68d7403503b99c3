"""`Runtime`: a native MPMD task engine with N worker threads, driven from Python.

Three ways to run tasks:

- `run_program(program, args)`: a compiled program's orchestration submits the tasks (native code
  end to end; Python only marshals the parameters).
- `run_graph(graph)`: a `TaskGraph` built in Python, submitted in one native call.
- `session()`: the direct task API, one call per task, with held tasks and explicit edges (for
  tests and tools).

A runtime runs one thing at a time (a lock serialises callers from several Python threads); the
GIL is released while native code runs. Runs raise `TaskGraphError` with the runtime's message when
they fail; the exception's `.result` still carries the stats (and trace) of the failed run.

Lifecycle. The native runtime (its worker threads) is made at construction and freed by `close()`
or when the object is garbage collected, never at interpreter exit: another (daemon) thread may
still be running on it then, and the process's exit reclaims the threads anyway. A forked child
inherits no worker threads, so there every runtime drops (leaks, without touching) the native
runtime it inherited and makes a new one on its next run. A call that would wait for a session
opened on its own thread raises `TaskGraphError` instead of hanging.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.errors import InvalidState, InvalidValue
from pypto.runtime.abi import (
    ARG_DTYPE,
    RUN_TRACE,
    SUBMIT_HOLD,
    TRACE_DTYPE,
    ArgKind,
    PtoArg,
    PtoRtStats,
    PtoTraceRecord,
    SchedMode,
)
from pypto.runtime.errors import TaskGraphError
from pypto.runtime.graph import PackedGraph, TaskGraph
from pypto.runtime.kernels import Kernel, as_kernel
from pypto.runtime.marshal import fill_rows, pack_args, resolve, root_range
from pypto.runtime.native import library
from pypto.runtime.program import ProgramHandle
from pypto.runtime.trace import Trace

DEFAULT_SCRATCH_BYTES = 1 << 20
_ERR_LEN = 4096


@dataclass(frozen=True)
class RunStats:
    """Counters of one run (see `pto_rt_stats` in include/pto_runtime_host.h)."""

    tasks: int
    edges: int
    elapsed_ns: int
    max_live: int
    pool_slots: int
    steals: int
    helped: int
    roots: int
    lane_tasks: tuple[int, ...]   # tasks executed per lane (workers..., orchestrator)

    @property
    def us_per_task(self) -> float:
        return self.elapsed_ns / 1e3 / max(1, self.tasks)


@dataclass
class RunResult:
    stats: RunStats
    trace: Trace | None = None


class Runtime:
    """A native task runtime with `num_workers` worker threads (0: serial, in submission order).

    `mode` is "fifo" (one global ready queue) or "locality" (a finished task's newly ready
    successors stay on the finishing worker; idle workers steal). `scratch_bytes` sizes each
    worker's scratch arena (grown to a program's needs when it runs). `window` bounds the number
    of submitted, unfinished tasks (submission then waits and helps), which bounds memory.
    """

    def __init__(self, num_workers: int | None = None, mode: SchedMode | str = "fifo",
                 scratch_bytes: int = DEFAULT_SCRATCH_BYTES, window: int | None = None):
        from pypto.config import config

        n = config.num_workers if num_workers is None else int(num_workers)
        if n < 0:
            raise InvalidValue(f"num_workers must be >= 0, got {n}")
        if scratch_bytes < 0:
            raise InvalidValue(f"scratch_bytes must be >= 0, got {scratch_bytes}")
        self.mode = SchedMode.parse(mode)
        self.num_workers = n
        self._scratch = int(scratch_bytes)
        self._window = None if window is None else int(window)
        self._lib = library()
        self._run = _RunLock()           # held for a whole run or session
        self._meta = threading.Lock()    # guards making and freeing the native runtime
        self._handle: int | None = None
        self._finalizer: weakref.finalize | None = None
        self._closed = False
        self._retire = False             # free the native runtime whenever a run ends (evicted defaults)
        self._generation = 0             # bumped in a forked child: sessions opened before are void
        self._create_native()
        _LIVE.add(self)

    @classmethod
    def from_config(cls, cfg: Any) -> Runtime:
        """A runtime for a `RunConfig` (its num_workers and sched_mode)."""
        return cls(num_workers=cfg.num_workers, mode=cfg.sched_mode)

    def close(self) -> None:
        """Stop the workers and free the runtime (also done when it is garbage collected). A run in
        progress on another thread finishes first; later runs raise."""
        if self._run.held_here():
            raise TaskGraphError(self._nested("close"))
        self._run.acquire()
        with self._meta:
            self._closed = True
            self._free_native()
            self._run.release()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Runtime(num_workers={self.num_workers}, mode={self.mode.name.lower()!r})"

    @property
    def handle(self) -> int:
        """The native runtime (made again if it was released: after a fork, or evicted defaults)."""
        if self._closed:
            raise InvalidState("this runtime has been closed")
        h = self._handle
        if h is None:
            with self._meta:
                if self._closed:
                    raise InvalidState("this runtime has been closed")
                if self._handle is None:
                    self._create_native()
                h = self._handle
        return h  # type: ignore[return-value]

    # ----- the native runtime's lifetime ------------------------------------------------------

    def _create_native(self) -> None:
        n = self.num_workers
        handle = self._lib.pto_rt_create(n, int(self.mode), self._scratch)
        if not handle:
            raise InvalidState(f"cannot create a runtime with {n} workers")
        fin = weakref.finalize(self, self._lib.pto_rt_destroy, handle)
        fin.atexit = False  # at exit another thread may still be running on it (see the module doc)
        if self._window is not None:
            self._lib.pto_rt_set_window(handle, self._window)
        self._handle, self._finalizer = handle, fin

    def _free_native(self) -> None:
        """Join the workers and free the native runtime (no run may hold it)."""
        fin, self._finalizer, self._handle = self._finalizer, None, None
        if fin is not None:
            fin()

    def _drop_native(self) -> None:
        """Forget the native runtime without touching it (a forked child: its threads do not exist)."""
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer, self._handle = None, None

    def _retire_when_idle(self) -> None:
        """Free the native runtime now if no run holds it, else when that run ends; from now on each
        run makes it again and frees it after (for a default runtime evicted from the cache)."""
        with self._meta:
            self._retire = True
            if self._run.try_acquire():
                self._free_native()
                self._run.release()

    def _begin(self, action: str) -> int:
        """Hold the runtime for a run (waiting for other threads' runs) and return the native handle."""
        if self._run.held_here():
            raise TaskGraphError(self._nested(action))
        self._run.acquire()
        try:
            return self.handle
        except BaseException:
            self._end()
            raise

    def _end(self) -> None:
        with self._meta:
            if self._retire:
                self._free_native()
            self._run.release()

    def _nested(self, action: str) -> str:
        return (f"cannot {action} {self!r}: a session of this runtime is open on this thread "
                f"(`with rt.session()`), and it holds the runtime until it ends, so this call would wait "
                f"forever. End the session first, or use another Runtime for this call.")

    # ----- runs -------------------------------------------------------------------------------

    def run_program(self, program: ProgramHandle | Any, args: Sequence[Any] = (),
                    kinds: Sequence[ArgKind | str] | None = None, *, trace: bool = False) -> RunResult:
        """Run a compiled program's orchestration with `args` (see `pack_args` for kinds)."""
        prog = program if isinstance(program, ProgramHandle) else ProgramHandle(program)
        params, keep = pack_args(args, kinds)
        err = ctypes.create_string_buffer(_ERR_LEN)
        h = self._begin("run a program on")
        try:
            prog.take_kernel_error()  # a stale one from an earlier run that raised elsewhere
            rc = self._lib.pto_rt_run_program(h, ctypes.byref(prog.table), params, len(args),
                                              RUN_TRACE if trace else 0, err, _ERR_LEN)
            result = self._result(h, trace, prog.kernel_names)
            kerr = prog.take_kernel_error()
        finally:
            self._end()
        del keep
        _raise_on(rc, err, result)
        if kerr is not None:
            e = TaskGraphError(kerr)
            e.result = result  # type: ignore[attr-defined]
            raise e
        return result

    def run_graph(self, graph: TaskGraph | PackedGraph, *, trace: bool = False) -> RunResult:
        """Submit every task of `graph` (in order) and wait for all of them."""
        packed = graph if isinstance(graph, PackedGraph) else graph.pack()
        err = ctypes.create_string_buffer(_ERR_LEN)
        h = self._begin("run a task graph on")
        try:
            rc = self._lib.pto_rt_run_graph(h, packed.descs.ctypes.data, len(packed),
                                            RUN_TRACE if trace else 0, err, _ERR_LEN)
            result = self._result(h, trace, packed.kernel_names)
        finally:
            self._end()
        _raise_on(rc, err, result)
        return result

    def session(self, *, trace: bool = False) -> DirectSession:
        """The direct task API: `with rt.session() as s: s.submit(...); ...; s.wait()`."""
        return DirectSession(self, trace)

    # ----- results ----------------------------------------------------------------------------

    def _result(self, h: int, trace: bool, kernel_names: dict[int, str]) -> RunResult:
        lib = self._lib
        st = PtoRtStats()
        lib.pto_rt_get_stats(h, ctypes.byref(st))
        lanes = np.zeros(self.num_workers + 1, dtype=np.int64)
        lib.pto_rt_lane_counts(h, lanes.ctypes.data, len(lanes))
        stats = RunStats(st.tasks, st.edges, st.elapsed_ns, st.max_live, st.pool_slots, st.steals, st.helped,
                         st.roots, tuple(int(x) for x in lanes))
        tr = None
        if trace:
            n = lib.pto_rt_trace_count(h)
            recs = np.zeros(n, dtype=TRACE_DTYPE)
            if n:
                lib.pto_rt_trace_read(h, recs.ctypes.data_as(ctypes.POINTER(PtoTraceRecord)), n)
            ne = lib.pto_rt_trace_edge_count(h)
            edges = np.zeros((ne, 2), dtype=np.int64)
            if ne:
                lib.pto_rt_trace_edges(h, edges.ctypes.data, ne)
            tr = Trace(recs, edges, self.num_workers, dict(kernel_names))
        return RunResult(stats, tr)


def _raise_on(rc: int, err: ctypes.Array, result: RunResult | None) -> None:
    if rc != 0:
        e = TaskGraphError(err.value.decode(errors="replace") or "the run failed")
        e.result = result  # type: ignore[attr-defined]
        raise e


class DirectSession:
    """One run of the direct task API. Tasks start as soon as they are submitted (unless held).

    Arrays passed to tasks are kept alive until the run ends. Views of one array share a root;
    an array that overlaps memory used earlier in the session must lie inside that earlier root.
    """

    def __init__(self, runtime: Runtime, trace: bool):
        self._rt = runtime
        self._trace = trace
        self._keep: list[Any] = []
        self._roots: list[tuple[int, int]] = []
        self._names: dict[int, str] = {}
        self._open = False
        self._held = False
        self._h = 0
        self._generation = runtime._generation
        self.result: RunResult | None = None

    def __enter__(self) -> DirectSession:
        rt = self._rt
        h = rt._begin("open a session on")
        self._held, self._h, self._generation = True, h, rt._generation
        if rt._lib.pto_rt_begin(h, RUN_TRACE if self._trace else 0) != 0:
            self._release()
            raise TaskGraphError("cannot begin a run: one is already in progress")
        self._open = True
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._generation != self._rt._generation:
            return  # opened before os.fork(): its run and its hold on the runtime belong to the parent
        try:
            if self._open:
                try:
                    self.wait()
                except TaskGraphError:
                    if exc_type is None:
                        raise
        finally:
            self._release()

    def _release(self) -> None:
        if self._held:
            self._held = False
            self._rt._end()

    def _check_open(self) -> None:
        if self._generation != self._rt._generation:
            raise TaskGraphError("this session was opened before os.fork(); its run belongs to the parent process")
        if not self._open:
            raise TaskGraphError("this session has ended")

    def _error(self) -> TaskGraphError:
        buf = ctypes.create_string_buffer(_ERR_LEN)
        self._rt._lib.pto_rt_error(self._h, buf, _ERR_LEN)
        return TaskGraphError(buf.value.decode(errors="replace") or "the run has failed")

    def _root(self, a: np.ndarray) -> tuple[int, int]:
        lo, hi = root_range(a)
        for rlo, rhi in self._roots:
            if lo < rhi and rlo < hi:
                if rlo <= lo and hi <= rhi:
                    return rlo, rhi - rlo
                raise InvalidValue("this array overlaps memory used earlier in the session without lying inside "
                                 "it; pass views of one base array")
        self._roots.append((lo, hi))
        return lo, hi - lo

    def submit(self, kernel: Kernel | str, *args: Any, kinds: Sequence[ArgKind | str] | None = None,
               deps: Sequence[int] = (), hold: bool = False) -> int:
        """Submit a call of `kernel`; returns its task id. `hold`: wait for `release(id)`."""
        self._check_open()
        k = as_kernel(kernel)
        resolved = resolve(args, k.kinds_for(args, kinds), where=f"{k.name}")
        k.check(resolved)
        arr = (PtoArg * max(1, len(resolved)))()
        if resolved:
            recs = np.frombuffer(arr, dtype=ARG_DTYPE)
            fill_rows(recs, 0, resolved, _FixedRoots(self), where=f"{k.name}: ")
        dep_arr = (ctypes.c_int64 * max(1, len(deps)))(*deps)
        self._keep.append([v for _, v in resolved])
        self._names[k.kernel_id] = k.name
        tid = self._rt._lib.pto_rt_submit(self._h, k.fn, k.kernel_id, ctypes.addressof(arr),
                                          len(resolved), ctypes.addressof(dep_arr), len(deps),
                                          SUBMIT_HOLD if hold else 0)
        if tid < 0:
            raise self._error()
        return int(tid)

    def add_dep(self, before: int, after: int) -> None:
        """Explicit edge into a held task `after` from an earlier task `before`."""
        self._check_open()
        if self._rt._lib.pto_rt_add_dep(self._h, int(before), int(after)) != 0:
            raise self._error()

    def release(self, task: int) -> None:
        """Let a held task run once its predecessors have finished."""
        self._check_open()
        if self._rt._lib.pto_rt_release(self._h, int(task)) != 0:
            raise self._error()

    def wait(self) -> RunResult:
        """Wait for every task and end the run."""
        self._check_open()
        err = ctypes.create_string_buffer(_ERR_LEN)
        rc = self._rt._lib.pto_rt_wait_all(self._h, err, _ERR_LEN)
        self._open = False
        self.result = self._rt._result(self._h, self._trace, self._names)
        self._keep.clear()
        _raise_on(rc, err, self.result)
        return self.result


class _FixedRoots:
    """RootMap interface over a session's incremental root list."""

    def __init__(self, session: DirectSession):
        self._s = session

    def root_of(self, a: np.ndarray) -> tuple[int, int]:
        return self._s._root(a)


class _RunLock:
    """Held for a whole run or session. It knows its owner thread, so a call that would wait for a
    hold of its own thread (a program run inside `with rt.session()`) can fail instead of hanging."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    def held_here(self) -> bool:
        return self._owner == threading.get_ident()  # only this thread ever sets it to its own id

    def acquire(self) -> None:
        self._lock.acquire()
        self._owner = threading.get_ident()

    def try_acquire(self) -> bool:
        if not self._lock.acquire(blocking=False):
            return False
        self._owner = threading.get_ident()
        return True

    def release(self) -> None:
        self._owner = None
        self._lock.release()


_LIVE: weakref.WeakSet[Runtime] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # Only the forking thread exists here: a lock another thread held stays held forever, and the
    # inherited native runtimes have no workers (destroying one would join threads that do not exist).
    for rt in list(_LIVE):
        rt._run = _RunLock()
        rt._meta = threading.Lock()
        rt._generation += 1
        rt._drop_native()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ["DEFAULT_SCRATCH_BYTES", "DirectSession", "RunResult", "RunStats", "Runtime"]
