"""Row gathers and scatters at the tensor level (index_select, scatter_update) on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import pypto

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_index_select_rows(platform):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def embed(table: pypto.Tensor((100, 64), pypto.DT_FP32), ids: pypto.Tensor((pypto.DYNAMIC,), pypto.DT_INT32)):
        return pypto.index_select(table, 0, ids) * 2.0

    table = np.random.default_rng(0).standard_normal((100, 64)).astype(np.float32)
    for ids in (np.array([3, 99, 0, 3, 42], np.int32), np.array([7], np.int32)):
        np.testing.assert_array_equal(embed(table, ids), table[ids] * 2)
    assert len(embed.compiled_programs) == 1  # a dynamic number of ids


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scatter_update_writes_rows_in_place(platform):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def update(cache: pypto.Tensor((32, 16), pypto.DT_FP32), slots: pypto.Tensor((4,), pypto.DT_INT32),
               kv: pypto.Tensor((4, 16), pypto.DT_FP32)):
        pypto.scatter_update(cache, -2, slots, kv)

    rng = np.random.default_rng(1)
    cache = rng.standard_normal((32, 16)).astype(np.float32)
    kv = rng.standard_normal((4, 16)).astype(np.float32)
    slots = np.array([5, 31, 0, 17], np.int32)
    want = cache.copy()
    want[slots] = kv
    update(cache, slots, kv)
    np.testing.assert_array_equal(cache, want)


def test_a_bad_index_is_refused():
    @pypto.frontend.jit(runtime_options={"platform": "interp"})
    def k(t: pypto.Tensor((8, 4), pypto.DT_FP32), ids: pypto.Tensor((2,), pypto.DT_FP32)):
        return pypto.index_select(t, 0, ids)

    with pytest.raises(pypto.frontend.FrontendError, match="int32"):
        k(np.zeros((8, 4), np.float32), np.zeros(2, np.float32))
