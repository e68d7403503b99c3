"""InsertSync + the interpreter's hazard checker, end to end: the compiled kernels run clean, and
deleting any one inserted synchronization from the .pto text is reported as a hazard naming the
two instructions involved (or the deadlock it causes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.interp import HazardError, run_program
from pypto.pto import parse_module


@pl.program
class Pipeline:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 128], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.matmul(pl.move(pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                        pl.move(pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
        for k0, (c,) in pl.range(64, 128, 64, init_values=(acc,)):
            al = pl.move(pl.load(x, [0, k0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            br = pl.move(pl.load(w, [k0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            cr = pl.yield_(pl.matmul_acc(c, al, br))
        v = pl.move(cr, target_memory=pl.Mem.Vec)
        y = pl.exp(pl.row_expand_sub(v, pl.row_max(v)))
        return pl.store(y, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], w: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.create_tensor([64, 64], dtype=pl.FP32)
        return self.k(x, w, out)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(Pipeline, output_dir=tmp_path_factory.mktemp("hz"), skip_ptoas=True)


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((64, 128), dtype=np.float32) * 0.1, rng.standard_normal((128, 64), dtype=np.float32) * 0.1]


def _reference(x, w):
    v = x @ w
    return np.exp(v - v.max(axis=1, keepdims=True))


def _run(kernel_text: str, orch_text: str):
    return run_program({"k": parse_module(kernel_text)}, parse_module(orch_text), "main", _inputs())


def test_synchronized_kernel_runs_clean(compiled):
    out = Path(compiled)
    res = _run((out / "kernels" / "k.pto").read_text(), (out / "orchestration" / "main.pto").read_text())
    np.testing.assert_allclose(res[0], _reference(*_inputs()), rtol=1e-5, atol=1e-5)


def test_removing_any_sync_is_reported(compiled):
    out = Path(compiled)
    text = (out / "kernels" / "k.pto").read_text()
    orch = (out / "orchestration" / "main.pto").read_text()
    lines = text.splitlines(keepends=True)
    syncs = [i for i, ln in enumerate(lines) if "pto.set_flag" in ln or "pto.wait_flag" in ln or "pto.pipe_barrier" in ln]
    assert len(syncs) >= 6, "InsertSync should synchronize the load -> move -> matmul -> move -> vector -> store chain"
    caught = 0
    for i in syncs:
        mutated = "".join(lines[:i] + lines[i + 1:])
        try:
            _run(mutated, orch)
        except HazardError as e:
            caught += 1
            msg = str(e)
            assert e.kind in ("RAW", "WAR", "WAW", "deadlock"), msg
            if e.kind != "deadlock":
                assert e.first and e.second, msg  # both instructions are named
    # a removed wait (or its set) leaves the pair unordered; each removal is caught
    assert caught == len(syncs), f"only {caught} of {len(syncs)} removed syncs were reported"
