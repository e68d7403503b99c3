"""The pipe hazard checker (docs/sync_model.md): unsynchronized conflicts are reported with both
instructions, the conflict kind and the buffer; correct flags and barriers pass."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.backend.interp import HazardError, run_kernel
from tests.programs.interp_kernels import Kernel, build_kernel, cube_kernel, loop_kernel, rand

RNG = np.random.default_rng(3)


def _add_kernel(sync: bool) -> Kernel:
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("b", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.load("ta", "a", (16, 64), "FP32")
    k.load("tb", "b", (16, 64), "FP32")
    if sync:
        k.sync("MTE2", "V")
    k.let("tc", (16, 64), "FP32", "pl.add(ta, tb)")
    if sync:
        k.sync("V", "MTE3")
    k.store("tc", [0, 0])
    return k


def _args():
    return [rand((16, 64), "FP32", RNG), rand((16, 64), "FP32", RNG), np.zeros((16, 64), np.float32)]


def test_unsynchronized_load_add_store_is_reported():
    with pytest.raises(HazardError) as ei:
        run_kernel(_add_kernel(sync=False).build(), _args())
    e = ei.value
    assert e.kind == "RAW" and e.kernel == "k"
    assert "pto.tload" in e.first and "outs(%ta)" in e.first and "MTE2" in e.first
    assert "pto.tadd ins(%ta, %tb) outs(%tc)" in e.second and "on V" in e.second
    assert "tile %ta" in e.buffer
    assert "PIPE_MTE2" in str(e) and "wait_pipe = PIPE_V" in str(e)


def test_synchronized_load_add_store_passes():
    args = _args()
    stats = run_kernel(_add_kernel(sync=True).build(), args)
    assert np.array_equal(args[2], args[0] + args[1])
    assert stats.instructions == 4 and not stats.pending_flags


def test_check_hazards_off_runs_unsynchronized_kernels():
    args = _args()
    run_kernel(_add_kernel(sync=False).build(), args, check_hazards=False)
    assert np.array_equal(args[2], args[0] + args[1])


def _chain_kernel(barrier: bool) -> Kernel:
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.load("t", "a", (16, 64), "FP32")
    k.sync("MTE2", "V")
    k.let("u", (16, 64), "FP32", "pl.exp(t)")
    if barrier:
        k.line("pl.system.bar_v()")
    k.let("v", (16, 64), "FP32", "pl.add(u, t)")
    k.sync("V", "MTE3")
    k.store("v", [0, 0])
    return k


def test_missing_barrier_between_dependent_vector_ops():
    a, out = rand((16, 64), "FP32", RNG), np.zeros((16, 64), np.float32)
    with pytest.raises(HazardError) as ei:
        run_kernel(_chain_kernel(barrier=False).build(), [a, out])
    e = ei.value
    assert e.kind == "RAW" and "pto.texp" in e.first and "pto.tadd" in e.second and "tile %u" in e.buffer
    assert "pipe_barrier {pipe = PIPE_V}" in str(e)
    run_kernel(_chain_kernel(barrier=True).build(), [a, out])
    assert np.allclose(out, np.exp(a) + a)


def test_waw_across_loop_iterations_on_one_pipe_is_reported():
    """Without the back flags nothing orders iteration 0's load of t before iteration 1's (both MTE2)."""
    a, out = rand((64, 64), "FP32", RNG), np.zeros((64, 64), np.float32)
    with pytest.raises(HazardError) as ei:
        run_kernel(build_kernel(loop_kernel(back_sync=False)), [a, out])
    e = ei.value
    assert e.kind == "WAW" and e.kernel == "loop_k"
    assert "pto.tload" in e.first and "iteration i=0" in e.first
    assert "pto.tload" in e.second and "iteration i=1" in e.second
    assert "pipe_barrier {pipe = PIPE_MTE2}" in str(e)


def _warloop_kernel(back_sync: bool) -> str:
    """t is loaded once; each iteration computes u = exp(t) (V, after a V barrier) and stores u (MTE3).
    Iteration i+1's exp overwrites u while iteration i's store may still read it unless a flag
    MTE3 -> V orders them."""
    def flag(kind: str) -> str:
        return (f"pl.system.sync_{kind}(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=1)"
                if back_sync else "pass")
    return f"""
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def war_k(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 4096, 0)
        m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 4096, 4096, 1)
        t: pl.Tile[[16, 64], pl.FP32, m0] = pl.load(a, [0, 0], [16, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        {flag("src")}
        for i in pl.range(4):
            pl.system.bar_v()
            {flag("dst")}
            u: pl.Tile[[16, 64], pl.FP32, m1] = pl.exp(t)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            o = pl.store(u, [i * 16, 0], out)
            {flag("src")}
        {flag("dst")}
        return o
"""


def test_war_across_loop_iterations_is_reported():
    a, out = rand((16, 64), "FP32", RNG), np.zeros((64, 64), np.float32)
    with pytest.raises(HazardError) as ei:
        run_kernel(build_kernel(_warloop_kernel(back_sync=False)), [a, out])
    e = ei.value
    assert e.kind == "WAR" and e.kernel == "war_k"
    assert "pto.tstore" in e.first and "iteration i=0" in e.first and "MTE3" in e.first
    assert "pto.texp" in e.second and "iteration i=1" in e.second
    assert "tile %u" in e.buffer
    run_kernel(build_kernel(_warloop_kernel(back_sync=True)), [a, out])
    assert np.allclose(out, np.tile(np.exp(a), (4, 1)))


def test_loop_with_back_syncs_passes():
    a, out = rand((64, 64), "FP32", RNG), np.zeros((64, 64), np.float32)
    stats = run_kernel(build_kernel(loop_kernel(back_sync=True)), [a, out])
    assert np.allclose(out, np.exp(a))
    assert not stats.pending_flags


def test_wait_without_set_is_a_deadlock():
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.load("t", "a", (16, 64), "FP32")
    k.wait_flag("MTE2", "V", 3)
    k.let("u", (16, 64), "FP32", "pl.exp(t)")
    k.sync("V", "MTE3")
    k.store("u", [0, 0])
    with pytest.raises(HazardError) as ei:
        run_kernel(k.build(), [rand((16, 64), "FP32", RNG), np.zeros((16, 64), np.float32)])
    assert ei.value.kind == "deadlock" and "pto.wait_flag" in ei.value.second
    assert "event_id = 3" in str(ei.value)


def test_unwaited_flags_are_listed():
    k = _add_kernel(sync=True)
    k.set_flag("MTE3", "MTE2", 2)
    stats = run_kernel(k.build(), _args())
    assert len(stats.pending_flags) == 1 and "MTE3" in stats.pending_flags[0]


def test_scalar_read_needs_its_producer_ordered():
    def kernel(sync: str) -> Kernel:
        k = Kernel()
        k.tensor("a", (16, 64), "INT32")
        k.tensor("out", (16, 64), "INT32", "Out")
        k.load("t", "a", (16, 64), "INT32")
        k.sync("MTE2", "V")
        k.let("u", (16, 64), "INT32", "pl.adds(t, 1)")
        if sync == "flag":
            k.sync("V", "S")
        elif sync == "all":
            k.barrier()
        k.line("v: pl.Scalar[pl.INT32] = pl.read(u, [2, 3])")
        k.let("w", (16, 64), "INT32", "pl.muls(u, v)")
        k.sync("V", "MTE3")
        k.store("w", [0, 0])
        return k

    a, out = rand((16, 64), "INT32", RNG), np.zeros((16, 64), np.int32)
    with pytest.raises(HazardError) as ei:
        run_kernel(kernel("none").build(), [a, out])
    assert ei.value.kind == "RAW" and "pto.tgetval" in ei.value.second and "on S" in ei.value.second
    for sync in ("flag", "all"):
        run_kernel(kernel(sync).build(), [a, out])
        assert np.array_equal(out, (a + 1) * (a[2, 3] + 1))


def test_ddr_conflicts_are_exact_element_ranges():
    """A store and a later load of the same tensor conflict only where their windows overlap."""
    def kernel(load_cols: int) -> Kernel:
        k = Kernel()
        k.tensor("a", (16, 64), "FP32")
        k.tensor("out", (16, 64), "FP32", "InOut")
        k.load("t", "a", (16, 32), "FP32")
        k.sync("MTE2", "MTE3")
        k.line("o = pl.store(t, [0, 0], out)")
        k.load("w", "out", (16, 32), "FP32", offsets=[0, load_cols])
        k.sync("MTE2", "MTE3")
        k.line("o = pl.store(w, [0, 32], out)")
        return k

    a = rand((16, 64), "FP32", RNG)
    out = np.zeros((16, 64), np.float32)
    run_kernel(kernel(32).build(), [a, out])  # columns 0:32 stored, 32:64 loaded: no overlap
    with pytest.raises(HazardError) as ei:
        run_kernel(kernel(16).build(), [a, out])  # columns 16:48 overlap the store
    e = ei.value
    assert e.kind == "RAW" and "pto.tstore" in e.first and "pto.tload" in e.second
    assert "%out[0:16, 0:32]" in e.buffer and "%out[0:16, 16:48]" in e.buffer


def test_views_of_one_array_alias_in_ddr():
    """Two tensor arguments that are views of one array: a store through one and a load through the
    other of the same elements conflict."""
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.tensor("alias", (16, 64), "FP32")
    k.load("t", "a", (16, 64), "FP32")
    k.sync("MTE2", "MTE3")
    k.line("o = pl.store(t, [0, 0], out)")
    k.load("w", "alias", (16, 64), "FP32")
    base = np.zeros((32, 64), np.float32)
    with pytest.raises(HazardError, match="RAW"):
        run_kernel(k.build(), [rand((16, 64), "FP32", RNG), base[:16], base[8:24]])
    run_kernel(k.build(), [rand((16, 64), "FP32", RNG), base[:16], base[16:]])


def test_cube_pipeline_pipes():
    a, b = rand((16, 32), "FP16", RNG), rand((32, 16), "FP16", RNG)
    out = np.zeros((16, 16), np.float32)
    stats = run_kernel(cube_kernel(fix_flag=True).build(), [a, b, out])
    assert stats.instructions == 6
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)
    with pytest.raises(HazardError) as ei:
        run_kernel(cube_kernel(fix_flag=False).build(), [a, b, out])
    e = ei.value
    assert e.kind == "RAW" and "pto.tmatmul" in e.first and "on M" in e.first
    assert "pto.tstore" in e.second and "on FIX" in e.second and "acc[" in e.buffer
