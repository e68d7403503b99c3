"""Pass by pass: `passes_dump/` holds each pass's diff against the previous dump and an index of
which passes changed the IR."""

from __future__ import annotations

import contextlib
import io
import json

from pypto import ir
from pypto.passes.pass_diff import DiffWriter, change_label, read_index, unified_diff
from tests.programs.axpy import Axpy


def _compile(out, **kw):
    with contextlib.redirect_stdout(io.StringIO()):  # (the pass manager echoes every dump)
        ir.compile(Axpy, output_dir=out, skip_ptoas=True, **kw)


def test_dumps_come_with_diffs_and_an_index(tmp_path):
    out = tmp_path / "o"
    _compile(out, dump_passes=True)
    d = out / "passes_dump"
    index = read_index(d)
    assert index is not None
    assert [e["file"] for e in index] == sorted(p.name for p in d.glob("*.py"))
    assert index[0] == {"index": 0, "pass": "frontend", "file": "00_frontend.py", "diff": None, "changed": False,
                        "lines_added": 0, "lines_removed": 0}
    by_pass = {e["pass"]: e for e in index}
    # InitMemRef gives every tile a buffer: its diff is not empty, and what it adds is in its dump
    mem = by_pass["InitMemRef"]
    assert mem["changed"] and mem["diff"] == mem["file"].replace(".py", ".diff") and mem["lines_added"] > 0
    diff = (d / mem["diff"]).read_text().splitlines()
    prev = index[index.index(mem) - 1]
    assert diff[:2] == [f"--- {prev['file']}", f"+++ {mem['file']}"]
    added = [ln[1:] for ln in diff[2:] if ln.startswith("+")]
    assert len(added) == mem["lines_added"] and any("pl.block.alloc" in a for a in added)
    dump = (d / mem["file"]).read_text().splitlines()
    assert all(a in dump for a in added)
    removed = [ln[1:] for ln in diff[2:] if ln.startswith("-")]
    assert removed and all(r in (d / prev["file"]).read_text().splitlines() for r in removed)
    # Axpy has no pl.unroll loop: UnrollLoops changes nothing, and no empty diff file is written
    unroll = by_pass["UnrollLoops"]
    assert unroll["changed"] is False and unroll["diff"] is None and unroll["lines_added"] == 0
    assert not (d / unroll["file"].replace(".py", ".diff")).exists()
    assert all(e["seconds"] >= 0 for e in index[1:])
    assert sorted(p.name for p in d.glob("*.diff")) == sorted(e["diff"] for e in index if e["diff"])
    assert change_label(mem) == f"+{mem['lines_added']} -{mem['lines_removed']}"
    assert change_label(unroll) == "no change" and change_label(index[0]) == ""
    # the manifest knows the new files (a later compile into the directory removes them)
    files = json.loads((out / ".pypto-output.json").read_text())["files"]
    assert "passes_dump/index.json" in files and f"passes_dump/{mem['diff']}" in files


def test_no_dumps_no_diffs(tmp_path):
    out = tmp_path / "o"
    _compile(out)
    assert not (out / "passes_dump").exists()


def test_unified_diff_counts_and_a_missing_final_newline(tmp_path):
    text, added, removed = unified_diff("a\nb\nc", "a\nB\nc\nd", "x.py", "y.py")
    assert (added, removed) == (3, 2)  # b -> B, c (no newline) -> c, + d
    assert text.splitlines()[:2] == ["--- x.py", "+++ y.py"] and text.endswith("\n")
    assert text.endswith(" a\n-b\n-c\n+B\n+c\n+d\n")  # (the old last line had no newline: it still ends one)
    assert unified_diff("same\n", "same\n", "x", "y") == ("", 0, 0)
    w = DiffWriter(tmp_path)
    w.add("00_frontend", "a\n")
    e = w.add("01_after_P", "a\nb\n", seconds=0.5)
    assert e == {"index": 1, "pass": "P", "file": "01_after_P.py", "diff": "01_after_P.diff", "changed": True,
                 "lines_added": 1, "lines_removed": 0, "seconds": 0.5}
    assert read_index(tmp_path) == w.entries
    (tmp_path / "index.json").write_text("{not json")
    assert read_index(tmp_path) is None
