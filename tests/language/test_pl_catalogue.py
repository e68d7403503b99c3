"""Ops of today's public `pl` catalogue (pl-head §3) added by pypto/ops/catalogue.py: their
spellings, dispatch (tensor vs tile by the first operand), refusals with the source line, and their
numbers on both backends (the op-table rows cover the dtypes and ragged shapes)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ops import OPS
from pypto.runtime import RunConfig


@pytest.mark.parametrize("spelling,op", [
    ("arange", "tensor.ci"), ("tensor.ci", "tensor.ci"), ("tensor.arange", "tensor.ci"),
    ("tile.ci", "block.ci"), ("tile.arange", "block.ci"), ("tri", "block.tri"), ("tile.tri", "block.tri"),
    ("tensor.fillpad_expand", "tensor.fillpad_expand"), ("tile.fillpad_expand", "block.fillpad_expand"),
    ("tile.fillpad_inplace", "block.fillpad"), ("tile.transpose_view", "block.transpose_view"),
    ("tile.row_expand_expdif", "block.row_expand_expdif"), ("tensor.col_expand_expdif", "tensor.col_expand_expdif"),
])
def test_spellings_name_their_registry_op(spelling, op):
    obj = pl
    for part in spelling.split("."):
        obj = getattr(obj, part)
    assert obj.entry is OPS[op]


@pytest.mark.parametrize("name", ["row_expand_expdif", "col_expand_expdif", "fillpad_expand", "col_prod"])
def test_expdif_dispatches_on_the_first_operand(name):
    d = getattr(pl, name).entry
    assert d.tensor is OPS[f"tensor.{name}"] and d.tile is OPS[f"block.{name}"]


def _compile_error(src_fn):
    with pytest.raises(pl.ParserError) as e:
        pl.function(src_fn)
    return e.value


def test_ci_refuses_an_int8_range_with_the_line():
    def bad(x: pl.Tensor[[1, 32], pl.INT8]) -> pl.Tensor[[1, 32], pl.INT8]:
        return pl.arange(0, [1, 32], dtype=pl.INT8)
    err = _compile_error(bad)
    assert "INT8 is not one of" in str(err) and "pl.arange(0" in str(err)


def test_expdif_refuses_integers():
    def bad(x: pl.Tensor[[16, 64], pl.INT32], v: pl.Tensor[[16, 1], pl.INT32]) -> pl.Tensor[[16, 64], pl.INT32]:
        return pl.row_expand_expdif(x, v)
    assert "floating-point" in str(_compile_error(bad))


def test_fillpad_expand_refuses_a_smaller_shape():
    def bad(x: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        return pl.store(pl.tile.fillpad_expand(t, [8, 64]), [0, 0], o)
    assert "smaller than the input" in str(_compile_error(bad))


@pl.program
class _Catalogue:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], v: pl.Tensor[[16, 1], pl.FP32],
          o1: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
          o3: pl.Out[pl.Tensor[[16, 16], pl.FP32]], o4: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
          o5: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 64])
        o1 = pl.store(pl.row_expand_expdif(t, pl.load(v, [0, 0], [16, 1])), [0, 0], o1)
        o2 = pl.store(pl.tile.ci(5, [1, 32], dtype=pl.INT32, descending=True), [0, 0], o2)
        o3 = pl.store(pl.tile.tri(1, [16, 16], dtype=pl.FP32, upper=True), [0, 0], o3)
        p = pl.load(x, [0, 0], [16, 64], valid_shapes=[10, 50])
        o4 = pl.store(pl.tile.fillpad_expand(p, [32, 64], pad_value=pl.PadValue.max), [0, 0], o4)
        o5 = pl.store(pl.tile.transpose_view(t), [0, 0], o5)
        return o1, o2, o3, o4, o5

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], v: pl.Tensor[[16, 1], pl.FP32],
             o1: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
             o3: pl.Out[pl.Tensor[[16, 16], pl.FP32]], o4: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
             o5: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
        o1, o2, o3, o4, o5 = self.k(x, v, o1, o2, o3, o4, o5)
        return o1, o2, o3, o4, o5


@pl.function
def _tensor_level(x: pl.Tensor[[16, 64], pl.FP32], c: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
    return pl.col_expand_expdif(x, c)


@pytest.mark.native  # (ir.compile builds the CPU library; the interpreter runs the same compiled program)
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_catalogue_ops_compute_their_numbers(platform):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    v = rng.standard_normal((16, 1)).astype(np.float32)
    outs = [np.zeros(s, d) for s, d in (((16, 64), np.float32), ((1, 32), np.int32), ((16, 16), np.float32),
                                         ((32, 64), np.float32), ((64, 16), np.float32))]
    o1, o2, o3, o4, o5 = ir.compile(_Catalogue)(x, v, *outs, config=RunConfig(platform=platform))
    np.testing.assert_allclose(o1, np.exp(x - v), rtol=1e-6)
    np.testing.assert_array_equal(o2, (5 - np.arange(32))[None, :])
    np.testing.assert_array_equal(o3, np.triu(np.ones((16, 16)), 1))
    want = np.full((32, 64), np.inf, np.float32)
    want[:10, :50] = x[:10, :50]
    np.testing.assert_array_equal(o4, want)
    np.testing.assert_array_equal(o5, x.T)
    c = rng.standard_normal((1, 64)).astype(np.float32)
    np.testing.assert_allclose(ir.compile(_tensor_level)(x, c, config=RunConfig(platform=platform)), np.exp(x - c),
                               rtol=1e-6)
