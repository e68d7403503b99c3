"""Execution traces: which task ran where and when, and the dependency edges between tasks.

A `Trace` holds one record per executed task (a NumPy structured array, `TRACE_DTYPE`: task,
kernel_id, worker, start_ns, end_ns; times are steady-clock ns since the run began) and the edges
the scheduler enforced (predecessor still unfinished when the successor was submitted). Lanes are
the workers 0..num_workers-1 plus one for the orchestrating thread, which executes tasks while it
waits (and all of them in serial mode).

`to_chrome_json()` writes the Chrome trace-event format that Perfetto (ui.perfetto.dev) and
chrome://tracing open: one complete ("X") event per task (kernel name; its source line and other
`kernel_info` the launcher knows), one thread lane per worker, flow events ("s" / "f") drawing the
dependency arrows, and a "ready tasks" counter ("C"). The runtime records no submit times, so a
task counts as ready from the end of its last recorded predecessor (from its own start when it
has none: the count is a lower bound). `Trace.from_chrome()` reads such a file back;
`pypto.runtime.trace_summary` summarises a trace (per kernel, per lane, critical path, overhead).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import InvalidType, InvalidValue
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
    # kernel name -> what the launcher knows of it: "source" (file:line), "bytes" / "flops" per task
    kernel_info: dict[str, dict[str, Any]] = field(default_factory=dict)

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

    def ready_ns(self) -> dict[int, int]:
        """Task -> when it became ready: its last predecessor's end (its own start without one)."""
        ends = {int(t): int(e) for t, e in zip(self.records["task"], self.records["end_ns"])}
        ready = {int(t): int(s) for t, s in zip(self.records["task"], self.records["start_ns"])}
        last: dict[int, int] = {}
        for a, b in self.edges.tolist():
            if a in ends and b in ready:
                last[b] = max(last.get(b, ends[a]), ends[a])
        for b, t in last.items():
            ready[b] = min(t, ready[b])  # (a clock read after the successor started cannot delay it)
        return ready

    def _ready_counter(self) -> list[dict[str, Any]]:
        """"C" events: how many tasks were ready and not yet started, at each change."""
        ready = self.ready_ns()
        steps: list[tuple[int, int]] = []
        for r in self.records:
            t, s = int(r["task"]), int(r["start_ns"])
            if ready[t] < s:
                steps += [(ready[t], 1), (s, -1)]
        steps.sort()
        out: list[dict[str, Any]] = []
        n = 0
        for k, (ts, d) in enumerate(steps):
            n += d
            if k + 1 < len(steps) and steps[k + 1][0] == ts:
                continue  # one sample per instant
            out.append({"ph": "C", "name": "ready tasks", "pid": 0, "ts": ts / 1e3, "args": {"ready": n}})
        return out

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
        ready = self.ready_ns()
        # Per lane in start order: viewers (and the format) want each lane's timestamps monotonic.
        for r in sorted(self.records.tolist(), key=lambda r: (r[2], r[3], r[0])):
            task, kid, lane, start, end = (int(v) for v in r)
            ts, dur = start / 1e3, (end - start) / 1e3
            by_task[task] = (ts, dur, lane)
            name = self.kernel_name(kid)
            args: dict[str, Any] = {"task": task, "kernel_id": kid, "waited_us": (start - ready[task]) / 1e3}
            args.update(self.kernel_info.get(name, {}))
            events.append({"ph": "X", "name": name, "cat": "task", "pid": 0,
                           "tid": lane, "ts": ts, "dur": dur, "args": args})
        for n, (a, b) in enumerate(self.edges.tolist()):
            if a not in by_task or b not in by_task:
                continue
            ta, da, la = by_task[a]
            tb, db, lb = by_task[b]
            # Flow points sit inside their slices so that viewers bind them to the right tasks.
            events.append({"ph": "s", "id": n, "name": "dep", "cat": "dep", "pid": 0, "tid": la,
                           "ts": ta + da / 2, "args": {"from": a, "to": b}})
            events.append({"ph": "f", "bp": "e", "id": n, "name": "dep", "cat": "dep", "pid": 0, "tid": lb,
                           "ts": tb + db / 2})
        events += self._ready_counter()
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"num_workers": self.num_workers, "tasks": len(self.records),
                              "edges": len(self.edges)}}

    @classmethod
    def from_chrome(cls, data: dict[str, Any]) -> Trace:
        """Read back a trace `to_chrome` wrote (task slices, lanes, dependency flows)."""
        try:
            events = data["traceEvents"]
            slices = [e for e in events if e["ph"] == "X" and e.get("cat") == "task"]
            rows = [(int(e["args"]["task"]), int(e["args"]["kernel_id"]), int(e["tid"]),
                     round(e["ts"] * 1e3), round((e["ts"] + e["dur"]) * 1e3)) for e in slices]
            edges = [(int(e["args"]["from"]), int(e["args"]["to"])) for e in events if e["ph"] == "s"]
            nw = int(data.get("otherData", {}).get("num_workers", max((r[2] for r in rows), default=0)))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidValue(f"not a trace written by a pypto run (task slices with args task/kernel_id, "
                               f"flows with args from/to): {type(e).__name__} {e}") from None
        names = {int(e["args"]["kernel_id"]): e["name"] for e in slices}
        skip = {"task", "kernel_id", "waited_us"}
        info = {e["name"]: {k: v for k, v in e["args"].items() if k not in skip} for e in slices}
        return cls(np.array(rows, dtype=TRACE_DTYPE), np.array(edges, dtype=np.int64), nw, names,
                   {k: v for k, v in info.items() if v})

    def to_chrome_json(self, path: str | os.PathLike[str]) -> Path:
        """Write the Chrome trace JSON to `path` (atomically); returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_chrome()))
        os.replace(tmp, p)
        return p


__all__ = ["TaskRecord", "Trace"]
