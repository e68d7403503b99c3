"""The op surface of the seed era (reference §1.6) and the later public names (§0, §1.1) exist and
resolve to the same ops; broadcasting and dtype promotion follow reference §1.2."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType, promote
from pypto.ops import OPS

SEED_PL = """add sub mul div maximum exp cast reshape transpose view matmul row_max row_sum create_tile abs addc
addsc and_ ands cmp cmps col_expand col_expand_div col_expand_mul col_expand_sub expands gemv gemv_acc gemv_bias
load log lrelu matmul_acc matmul_bias max maxs min minimum mins move neg not_ or_ ors prelu recip relu rem rems
row_expand row_expand_add row_expand_div row_expand_mul row_expand_sub row_min rsqrt sel sels shl shls shr shrs
sqrt store subc subsc sum xor xors assemble create_tensor dim""".split()
SEED_BLOCK = """create_tile load store move full fillpad get_block_idx add sub mul div adds subs muls divs neg exp sqrt
rsqrt recip log abs relu cast matmul matmul_acc matmul_bias gemv gemv_acc gemv_bias row_max row_sum row_min maximum
minimum row_expand row_expand_sub row_expand_div row_expand_mul row_expand_add col_expand col_expand_mul
col_expand_div col_expand_sub expands cmp cmps sum max min view reshape transpose rem rems and_ ands or_ ors xor xors
shl shls shr shrs maxs mins prelu not_ addc subc addsc subsc lrelu sel sels""".split()
SEED_TENSOR = """create_tensor read dim view matmul add sub mul div add_scalar sub_scalar mul_scalar div_scalar maximum
row_max row_sum exp cast assemble reshape transpose""".split()
SEED_SYSTEM = "sync_src sync_dst bar_v bar_m bar_all".split()
DSL_HELPERS = "range parallel unroll while_ yield_ cond const incore auto_incore function inline program parse loads".split()
LATER = {  # later public spellings
    "pl": "slice concat full read write fillpad".split(),
    "tile": "create load store move add adds slice concat assemble read write fillpad".split(),
    "tensor": "create adds subs muls divs slice concat full fillpad row_min neg recip sqrt rsqrt matmul_acc expands "
              "row_expand col_expand write".split(),
}


@pytest.mark.parametrize("name", SEED_PL + DSL_HELPERS)
def test_pl_names(name):
    assert hasattr(pl, name), f"pl.{name} missing"


@pytest.mark.parametrize("name", SEED_BLOCK)
def test_block_names(name):
    assert hasattr(pl.block, name), f"pl.block.{name} missing"


@pytest.mark.parametrize("name", SEED_TENSOR)
def test_tensor_names(name):
    assert hasattr(pl.tensor, name), f"pl.tensor.{name} missing"


@pytest.mark.parametrize("name", SEED_SYSTEM)
def test_system_names(name):
    assert hasattr(pl.system, name), f"pl.system.{name} missing"


@pytest.mark.parametrize("ns, name", [(ns, n) for ns, names in LATER.items() for n in names])
def test_later_names(ns, name):
    target = pl if ns == "pl" else getattr(pl, ns)
    assert hasattr(target, name), f"pl.{ns}.{name} missing"


def test_ir_aliases_resolve_to_the_same_op():
    for alias, canon in [("tile.add", "block.add"), ("tensor.adds", "tensor.add_scalar"), ("tensor.slice", "tensor.view"),
                         ("tile.create", "block.create_tile"), ("tensor.create_tensor", "tensor.create"),
                         ("tile.alloc", "block.alloc"), ("tile.slice", "block.view")]:
        assert ir.get_op(alias) is ir.get_op(canon), alias


def test_every_op_has_a_type_rule_and_reference():
    from pypto.ops.cross_core import POPS, PUSHES

    pipes = {op.name for op in (*PUSHES, *POPS)}  # (a pop's value is another block's push: no reference)
    for name, op in OPS.items():
        assert op.infer is not None, name
        if not name.startswith(("system.", "block.alloc")) and name not in pipes:
            assert op.reference is not None, f"{name} has no NumPy reference"


@pytest.mark.parametrize("a, b, want", [
    (DataType.INT32, DataType.FP32, DataType.FP32), (DataType.INT32, DataType.INT64, DataType.INT64),
    (DataType.UINT32, DataType.INT32, DataType.INT32), (DataType.FP16, DataType.FP32, DataType.FP32),
    (DataType.INT8, DataType.INT16, DataType.INT16), (DataType.BF16, DataType.FP16, DataType.FP32),
    (DataType.BOOL, DataType.INT8, DataType.INT8), (DataType.UINT8, DataType.FP16, DataType.FP16),
])
def test_promotion(a, b, want):
    assert promote(a, b) is want and promote(b, a) is want


def _tensor_fn(shape_a, shape_b, dt_a="FP32", dt_b="FP32"):
    src = f"""
import pypto.language as pl
@pl.function
def f(a: pl.Tensor[{shape_a}, pl.{dt_a}], b: pl.Tensor[{shape_b}, pl.{dt_b}]):
    c = pl.add(a, b)
    return c
"""
    return pl.parse(src)


@pytest.mark.parametrize("sa, sb, want", [([4, 8], [8], [4, 8]), ([4, 1], [8], [4, 8]), ([1, 8], [4, 1], [4, 8]),
                                          ([2, 3, 4], [4], [2, 3, 4])])
def test_broadcasting(sa, sb, want):
    f = _tensor_fn(sa, sb)
    assert list(f.return_types[0].static_shape()) == want


def test_broadcast_mismatch_is_an_error():
    with pytest.raises(pl.ParserTypeError, match="do not broadcast"):
        _tensor_fn([4, 8], [3])


def test_dtype_promotion_in_ops():
    f = _tensor_fn([4], [4], "INT32", "FP32")
    assert f.return_types[0].dtype is DataType.FP32
