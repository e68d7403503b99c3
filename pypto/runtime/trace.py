"""Execution traces: which task ran where and when, and the dependency edges between tasks.

A `Trace` holds one record per executed task (a NumPy structured array, `TRACE_DTYPE`: task,
kernel_id, worker, start_ns, end_ns; times are steady-clock ns since the run began) and the edges
the scheduler enforced (predecessor still unfinished when the successor was submitted). Lanes are
the workers 0..num_workers-1 plus one for the orchestrating thread, which executes tasks while it
waits (and all of them in serial mode).

`to_chrome_json()` writes the Chrome trace-event format that Perfetto (ui.perfetto.dev) and
chrome://tracing open: one complete ("X") event per task, one thread lane per worker, and flow
events ("s" / "f") drawing the dependency arrows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import InvalidType
from pypto.runtime.abi import TRACE_DTYPE


@dataclass(frozen=True, slots=True)
class TaskRecord:
    task: int
    kernel_id: int
    kernel: str
    worker: int
    start_ns: int
    end_ns: int

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass
class Trace:
    records: np.ndarray          # TRACE_DTYPE, sorted by task id
    edges: np.ndarray            # int64 (n, 2): (predecessor, successor)
    num_workers: int
    kernel_names: dict[int, str]

    def __post_init__(self) -> None:
        if self.records.dtype != TRACE_DTYPE:
            raise InvalidType(f"trace records must have dtype {TRACE_DTYPE}")
        self.records = np.sort(self.records, order="task")
        self.edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[TaskRecord]:
        for r in self.records:
            yield TaskRecord(int(r["task"]), int(r["kernel_id"]), self.kernel_name(int(r["kernel_id"])),
                             int(r["worker"]), int(r["start_ns"]), int(r["end_ns"]))

    @property
    def lanes(self) -> list[str]:
        """Lane names, indexed by `worker`."""
        return [f"worker {i}" for i in range(self.num_workers)] + ["orchestrator"]

    def kernel_name(self, kernel_id: int) -> str:
        return self.kernel_names.get(kernel_id, f"kernel {kernel_id}")

    @property
    def span_ns(self) -> int:
        """From the first task start to the last task end."""
        if not len(self.records):
            return 0
        return int(self.records["end_ns"].max() - self.records["start_ns"].min())

    def busy_ns(self) -> np.ndarray:
        """Total kernel time per lane."""
        dur = self.records["end_ns"] - self.records["start_ns"]
        return np.bincount(self.records["worker"], weights=dur, minlength=self.num_workers + 1).astype(np.int64)

    def to_chrome(self) -> dict[str, Any]:
        """The trace as a Chrome trace-event dict (times in microseconds)."""
        events: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "pypto runtime"}},
        ]
        for lane, name in enumerate(self.lanes):
            events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": lane, "args": {"name": name}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": 0, "tid": lane,
                           "args": {"sort_index": lane}})
        by_task: dict[int, tuple[float, float, int]] = {}
        for r in self.records:
            ts, dur = r["start_ns"] / 1e3, (r["end_ns"] - r["start_ns"]) / 1e3
            task, lane = int(r["task"]), int(r["worker"])
            by_task[task] = (ts, dur, lane)
            events.append({"ph": "X", "name": self.kernel_name(int(r["kernel_id"])), "cat": "task", "pid": 0,
                           "tid": lane, "ts": ts, "dur": dur,
                           "args": {"task": task, "kernel_id": int(r["kernel_id"])}})
        for n, (a, b) in enumerate(self.edges.tolist()):
            if a not in by_task or b not in by_task:
                continue
            ta, da, la = by_task[a]
            tb, db, lb = by_task[b]
            # Flow points sit inside their slices so that viewers bind them to the right tasks.
            events.append({"ph": "s", "id": n, "name": "dep", "cat": "dep", "pid": 0, "tid": la,
                           "ts": ta + da / 2})
            events.append({"ph": "f", "bp": "e", "id": n, "name": "dep", "cat": "dep", "pid": 0, "tid": lb,
                           "ts": tb + db / 2})
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"num_workers": self.num_workers, "tasks": len(self.records),
                              "edges": len(self.edges)}}

    def to_chrome_json(self, path: str | os.PathLike[str]) -> Path:
        """Write the Chrome trace JSON to `path` (atomically); returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_chrome()))
        os.replace(tmp, p)
        return p


__all__ = ["TaskRecord", "Trace"]
