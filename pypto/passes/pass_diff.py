"""Pass by pass: what each pass changed in the IR, next to the dumps the pass manager writes.

With `dump_passes`, `passes_dump/` holds `00_frontend.py` and `NN_after_<Pass>.py`. For each pass
this adds `NN_after_<Pass>.diff`, the unified diff against the previous dump (file names as headers),
written only when the pass changed the printed IR, and `index.json`, one entry per dump:

    {"index": 3, "pass": "ConvertToSSA", "file": "03_after_ConvertToSSA.py",
     "diff": "03_after_ConvertToSSA.diff" | null, "changed": true, "lines_added": 12,
     "lines_removed": 9, "seconds": 0.0021}

The frontend entry (index 0) is the baseline: no diff, "changed" false. Nothing here runs unless
dumps are written, so compiling without `dump_passes` costs nothing.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

INDEX = "index.json"


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> tuple[str, int, int]:
    """The unified diff of two dumps, and its counts of added and removed lines."""
    lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                      fromfile=old_name, tofile=new_name))
    # (a file without a final newline would run its last line into the next hunk header)
    text = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)
    body = [ln for ln in lines[2:] if not ln.startswith("@@")]  # past the ---/+++ headers
    return text, sum(ln.startswith("+") for ln in body), sum(ln.startswith("-") for ln in body)


@dataclass
class DiffWriter:
    """Writes each dump's diff against the previous one and keeps `index.json` current, so that a
    compile that fails half way still leaves an index of the passes that ran."""

    dump_dir: Path
    entries: list[dict] = field(default_factory=list)
    _prev: tuple[str, str] | None = None  # (file name, text) of the previous dump

    def add(self, name: str, text: str, seconds: float | None = None) -> dict:
        """Record the dump `name` (file stem, e.g. `03_after_ConvertToSSA`) whose text is `text`."""
        file = f"{name}.py"
        index, _, pass_name = name.partition("_")
        pass_name = pass_name.removeprefix("after_")
        entry: dict = {"index": int(index) if index.isdigit() else len(self.entries), "pass": pass_name,
                       "file": file, "diff": None, "changed": False, "lines_added": 0, "lines_removed": 0}
        if self._prev is not None:
            diff, added, removed = unified_diff(self._prev[1], text, self._prev[0], file)
            if diff:
                (self.dump_dir / f"{name}.diff").write_text(diff)
                entry.update(diff=f"{name}.diff", changed=True, lines_added=added, lines_removed=removed)
        if seconds is not None:
            entry["seconds"] = round(seconds, 6)
        self.entries.append(entry)
        self._prev = (file, text)
        (self.dump_dir / INDEX).write_text(json.dumps(self.entries, indent=1) + "\n")
        return entry


def read_index(dump_dir: Path) -> list[dict] | None:
    """The entries of `dump_dir/index.json`, or None where there is none (an older compile)."""
    try:
        data = json.loads((Path(dump_dir) / INDEX).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, list) else None


def change_label(entry: dict) -> str:
    """`+12 -9`, `no change`, or `` for the baseline, as `pypto ir --list` shows it."""
    if entry.get("index") == 0 or entry.get("pass") == "frontend":
        return ""
    if not entry.get("changed"):
        return "no change"
    return f"+{entry.get('lines_added', 0)} -{entry.get('lines_removed', 0)}"


__all__ = ["INDEX", "DiffWriter", "change_label", "read_index", "unified_diff"]
