"""AutoTileMatmulL0 (pypto/passes/auto_tile_matmul_l0.py): matmuls on Mat (L1) operands run in
L0-sized pieces on the Ascend 910B target (64 KiB Left / Right, 128 KiB Acc) and compute the
same numbers as NumPy on the CPU backend and the interpreter."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes import PassContext, pipeline
from pypto.runtime import RunConfig
from pypto.target import target_for

TEXT = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[_M_, _K_], pl._DT_], b: pl.Tensor[[_K_, _N_], pl._DT_],
          c: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        ta = pl.load(a, offsets=[0, 0], shapes=[_M_, _K_], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0, 0], shapes=[_K_, _N_], target_memory=pl.MemorySpace.Mat)
        tc = pl.matmul(ta, tb)
        return pl.store(tc, offsets=[0, 0], output_tensor=c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[_M_, _K_], pl._DT_], b: pl.Tensor[[_K_, _N_], pl._DT_],
             c: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        return self.k(a, b, c)
"""

# K-only split on the Acc tile, then moved to Vec and scaled: the result is not stored directly
TEXT_VEC = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[_M_, _K_], pl._DT_], b: pl.Tensor[[_K_, _N_], pl._DT_],
          c: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        ta = pl.load(a, offsets=[0, 0], shapes=[_M_, _K_], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0, 0], shapes=[_K_, _N_], target_memory=pl.MemorySpace.Mat)
        tc = pl.matmul(ta, tb)
        tv = pl.move(tc, target_memory=pl.MemorySpace.Vec)
        t2 = pl.mul(tv, 2.0)
        return pl.store(t2, offsets=[0, 0], output_tensor=c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[_M_, _K_], pl._DT_], b: pl.Tensor[[_K_, _N_], pl._DT_],
             c: pl.Out[pl.Tensor[[_M_, _N_], pl.FP32]]) -> pl.Tensor[[_M_, _N_], pl.FP32]:
        return self.k(a, b, c)
"""


def _program(text: str, m: int, k: int, n: int, dt: str):
    return pl.parse(text.replace("_M_", str(m)).replace("_K_", str(k)).replace("_N_", str(n)).replace("_DT_", dt))


def _lowered(prog) -> str:
    ctx = PassContext(target=target_for("Ascend910B"))
    for p in pipeline():
        if p.name == "InitMemRef":
            break
        prog = p(prog, ctx)
    return ir.python_print(prog)


def _inputs(m, k, n, dt):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    npdt = ml_dtypes.bfloat16 if dt == "BF16" else np.float32
    return a.astype(npdt), b.astype(npdt)


CASES = [
    pytest.param(64, 384, 256, "FP32", id="fp32_k_split"),
    pytest.param(16, 128, 256, "BF16", id="bf16_k_split"),
    pytest.param(128, 688, 192, "BF16", id="bf16_ragged_k"),
    pytest.param(272, 32, 416, "FP32", id="fp32_mn_boundary_peel"),
    pytest.param(512, 64, 512, "BF16", id="bf16_mn_grid"),
    pytest.param(48, 352, 96, "BF16", id="bf16_a_stationary"),
]


@pytest.mark.native
@pytest.mark.parametrize("m,k,n,dt", CASES)
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_auto_tiled_matmul_matches_numpy(m, k, n, dt, platform):
    c = ir.compile(_program(TEXT, m, k, n, dt), backend_type="Ascend910B")
    a, b = _inputs(m, k, n, dt)
    out = np.zeros((m, n), np.float32)
    c(a, b, out, config=RunConfig(platform=platform))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_k_split_feeding_vector_code(platform):
    m, k, n = 64, 384, 256
    c = ir.compile(_program(TEXT_VEC, m, k, n, "FP32"), backend_type="Ascend910B")
    a, b = _inputs(m, k, n, "FP32")
    out = np.zeros((m, n), np.float32)
    c(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, 2 * (a.astype(np.float64) @ b), rtol=1e-4, atol=1e-3)


def test_k_split_structure():
    text = _lowered(_program(TEXT, 64, 384, 256, "FP32"))
    # 384 / 32 = 12 K blocks: one matmul, eleven matmul_acc, one store of the [64, 256] accumulator
    assert text.count("pl.block.matmul(") == 1 and text.count("pl.block.matmul_acc(") == 11
    assert text.count("target_memory=pl.MemorySpace.Left") == 12 and text.count("pl.block.store(") == 1


def test_ragged_k_tail_is_peeled():
    text = _lowered(_program(TEXT, 128, 688, 192, "BF16"))
    assert "[128, 48], target_memory=pl.MemorySpace.Left" in text  # 688 = 10 * 64 + 48


def test_mn_boundary_tiles_are_stored_in_place():
    text = _lowered(_program(TEXT, 272, 32, 416, "FP32"))
    # the chooser's [96, 256] tile: a 3 x 2 grid whose last row / column are the 80 / 160 boundary
    assert text.count("pl.block.store(") == 6 and "pl.Tile[[80, 160], pl.FP32, pl.MemorySpace.Acc]" in text


def test_fitting_matmul_only_moves():
    text = _lowered(_program(TEXT, 64, 64, 64, "FP32"))
    assert "pl.block.move(ta, target_memory=pl.MemorySpace.Left" in text and "extract" not in text


TEXT_TENSOR = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
          out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        return self.k(a, b, out)
"""


def test_tensor_matmul_tiles_from_its_mat_loads():
    text = _lowered(pl.parse(TEXT_TENSOR))
    # the whole [256, 128] Left move is gone (it would not fit the 64 KiB Left buffer)
    assert "pl.Tile[[256, 128], pl.FP32, pl.MemorySpace.Left]" not in text and text.count("pl.block.store(") == 2


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_tensor_matmul_runs_tiled(platform):
    c = ir.compile(pl.parse(TEXT_TENSOR), backend_type="Ascend910B")
    a, b = _inputs(256, 128, 256, "FP32")
    out = np.zeros((256, 256), np.float32)
    c(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
