"""The `pypto` command: compile a pl file, check a .pto file, show a memory map and a trace summary."""

from __future__ import annotations

import numpy as np
import pytest

from pypto import ir
from pypto.runtime import RunConfig
from pypto.tools.cli import main
from tests.programs.axpy import Axpy


@pytest.mark.native
def test_cli_end_to_end(tmp_path, capsys):
    src = tmp_path / "axpy.py"
    src.write_text(ir.python_print(Axpy))
    out = tmp_path / "out"
    assert main(["compile", str(src), "-o", str(out)]) == 0
    assert "axpy" in capsys.readouterr().out
    assert main(["pto", str(out / "kernels" / "axpy.pto"), "-q"]) == 0
    assert "canonical" in capsys.readouterr().err
    assert main(["memmap", str(out)]) == 0
    text = capsys.readouterr().out
    assert "kernel axpy" in text and "Vec" in text
    c = ir.compile(Axpy, output_dir=tmp_path / "o2")
    x = np.ones((64, 32), np.float32)
    c(x, x, 1.0, config=RunConfig(enable_trace=True, trace_path=str(tmp_path / "t.json")))
    assert main(["trace", str(tmp_path / "t.json")]) == 0
    assert "4 tasks" in capsys.readouterr().out


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.pto"
    bad.write_text("module { func.func @k( {")
    assert main(["pto", str(bad)]) == 2
    assert "pypto pto:" in capsys.readouterr().err


def test_malformed_reports_are_named_not_tracebacks(tmp_path, capsys):
    from pypto.tools.cli import main

    mem = tmp_path / "mem.json"
    mem.write_text('{"kernels": [{"function": "k"}]}')
    tr = tmp_path / "trace.json"
    tr.write_text('{"traceEvents": [{"ph": "X", "name": "a"}]}')
    assert main(["memmap", str(mem)]) == 2
    assert "is not a memory report" in capsys.readouterr().err
    assert main(["trace", str(tr)]) == 2
    assert "is not a Chrome trace" in capsys.readouterr().err
    assert main(["memmap", str(mem), "--width", "-5"]) == 2
    assert "--width must be at least 1" in capsys.readouterr().err


@pytest.mark.native
def test_cli_trace_summary_as_a_user_runs_it(tmp_path):
    import json
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    from pypto.runtime.trace_check import check_chrome_trace

    c = ir.compile(Axpy, output_dir=tmp_path / "o")
    x = np.ones((64, 32), np.float32)
    t = tmp_path / "t.json"
    c(x, x, 1.0, config=RunConfig(num_workers=2, enable_trace=True, trace_path=str(t)))
    data = json.loads(t.read_text())
    check_chrome_trace(data, str(t))
    slices = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert all(re.fullmatch(r"axpy\.py:\d+", e["args"]["source"]) for e in slices)  # the kernel's def line
    work = tmp_path / "work.json"
    work.write_text(json.dumps({"axpy": {"bytes": 3 * 16 * 32 * 4}}))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cmd = [sys.executable, "-m", "pypto.tools.cli", "trace", str(t)]
    r = subprocess.run([*cmd, "--work", str(work), "--peak-gbps", "50"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "4 tasks" in r.stdout and "critical path:" in r.stdout and "overhead:" in r.stdout
    assert "worker 1" in r.stdout and "roofline: 50.0 GB/s" in r.stdout
    r = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env)
    s = json.loads(r.stdout)
    assert s["tasks"] == 4 and s["kernels"][0]["kernel"] == "axpy" and s["kernels"][0]["tasks"] == 4
    r = subprocess.run([*cmd, "--peak-gbps", "-1"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "peak_gbps must be a positive number" in r.stderr
