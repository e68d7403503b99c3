"""BOOL elements take one byte each in memory, as the backends store them: memory planning once
sized them at one bit, so two [64, 64] BOOL tiles (4 KiB each) were given overlapping 512-byte
buffers and `pl.maximum` of two masks gave hundreds of wrong elements on `cpu` (the interpreter
reported the overlap as a hazard)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.types import TensorType, TileType
from pypto.runtime import RunConfig
from pypto.target import ascend910b, cpu


@pl.program
class Masks:
    @pl.function
    def main(self, a: pl.Tensor[[64, 64], pl.BOOL], b: pl.Tensor[[64, 64], pl.BOOL],
             x: pl.Tensor[[64, 64], pl.FP32]) -> tuple[pl.Tensor[[64, 64], pl.BOOL], pl.Tensor[[64, 64], pl.FP32]]:
        both = pl.maximum(a, b)
        masked = pl.mul(pl.cast(a, pl.FP32), x)
        return both, masked


@pytest.fixture(scope="module")
def masks(tmp_path_factory):
    return ir.compile(Masks, output_dir=tmp_path_factory.mktemp("bool_masks"))


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_bool_maximum_and_mask_multiply_match_numpy(masks, platform):
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64)) < 0.5, rng.random((64, 64)) < 0.5
    x = rng.standard_normal((64, 64)).astype(np.float32)
    both, masked = masks(a, b, x, config=RunConfig(platform=platform))
    assert both.dtype == np.bool_
    np.testing.assert_array_equal(both, np.maximum(a, b))
    np.testing.assert_array_equal(masked, a.astype(np.float32) * x)


@pytest.mark.native
def test_bool_tiles_get_whole_byte_buffers_that_do_not_overlap(masks):
    """The memory report: every BOOL tile is 64 * 64 bytes, and buffers live at once are disjoint."""
    report = json.loads((Path(masks) / "report" / "memory.json").read_text())
    bufs = [b for k in report["kernels"] for sp in k["spaces"] for b in sp["buffers"]]
    tiles = [t for b in bufs for t in b["tiles"]]
    assert {t["dtype"] for t in tiles} >= {"BOOL", "FP32"}
    assert all(t["bytes"] == 64 * 64 * (1 if t["dtype"] == "BOOL" else 4) for t in tiles), tiles
    assert all(b["size"] >= max(t["bytes"] for t in b["tiles"]) for b in bufs)
    for i, p in enumerate(bufs):
        for q in bufs[i + 1:]:
            live_together = any(a0 <= b1 and b0 <= a1 for a0, a1 in p["lifetime"]["intervals"]
                                for b0, b1 in q["lifetime"]["intervals"])
            if live_together:
                assert p["end"] <= q["addr"] or q["end"] <= p["addr"], (p["name"], q["name"])


@pytest.mark.parametrize("target", [cpu(), ascend910b()], ids=lambda t: t.name)
def test_sizes_are_bytes_as_stored(target):
    """One byte per element for BOOL and the 4-bit types (never bits / 8), the width in bytes for the rest."""
    for dt in DataType:
        want = 64 * 16 * max(1, dt.bits // 8)
        assert dt.itemsize == max(1, dt.bits // 8)
        assert target.tile_bytes(MemorySpace.Vec, (64, 16), dt) == want, dt
        assert TensorType([64, 16], dt).nbytes() == want, dt
        assert TileType([64, 16], dt).nbytes() == want, dt
    assert target.tile_bytes(MemorySpace.Vec, (64, 64), DataType.BOOL) == 4096
