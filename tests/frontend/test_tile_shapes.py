"""set_vec_tile_shapes steers the generated kernels: a region write whose value is a chain of
row-local ops becomes one kernel looping over tiles of the set row count (visible in the tile and
block graphs), with the same numbers; a tile that does not fit is a compile-time error."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
from pypto import ir

INTERP = {"platform": "interp"}
N, C, BLOCK = 128, 64, 32


def _kernel(tile_rows):
    @pypto.frontend.jit(runtime_options=INTERP)
    def norm(x: pypto.Tensor((N, C), pypto.DT_FP32), g: pypto.Tensor((1, C), pypto.DT_FP32),
             y: pypto.Tensor((N, C), pypto.DT_FP32)):
        if tile_rows:
            pypto.set_vec_tile_shapes(tile_rows, C)
        for i in pypto.loop(0, N // BLOCK):
            y[i * BLOCK:(i + 1) * BLOCK, :] = pypto.rms_norm(x[i * BLOCK:(i + 1) * BLOCK, :], g)
    return norm


@pytest.mark.parametrize("tile_rows", [None, 1, 4, 16])
def test_tile_rows_shape_the_kernel_loop(tile_rows):
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((N, C)).astype(np.float32), rng.standard_normal((1, C)).astype(np.float32)
    y = np.zeros_like(x)
    k = _kernel(tile_rows)
    k(x, g, y)
    want = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    tile = ir.python_print(k.lower(x, g, y))
    if tile_rows is None:
        assert "pl.incore" not in tile  # the pipeline chooses the tiling
    else:
        assert "with pl.incore():" in tile  # one kernel per task, looping over the tiles
        loop = f"pl.range({BLOCK}, " if tile_rows == 1 else f"pl.range(0, {BLOCK}, {tile_rows}, "
        assert loop in tile and f"[{tile_rows}, {C}]" in tile


def test_a_value_used_twice_is_not_moved_into_the_tiled_kernel():
    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), y: pypto.Tensor((64, 64), pypto.DT_FP32),
          z: pypto.Tensor((64, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop(0, 2):
            e = pypto.exp(x[i * 32:(i + 1) * 32, :])
            y[i * 32:(i + 1) * 32, :] = e
            z[i * 32:(i + 1) * 32, :] = e * 2.0

    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    k(x, y, z)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(z, 2 * np.exp(x), rtol=1e-6)


def test_a_tile_that_does_not_fit_is_an_error():
    def k(x: pypto.Tensor((64, 8192), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 8192)
        return pypto.exp(x)

    with pytest.raises(pypto.frontend.FrontendError, match="does not fit the vector memory"):
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((64, 8192), np.float32))


@pytest.mark.parametrize("scope", [False, True])
def test_sg_set_scope_merges_what_the_pipeline_would_split(scope):
    """A view between two computations splits them into two kernels; recorded under one
    sg_set_scope id they are one kernel, with the same numbers."""
    def k(x: pypto.Tensor((64, 64), pypto.DT_FP32)):
        if scope:
            pypto.set_pass_options(sg_set_scope=1)
        a = pypto.exp(x)
        c = a[0:32, :] * 2.0 + 1.0
        if scope:
            pypto.set_pass_options(sg_set_scope=-1)
        return c

    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    try:
        jk = pypto.frontend.jit(k, runtime_options=INTERP)
        np.testing.assert_allclose(jk(x), np.exp(x[:32]) * 2 + 1, rtol=1e-6)
        program = jk.compiled_programs[-1].program
        kernels = [f for f in program.functions if f.func_type is ir.FunctionType.InCore]
        assert len(kernels) == (1 if scope else 2)
    finally:
        pypto.reset_options()


def test_vec_nbuffer_setting_merges_iterations_into_one_task():
    """vec_nbuffer_setting {-1: 2}: each task runs two iterations of the loop (one kernel holding both
    bodies), a third iteration left over runs alone."""
    @pypto.frontend.jit(runtime_options=INTERP, pass_options={"vec_nbuffer_setting": {-1: 2}})
    def k(x: pypto.Tensor((80, 64), pypto.DT_FP32), out: pypto.Tensor((80, 64), pypto.DT_FP32)):
        for i in pypto.loop(0, 5):
            out[i * 16:(i + 1) * 16, :] = pypto.exp(x[i * 16:(i + 1) * 16, :]) * 2.0

    x = np.random.default_rng(0).standard_normal((80, 64)).astype(np.float32)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-6)
    text = ir.python_print(k.lower(x, out))
    assert "pl.range(0, 4, 2)" in text and "pl.range(4, 5)" in text and text.count("with pl.incore():") == 1
