#!/usr/bin/env python3
"""Run the public PyPTO project's examples, unchanged, against this package.

The examples (``examples/`` of hw-native-sys/pypto) are scripts whose ``__main__`` compiles a
program, runs it and compares it with a torch golden (an ``assert``), or lowers it and prints
the functions. This tool extracts them from a git mirror (or a plain checkout) at a given
commit into a temporary directory, runs each one as a module (``python -m examples.x.y``, so
the packages with relative imports work) with this package first on ``PYTHONPATH``, and prints
one PASS / FAIL / SKIP / TIMEOUT line per example with the reason, then a total. An example runs
as its docstring says: `python examples/x/y.py` from the root, or `python -m examples.x.y` when it
uses relative imports (the qwen3_jit package).

    python tools/run_public_examples.py --mirror /work/.mirror/hw-native-sys+pypto/repo
    python tools/run_public_examples.py --mirror ... --commit 661fe7537 -k paged
    python tools/run_public_examples.py --mirror ... --list

Nothing of the public project is copied into this repository: the examples live only in the
temporary directory (``--keep`` leaves it for reading).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
# The public project's HEAD that pl-head.md describes.
HEAD_COMMIT = "e2d0f78ae"
# Areas never run here: the multi-rank language is out of scope for a single-process CPU run.
EXCLUDED_DIRS = ("examples/distributed/",)
# Files that are libraries of other examples, not runnable examples themselves.
NOT_ENTRY = re.compile(r"(^|/)(__init__|config)\.py$|/kernels/")

# Extra command lines for examples whose __main__ takes arguments: every listed variant runs.
# The examples default to an on-board platform where they take one; the CPU maps all four
# platforms to the same backend, so the simulator id is passed as the public docs suggest.
VARIANTS: dict[str, list[list[str]]] = {
    "examples/advanced/03_mixed_kernel.py": [
        ["--mode", "mixed"],
        ["--mode", "staged"],
        ["--mode", "left_right"],
    ],
    "examples/models/09_paged_attention_spmd.py": [["-p", "a2a3sim", "-d", "0"]],
}


# Our own numeric checks of examples whose __main__ compares with no reference: (the example
# package they need, the script here that runs it against a golden).
GOLDEN_CHECKS = {"models/qwen3_jit golden": ("examples/models/qwen3_jit", "qwen3_decode_golden.py")}


@dataclass
class Example:
    path: str  # relative to the extracted root, e.g. examples/beginner/01_hello_world.py
    args: list[str] = field(default_factory=list)
    as_module: bool = False  # it uses relative imports: run it with -m
    script: str | None = None  # one of our GOLDEN_CHECKS scripts (its label is `path`)

    @property
    def module(self) -> str:
        return self.path[: -len(".py")].replace("/", ".")

    @property
    def name(self) -> str:
        if self.script is not None:
            return self.path
        label = self.path[len("examples/") :]
        return f"{label} {' '.join(self.args)}".rstrip()


@dataclass
class Outcome:
    status: str  # PASS / FAIL / SKIP / TIMEOUT
    reason: str
    seconds: float


def _is_git_dir(path: Path) -> bool:
    probe = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True, text=True, check=False
    )
    return probe.returncode == 0


def extract(source: Path, commit: str | None, dest: Path) -> str:
    """Put ``examples/`` of ``source`` at ``commit`` under ``dest``; returns what was extracted."""
    if _is_git_dir(source) and commit:
        sha = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--verify", f"{commit}^{{commit}}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if sha.returncode != 0:
            raise SystemExit(f"error: commit {commit!r} not found in {source}")
        archive = subprocess.run(
            ["git", "-C", str(source), "archive", "--format=tar", sha.stdout.strip(), "examples"],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            raise SystemExit(f"error: git archive failed: {archive.stderr.decode(errors='replace').strip()}")
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return sha.stdout.strip()[:12]
    src = source / "examples"
    if not src.is_dir():
        raise SystemExit(f"error: {source} is neither a git repository nor a checkout with examples/")
    shutil.copytree(src, dest / "examples")
    return "working tree"


def discover(root: Path) -> list[Example]:
    found = []
    for file in sorted((root / "examples").rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if rel.startswith(EXCLUDED_DIRS) or NOT_ENTRY.search(rel):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        if "__main__" not in text:
            continue  # a module of helpers: nothing to run
        relative = re.search(r"^\s*from \.", text, re.M) is not None
        for args in VARIANTS.get(rel, [[]]):
            found.append(Example(rel, list(args), relative))
    for label, (needs, script) in GOLDEN_CHECKS.items():
        if (root / needs).is_dir():
            found.append(Example(label, script=str(Path(__file__).resolve().parent / script)))
    return found


def _reason(stdout: str, stderr: str) -> str:
    """The line that says why: the exception line of a traceback, else the last line printed."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.match(r"^([A-Za-z_][\w.]*)(Error|Exception|Exit|Interrupt)\b|^[\w.]+Error:", line):
            return line
    tail = lines or [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    return tail[-1] if tail else "(no output)"


def run_one(ex: Example, root: Path, python: str, project: Path, timeout: float) -> Outcome:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(project), str(root), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [python, *([ex.script] if ex.script else ["-m", ex.module] if ex.as_module else [ex.path]), *ex.args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome("TIMEOUT", f"still running after {timeout:.0f}s", time.monotonic() - start)
    took = time.monotonic() - start
    if proc.returncode != 0:
        return Outcome("FAIL", f"exit {proc.returncode}: {_reason(proc.stdout, proc.stderr)}", took)
    out_lines = [ln.strip() for ln in proc.stdout.splitlines() if re.search(r"\w", ln)]  # (not rules of ====)
    last = out_lines[-1] if out_lines else ""
    # The March 2026 examples print run()'s RunResult ("Result: PASS ..." / "Result: FAIL ...")
    # and exit 0 either way: the printed verdict decides.
    verdict = next((ln for ln in reversed(out_lines) if ln.startswith("Result: ")), None)
    if verdict is not None:
        return Outcome("PASS" if verdict.startswith("Result: PASS") else "FAIL", verdict, took)
    # An example that catches its own failure and says so (e.g. one needing a device) is not a pass.
    if last.lower().startswith("skipped"):
        return Outcome("SKIP", last, took)
    return Outcome("PASS", last or "exit 0", took)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", required=True, type=Path, help="git mirror (bare or not) or a checkout of the public pypto")
    ap.add_argument("--commit", default=HEAD_COMMIT, help=f"commit to read (default {HEAD_COMMIT}; ignored for a non-git checkout)")
    ap.add_argument("--python", default=sys.executable, help="interpreter to run the examples with (needs torch)")
    ap.add_argument("--project", type=Path, default=PROJECT, help="directory holding the pypto package to test")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per example (default 900)")
    ap.add_argument("-k", dest="select", action="append", default=[], help="run only examples whose name contains this (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the examples and exit")
    ap.add_argument("--keep", action="store_true", help="keep the extracted examples")
    ap.add_argument("--workdir", type=Path, help="extract here instead of a new temporary directory")
    args = ap.parse_args(argv)

    root = args.workdir or Path(tempfile.mkdtemp(prefix="pypto-public-examples-"))
    if args.workdir:
        shutil.rmtree(root / "examples", ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
    try:
        what = extract(args.mirror, args.commit, root)
        examples = discover(root)
        if args.select:
            examples = [e for e in examples if any(s in e.name for s in args.select)]
        print(f"public examples from {args.mirror} at {what}: {len(examples)} to run, package {args.project}")
        if args.list:
            for ex in examples:
                print(f"  {ex.name}")
            return 0
        counts: dict[str, int] = {}
        for ex in examples:
            res = run_one(ex, root, args.python, args.project, args.timeout)
            counts[res.status] = counts.get(res.status, 0) + 1
            print(f"{res.status:<7} {ex.name:<52} {res.seconds:6.1f}s  {res.reason[:300]}", flush=True)
        summary = ", ".join(f"{counts.get(s, 0)} {s.lower()}" for s in ("PASS", "FAIL", "TIMEOUT", "SKIP"))
        print(f"public examples: {summary} of {len(examples)}")
        return 0 if counts.get("PASS", 0) == len(examples) else 1
    finally:
        if args.keep or args.workdir:
            print(f"examples kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
