"""Traces: per-task records and the Chrome trace-event JSON (lanes, slices, dependency flows)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.programs.traced_graphs import gated_rows_run, spin_rows_graph  # noqa: F401

pytestmark = pytest.mark.native


def test_chrome_trace_json(tmp_path, runtimes):
    result = gated_rows_run(runtimes(2, "fifo"))
    tr = result.trace
    ntasks = 14
    assert len(tr) == ntasks == result.stats.tasks
    path = tr.to_chrome_json(tmp_path / "sub" / "trace.json")
    data = json.loads(path.read_text())
    events = data["traceEvents"]

    lanes = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert lanes == {0: "worker 0", 1: "worker 1", 2: "orchestrator"}

    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == ntasks
    assert {e["name"] for e in slices} == {"noop", "spin", "reduce_sum"}
    assert all(e["dur"] >= 0 and e["tid"] in lanes for e in slices)
    assert sorted(e["args"]["task"] for e in slices) == list(range(ntasks))

    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(finishes) == len(tr.edges) > 0
    assert sorted(e["id"] for e in starts) == sorted(e["id"] for e in finishes)
    assert all(e["bp"] == "e" for e in finishes)


def test_records_respect_dependencies(runtimes):
    for workers, mode in [(2, "fifo"), (2, "locality"), (4, "locality")]:
        tr = gated_rows_run(runtimes(workers, mode)).trace
        rec = {r.task: r for r in tr}
        assert len(tr.edges) >= 16  # gate -> 4 rows, 4 x 2 chain links, 4 rows -> join
        for a, b in tr.edges.tolist():
            assert rec[a].end_ns <= rec[b].start_ns, (a, b)
        assert all(0 <= r.worker <= workers and r.start_ns <= r.end_ns for r in tr)
        assert tr.span_ns > 0 and tr.busy_ns().sum() > 0


def test_serial_trace_runs_on_the_orchestrator_lane(serial):
    tr = serial.run_graph(spin_rows_graph(2, 2), trace=True).trace
    assert tr.lanes == ["orchestrator"]
    assert set(tr.records["worker"].tolist()) == {0}
    assert tr.records["task"].tolist() == list(range(5))
    # serial mode runs in submission order
    assert (np.diff(tr.records["start_ns"]) >= 0).all()


def test_trace_off_records_nothing(runtimes):
    result = runtimes(2, "fifo").run_graph(spin_rows_graph(2, 1))
    assert result.trace is None and result.stats.tasks == 3
    assert sum(result.stats.lane_tasks) == 3
