"""Tensor-level kernels that need row tiling: `matmul(x, W)` with W a static parameter is tiled over
the rows of x (W loaded whole in each block), so dynamic and large row counts compile and run; an op
that is not row-local (assemble) between row-local ones gets a kernel of its own."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native

M = pl.dynamic("M")


@pl.function
def proj_softmax(x: pl.Tensor[[M, 64], pl.FP32], w: pl.Tensor[[64, 32], pl.FP32]) -> pl.Tensor[[M, 32], pl.FP32]:
    s = pl.matmul(x, w)
    mx = pl.row_max(s)
    e = pl.exp(pl.row_expand_sub(s, mx))
    return pl.row_expand_div(e, pl.row_sum(e))


@pl.function
def big_static(x: pl.Tensor[[1024, 256], pl.FP32], w: pl.Tensor[[256, 128], pl.FP32]) -> pl.Tensor[[1024, 128], pl.FP32]:
    c = pl.matmul(x, w)
    return pl.add(pl.mul(c, 0.5), 1.0)


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("platform", ["cpu", "interp"])
@pytest.mark.parametrize("rows", [1, 37, 300])
def test_dynamic_rows(rows, platform):
    c = ir.compile(proj_softmax)
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 32)) / 8).astype(np.float32)
    got = c(x, w, config=RunConfig(platform=platform))
    np.testing.assert_allclose(got, _softmax(x.astype(np.float64) @ w), rtol=2e-5, atol=1e-6)


def test_rows_beyond_one_tile():
    c = ir.compile(big_static)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 256)).astype(np.float32)
    w = rng.standard_normal((256, 128)).astype(np.float32)
    np.testing.assert_allclose(c(x, w), (x.astype(np.float64) @ w) * 0.5 + 1, rtol=2e-5, atol=2e-4)
    # a [1024, 256] Left tile would not fit the target: the kernel loops over row blocks
    assert any("scf.for" in p.read_text() for p in c.pto_files().values())


@pl.function
def exp_assemble_add(a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
    x = pl.exp(a)
    y = pl.assemble(x, b, [0, 0])
    return pl.add(y, 1.0)


@pytest.mark.parametrize("platform", ["cpu", "interp"])
@pytest.mark.parametrize("rows", [16, 37, 300])
def test_assemble_between_row_ops_on_dynamic_rows(rows, platform):
    """assemble is not row-local: on dynamic rows it gets a kernel of its own (ScopeTensorOps), the
    row-local ops around it stay tiled."""
    c = ir.compile(exp_assemble_add)
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, 64)).astype(np.float32)
    b = rng.standard_normal((16, 64)).astype(np.float32)
    want = np.exp(a.astype(np.float64))
    want[:16] = b
    np.testing.assert_allclose(c(a, b, config=RunConfig(platform=platform)), want + 1, rtol=1e-6, atol=1e-6)
    assert len(c.pto_files()) >= 3  # exp | assemble | add


@pl.function
def plus_one_on_valid(a: pl.Tensor[[16, 32], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
    out = pl.create_tensor([16, 32], dtype=pl.FP32)
    v = pl.slice(a, [16, 32], [0, 0], valid_shape=[16, n])
    out = pl.assemble(out, pl.add(v, 1.0), [0, 0])
    return out


@pytest.mark.parametrize("platform", ["cpu", "interp"])
@pytest.mark.parametrize("n", [9, 32, 1])
def test_tensor_ops_on_a_view_with_a_valid_shape(n, platform):
    """The outlined kernel sees the valid part of the window (its run-time extents): it computes and
    writes only there; the rest of the created output stays zero."""
    c = ir.compile(plus_one_on_valid)
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    want = np.zeros_like(a)
    want[:, :n] = a[:, :n] + 1
    np.testing.assert_array_equal(c(a, n, config=RunConfig(platform=platform)), want)


@pl.function
def half_matmul(a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 16], pl.FP16],
                acc: pl.Tensor[[32, 16], pl.FP16]) -> tuple[pl.Tensor[[32, 16], pl.FP16], pl.Tensor[[32, 16], pl.FP16],
                                                            pl.Tensor[[32, 16], pl.FP32]]:
    c = pl.matmul(a, b)  # reference §1.2: the operand dtype unless out_dtype says otherwise
    d = pl.matmul_acc(acc, a, b)  # an FP16 accumulator tensor: widened, accumulated in FP32, rounded back
    e = pl.matmul(a, b, out_dtype=pl.FP32)
    return c, d, e


@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_tensor_matmul_result_dtype_follows_the_reference(platform):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    acc = rng.standard_normal((32, 16)).astype(np.float16)
    c, d, e = ir.compile(half_matmul)(a, b, acc, config=RunConfig(platform=platform))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert c.dtype == np.float16 and d.dtype == np.float16 and e.dtype == np.float32
    np.testing.assert_allclose(e, exact, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(c.astype(np.float64), exact, rtol=1e-3, atol=1e-3)  # (rounded once to FP16)
    np.testing.assert_allclose(d.astype(np.float64), acc.astype(np.float64) + exact, rtol=2e-3, atol=2e-2)


@pl.function
def ragged_blocks(x: pl.Tensor[[M, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
                  out: pl.InOut[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
    m = pl.tensor.dim(x, 0)
    for i in pl.range(0, m, 16):
        v = pl.slice(x, [16, 32], [i, 0], valid_shape=[pl.min(16, m - i), n])
        out = pl.assemble(out, pl.add(v, 1.0), [i, 0])
    return out


@pytest.mark.parametrize("platform", ["cpu", "interp"])
@pytest.mark.parametrize("rows, n", [(20, 32), (32, 9), (5, 1)])
def test_valid_shape_views_assembled_into_a_dynamic_output(rows, n, platform):
    """Only the valid region of each block is computed and written; the rest of the output keeps
    what it held (a ragged last block of rows, ragged columns)."""
    c = ir.compile(ragged_blocks)
    x = np.arange(rows * 32, dtype=np.float32).reshape(rows, 32)
    out = np.full((rows, 32), 7.0, np.float32)
    c(x, n, out, config=RunConfig(platform=platform))
    want = np.full((rows, 32), 7.0, np.float32)
    want[:, :n] = x[:, :n] + 1
    np.testing.assert_array_equal(out, want)
