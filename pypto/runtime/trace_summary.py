"""What a run's trace says: time per kernel, lane utilisation, the critical path, runtime overhead.

    s = summarize(trace, peak_gbps=..., peak_gflops=...)   # a JSON-able dict (for the HTML report)
    print(format_summary(s))                               # the text `pypto trace trace.json` prints

The critical path is the longest chain of tasks through the dependency edges, weighed by kernel
time: no schedule on any number of workers finishes sooner than its busy time. What the span adds
to it is runtime overhead and lack of parallelism; the gaps between consecutive tasks of the path
(a predecessor's end to its successor's start) are the part the scheduler adds on that chain.

Achieved bandwidth and compute need the work of each task: `bytes` / `flops` from the trace's
`kernel_info` (what the launcher put there) or the `work` argument. The roofline (`peak_gbps`,
`peak_gflops`) is the machine's, measured by the caller: none is assumed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import InvalidValue
from pypto.runtime.trace import Trace


def critical_path(trace: Trace) -> list[int]:
    """Tasks of the longest chain (by summed kernel time) through the edges, first to last."""
    recs = trace.records
    dur = {int(t): int(e - s) for t, s, e in zip(recs["task"], recs["start_ns"], recs["end_ns"])}
    succ: dict[int, list[int]] = {t: [] for t in dur}
    indeg = dict.fromkeys(dur, 0)
    for a, b in trace.edges.tolist():
        if a in dur and b in dur:
            succ[a].append(b)
            indeg[b] += 1
    best = dict(dur)  # longest chain ending at each task
    prev: dict[int, int] = {}
    todo = [t for t, d in indeg.items() if d == 0]
    seen = 0
    while todo:  # Kahn: every predecessor of a task is settled before the task
        a = todo.pop()
        seen += 1
        for b in succ[a]:
            if best[a] + dur[b] > best[b]:
                best[b], prev[b] = best[a] + dur[b], a
            indeg[b] -= 1
            if indeg[b] == 0:
                todo.append(b)
    if seen != len(dur):
        raise InvalidValue("the trace's dependency edges form a cycle: no critical path")
    if not best:
        return []
    t = max(best, key=lambda k: (best[k], -k))
    path = [t]
    while path[-1] in prev:
        path.append(prev[path[-1]])
    return path[::-1]


def summarize(trace: Trace, *, work: dict[str, dict[str, float]] | None = None,
              peak_gbps: float | None = None, peak_gflops: float | None = None) -> dict[str, Any]:
    """The summary as a dict of plain numbers (times in us). `work`: kernel -> {"bytes", "flops"} per
    task, over what the trace's kernel_info says."""
    for name, v in (("peak_gbps", peak_gbps), ("peak_gflops", peak_gflops)):
        if v is not None and not v > 0:
            raise InvalidValue(f"{name} must be a positive number, got {v!r}")
    recs = trace.records
    span = trace.span_ns
    tasks = {r.task: r for r in trace}
    kernels: dict[str, dict[str, Any]] = {}
    for r in tasks.values():
        k = kernels.setdefault(r.kernel, {"kernel": r.kernel, "tasks": 0, "total_us": 0.0})
        k["tasks"] += 1
        k["total_us"] += r.duration_ns / 1e3
    info = {name: dict(v) for name, v in trace.kernel_info.items()}
    for name, v in (work or {}).items():
        info.setdefault(name, {}).update(v)
    for k in kernels.values():
        k["mean_us"] = k["total_us"] / k["tasks"]
        meta = info.get(k["kernel"], {})
        if meta.get("source"):
            k["source"] = meta["source"]
        secs = k["total_us"] / 1e6
        for key, unit, peak in (("bytes", "gbps", peak_gbps), ("flops", "gflops", peak_gflops)):
            if meta.get(key) and secs > 0:
                k[unit] = meta[key] * k["tasks"] / secs / 1e9
                if peak:
                    k[f"{unit}_of_peak"] = k[unit] / peak
    busy = trace.busy_ns()
    lanes = [{"lane": name, "tasks": int((recs["worker"] == i).sum()), "busy_us": int(busy[i]) / 1e3,
              "utilisation": int(busy[i]) / span if span else 0.0}
             for i, name in enumerate(trace.lanes) if i < len(busy)]
    path = critical_path(trace)
    cp_busy = sum(tasks[t].duration_ns for t in path)
    gaps = [max(0, tasks[b].start_ns - tasks[a].end_ns) for a, b in zip(path, path[1:])]
    ready = trace.ready_ns()
    waits = np.array([r.start_ns - ready[r.task] for r in tasks.values()], dtype=np.int64)
    return {
        "tasks": len(tasks), "edges": len(trace.edges), "span_us": span / 1e3,
        "busy_us": int(busy.sum()) / 1e3,
        "kernels": sorted(kernels.values(), key=lambda k: -k["total_us"]),
        "lanes": lanes,
        "critical_path": {"tasks": path, "kernels": [tasks[t].kernel for t in path], "busy_us": cp_busy / 1e3,
                          "gaps_us": sum(gaps) / 1e3},
        "overhead": {"span_minus_critical_us": (span - cp_busy) / 1e3,
                     "critical_gaps_us": sum(gaps) / 1e3,
                     "ready_wait_mean_us": float(waits.mean()) / 1e3 if len(waits) else 0.0,
                     "ready_wait_max_us": int(waits.max()) / 1e3 if len(waits) else 0.0},
        "roofline": {"peak_gbps": peak_gbps, "peak_gflops": peak_gflops},
    }


def format_summary(s: dict[str, Any]) -> str:
    """The summary as the text the terminal shows."""
    out = [f"{s['tasks']} tasks, {s['edges']} edges over {s['span_us']:.1f} us on {len(s['lanes'])} lane(s)"]
    for ln in s["lanes"]:
        out.append(f"  {ln['lane']:<14} {ln['tasks']:>6} tasks  busy {ln['busy_us']:>10.1f} us "
                   f"({100 * ln['utilisation']:.1f}%)")
    out.append(f"  {'kernel':<28}{'tasks':>7}{'total us':>12}{'mean us':>10}{'GB/s':>10}{'GFLOP/s':>10}  source")
    for k in s["kernels"]:
        rate = [f"{k[u]:>10.2f}" + (f" ({100 * k[u + '_of_peak']:.0f}%)" if u + "_of_peak" in k else "")
                if u in k else f"{'-':>10}" for u in ("gbps", "gflops")]
        out.append(f"  {k['kernel']:<28}{k['tasks']:>7}{k['total_us']:>12.1f}{k['mean_us']:>10.2f}"
                   f"{rate[0]}{rate[1]}  {k.get('source', '')}")
    cp = s["critical_path"]
    names = " -> ".join(cp["kernels"][:8]) + (" -> ..." if len(cp["kernels"]) > 8 else "")
    out.append(f"critical path: {len(cp['tasks'])} tasks, {cp['busy_us']:.1f} us of kernels: {names}")
    o = s["overhead"]
    out.append(f"overhead: span - critical path {o['span_minus_critical_us']:.1f} us (gaps on the path "
               f"{o['critical_gaps_us']:.1f} us); ready -> start mean {o['ready_wait_mean_us']:.2f} us, "
               f"max {o['ready_wait_max_us']:.2f} us")
    r = s["roofline"]
    if r["peak_gbps"] or r["peak_gflops"]:
        out.append(f"roofline: {r['peak_gbps'] or '-'} GB/s, {r['peak_gflops'] or '-'} GFLOP/s (as given)")
    return "\n".join(out)


__all__ = ["critical_path", "format_summary", "summarize"]
