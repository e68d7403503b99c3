"""Checks a dict against the Chrome trace-event format (the JSON object form) that Perfetto and
chrome://tracing read, as far as the events a pypto trace uses: "X" complete slices, "s" / "f" flow
arrows, "C" counters, "M" metadata. Also: each lane's slices in time order, and each flow start
having its finish. `check_chrome_trace` raises one error that lists every problem found.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pypto.errors import InvalidValue

_NUM = (int, float)
_REQUIRED = {  # phase -> keys every event of it needs
    "X": ("name", "ts", "dur", "pid", "tid"),
    "s": ("name", "id", "ts", "pid", "tid"),
    "f": ("name", "id", "ts", "pid", "tid"),
    "C": ("name", "ts", "pid", "args"),
    "M": ("name", "pid", "args"),
}
_METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def _is_num(v: Any) -> bool:
    return isinstance(v, _NUM) and not isinstance(v, bool) and math.isfinite(v)


def trace_problems(data: Any) -> list[str]:
    """Every way `data` breaks the format (empty when it is a valid trace)."""
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        return ["not a JSON object with a traceEvents list"]
    bad: list[str] = []
    last: dict[tuple[Any, Any], float] = {}
    flows: dict[Any, list[str]] = {}
    for i, e in enumerate(data["traceEvents"]):
        if not isinstance(e, dict) or e.get("ph") not in _REQUIRED:
            bad.append(f"event {i}: not an object with a known phase (X, s, f, C, M): {e!r:.80}")
            continue
        ph = e["ph"]
        missing = [k for k in _REQUIRED[ph] if k not in e]
        if missing:
            bad.append(f"event {i} ({ph}): missing {', '.join(missing)}")
            continue
        for k in ("ts", "dur"):
            if k in e and not _is_num(e[k]):
                bad.append(f"event {i} ({ph}): {k} is not a finite number: {e[k]!r}")
        if "args" in e and not isinstance(e["args"], dict):
            bad.append(f"event {i} ({ph}): args is not an object")
            continue
        if ph == "X":
            if _is_num(e["dur"]) and e["dur"] < 0:
                bad.append(f"event {i} (X): negative dur {e['dur']}")
            lane = (e["pid"], e["tid"])
            if _is_num(e["ts"]):
                if e["ts"] < last.get(lane, -math.inf):
                    bad.append(f"event {i} (X): ts {e['ts']} before the previous slice on lane {lane}")
                last[lane] = e["ts"]
        elif ph in "sf":
            flows.setdefault(e["id"], []).append(ph)
            if ph == "f" and e.get("bp") not in (None, "e"):
                bad.append(f"event {i} (f): bind point bp must be 'e' (enclosing slice), got {e.get('bp')!r}")
        elif ph == "C":
            if not e["args"] or not all(_is_num(v) for v in e["args"].values()):
                bad.append(f"event {i} (C): counter args must be numbers: {e['args']!r}")
        elif ph == "M":
            if e["name"] not in _METADATA:
                bad.append(f"event {i} (M): unknown metadata {e['name']!r}")
            elif e["name"].startswith("thread") and "tid" not in e:
                bad.append(f"event {i} (M): {e['name']} without tid")
            elif e["name"].endswith("_name") and not isinstance(e["args"].get("name"), str):
                bad.append(f"event {i} (M): {e['name']} without a string args.name")
    for fid, phs in flows.items():
        if sorted(phs) != ["f", "s"]:
            bad.append(f"flow id {fid}: phases {phs}, want one 's' and one 'f'")
    return bad


def check_chrome_trace(data: Any, what: str = "trace") -> None:
    """Raise `InvalidValue` naming every problem of `data` (see `trace_problems`)."""
    bad = trace_problems(data)
    if bad:
        more = f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else ""
        raise InvalidValue(f"{what} is not a Chrome trace the viewers read:\n  " + "\n  ".join(bad[:20]) + more)


def load_chrome_trace(path: str | Path) -> dict[str, Any]:
    """Read and check a trace file."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise InvalidValue(f"{path} is not JSON: {e}") from None
    check_chrome_trace(data, str(path))
    return data


__all__ = ["check_chrome_trace", "load_chrome_trace", "trace_problems"]
