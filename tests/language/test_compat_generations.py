"""The constructs whose spelling alone cannot tell the generations apart (docs/compat.md): today's
meaning by default, the March meaning under `pl.compat`; and what today's API refuses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ops.masks import mask_width, pack_bits, unpack_bits
from pypto.runtime import RunConfig
from tests.programs.compat_kernels import PLATFORMS, A, B, compile_, kernel, run


def _ops(src: str) -> set[str]:
    prog = pl.parse_program(src)
    text = ir.python_print(prog)
    return {name for name in ("cmp_mask", "cmps_mask", "sel_mask", "block.cmp(", "block.sel(") if name in text}


def test_mask_layout_is_little_endian_bits_padded_to_32_bytes():
    assert [mask_width(n) for n in (1, 8, 32, 256, 257, 512)] == [32, 32, 32, 32, 64, 64]
    bits = np.zeros((2, 20), bool)
    bits[0, [0, 9, 19]] = True
    m = pack_bits(bits)
    assert m.shape == (2, 32) and m.dtype == np.uint8
    assert list(m[0, :3]) == [0b1, 0b10, 0b1000] and not m[1].any() and not m[0, 3:].any()
    np.testing.assert_array_equal(unpack_bits(m, 20), bits)


def test_tile_cmp_is_a_packed_mask_today_and_a_01_tile_in_march():
    src = kernel("m = pl.cmp(ta, tb, cmp_type=2)\nr = pl.sel(m, ta, tb)")
    assert _ops(src) == {"cmp_mask", "sel_mask"}
    with pl.compat.generation("march"):
        assert pl.compat.current() == "march" and pl.compat.legacy()
        assert _ops(src) == {"block.cmp(", "block.sel("}
    assert pl.compat.current() == "head"
    # the seed spelling pl.block.cmp is the 0/1 compare in every generation
    assert _ops(kernel("m = pl.block.cmp(ta, tb, cmp_type=2)\nr = pl.sel(m, ta, tb)")) == {"block.cmp(", "block.sel("}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_march_program_using_the_mask_as_numbers(platform):
    # March: the mask is a same-dtype 0/1 tile, so it can be multiplied with
    body = "m = pl.cmp(ta, tb, cmp_type=4)\nr = pl.mul(m, ta)"
    today = run(body, platform)  # today the mask holds packed bits: its bytes are multiplied
    np.testing.assert_allclose(today, pack_bits(A > B).astype(np.float32) * A, rtol=1e-6)
    with pl.compat.generation("march"):
        got = run(body, platform)
    np.testing.assert_allclose(got, np.where(A > B, A, 0), rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("mode, fn", [(0, np.equal), (1, np.not_equal), (2, np.less), (3, np.less_equal),
                                      (4, np.greater), (5, np.greater_equal)])
def test_packed_masks_select_where_the_comparison_holds(mode, fn, platform):
    b = np.where(np.arange(32) % 3 == 0, A, B)  # (some equal elements)
    src = kernel(f"one = pl.tile.full([16, 32], dtype=pl.FP32, value=1.0)\n"
                 f"zero = pl.tile.full([16, 32], dtype=pl.FP32, value=0.0)\n"
                 f"tmp = pl.tile.create([1, 32], dtype=pl.UINT8)\n"
                 f"m: pl.Tile[[16, 32], pl.UINT8] = pl.tile.cmp(ta, tb, cmp_type={mode})\n"
                 f"r = pl.tile.sel(m, one, zero, tmp)")
    c = np.zeros((16, 32), np.float32)
    compile_(pl.parse_program(src), platform)(A, b, c, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(c, fn(A, b).astype(np.float32))
    got = run(f"m = pl.cmps(ta, 0.0, cmp_type={mode})\nr = pl.sel(m, ta, tb)", platform)
    np.testing.assert_array_equal(got, np.where(fn(A, 0.0), A, B))


def test_tensor_only_keywords_on_the_tile_path():
    src = '''
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 32], pl.BF16], b: pl.Tensor[[32, 16], pl.BF16],
      c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
    la = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
    rb = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
    c = pl.store(pl.matmul(la, rb, b_trans=True), [0, 0], c)
    return c
'''
    with pytest.raises(pl.ParserTypeError, match="tensor-only") as e:
        pl.parse(src)
    assert isinstance(e.value, TypeError)
    with pl.compat.generation("march"):
        pl.parse(src)  # March: the tile path ignored the keyword
    with pytest.raises(TypeError, match="high_precision"):
        pl.parse_program(kernel("r = pl.rsqrt(pl.abs(ta), high_precision=True)"))
    pl.parse_program(kernel("tmp = pl.create_tile([16, 32], pl.FP32)\nr = pl.rsqrt(pl.abs(ta), tmp)"))


def test_generation_setting_and_environment(monkeypatch):
    with pytest.raises(ValueError, match="unknown pl generation"):
        pl.compat.set_generation("2024")
    pl.compat.set_generation("seed")
    try:
        assert pl.compat.legacy()
    finally:
        pl.compat.set_generation("head")
    assert not pl.compat.legacy()


def test_split_cross_core_slot_and_roles():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(pl.Level.CORE_GROUP, pl.Role.Worker, optimizations=[OPTS]):
            c = pl.assemble(c, pl.add(a, a), [0, 0])
        return c
'''
    pl.parse_program(src.replace("OPTS", "pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)"))
    with pytest.warns(DeprecationWarning, match="cross_core_slot"):
        pl.parse_program(src.replace("OPTS", "pl.split(pl.SplitMode.LEFT_RIGHT, slot_num=4)"))
    with pytest.raises(pl.ParserSyntaxError, match="optimizations= takes"):
        pl.parse_program(src.replace("OPTS", "3"))
    assert pl.Role.Worker is pl.Role.SubWorker


def test_function_attributes_old_and_new_spelling():
    with pytest.warns(DeprecationWarning, match="func_attr"):
        @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})
        def old(a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 32]), [0, 0], c)
            return c

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @pl.function(type=pl.FunctionType.InCore)
        def new(a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            pl.func_attr({"split": pl.SplitMode.UP_DOWN, "stationary": a})
            c = pl.store(pl.load(a, [0, 0], [16, 32]), [0, 0], c)
            return c

    assert ir.structural_equal(old.body, new.body, enable_auto_mapping=True)
    with pytest.raises(pl.ParserTypeError, match="string keys"):
        pl.parse_program(kernel("pl.func_attr({1: 2})\nr = ta"))
    with pytest.raises(pl.ParserSyntaxError, match="dict literal"):
        pl.parse_program(kernel("pl.func_attr(3)\nr = ta"))


def test_bad_forms_name_the_problem():
    with pytest.raises(pl.ParserTypeError, match="not both"):
        pl.parse_program(kernel("r = pl.load(a, [0, 0], [16, 32], valid_shape=[8, 32], valid_shapes=[8, 32])"))
    with pytest.raises(pl.ParserTypeError, match="scratch operand must be a tile"):
        pl.parse_program(kernel("r = pl.rem(ta, tb, 3)"))
    with pytest.raises(pl.ParserTypeError, match="atomic="):
        pl.parse_program(kernel("c = pl.store(ta, [0, 0], c, atomic=7)"))
    with pytest.raises(pl.ParserTypeError, match="drop_dims"):
        pl.parse_program(kernel("x = pl.slice(ta, [16, 32], [0, 0], drop_dims=[0])\nr = ta"))
    # a number init_value is tensor.create's own attribute (any dtype; tests/language/test_tasks.py runs it)
    assert "init_value=1.0" in ir.python_print(
        pl.parse_program(kernel("t = pl.create_tensor([4, 4], dtype=pl.FP16, init_value=1.0)\nr = ta")))
