"""Data movement and matmul instructions: tload / tstore windows, tmov, textract, tinsert, tconcat,
treshape, ttrans, tgetval / tsetval and the tmatmul / tgemv families, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.backend.interp import run_kernel
from tests.programs.interp_kernels import FLOATS, NP, Kernel, rand

RNG = np.random.default_rng(7)


def _sentinel(shape, dt: str) -> np.ndarray:
    return np.full(shape, 7, dtype=NP[dt])


# ---- loads and stores ----------------------------------------------------------------------


def test_load_store_windows_at_offsets():
    k = Kernel()
    k.tensor("x", (64, 64), "FP32")
    k.tensor("out", (64, 64), "FP32", "Out")
    k.load("t", "x", (16, 32), "FP32", offsets=[16, 32])
    k.barrier()
    k.store("t", [40, 8])
    x = rand((64, 64), "FP32", RNG)
    out = _sentinel((64, 64), "FP32")
    exp = out.copy()
    exp[40:56, 8:40] = x[16:32, 32:64]
    run_kernel(k.build(), [x, out])
    assert np.array_equal(out, exp)


def test_load_store_3d_partition_flattens_leading_dims():
    k = Kernel()
    k.tensor("x", (4, 8, 32), "FP16")
    k.tensor("out", (2, 8, 32), "FP16", "Out")
    k.load("t", "x", (2, 8, 32), "FP16", offsets=[1, 0, 0])
    k.barrier()
    k.let("u", (2, 8, 32), "FP16", "pl.block.adds(t, 1.0)")
    k.barrier()
    k.store("u", [0, 0, 0])
    x = rand((4, 8, 32), "FP16", RNG)
    out = _sentinel((2, 8, 32), "FP16")
    run_kernel(k.build(), [x, out])
    assert np.array_equal(out, (x[1:3].astype(np.float32) + 1).astype(np.float16))


def test_transposed_load():
    k = Kernel()
    k.tensor("x", (16, 32), "FP32")
    k.tensor("out", (32, 16), "FP32", "Out")
    k.let("t", (32, 16), "FP32", "pl.load(x, [0, 0], [16, 32], transpose=True)")
    k.barrier()
    k.store("t", [0, 0])
    x = rand((16, 32), "FP32", RNG)
    out = _sentinel((32, 16), "FP32")
    run_kernel(k.build(), [x, out])
    assert np.array_equal(out, x.T)


def test_strided_arguments_are_read_and_written_in_place():
    k = Kernel()
    k.tensor("x", (16, 32), "INT32")
    k.tensor("out", (16, 32), "INT32", "Out")
    k.load("t", "x", (16, 32), "INT32", valid=(13, 30))
    k.barrier()
    k.let("u", (16, 32), "INT32", "pl.block.muls(t, 3)", valid=(13, 30))
    k.barrier()
    k.store("u", [0, 0])
    base_x = rand((32, 64), "INT32", RNG)
    base_out = _sentinel((48, 40), "INT32")
    x, out = base_x[::2, 10:42], base_out[16:32, 4:36]
    exp = base_out.copy()
    exp[16:29, 4:34] = x[:13, :30] * 3
    run_kernel(k.build(), [x, out])
    assert np.array_equal(base_out, exp)


def test_store_with_shapes_into_a_tensor_of_another_rank():
    k = Kernel()
    k.tensor("x", (4, 16), "FP32")
    k.tensor("out", (64,), "FP32", "Out")
    k.tensor("out2", (2, 64), "FP32", "Out")
    k.load("t", "x", (4, 16), "FP32")
    k.barrier()
    k.let("u", (1, 64), "FP32", "pl.block.reshape(t, [1, 64])")
    k.barrier()
    k.line("o = pl.store(u, [0], out, [64])")
    k.line("o2 = pl.store(t, [1, 0], out2, [1, 64])")  # a [4, 16] tile written as one row of 64
    x = rand((4, 16), "FP32", RNG)
    out, out2 = _sentinel((64,), "FP32"), _sentinel((2, 64), "FP32")
    run_kernel(k.build(), [x, out, out2])
    assert np.array_equal(out, x.reshape(-1))
    assert np.array_equal(out2[1], x.reshape(-1)) and (out2[0] == 7).all()


# ---- moves and windows ---------------------------------------------------------------------


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dt", ["FP32", "BF16", "INT8"])
def test_move_vec_to_vec(dt: str, transpose: bool):
    k = Kernel()
    k.tensor("x", (16, 32), dt)
    shape = (32, 16) if transpose else (16, 32)
    valid = (29, 13) if transpose else (13, 29)
    k.tensor("out", shape, dt, "Out")
    k.load("t", "x", (16, 32), dt, valid=(13, 29))
    k.barrier()
    k.let("u", shape, dt, f"pl.move(t, target_memory=pl.MemorySpace.Vec, transpose={transpose})", valid=valid)
    k.barrier()
    k.store("u", [0, 0])
    x = rand((16, 32), dt, RNG)
    out = _sentinel(shape, dt)
    exp = out.copy()
    exp[: valid[0], : valid[1]] = x[:13, :29].T if transpose else x[:13, :29]
    run_kernel(k.build(), [x, out])
    assert np.array_equal(out, exp)


def test_extract_insert_concat():
    k = Kernel()
    k.tensor("x", (16, 32), "FP32")
    k.tensor("y", (16, 16), "FP32")
    k.tensor("out", (16, 48), "FP32", "Out")
    k.tensor("out2", (8, 16), "FP32", "Out")
    k.load("t", "x", (16, 32), "FP32")
    k.load("s", "y", (16, 16), "FP32")
    k.barrier()
    k.let("e", (8, 16), "FP32", "pl.block.view(t, [8, 16], [3, 5])")
    k.barrier()
    mem_t = "m0"
    k.let("t2", (16, 32), "FP32", "pl.block.assemble(t, e, [8, 16])", mem=mem_t)
    k.barrier()
    k.let("c", (16, 48), "FP32", "pl.block.concat(t2, s)")
    k.barrier()
    k.store("c", [0, 0])
    k.line("o2 = pl.store(e, [0, 0], out2)")
    x, y = rand((16, 32), "FP32", RNG), rand((16, 16), "FP32", RNG)
    out, out2 = _sentinel((16, 48), "FP32"), _sentinel((8, 16), "FP32")
    run_kernel(k.build(), [x, y, out, out2])
    t2 = x.copy()
    t2[8:16, 16:32] = x[3:11, 5:21]
    assert np.array_equal(out2, x[3:11, 5:21])
    assert np.array_equal(out, np.concatenate([t2, y], axis=1))


def test_reshape_and_transpose():
    k = Kernel()
    k.tensor("x", (16, 32), "FP16")
    k.tensor("out", (32, 16), "FP16", "Out")
    k.tensor("out2", (32, 16), "FP16", "Out")
    k.load("t", "x", (16, 32), "FP16")
    k.barrier()
    k.let("r", (32, 16), "FP16", "pl.block.reshape(t, [32, 16])")
    k.let("tr", (32, 16), "FP16", "pl.block.transpose(t, axis1=0, axis2=1)")
    k.barrier()
    k.store("r", [0, 0])
    k.line("o2 = pl.store(tr, [0, 0], out2)")
    x = rand((16, 32), "FP16", RNG)
    out, out2 = _sentinel((32, 16), "FP16"), _sentinel((32, 16), "FP16")
    run_kernel(k.build(), [x, out, out2])
    assert np.array_equal(out, x.reshape(32, 16))
    assert np.array_equal(out2, x.T)


def test_getval_setval():
    k = Kernel()
    k.tensor("x", (16, 32), "INT32")
    k.tensor("out", (16, 32), "INT32", "Out")
    k.load("t", "x", (16, 32), "INT32")
    k.barrier()
    k.line("v: pl.Scalar[pl.INT32] = pl.read(t, [3, 7])")
    k.line("w: pl.Scalar[pl.INT32] = v * 2")
    k.line("pl.write(t, [0, 0], w)")
    k.barrier()
    k.store("t", [0, 0])
    x = rand((16, 32), "INT32", RNG)
    out = _sentinel((16, 32), "INT32")
    run_kernel(k.build(), [x, out])
    exp = x.copy()
    exp[0, 0] = x[3, 7] * 2
    assert np.array_equal(out, exp)


# ---- matmul --------------------------------------------------------------------------------


def _acc_dt(dt: str) -> str:
    return "FP32" if dt in FLOATS else "INT32"


def _mm_kernel(dt: str, m: int, kk: int, n: int, valid, kind: str) -> Kernel:
    """A @ B (+ C @ D for acc, + bias) with operands through Mat -> Left / Right, result through Acc."""
    vm, vk, vn = valid
    acc = _acc_dt(dt)
    k = Kernel()
    k.tensor("a", (m, kk), dt)
    k.tensor("b", (kk, n), dt)
    if kind == "bias":
        k.tensor("bias", (1, n), acc)
    k.tensor("out", (m, n), acc, "Out")
    k.load("am", "a", (m, kk), dt, valid=(vm, vk), space="Mat")
    k.load("bm", "b", (kk, n), dt, valid=(vk, vn), space="Mat")
    if kind == "bias":
        k.load("bb", "bias", (1, n), acc, valid=(1, vn), space="Bias")
    k.barrier()
    k.let("al", (m, kk), dt, "pl.move(am, target_memory=pl.MemorySpace.Left)", space="Left", valid=(vm, vk))
    k.let("br", (kk, n), dt, "pl.move(bm, target_memory=pl.MemorySpace.Right)", space="Right", valid=(vk, vn))
    k.barrier()
    op = "gemv" if m == 1 else "matmul"
    if kind == "bias":
        k.let("c", (m, n), acc, f"pl.block.{op}_bias(al, br, bb)", space="Acc", valid=(vm, vn))
    else:
        k.let("c", (m, n), acc, f"pl.block.{op}(al, br)", space="Acc", valid=(vm, vn))
    if kind == "acc":
        k.barrier()
        k.let("c2", (m, n), acc, f"pl.block.{op}_acc(c, al, br)", mem="m4", valid=(vm, vn))
        k.barrier()
        k.store("c2", [0, 0])
    else:
        k.barrier()
        k.store("c", [0, 0])
    return k


@pytest.mark.parametrize("kind", ["plain", "acc", "bias"])
@pytest.mark.parametrize("dt", ["FP32", "FP16", "BF16", "INT8"])
@pytest.mark.parametrize("shape", [(16, 32, 24, (16, 32, 24)), (16, 32, 24, (13, 27, 21)), (1, 32, 24, (1, 30, 19))],
                         ids=["full", "ragged", "gemv"])
def test_matmul_family(shape, dt: str, kind: str):
    m, kk, n, valid = shape
    vm, vk, vn = valid
    k = _mm_kernel(dt, m, kk, n, valid, kind)
    a, b = rand((m, kk), dt, RNG, -2, 2), rand((kk, n), dt, RNG, -2, 2)
    acc = _acc_dt(dt)
    args = [a, b]
    ref = a[:vm, :vk].astype(np.float64) @ b[:vk, :vn].astype(np.float64)
    if kind == "bias":
        bias = rand((1, n), acc, RNG)
        args.append(bias)
        ref = ref + bias[:, :vn]
    if kind == "acc":
        ref = 2 * ref
    out = _sentinel((m, n), acc)
    exp = out.copy()
    exp[:vm, :vn] = ref.astype(NP[acc])
    run_kernel(k.build(), args + [out])
    if dt in FLOATS:
        np.testing.assert_allclose(out, exp, rtol=1e-5, atol=1e-5)
    else:
        assert np.array_equal(out, exp)


def test_matmul_result_through_vec():
    k = _mm_kernel("FP16", 16, 32, 16, (16, 32, 16), "plain")
    k.body.pop()  # the store of the Acc tile: go through Vec instead (tmov Acc -> Vec on FIX)
    k.let("v", (16, 16), "FP32", "pl.move(c, target_memory=pl.MemorySpace.Vec)")
    k.barrier()
    k.store("v", [0, 0])
    a, b = rand((16, 32), "FP16", RNG), rand((32, 16), "FP16", RNG)
    out = _sentinel((16, 16), "FP32")
    run_kernel(k.build(), [a, b, out])
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_block_idx_is_zero():
    k = Kernel()
    k.tensor("x", (32, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.line("b = pl.get_block_idx()")
    k.line("r: pl.Scalar[pl.INDEX] = pl.cast(b, pl.INDEX)")
    k.let("t", (16, 64), "FP32", "pl.load(x, [r * 16 + 16, 0], [16, 64])")
    k.barrier()
    k.store("t", [0, 0])
    x = rand((32, 64), "FP32", RNG)
    out = _sentinel((16, 64), "FP32")
    run_kernel(k.build(), [x, out])
    assert np.array_equal(out, x[16:])
