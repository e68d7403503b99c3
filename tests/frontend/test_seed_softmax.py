"""The seed slide's softmax, as written (tests/programs/seed_softmax.py), on the CPU backend: it
matches torch.softmax for several batch sizes with one compiled program, becomes one fused kernel
(max, subtract, exp, sum, divide), lowers to an ordinary `pl` program that prints and parses back,
and a second process finds the compiled program on disk."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pypto.language as pl
from pypto import ir
from tests.programs.seed_softmax import softmax

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.native
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_matches_torch_for_each_batch_size(batch):
    x = torch.randn(batch, 4, 8, 64, generator=torch.Generator().manual_seed(batch))
    y = softmax(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)


def test_one_program_for_every_batch_size_and_one_fused_kernel():
    for batch in (2, 5):
        softmax(torch.randn(batch, 4, 8, 64))
    (compiled,) = softmax.compiled_programs
    kernels = [f for f in compiled.program.functions if f.func_type is ir.FunctionType.InCore]
    assert len(kernels) == 1
    text = ir.python_print(kernels[0])
    for op in ("row_max", "sub", "exp", "row_sum", "div"):  # (a broadcasting sub and div)
        assert re.search(rf"\b{op}\(", text), op


def test_the_lowered_program_is_ordinary_pl():
    traced = softmax.lower(torch.randn(3, 4, 8, 64))
    text = ir.python_print(traced)
    assert "pl.range(" in text and "pl.tensor.row_max(" in text
    # set_vec_tile_shapes(1, 4, 1, 64): one kernel per batch, looping over [1, 4, 1, 64] tiles
    assert "with pl.incore():" in text and "pl.Tensor[[1, 4, 1, 64], pl.FP32] = pl.tensor.view(input_tensor" in text
    ir.assert_structural_equal(pl.parse(text), traced, enable_auto_mapping=True)


def test_a_second_process_finds_the_compiled_program_on_disk(tmp_path):
    code = ("import torch\nfrom tests.programs.seed_softmax import softmax\n"
            "x = torch.randn(2, 4, 8, 64)\n"
            "torch.testing.assert_close(softmax(x), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)\n"
            "print('cached' if softmax.compiled_programs[0].timings.get('cached') else 'compiled')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[1].stdout.strip() == "cached"
