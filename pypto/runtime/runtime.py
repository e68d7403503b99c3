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
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

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
            raise ValueError(f"num_workers must be >= 0, got {n}")
        if scratch_bytes < 0:
            raise ValueError(f"scratch_bytes must be >= 0, got {scratch_bytes}")
        self.mode = SchedMode.parse(mode)
        self.num_workers = n
        self._lib = library()
        handle = self._lib.pto_rt_create(n, int(self.mode), int(scratch_bytes))
        if not handle:
            raise RuntimeError(f"cannot create a runtime with {n} workers")
        self._handle: int | None = handle
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, self._lib.pto_rt_destroy, handle)
        if window is not None:
            self._lib.pto_rt_set_window(handle, int(window))

    @classmethod
    def from_config(cls, cfg: Any) -> Runtime:
        """A runtime for a `RunConfig` (its num_workers and sched_mode)."""
        return cls(num_workers=cfg.num_workers, mode=cfg.sched_mode)

    def close(self) -> None:
        """Stop the workers and free the runtime (also done when it is garbage collected)."""
        with self._lock:
            self._handle = None
            self._finalizer()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Runtime(num_workers={self.num_workers}, mode={self.mode.name.lower()!r})"

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise RuntimeError("this runtime has been closed")
        return self._handle

    # ----- runs -------------------------------------------------------------------------------

    def run_program(self, program: ProgramHandle | Any, args: Sequence[Any] = (),
                    kinds: Sequence[ArgKind | str] | None = None, *, trace: bool = False) -> RunResult:
        """Run a compiled program's orchestration with `args` (see `pack_args` for kinds)."""
        prog = program if isinstance(program, ProgramHandle) else ProgramHandle(program)
        params, keep = pack_args(args, kinds)
        err = ctypes.create_string_buffer(_ERR_LEN)
        with self._lock:
            prog.take_kernel_error()  # a stale one from an earlier run that raised elsewhere
            rc = self._lib.pto_rt_run_program(self.handle, ctypes.byref(prog.table), params, len(args),
                                              RUN_TRACE if trace else 0, err, _ERR_LEN)
            result = self._result(trace, prog.kernel_names)
            kerr = prog.take_kernel_error()
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
        with self._lock:
            rc = self._lib.pto_rt_run_graph(self.handle, packed.descs.ctypes.data, len(packed),
                                            RUN_TRACE if trace else 0, err, _ERR_LEN)
            result = self._result(trace, packed.kernel_names)
        _raise_on(rc, err, result)
        return result

    def session(self, *, trace: bool = False) -> DirectSession:
        """The direct task API: `with rt.session() as s: s.submit(...); ...; s.wait()`."""
        return DirectSession(self, trace)

    # ----- results ----------------------------------------------------------------------------

    def _result(self, trace: bool, kernel_names: dict[int, str]) -> RunResult:
        lib, h = self._lib, self.handle
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
        self.result: RunResult | None = None

    def __enter__(self) -> DirectSession:
        self._rt._lock.acquire()
        if self._rt._lib.pto_rt_begin(self._rt.handle, RUN_TRACE if self._trace else 0) != 0:
            self._rt._lock.release()
            raise TaskGraphError("cannot begin a run: one is already in progress")
        self._open = True
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if self._open:
                try:
                    self.wait()
                except TaskGraphError:
                    if exc_type is None:
                        raise
        finally:
            if self._rt._lock.locked():
                self._rt._lock.release()

    def _check_open(self) -> None:
        if not self._open:
            raise TaskGraphError("this session has ended")

    def _error(self) -> TaskGraphError:
        buf = ctypes.create_string_buffer(_ERR_LEN)
        self._rt._lib.pto_rt_error(self._rt.handle, buf, _ERR_LEN)
        return TaskGraphError(buf.value.decode(errors="replace") or "the run has failed")

    def _root(self, a: np.ndarray) -> tuple[int, int]:
        lo, hi = root_range(a)
        for rlo, rhi in self._roots:
            if lo < rhi and rlo < hi:
                if rlo <= lo and hi <= rhi:
                    return rlo, rhi - rlo
                raise ValueError("this array overlaps memory used earlier in the session without lying inside "
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
        tid = self._rt._lib.pto_rt_submit(self._rt.handle, k.fn, k.kernel_id, ctypes.addressof(arr),
                                          len(resolved), ctypes.addressof(dep_arr), len(deps),
                                          SUBMIT_HOLD if hold else 0)
        if tid < 0:
            raise self._error()
        return int(tid)

    def add_dep(self, before: int, after: int) -> None:
        """Explicit edge into a held task `after` from an earlier task `before`."""
        self._check_open()
        if self._rt._lib.pto_rt_add_dep(self._rt.handle, int(before), int(after)) != 0:
            raise self._error()

    def release(self, task: int) -> None:
        """Let a held task run once its predecessors have finished."""
        self._check_open()
        if self._rt._lib.pto_rt_release(self._rt.handle, int(task)) != 0:
            raise self._error()

    def wait(self) -> RunResult:
        """Wait for every task and end the run."""
        self._check_open()
        err = ctypes.create_string_buffer(_ERR_LEN)
        rc = self._rt._lib.pto_rt_wait_all(self._rt.handle, err, _ERR_LEN)
        self._open = False
        self.result = self._rt._result(self._trace, self._names)
        self._keep.clear()
        _raise_on(rc, err, self.result)
        return self.result


class _FixedRoots:
    """RootMap interface over a session's incremental root list."""

    def __init__(self, session: DirectSession):
        self._s = session

    def root_of(self, a: np.ndarray) -> tuple[int, int]:
        return self._s._root(a)


_DEFAULT: dict[tuple[int, SchedMode], Runtime] = {}
_DEFAULT_LOCK = threading.Lock()


def default_runtime(num_workers: int | None = None, mode: SchedMode | str = "fifo") -> Runtime:
    """A shared runtime per (num_workers, mode), created on first use (for callables that run often)."""
    from pypto.config import config

    key = (config.num_workers if num_workers is None else int(num_workers), SchedMode.parse(mode))
    with _DEFAULT_LOCK:
        rt = _DEFAULT.get(key)
        if rt is None or rt._handle is None:
            rt = _DEFAULT[key] = Runtime(key[0], key[1])
        return rt


__all__ = ["DEFAULT_SCRATCH_BYTES", "DirectSession", "RunResult", "RunStats", "Runtime", "default_runtime"]
