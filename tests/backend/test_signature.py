"""The calling signature a compile builds in memory is the one `signature.json` reads back as."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir
from pypto.backend.signature import Param, Signature

M = pl.dynamic("M")


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 32], pl.FP32], a: pl.Scalar[pl.FP32],
          out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        return pl.store(pl.mul(pl.load(x, [0, 0], [16, 32]), a), [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def k16(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 32], pl.FP32], a: pl.Scalar[pl.FP32],
             out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> tuple[pl.Tensor[[M, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        r = self.k(pl.view(x, [16, 32], [0, 0]), a, pl.view(out, [16, 32], [0, 0]))
        c = pl.create_tensor([16, 32], dtype=pl.FP32)
        c2 = self.k16(pl.view(x, [16, 32], [0, 0]), c)
        return out, c2


def test_signature_in_memory_equals_the_file(tmp_path):
    c = ir.compile(Mixed, output_dir=tmp_path / "o", skip_ptoas=True)
    sig = c.signature
    assert Signature.load(c.output_dir) == sig
    assert sig.entry == "main" and sig.slots == ((2, None), (None, 0))
    assert sig.params[1] == Param("a", "scalar", sig.params[1].dtype, (), "scalar")
    assert sig.params[2].shape == ("M", 32) and sig.params[2].dir == "out"
    assert [r.name for r in sig.returns] == ["result0", "result1"]
    assert (c.output_dir / "signature.json").read_text() == sig.to_json()
