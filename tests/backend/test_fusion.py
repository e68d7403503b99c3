"""The CPU assembler fuses runs of elementwise instructions into one loop; results must equal the
unfused semantics (the interpreter) bit for bit, including narrow intermediates and aliasing."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native

R = pl.dynamic("R")


@pl.program
class Chains:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[R, 96], pl.BF16], b: pl.Tensor[[R, 96], pl.BF16], g: pl.Tensor[[1, 96], pl.BF16],
          out: pl.Out[pl.Tensor[[R, 96], pl.BF16]], out2: pl.Out[pl.Tensor[[R, 96], pl.FP32]]) -> pl.Tensor[[R, 96], pl.BF16]:
        n = pl.tensor.dim(a, 0)
        for i in pl.range(0, n, 16):
            r = pl.min(16, n - i)
            ta = pl.load(a, [i, 0], [16, 96], valid_shapes=[r, 96])
            tb = pl.load(b, [i, 0], [16, 96], valid_shapes=[r, 96])
            tg = pl.load(g, [0, 0], [1, 96])
            m = pl.row_max(ta)
            x = pl.mul(pl.add(ta, tb), 0.75)          # bf16 intermediates: rounded at each step
            x = pl.exp(pl.row_expand_sub(x, m))
            x = pl.col_expand_mul(x, tg)
            y = pl.sub(pl.block.maximum(x, tb), ta)    # reads earlier tiles again
            f = pl.cast(y, pl.FP32)
            f2 = pl.block.relu(pl.add(pl.mul(f, f), -0.25))  # fp32 chain: a*b+c must not become one FMA
            out = pl.store(y, [i, 0], out)
            out2 = pl.store(f2, [i, 0], out2)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, 96], pl.BF16], b: pl.Tensor[[R, 96], pl.BF16], g: pl.Tensor[[1, 96], pl.BF16],
             out: pl.Out[pl.Tensor[[R, 96], pl.BF16]], out2: pl.Out[pl.Tensor[[R, 96], pl.FP32]]) -> pl.Tensor[[R, 96], pl.BF16]:
        self.k(a, b, g, out, out2)
        return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(Chains, output_dir=tmp_path_factory.mktemp("fuse"))


def test_runs_are_fused(compiled):
    src = next((Path(compiled) / "native").glob("*.cpp")).read_text()
    assert src.count("// fused:") >= 2


@pytest.mark.parametrize("rows", [16, 37])
def test_fused_equals_interpreter_bit_for_bit(compiled, rows):
    rng = np.random.default_rng(rows)
    bf = ml_dtypes.bfloat16
    a, b = (rng.standard_normal((rows, 96)).astype(bf) for _ in range(2))
    g = rng.standard_normal((1, 96)).astype(bf)
    outs = {}
    for platform in ("cpu", "interp"):
        o1, o2 = np.zeros((rows, 96), bf), np.zeros((rows, 96), np.float32)
        compiled(a, b, g, o1, o2, config=RunConfig(platform=platform))
        outs[platform] = (o1.view(np.uint16), o2.view(np.uint32))
    np.testing.assert_array_equal(outs["cpu"][0], outs["interp"][0])
    np.testing.assert_array_equal(outs["cpu"][1], outs["interp"][1])
