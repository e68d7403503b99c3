"""The swimlane: Chrome trace format of real multi-task runs, and the summary against a hand-built Trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pypto.errors import InvalidValue
from pypto.runtime.abi import TRACE_DTYPE
from pypto.runtime.trace import Trace
from pypto.runtime.trace_check import check_chrome_trace, trace_problems
from pypto.runtime.trace_summary import critical_path, format_summary, summarize


def hand_trace() -> Trace:
    """Two lanes (+ orchestrator). a(0..10) -> b(12..22) -> d(30..40); a -> c(11..16) on lane 1;
    e(0..5) independent on lane 1. Critical path a, b, d: 30 ns of kernels, gaps 2 + 8."""
    rows = [(0, 0, 0, 0, 10), (1, 1, 0, 12, 22), (2, 1, 1, 11, 16), (3, 2, 0, 30, 40), (4, 0, 1, 0, 5)]
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    return Trace(np.array(rows, dtype=TRACE_DTYPE), np.array(edges), 2, {0: "load", 1: "mul", 2: "store"},
                 {"mul": {"source": "k.py:7", "flops": 1000}})


def test_summary_numbers_of_a_hand_built_trace():
    tr = hand_trace()
    assert critical_path(tr) == [0, 1, 3]
    s = summarize(tr, work={"load": {"bytes": 400}}, peak_gbps=100.0)
    assert s["tasks"] == 5 and s["edges"] == 4 and s["span_us"] == pytest.approx(0.040)
    cp = s["critical_path"]
    assert cp["kernels"] == ["load", "mul", "store"] and cp["busy_us"] == pytest.approx(0.030)
    assert cp["gaps_us"] == pytest.approx(0.010)
    assert s["overhead"]["span_minus_critical_us"] == pytest.approx(0.010)
    lanes = {ln["lane"]: ln for ln in s["lanes"]}
    assert lanes["worker 0"]["utilisation"] == pytest.approx(30 / 40)
    assert lanes["worker 1"]["utilisation"] == pytest.approx(10 / 40)
    assert lanes["orchestrator"]["tasks"] == 0
    k = {k["kernel"]: k for k in s["kernels"]}
    assert k["mul"]["tasks"] == 2 and k["mul"]["total_us"] == pytest.approx(0.015)
    assert k["mul"]["mean_us"] == pytest.approx(0.0075) and k["mul"]["source"] == "k.py:7"
    # 2 tasks x 1000 flops in 15 ns; 2 x 400 bytes in 15 ns against 100 GB/s
    assert k["mul"]["gflops"] == pytest.approx(2000 / 15)
    assert k["load"]["gbps"] == pytest.approx(800 / 15) and k["load"]["gbps_of_peak"] == pytest.approx(800 / 1500)
    assert "gbps" not in k["store"]
    # ready: d waits for c's end (16) and b's (22) -> 22; started 30: waited 8 ns, the longest
    assert tr.ready_ns()[3] == 22 and s["overhead"]["ready_wait_max_us"] == pytest.approx(0.008)
    text = format_summary(s)
    assert "5 tasks, 4 edges" in text and "load -> mul -> store" in text and "k.py:7" in text
    json.dumps(s)  # plain data, for the report


def test_chrome_round_trip_and_counters():
    tr = hand_trace()
    data = tr.to_chrome()
    check_chrome_trace(data)
    back = Trace.from_chrome(json.loads(json.dumps(data)))
    assert back.records.tolist() == tr.records.tolist() and back.edges.tolist() == tr.edges.tolist()
    assert back.kernel_info == {"mul": {"source": "k.py:7", "flops": 1000}}
    counts = [(e["ts"], e["args"]["ready"]) for e in data["traceEvents"] if e["ph"] == "C"]
    # b ready at 10, started 12; c ready 10, started 11; d ready 22, started 30
    assert counts == [(0.010, 2), (0.011, 1), (0.012, 0), (0.022, 1), (0.030, 0)]


def test_cycle_and_bad_roofline_are_named():
    tr = hand_trace()
    tr.edges = np.array([(1, 3), (3, 1)])
    with pytest.raises(InvalidValue, match="cycle"):
        critical_path(tr)
    with pytest.raises(InvalidValue, match="peak_gbps must be a positive"):
        summarize(hand_trace(), peak_gbps=0)
    with pytest.raises(InvalidValue, match="not a trace written by a pypto run"):
        Trace.from_chrome({"traceEvents": [{"ph": "X", "cat": "task", "name": "k", "ts": 0, "dur": 1}]})


def test_validator_catches_each_rule():
    ok = hand_trace().to_chrome()
    assert trace_problems(ok) == []
    ev = ok["traceEvents"]
    x = next(i for i, e in enumerate(ev) if e["ph"] == "X")
    cases = {
        "missing dur": lambda v: v[x].pop("dur"),
        "negative dur": lambda v: v[x].update(dur=-1),
        "before the previous slice": lambda v: v.append({**v[x], "ts": -5.0}),
        "want one 's' and one 'f'": lambda v: v.remove(next(e for e in v if e["ph"] == "f")),
        "bind point": lambda v: next(e for e in v if e["ph"] == "f").update(bp="x"),
        "counter args must be numbers": lambda v: next(e for e in v if e["ph"] == "C").update(args={"r": "a"}),
        "without tid": lambda v: next(e for e in v if e["name"] == "thread_name").pop("tid"),
        "known phase": lambda v: v.append({"ph": "Q"}),
    }
    for what, spoil in cases.items():
        bad = json.loads(json.dumps(ok))
        spoil(bad["traceEvents"])
        probs = trace_problems(bad)
        assert any(what in p for p in probs), (what, probs)
    assert trace_problems([]) == ["not a JSON object with a traceEvents list"]
    with pytest.raises(InvalidValue, match="is not a Chrome trace"):
        check_chrome_trace({"traceEvents": [{"ph": "X", "name": "a"}]})


@pytest.mark.native
def test_real_multi_task_traces_are_valid(tmp_path, runtimes):
    from tests.programs.traced_graphs import gated_rows_run

    for workers, mode in [(1, "fifo"), (2, "fifo"), (4, "locality")]:
        tr = gated_rows_run(runtimes(workers, mode)).trace
        path = tr.to_chrome_json(tmp_path / f"t{workers}.json")
        data = json.loads(path.read_text())
        check_chrome_trace(data, str(path))
        assert sum(e["ph"] == "C" for e in data["traceEvents"]) > 0
        s = summarize(Trace.from_chrome(data))
        assert s["tasks"] == 14
        # the chain gate -> spin x3 -> reduce_sum is in every critical path
        cp = s["critical_path"]["kernels"]
        assert cp[0] == "noop" and cp[-1] == "reduce_sum" and cp.count("spin") == 3
        assert 0 <= s["overhead"]["span_minus_critical_us"] <= s["span_us"]
        assert all(0 <= ln["utilisation"] <= 1 for ln in s["lanes"])
