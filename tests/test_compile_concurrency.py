"""Concurrency stress: several processes compile different and identical programs into shared
and separate output directories with one shared compile cache; every result is checked against
NumPy, then every program is compiled again (from the cache, in fresh processes and directories)
and checked once more. Before the staged compile, a build or a cache store could read another
process's half-published files and poison the cache for good."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.native  # (the builds run in child processes: the conftest safety net cannot see them)

ROOT = Path(__file__).resolve().parents[1]

# Every variant has the same function names (so kernel files collide in a shared directory) and
# differs only in what it computes: a poisoned cache or a mixed-up build gives wrong numbers.
WORKER = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    import pypto.language as pl
    from pypto import ir
    from pypto.runtime import RunConfig

    VARIANTS = {VARIANTS}
    variant, rounds, dirs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    scale, shift = VARIANTS[variant]
    src = f"""
    import pypto.language as pl

    @pl.program
    class Stress:
        @pl.function
        def main(self, a: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
            return pl.add(pl.mul(a, {scale}), {shift})
    """
    prog = pl.parse(src)
    x = np.random.default_rng(variant).standard_normal((32, 64)).astype(np.float32)
    want = x * np.float32(scale) + np.float32(shift)
    bad = 0
    for r in range(rounds):
        out = dirs[r % len(dirs)]
        c = ir.compile(prog, output_dir=out)
        for platform in ("cpu", "interp"):
            got = c(x, config=RunConfig(platform=platform))
            if not np.array_equal(got, want):
                bad += 1
                print(f"variant {variant} round {r} {platform} in {out}: wrong result", flush=True)
    print(json.dumps({"variant": variant, "bad": bad}))
''')

VARIANTS = {0: (2.0, 1.0), 1: (3.0, -1.0), 2: (-1.0, 0.5)}


def _spawn(script: Path, env: dict, variant: int, rounds: int, dirs: list[Path]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(script), str(variant), str(rounds), *map(str, dirs)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)


def _finish(p: subprocess.Popen) -> dict:
    out, _ = p.communicate(timeout=600)
    assert p.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])


def test_parallel_compiles_into_shared_dirs_and_cache(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER.replace("{VARIANTS}", repr(VARIANTS)))
    env = {**os.environ, "PYPTO_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    shared = [tmp_path / "shared0", tmp_path / "shared1"]
    procs = []
    for v in VARIANTS:  # each variant twice (identical programs at once), into shared and own dirs
        procs.append(_spawn(script, env, v, 4, [shared[0], shared[1]]))
        procs.append(_spawn(script, env, v, 4, [shared[1], tmp_path / f"own{v}", shared[0]]))
    results = [_finish(p) for p in procs]
    assert all(r["bad"] == 0 for r in results), results
    # The shared directories hold one whole program each: every recorded file there, nothing half.
    for d in shared:
        manifest = json.loads((d / ".pypto-output.json").read_text())
        assert manifest["files"] and all((d / f).is_file() for f in manifest["files"])
        assert not list(d.glob(".pypto-stage-*"))
    # Later compiles (fresh processes and directories, served from the shared cache) are right too.
    again = [_spawn(script, env, v, 1, [tmp_path / f"again{v}"]) for v in VARIANTS]
    assert all(_finish(p)["bad"] == 0 for p in again)
