"""A matmul result cast to bf16 and fed to a second matmul (the "Mat scratch" chain of today's public
tests): `pl.matmul(tiles, out_dtype=...)` names the accumulator's dtype, and an on-chip computed
operand (Vec / Acc) is staged through Mat (L1). Same numbers as NumPy on the CPU and the interpreter."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

TEXT = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[_M_, _K_], pl.BF16], b: pl.Tensor[[_K_, _H_], pl.BF16],
          e: pl.Tensor[[_H_, _N_], pl.BF16],
          out: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        ta = pl.load(a, offsets=[0, 0], shapes=[_M_, _K_], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0, 0], shapes=[_K_, _H_], target_memory=pl.MemorySpace.Mat)
        c = pl.matmul(ta, tb, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        te = pl.load(e, offsets=[0, 0], shapes=[_H_, _N_], target_memory=pl.MemorySpace.Mat)
        d = pl.matmul(cb, te, out_dtype=pl.FP32)
        return pl.store(d, offsets=[0, 0], output_tensor=out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[_M_, _K_], pl.BF16], b: pl.Tensor[[_K_, _H_], pl.BF16],
             e: pl.Tensor[[_H_, _N_], pl.BF16],
             out: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        return self.k(a, b, e, out)
"""


def _program(m, k, h, n, text=TEXT):
    for key, v in (("_M_", m), ("_K_", k), ("_H_", h), ("_N_", n)):
        text = text.replace(key, str(v))
    return pl.parse(text)


def _bf16(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(ml_dtypes.bfloat16)


@pytest.mark.native
@pytest.mark.parametrize("m,k,h,n", [(64, 64, 64, 64), (128, 64, 128, 64), (256, 256, 256, 64)])
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_chained_matmul_through_bf16_scratch(m, k, h, n, platform):
    c = ir.compile(_program(m, k, h, n), backend_type="Ascend910B")
    rng = np.random.default_rng(3)
    a, b, e = _bf16(rng, (m, k)), _bf16(rng, (k, h), k ** -0.5), _bf16(rng, (h, n), h ** -0.5)
    out = np.zeros((m, n), np.float32)
    c(a, b, e, out, config=RunConfig(platform=platform))
    mid = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(out, mid @ e.astype(np.float64), rtol=2e-2, atol=2e-2)


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_out_dtype_other_than_the_accumulator_casts(platform):
    text = TEXT.replace("d = pl.matmul(cb, te, out_dtype=pl.FP32)",
                        "d = pl.cast(pl.matmul(cb, te, out_dtype=pl.BF16), pl.FP32)")
    c = ir.compile(_program(64, 64, 64, 64, text), backend_type="Ascend910B")
    # the cb cast, and the one out_dtype=pl.BF16 adds after the FP32 accumulation
    assert ir.python_print(_program(64, 64, 64, 64, text)).count("target_type=pl.BF16") == 2
    rng = np.random.default_rng(4)
    a, b, e = _bf16(rng, (64, 64)), _bf16(rng, (64, 64), 0.125), _bf16(rng, (64, 64), 0.125)
    out = np.zeros((64, 64), np.float32)
    c(a, b, e, out, config=RunConfig(platform=platform))
    mid = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    want = (mid @ e.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=2e-2, atol=2e-2)


def test_out_dtype_must_be_a_dtype():
    with pytest.raises(ParserTypeError, match="out_dtype must be a dtype"):
        _program(64, 64, 64, 64, TEXT.replace("out_dtype=pl.FP32)  ", "").replace(
            "c = pl.matmul(ta, tb, out_dtype=pl.FP32)", "c = pl.matmul(ta, tb, out_dtype=3)"))


def test_oversized_intermediate_is_assembled_tile_by_tile_in_mat():
    # [256, 256] FP32 does not fit the 128 KiB Acc: each output tile is cast and inserted into a bf16 Mat tile
    from pypto.passes import PassContext, pipeline
    from pypto.target import target_for

    prog, ctx = _program(256, 256, 256, 64), PassContext(target=target_for("Ascend910B"))
    for p in pipeline():
        if p.name == "InitMemRef":
            break
        prog = p(prog, ctx)
    text = ir.python_print(prog)
    assert "pl.Tile[[256, 256], pl.FP32, pl.MemorySpace.Acc]" not in text
    assert text.count("pl.block.assemble(scratch") == 2 and "pl.MemorySpace.Left] = pl.block.extract(move" in text


TEXT_TENSOR = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 192], pl.BF16], b: pl.Tensor[[192, 256], pl.BF16],
          e: pl.Tensor[[256, 64], pl.BF16],
          out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 192], pl.BF16], b: pl.Tensor[[192, 256], pl.BF16],
             e: pl.Tensor[[256, 64], pl.BF16],
             out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        return self.k(a, b, e, out)
"""


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_tensor_chain_keeps_the_intermediate_in_a_mat_scratch(platform):
    # tensor matmul -> cast -> matmul: the [256, 256] FP32 intermediate would not fit Acc (nor Vec)
    c = ir.compile(pl.parse(TEXT_TENSOR), backend_type="Ascend910B")
    rng = np.random.default_rng(8)
    a, b, e = _bf16(rng, (256, 192)), _bf16(rng, (192, 256)), _bf16(rng, (256, 64))
    out = np.zeros((256, 64), np.float32)
    c(a, b, e, out, config=RunConfig(platform=platform))
    mid = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    want = mid @ e.astype(np.float64)
    assert np.linalg.norm(out - want) / np.linalg.norm(want) < 1e-3
