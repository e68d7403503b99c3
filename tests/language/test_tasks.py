"""The task language (docs/tasks.md): `pl.at(... as tid, deps=)`, `pl.spmd`, `pl.submit` /
`pl.spmd_submit`, predicates, manual scopes, task_dummy / task_invalid, no_dep / manual_dep,
`pl.pipeline`, `pl.cluster` -- the same numbers on the interpreter and the native runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native

PLATFORMS = ["interp", pytest.param("cpu", marks=pytest.mark.native)]
R, C = 32, 32
M, N = 2, 2


def run(prog, platform, *arrays, **cfg):
    compiled = ir.compile(prog)
    compiled(*arrays, config=RunConfig(platform=platform, **cfg))
    return compiled


@pl.program
class AtDepsPipeline:
    """out = 2 * x + 1 over a tile grid: two pl.at stages per tile, ordered only by deps= (manual scope)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M * R, N * C], pl.FP32], scratch: pl.Out[pl.Tensor[[M * R, N * C], pl.FP32]],
             out: pl.Out[pl.Tensor[[M * R, N * C], pl.FP32]]) -> pl.Tensor[[M * R, N * C], pl.FP32]:
        with pl.manual_scope():
            for i in pl.range(M):
                for j in pl.parallel(N):
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1") as t1:
                        a = pl.load(x, [i * R, j * C], [R, C])
                        scratch = pl.store(pl.add(a, a), [i * R, j * C], scratch)
                    with pl.at(level=pl.Level.CORE_GROUP, deps=[t1, None]) as _t2:
                        b = pl.load(scratch, [i * R, j * C], [R, C])
                        out = pl.store(pl.adds(b, 1.0), [i * R, j * C], out)
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_at_deps_pipeline_in_manual_scope(platform):
    x = np.random.default_rng(0).standard_normal((M * R, N * C)).astype(np.float32)
    scratch, out = np.zeros_like(x), np.zeros_like(x)
    run(AtDepsPipeline, platform, x, scratch, out, num_workers=2)
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)


@pl.program
class Predicated:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.block.full([R, C], dtype=pl.FP32, value=42.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def clobber(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.block.full([R, C], dtype=pl.FP32, value=999.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]], gate: pl.Tensor[[R, C], pl.INT32],
             out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.manual_scope():
            x, t0 = pl.spmd_submit(self.produce, x, core_num=1)
            x, t1 = pl.submit(self.clobber, x, deps=[t0], predicate=(gate[1, 2] > 0))
            out, _ = pl.spmd_submit(self.copy, x, out, core_num=1, deps=[t1])
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("gate, want", [(0, 42.0), (1, 999.0), (-3, 42.0)])
def test_predicate_skips_or_dispatches(platform, gate, want):
    x = np.full((R, C), -1, np.float32)
    g = np.zeros((R, C), np.int32)
    g[1, 2] = gate
    out = np.zeros((R, C), np.float32)
    run(Predicated, platform, x, g, out)
    assert (out == want).all()


B = 4  # blocks


@pl.program
class Spmd:
    """Three spellings of one spmd task: rows [128*b, 128*b + 32) of block b (b = get_block_idx)."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_rows(self, a: pl.Tensor[[B * R, C], pl.FP32], out: pl.Out[pl.Tensor[[B * R, C], pl.FP32]]
                 ) -> pl.Tensor[[B * R, C], pl.FP32]:
        b = pl.get_block_idx()
        n = pl.get_block_num()
        t = pl.load(a, [b * R, 0], [R, C])
        return pl.store(pl.adds(t, pl.cast(n, pl.FP32)), [b * R, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B * R, C], pl.FP32], o1: pl.Out[pl.Tensor[[B * R, C], pl.FP32]],
             o2: pl.Out[pl.Tensor[[B * R, C], pl.FP32]], o3: pl.Out[pl.Tensor[[B * R, C], pl.FP32]],
             nb: pl.Scalar[pl.INDEX]):
        with pl.spmd(nb):  # a core_num expression
            o1 = self.add_rows(a, o1)
        for i in pl.spmd(B):
            t = pl.load(a, [i * R, 0], [R, C])
            o2 = pl.store(pl.muls(t, 2.0), [i * R, 0], o2)
        with pl.spmd(B, deps=[pl.system.task_invalid()]) as tid:
            b = pl.get_block_idx()
            t = pl.load(o2, [b * R, 0], [R, C])
            o3 = pl.store(pl.adds(t, 1.0), [b * R, 0], o3)
        done = pl.system.task_dummy(deps=[tid, None])  # noqa: F841
        return o1, o2, o3


@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_forms(platform):
    a = np.arange(B * R * C, dtype=np.float32).reshape(B * R, C)
    o1, o2, o3 = (np.zeros_like(a) for _ in range(3))
    run(Spmd, platform, a, o1, o2, o3, B)
    np.testing.assert_array_equal(o1, a + B)
    np.testing.assert_array_equal(o2, 2 * a)
    np.testing.assert_array_equal(o3, 2 * a + 1)


@pl.program
class Rendezvous:
    """Block b writes its row, waits at syncall, then reads the row of block (b + 1) % B: without a
    real barrier a block would read a row nobody wrote yet."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B, C], pl.FP32], ws: pl.Out[pl.Tensor[[B, C], pl.FP32]],
             out: pl.Out[pl.Tensor[[B, C], pl.FP32]]):
        with pl.spmd(B, sync_start=True):
            b = pl.get_block_idx()
            t = pl.load(a, [b, 0], [1, C])
            ws = pl.store(pl.adds(t, 100.0), [b, 0], ws)
            pl.system.syncall()
            nxt = (b + 1) % B
            u = pl.load(ws, [nxt, 0], [1, C])
            out = pl.store(u, [b, 0], out)
        return ws, out


@pytest.mark.parametrize("platform, workers", [("interp", None), pytest.param("cpu", 0, marks=pytest.mark.native),
                                               pytest.param("cpu", 1, marks=pytest.mark.native)])
def test_syncall_blocks_rendezvous(platform, workers):
    a = np.arange(B * C, dtype=np.float32).reshape(B, C)
    ws, out = np.zeros_like(a), np.zeros_like(a)
    cfg = {"num_workers": workers} if workers is not None else {}
    run(Rendezvous, platform, a, ws, out, **cfg)
    np.testing.assert_array_equal(out, np.roll(a + 100, -1, axis=0))


@pl.program
class Untracked:
    """manual_dep / no_dep / init_value / pl.pipeline / pl.cluster / pl.dump_tag."""

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.adds(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        acc = pl.create_tensor([R, C], dtype=pl.FP32, manual_dep=True, init_value=5.0)
        acc, t = pl.submit(self.inc, acc)
        for _ in pl.pipeline(0, 3, stage=2):
            with pl.cluster():
                acc, t = pl.submit(self.inc, pl.no_dep(acc), deps=[t])
        pl.dump_tag(acc)
        out, _ = pl.submit(self.copy, acc, out, deps=[t])
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_untracked_tensors_are_ordered_by_explicit_deps(platform):
    out = np.zeros((R, C), np.float32)
    compiled = run(Untracked, platform, out, num_workers=2)
    assert (out == 9.0).all()
    # the task program passes acc untracked and orders the chain by explicit dependencies
    (pto,) = (Path(str(compiled)) / "orchestration").glob("*.pto")
    text = pto.read_text()
    assert text.count("untracked = [0]") == 3 and text.count('"dep"') == 2
