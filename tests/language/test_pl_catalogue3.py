"""Today's gather / scatter / sort forms and the cross-core / system names (pl-head §3.7, §3.8;
pypto/ops/gather_scatter.py, gather_routes.py, pypto/language/parser/cross_core.py): the routing
of one spelling to the op of each call form, the refusals with the source line, and the numbers of
a whole sort pipeline (sort32 with an index tile, format-1 merges with a run-time block_len, the
mask gathers with a bitcast, the flat tile gather) on both backends. The op-table rows
(tests/programs/op_table_catalogue3.py) cover each op across dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ops import OPS
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native


@pl.program
class SortPipeline:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[1, 256], pl.FP32], idx: pl.Tensor[[1, 256], pl.UINT32],
          vo: pl.Out[pl.Tensor[[1, 256], pl.FP32]], io: pl.Out[pl.Tensor[[1, 256], pl.UINT32]],
          g: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
        s = pl.load(src, [0, 0], [1, 256])
        i = pl.load(idx, [0, 0], [1, 256])
        t = pl.tile.sort32(s, i)
        for it, (acc,) in pl.range(2, init_values=(t,)):
            bl = 1 << (6 + it * 2)  # 64, 256: a run-time block_len
            m = pl.tile.mrgsort(acc, block_len=bl)
            r = pl.yield_(m)
        v = pl.tile.gather_mask(r, mask_pattern=pl.tile.MaskPattern.P0101)
        ix = pl.tile.gather_mask(r, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.UINT32)
        even = pl.tile.gather_mask(pl.tile.arange(0, [1, 512], dtype=pl.INT32), mask_pattern=1)
        gg = pl.tile.gather(r, even, even)  # (the flat form: indices into the whole [1, 512] tile)
        vo = pl.store(v, [0, 0], vo)
        io = pl.store(ix, [0, 0], io)
        g = pl.store(gg, [0, 0], g)
        return vo, io, g

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[1, 256], pl.FP32], idx: pl.Tensor[[1, 256], pl.UINT32],
             vo: pl.Out[pl.Tensor[[1, 256], pl.FP32]], io: pl.Out[pl.Tensor[[1, 256], pl.UINT32]],
             g: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
        vo, io, g = self.k(src, idx, vo, io, g)
        return vo, io, g


@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
def test_sort_pipeline_sorts_values_and_carries_index_bits(platform):
    x = (np.random.default_rng(0).permutation(256).astype(np.float32) / 7)[None]
    idx = np.arange(256, dtype=np.uint32)[None] + 1000
    vo, io, g = np.zeros((1, 256), np.float32), np.zeros((1, 256), np.uint32), np.zeros((1, 256), np.float32)
    ir.compile(SortPipeline)(x, idx, vo, io, g, config=RunConfig(platform=platform))
    order = np.argsort(-x[0], kind="stable")
    np.testing.assert_array_equal(vo[0], x[0][order])
    np.testing.assert_array_equal(io[0], idx[0][order])  # the index half holds idx's raw bits
    np.testing.assert_array_equal(g, vo)


@pl.program
class TensorForms:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[2, 3, 16], pl.FP32], i: pl.Tensor[[2, 3, 8], pl.INT32],
             m: pl.Tensor[[8, 16], pl.FP32], mi: pl.Tensor[[4, 16], pl.INT32],
             o: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]], om: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.gather(x, dim=-1, index=i)
            b = pl.tensor.gather(m, dim=0, index=mi)
            o = pl.assemble(o, a, [0, 0, 0])
            om = pl.assemble(om, b, [0, 0])
        return o, om


@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
def test_tensor_gather_along_any_dim_is_torch_gather(platform):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 16)).astype(np.float32)
    i = rng.integers(0, 16, (2, 3, 8)).astype(np.int32)
    m = rng.standard_normal((8, 16)).astype(np.float32)
    mi = rng.integers(0, 8, (4, 16)).astype(np.int32)
    o, om = np.zeros((2, 3, 8), np.float32), np.zeros((4, 16), np.float32)
    ir.compile(TensorForms)(x, i, m, mi, o, om, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(o, np.take_along_axis(x, i, axis=-1))
    np.testing.assert_array_equal(om, np.take_along_axis(m, mi, axis=0))


@pytest.mark.parametrize("call,op", [
    ("pl.gather(x, dim=-1, index=i)", "tensor.gather"),
    ("pl.gather(x, -1, i)", "tensor.gather"),
    ("pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P1010)", "tensor.gather_mask"),
    ("pl.scatter(x, dim=-1, index=i, src=x)", "tensor.scatter"),
    ("pl.scatter(pl.tensor.view(x, [4, 8], [0, 0]), mask_pattern=1, dst=x)", "tensor.scatter_mask"),
    ("pl.scatter_update(x, -2, pl.tensor.view(i, [1, 4], [0, 0]), x)", "tensor.scatter_update"),
    ("pl.scatter_update(x, pl.tensor.view(i, [2, 2], [0, 0]), x, dim=-2)", "tensor.scatter_update"),
    ("pl.sort32(x, i)", "tensor.sort32_idx"),
    ("pl.sort32(x, 0)", "tensor.sort32"),
    ("pl.mrgsort(x, block_len=4)", "tensor.mrgsort_runs"),
    ("pl.mrgsort(x, x)", "tensor.mrgsort_lists"),
    ("pl.mrgsort(x, 4)", "tensor.mrgsort"),
])
def test_one_spelling_routes_each_form_to_its_op(call, op):
    text = f"""
import pypto.language as pl

@pl.function
def f(x: pl.Tensor[[4, 16], pl.FP32], i: pl.Tensor[[4, 16], pl.INT32]) -> pl.Tensor[[4, 16], pl.FP32]:
    r = {call}
    return x
"""
    fn = pl.parse(text)
    names = {s.value.op.name for s in fn.body.stmts if hasattr(s, "value") and hasattr(s.value, "op")}
    assert op in names, names
    assert OPS[op]


@pytest.mark.parametrize("call,message", [
    ("pl.gather(x, dim=0, index=pl.cast(i, pl.FP32))", "index must be an integer"),
    ("pl.gather(x, dim=5, index=i)", "out of range"),
    ("pl.scatter(x, dim=0, index=i, src=pl.tensor.view(x, [2, 16], [0, 0]))", "src must have the index's shape"),
    ("pl.scatter(x, mask_pattern=1)", "needs dst="),
    ("pl.mrgsort(x, block_len=3)", "even"),
    ("pl.gather(x, kvalue=1.0, cmp_mode='eq')", "compare form"),
    ("pl.gather(x, mask_pattern=1, output_dtype=pl.FP16)", "width"),
])
def test_bad_forms_are_refused_with_the_line(call, message):
    text = f"""
import pypto.language as pl

@pl.function
def f(x: pl.Tensor[[4, 16], pl.FP32], i: pl.Tensor[[4, 16], pl.INT32]) -> pl.Tensor[[4, 16], pl.FP32]:
    r = {call}
    return x
"""
    with pytest.raises(pl.ParserError) as e:
        pl.parse(text)
    assert message in str(e.value)
    assert "r = " in str(e.value)  # (the source line)


def test_system_names_and_constants():
    assert pl.AUTO == -1
    for name in ("sync_set", "sync_wait", "set_ffts", "fence", "cacheinvalid", "available_cluster_count",
                 "available_aiv_count", "task_dummy", "task_invalid"):
        assert hasattr(pl.system, name)
    for name in ("tpush_to_aiv", "tpop_from_aic", "tfree_to_aiv", "aic_initialize_pipe", "reserve_buffer",
                 "import_peer_buffer", "split_aiv", "aiv_shard", "aic_gather"):
        assert hasattr(pl, name)
    assert pl.tile.MaskPattern.P1010 == 2


def test_hand_written_pipes_parse_into_the_pipe_ops():
    """(They run between the halves of a Group: tests/language/test_cross_core_pipes.py.)"""
    text = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[16, 16], pl.FP32]):
    t = pl.load(x, [0, 0], [16, 16])
    pl.tpush_to_aiv(t, split=0)
"""
    from pypto.ir import python_print

    printed = python_print(pl.parse(text))
    assert "tpush_to_aiv(t, split=0, id=0)" in printed, printed


def test_sync_set_checks_its_event_id():
    text = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[16, 16], pl.FP32]):
    pl.system.sync_set(14, pipe=pl.PipeType.V)
"""
    with pytest.raises(pl.ParserTypeError, match="event_id must be an int in 0..13"):
        pl.parse(text)
