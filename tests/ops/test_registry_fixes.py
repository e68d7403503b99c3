"""Registry behaviour pinned by the end-to-end op test (tests/backend/test_ops_e2e.py), checked here
without compiling anything."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, Var
from pypto.ir.types import TileType, TileView
from pypto.ops import OPS


def _tile(shape, valid=None) -> Var:
    view = TileView(valid_shape=tuple(ConstInt(v) for v in valid)) if valid is not None else None
    return Var("t", TileType(shape, DataType.FP32, MemorySpace.Vec, None, view))


def test_broadcast_result_takes_the_valid_region_of_the_unbroadcast_operand():
    """sub(row vector, tile): the result is valid where the tile is, not over the whole tile."""
    row, t = _tile((16, 1), (13, 1)), _tile((16, 64), (13, 37))
    for a, b in ((row, t), (t, row)):
        r = OPS["block.sub"].infer_type((a, b), {})
        assert [d.value for d in r.valid_shape] == [13, 37]
    col = _tile((1, 64), (1, 37))
    r = OPS["block.sel"].infer_type((t, col, t), {})
    assert [d.value for d in r.valid_shape] == [13, 37]


def test_tile_scalar_ops_compute_with_the_scalar_in_the_tile_dtype():
    """adds(int8 tile, 1.5) adds 1 (what both backends do), and keeps int8."""
    a = np.array([3, -3, 127], np.int8)
    got = OPS["block.adds"].reference(a, 1.5).astype(np.int8)
    np.testing.assert_array_equal(got, np.array([4, -2, -128], np.int8))
    f16 = np.array([1.0], np.float16)
    assert OPS["block.cmps"].reference(f16, 1.0000001).dtype == np.float32  # fp16 compares in fp32


def test_pl_full_takes_a_shape():
    f = pl.parse("""
import pypto.language as pl
@pl.function
def f() -> pl.Tensor[[4, 8], pl.FP16]:
    t = pl.full([4, 8], dtype=pl.FP16, value=2.5)
    return t
""")
    assert f.return_types[0].dtype is DataType.FP16


def test_tile_reshape_checks_the_element_count():
    import pytest

    from pypto.ir.expr import MakeTuple
    from pypto.ir.op import OpError

    t = _tile((16, 16))
    shape = MakeTuple((ConstInt(32), ConstInt(16)))
    with pytest.raises(OpError, match=r"cannot reshape 256 elements into \[32, 16\] \(512 elements\)"):
        OPS["block.reshape"].infer_type((t, shape), {})
    ok = OPS["block.reshape"].infer_type((t, MakeTuple((ConstInt(8), ConstInt(32)))), {})
    assert ok.static_shape() == (8, 32)
