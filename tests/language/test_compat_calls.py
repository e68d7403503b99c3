"""Both generations of each changed call form (docs/compat.md): the March / seed form and today's
form of the same construct compute the same numbers, on the interpreter and the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig
from tests.programs.compat_kernels import PLATFORMS, RNG, A, B, compile_, kernel, run  # noqa: F401

# (March / seed form, today's form, expected result)
PAIRS = {
    "load 4th positional: space / valid shape": (
        "t = pl.load(a, [0, 0], [16, 32], pl.MemorySpace.Vec, [16, 8])\nr = pl.fillpad(t)",
        "t = pl.load(a, [0, 0], [16, 32], [16, 8], pl.MemorySpace.Vec)\nr = pl.fillpad(t)",
        np.where(np.arange(32) < 8, A, 0)),
    "valid_shapes= / valid_shape=": (
        "t = pl.load(a, [0, 0], [16, 32], valid_shapes=[8, 32])\nr = pl.fillpad(t)",
        "t = pl.load(a, [0, 0], [16, 32], valid_shape=[8, 32])\nr = pl.fillpad(t)",
        np.where(np.arange(16)[:, None] < 8, A, 0)),
    "maxs / maximums": ("r = pl.maxs(ta, 0.25)", "r = pl.maximums(ta, 0.25)", np.maximum(A, 0.25)),
    "mins / minimums": ("r = pl.tile.mins(ta, 0.25)", "r = pl.tile.minimums(ta, 0.25)", np.minimum(A, 0.25)),
    "max over an axis / row_max": (
        "m = pl.max(ta, axis=1, keepdim=True)\nr = pl.row_expand_sub(ta, m)",
        "tmp = pl.create_tile([16, 32], pl.FP32)\nm = pl.row_max(ta, tmp)\nr = pl.row_expand_sub(ta, m)",
        A - A.max(axis=1, keepdims=True)),
    "row_expand(src) / row_expand(target, row_vec)": (
        "tmp = pl.create_tile([16, 32], pl.FP32)\nm = pl.row_sum(ta, tmp)\n"
        "r = pl.row_expand(pl.add(pl.mul(tb, 0.0), pl.row_expand_add(pl.mul(tb, 0.0), m)))",
        "tmp = pl.create_tile([16, 32], pl.FP32)\nm = pl.row_sum(ta, tmp)\nr = pl.row_expand(tb, m)",
        np.broadcast_to(A.sum(axis=1, keepdims=True), (16, 32))),
    "sel(mask, a, b) / sel(mask, a, b, tmp)": (
        "m = pl.cmp(ta, tb, cmp_type=2)\nr = pl.sel(m, ta, tb)",
        "m = pl.tile.cmp(ta, tb, cmp_type=2)\ntmp = pl.tile.create([1, 32], dtype=pl.UINT8)\n"
        "r = pl.tile.sel(m, ta, tb, tmp)",
        np.minimum(A, B)),
    "sels(lhs, rhs, mode) / sels(mask, src, tmp, scalar)": (
        "r = pl.sels(ta, tb, 1)",
        "m = pl.tile.cmps(ta, -100.0, cmp_type=4)\ntmp = pl.tile.create([1, 32], dtype=pl.UINT8)\n"
        "r = pl.tile.sels(m, ta, tmp, 0.0)",
        A),
    "rem(a, b) / rem(a, b, tmp)": (
        "r = pl.rem(ta, pl.adds(pl.abs(tb), 0.5))",
        "tmp = pl.create_tile([16, 32], pl.FP32)\nr = pl.rem(ta, pl.adds(pl.abs(tb), 0.5), tmp)",
        np.fmod(A, np.abs(B) + 0.5)),
    "rems(a, s) / rems(a, s, tmp)": (
        "r = pl.rems(ta, 0.75)",
        "tmp = pl.create_tile([16, 32], pl.FP32)\nr = pl.rems(ta, 0.75, tmp)",
        np.fmod(A, np.float32(0.75))),
    "l0c_store (seed) / store": (
        "c = pl.l0c_store(pl.adds(ta, 1.0), [0, 0], [16, 32], c)",
        "r = pl.adds(ta, 1.0)",
        A + 1),
    "vec_move (seed) / move": (
        "r = pl.block.vec_move(ta)", "r = pl.move(ta, target_memory=pl.MemorySpace.Vec)", A),
    "store(shapes before output) (seed) / store": (
        "c = pl.store(pl.muls(ta, 2.0), [0, 0], [16, 32], c)", "r = pl.muls(ta, 2.0)", 2 * A),
}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", list(PAIRS))
def test_both_generations_compute_the_same(name, platform):
    old, new, want = PAIRS[name]
    got_old, got_new = run(old, platform), run(new, platform)
    np.testing.assert_allclose(got_old, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_new, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_load_clamp_cuts_the_window_at_the_tensor_edge(platform):
    # rows 8..23 of a 16-row tensor: clamp=True keeps rows 8..15 valid, the rest is padding (filled 0)
    got = run("t = pl.load(a, [8, 0], [16, 32], clamp=True)\nr = pl.fillpad(t)", platform)
    want = np.zeros((16, 32), np.float32)
    want[:8] = A[8:]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_store_and_assemble_atomic_add_into_the_output(platform):
    src = kernel("c = pl.store(tb, [0, 0], c)\nc = pl.store(ta, [0, 0], c, atomic=pl.AtomicType.Add)")
    c = np.zeros((16, 32), np.float32)
    compile_(pl.parse_program(src), platform)(A, B, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, A + B, rtol=1e-6)
    plain = kernel("c = pl.store(tb, [0, 0], c)\nc = pl.store(ta, [0, 0], c, atomic=pl.AtomicType.None_)")
    compile_(pl.parse_program(plain), platform)(A, B, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, A, rtol=1e-6)
    orch = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.mul(a, 2.0), [0, 0], atomic=pl.AtomicType.Add)
        return c
'''
    c = B.copy()
    compile_(pl.parse_program(orch), platform)(A, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, B + 2 * A, rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("cond, want", [("True", "mm"), ("False", "acc + mm"), ("flag", "mm"), ("flag0", "acc + mm")])
def test_matmul_acc_init_cond(cond, want, platform):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        flag = n == 1
        flag0 = n == 0
        la = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        rb = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(la, rb)
        acc = pl.matmul_acc(acc, la, rb, init_cond={cond})
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, b, c, 1)
        return c
'''
    a, b = A[:, :16].copy(), B[:, :16].copy()
    c = np.zeros((16, 16), np.float32)
    compile_(pl.parse_program(src), platform)(a, b, c, config=RunConfig(platform=platform))
    mm = a.astype(np.float64) @ b
    np.testing.assert_allclose(c, mm if want == "mm" else 2 * mm, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_numpy_style_subscripts_drop_the_indexed_axes(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             d: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x = a[2]
        y = a[1, 3, 8:16]
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.add(x, x), [0, 0])
            d = pl.assemble(d, pl.reshape(y, [1, 8]), [0, 0])
        return c
'''
    prog = pl.parse_program(src)
    a = RNG.standard_normal((4, 16, 32)).astype(np.float32)
    c, d = np.zeros((16, 32), np.float32), np.zeros((1, 8), np.float32)
    compile_(prog, platform)(a, c, d, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, 2 * a[2], rtol=1e-6)
    np.testing.assert_array_equal(d[0], a[1, 3, 8:16])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_slice_drop_dims_and_pad_value(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x = pl.slice(a, [1, 16, 32], [3, 0, 0], drop_dims=[0])
        y = pl.slice(x, [16, 32], [0, 0], valid_shape=[16, 8], pad_value=0)
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.add(y, x), [0, 0])
        return c
'''
    a = RNG.standard_normal((4, 16, 32)).astype(np.float32)
    c = np.full((16, 32), 5, np.float32)
    compile_(pl.parse_program(src), platform)(a, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, np.where(np.arange(32) < 8, 2 * a[3], a[3]), rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_create_tensor_init_value_and_manual_dep(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.create_tensor([16, 32], dtype=pl.FP32, init_value=2.5)
        u = pl.create_tensor([16, 32], dtype=pl.FP32, manual_dep=True, init_value=0)
        with pl.at(level=pl.Level.CORE_GROUP):
            u = pl.assemble(u, pl.add(a, t), [0, 0])
            c = pl.assemble(c, pl.mul(u, 2.0), [0, 0])
        return c
'''
    c = np.zeros((16, 32), np.float32)
    compile_(pl.parse_program(src), platform)(A, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, 2 * (A + 2.5), rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_slice_assignment_writes_the_window(platform):
    # `t[a:b, :] = value` is an assemble at the slices' starts (today's programs write per-row scatters so)
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 32], pl.FP32], c: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                c[i * 4 + 1 : i * 4 + 2, :] = pl.mul(a[i : i + 1, :], 2.0)
        return c
'''
    a = RNG.standard_normal((4, 32)).astype(np.float32)
    c = np.full((16, 32), 5, np.float32)
    compile_(pl.parse_program(src), platform)(a, c, config=RunConfig(platform=platform))
    want = np.full((16, 32), 5, np.float32)
    want[1::4] = 2 * a
    np.testing.assert_allclose(c, want, rtol=1e-6)
