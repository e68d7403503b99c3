"""Each `pypto` subcommand run as a user runs it: `python -m pypto.tools.cli ...` in a child process,
on a program file written to tmp_path. User mistakes exit with status 2 and one message, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tests.programs.axpy as axpy_module

ROOT = Path(__file__).resolve().parents[1]

# the user's file: the shared Axpy program (tests/programs/axpy.py), with plain Python beside it
PROGRAM = Path(axpy_module.__file__).read_text() + '''

def helper():  # plain Python next to the program is fine
    return 16
'''


def pypto(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pypto.tools.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    p = tmp_path / "axpy.py"
    p.write_text(PROGRAM)
    return p


def _inputs(tmp_path: Path, rows: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((rows, 32), dtype=np.float32), rng.standard_normal((rows, 32), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return x, y


def test_help_of_each_subcommand(tmp_path):
    for cmd in ("compile", "run", "bench", "show", "ir", "pto", "memmap", "trace"):
        r = pypto(cmd, "--help", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"usage: pypto {cmd}" in r.stdout


def test_run_on_the_interpreter_with_given_inputs(tmp_path, prog):
    x, y = _inputs(tmp_path, 40)
    r = pypto("run", "axpy.py:Axpy", "--platform", "interp", "-o", "out", "--input", "x=x.npy", "--input", "y=y.npy",
              "--scalar", "a=2.5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "out" / "outputs" / "out.npy")
    np.testing.assert_allclose(got, 2.5 * x + y, rtol=1e-6)
    assert "out: float32[40, 32]" in r.stdout and "trace: none" in r.stdout


def test_generated_inputs_follow_the_seed_and_dims(tmp_path, prog):
    sums = []
    for seed, d in (("1", "out1"), ("1", "out2"), ("2", "out3")):
        r = pypto("run", "axpy.py", "--platform", "interp", "-o", d, "--dim", "M=24", "--seed", seed, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        a = np.load(tmp_path / d / "outputs" / "out.npy")
        assert a.shape == (24, 32) and np.isfinite(a).all()
        sums.append(float(a.sum()))
    assert sums[0] == sums[1] != sums[2]


@pytest.mark.native
def test_compile_run_show_bench_on_the_cpu(tmp_path, prog):
    r = pypto("compile", "axpy.py", "-o", "c", "-v", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"compiled Axpy -> {tmp_path / 'c'}" in r.stdout and (tmp_path / "c" / "kernels" / "axpy.pto").is_file()
    assert "pypto: compiling Axpy" in r.stderr  # -v: a line per stage
    x, y = _inputs(tmp_path, 40)
    r = pypto("run", "axpy.py", "-o", "r", "--input", "x=x.npy", "--input", "y=y.npy", "--scalar", "a=2.5",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "r" / "outputs" / "out.npy"), 2.5 * x + y, rtol=1e-6)
    assert "3 tasks" in r.stdout and f"trace: {tmp_path / 'r' / 'trace.json'}" in r.stdout
    assert (tmp_path / "r" / "trace.json").is_file()
    r = pypto("show", "r", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "axpy" in r.stdout and "peak Vec" in r.stdout and "trace.json" in r.stdout and "report:" in r.stdout
    r = pypto("bench", "axpy.py", "-o", "r", "--dim", "M=64", "--repeat", "3", "--warmup", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "3 runs after 1 warm-up" in r.stdout and "median" in r.stdout


def test_ir_after_a_pass(tmp_path, prog):
    r = pypto("ir", "axpy.py", "--after", "InitMemRef", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# pypto.program: Axpy") and "===== IR" not in r.stdout
    first = pypto("ir", "axpy.py", "--after", "frontend", cwd=tmp_path).stdout
    assert first != r.stdout and "pl.program" in first
    listed = pypto("ir", "axpy.py", "--list", cwd=tmp_path).stdout.split()
    assert listed[0] == "frontend" and "InitMemRef" in listed and "InsertSync" in listed


def test_ir_diff_and_the_passes_that_changed_it(tmp_path, prog):
    r = pypto("ir", "axpy.py", "--after", "InitMemRef", "--diff", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ ") and lines[1].endswith("_after_InitMemRef.py")
    added = [ln[1:] for ln in lines[2:] if ln.startswith("+")]
    assert any("pl.block.alloc" in a for a in added)  # every tile gets a buffer
    dump = (tmp_path / "out" / "passes_dump" / lines[1][4:]).read_text().splitlines()
    assert added and all(a in dump for a in added)
    same = pypto("ir", "axpy.py", "--after", "UnrollLoops", "--diff", cwd=tmp_path)  # (no pl.unroll here)
    assert same.returncode == 0 and same.stdout == "" and "UnrollLoops: no change" in same.stderr
    listed = dict(ln.split(None, 1) for ln in pypto("ir", "axpy.py", "--list", cwd=tmp_path).stdout.splitlines()
                  if " " in ln)
    assert listed["UnrollLoops"] == "no change" and listed["InitMemRef"] == f"+{len(added)} -" + str(
        sum(ln.startswith("-") for ln in lines[2:]))
    for args, msg in ((("--after", "NoSuchPass", "--diff"), "unknown pass 'NoSuchPass'"),
                      (("--after", "frontend", "--diff"), "no earlier IR")):
        r = pypto("ir", "axpy.py", *args, cwd=tmp_path)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


@pytest.mark.native
def test_pto_runs_a_hand_written_kernel_on_both_backends(tmp_path, prog):
    assert pypto("compile", "axpy.py", "-o", "c", "--skip-native", cwd=tmp_path).returncode == 0
    kernel = tmp_path / "k.pto"  # a .pto file on its own, as a user writes one
    kernel.write_text((tmp_path / "c" / "kernels" / "axpy.pto").read_text())
    opts = ["--shape", "x=16x32", "--shape", "y=16x32", "--shape", "out=16x32", "--scalar", "rows=16",
            "--scalar", "a=3"]
    outs = {}
    for target in ("interp", "cpu"):
        r = pypto("pto", "k.pto", "--target", target, *opts, "-o", target, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"ran @axpy on {target}" in r.stdout
        outs[target] = np.load(tmp_path / target / "out.npy")
    rng = np.random.default_rng(0)  # the generated inputs: seed 0, in parameter order
    x, y = rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
    np.testing.assert_allclose(outs["interp"], 3 * x + y, rtol=1e-6)
    np.testing.assert_array_equal(outs["cpu"], outs["interp"])


def test_user_mistakes_exit_2_with_one_message(tmp_path, prog):
    (tmp_path / "none.py").write_text("x = 1\n")
    (tmp_path / "bad.pto").write_text("module { func.func @k( {")
    (tmp_path / "x.npy").write_bytes(b"not an array")
    cases = [
        (("compile", "missing.py"), "no such file: missing.py"),
        (("compile", "none.py"), "no @pl.program or @pl.function"),
        (("run", "axpy.py:Other", "--platform", "interp"), "no program or function named 'Other'"),
        (("run", "axpy.py", "--platform", "interp", "--input", "z=x.npy"), "has no parameter 'z'"),
        (("run", "axpy.py", "--platform", "interp", "--dim", "M=0"), "positive integer"),
        (("ir", "axpy.py", "--after", "NoSuchPass"), "unknown pass 'NoSuchPass'"),
        (("pto", "bad.pto"), "bad.pto"),
        (("pto", "missing.pto", "--target", "interp"), "no such file"),
        (("show", str(tmp_path)), "is not an output directory"),
    ]
    for argv, msg in cases:
        r = pypto(*argv, cwd=tmp_path)
        assert r.returncode == 2, (argv, r.stdout, r.stderr)
        assert msg in r.stderr and f"pypto {argv[0]}:" in r.stderr, (argv, r.stderr)
        assert "Traceback" not in r.stderr, (argv, r.stderr)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "pypto"
    if not script.exists():
        pytest.skip("pypto is not installed in this environment (pyproject.toml declares the script)")
    assert "pypto.tools.cli" in script.read_text(errors="replace")
