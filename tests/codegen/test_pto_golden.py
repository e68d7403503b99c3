"""Golden `.pto` text for representative kernels: elementwise, row reductions, matmul through
Mat/Left/Right/Acc, and a loop with a dynamic bound. The generated text must equal the checked-in
file (regenerate with `PYPTO_UPDATE_GOLDEN=1 pytest tests/codegen`), parse back, and print
identically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pypto.language as pl
from pypto import ir
from pypto.pto import parse_module, print_module

GOLDEN = Path(__file__).parent / "golden"
N = pl.dynamic("N")


@pl.program
class Elementwise:
    @pl.function(type=pl.FunctionType.InCore)
    def relu_fma(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[32, 128], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        ta = pl.load(a, [0, 0], [32, 128])
        tb = pl.load(b, [0, 0], [32, 128])
        y = pl.block.relu(pl.add(pl.mul(ta, 2.0), tb))
        return pl.store(y, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[32, 128], pl.FP32]) -> pl.Tensor[[32, 128], pl.FP32]:
        out = pl.create_tensor([32, 128], dtype=pl.FP32)
        return self.relu_fma(a, b, out)


@pl.program
class RowReductions:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax(self, x: pl.Tensor[[16, 256], pl.FP32], out: pl.Out[pl.Tensor[[16, 256], pl.FP32]]) -> pl.Tensor[[16, 256], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 256])
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
        return pl.store(pl.row_expand_div(e, pl.row_sum(e)), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 256], pl.FP32]) -> pl.Tensor[[16, 256], pl.FP32]:
        out = pl.create_tensor([16, 256], dtype=pl.FP32)
        return self.softmax(x, out)


@pl.program
class Matmul:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16],
           c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                        pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
        al = pl.move(pl.load(a, [0, 64], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        br = pl.move(pl.load(b, [64, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        return pl.store(pl.matmul_acc(acc, al, br), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.create_tensor([64, 64], dtype=pl.FP32)
        return self.mm(a, b, c)


@pl.program
class DynamicLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, x: pl.Tensor[[N, 64], pl.FP32], out: pl.Out[pl.Tensor[[N, 64], pl.FP32]]) -> pl.Tensor[[N, 64], pl.FP32]:
        n = pl.tensor.dim(x, 0)
        for i in pl.range(0, n, 8):
            r = pl.min(8, n - i)
            t = pl.load(x, [i, 0], [8, 64], valid_shapes=[r, 64])
            out = pl.store(pl.mul(t, 0.5), [i, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, 64], pl.FP32], out: pl.Out[pl.Tensor[[N, 64], pl.FP32]]) -> pl.Tensor[[N, 64], pl.FP32]:
        return self.scale_rows(x, out)


CASES = {"elementwise": (Elementwise, "relu_fma"), "row_reductions": (RowReductions, "softmax"),
         "matmul": (Matmul, "mm"), "dynamic_loop": (DynamicLoop, "scale_rows")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_pto(case, tmp_path):
    prog, kernel = CASES[case]
    out = ir.compile(prog, output_dir=tmp_path / case, skip_ptoas=True)
    text = (Path(out) / "kernels" / f"{kernel}.pto").read_text()
    golden = GOLDEN / f"{case}.pto"
    if os.environ.get("PYPTO_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"{case}: generated PTO differs from {golden}"
    assert print_module(parse_module(text)) == text
    orch = (Path(out) / "orchestration" / "main.pto").read_text()
    assert print_module(parse_module(orch)) == orch


@pytest.mark.native
def test_golden_kernels_run(tmp_path):
    """The goldens are not just text: each program computes the right thing."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 32, 128), dtype=np.float32)
    got = ir.compile(Elementwise, output_dir=tmp_path / "e")(a, b)
    np.testing.assert_allclose(got, np.maximum(a * 2 + b, 0), rtol=1e-6)
    x = rng.standard_normal((37, 64), dtype=np.float32)
    np.testing.assert_allclose(ir.compile(DynamicLoop, output_dir=tmp_path / "d")(x), x * 0.5)
    import ml_dtypes

    am = rng.standard_normal((64, 128)).astype(ml_dtypes.bfloat16)
    bm = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    got = ir.compile(Matmul, output_dir=tmp_path / "m")(am, bm)
    np.testing.assert_allclose(got, am.astype(np.float32) @ bm.astype(np.float32), rtol=1e-4, atol=1e-3)
