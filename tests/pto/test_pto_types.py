"""PTO types as text: print_type / parse_type round trips, defaults, and the tokenizer's view."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pypto.pto import (
    PartitionViewT,
    PtoParseError,
    PtrT,
    ScalarT,
    TensorT,
    TensorViewT,
    TileBufT,
    parse_type,
    print_type,
)
from pypto.pto.syntax import SCALAR_NAMES, TILE_LOCS, bits_to_float, quote, special_float_bits, unquote

ELEMS = sorted(SCALAR_NAMES)


@pytest.mark.parametrize("text,ty", [
    ("index", ScalarT("index")),
    ("ui64", ScalarT("ui64")),
    ("f8e4m3", ScalarT("f8e4m3")),
    ("!pto.ptr<bf16>", PtrT("bf16")),
    ("!pto.tensor_view<?x?xf32>", TensorViewT(2, "f32")),
    ("!pto.tensor_view<f32>", TensorViewT(0, "f32")),
    ("!pto.partition_tensor_view<64x?xf32>", PartitionViewT((64, None), "f32")),
    ("!pto.tensor<64x?xf32>", TensorT((64, None), "f32")),
    ("!pto.tensor<i8>", TensorT((), "i8")),
    ("!pto.tensor<4xindex>", TensorT((4,), "index")),
    ("!pto.tensor_view<?x?xindex>", TensorViewT(2, "index")),
    ("!pto.partition_tensor_view<?xbf16>", PartitionViewT((None,), "bf16")),
    ("!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=64, v_col=?, blayout=row_major, "
     "slayout=none_box, fractal=512, pad=0>", TileBufT("vec", "f32", 64, 64, 64, None)),
    ("!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
     "slayout=row_major, fractal=1024, pad=2>", TileBufT("acc", "f32", 16, 16, 16, 16, "col_major", "row_major", 1024, 2)),
])
def test_canonical_types(text: str, ty):
    assert parse_type(text) == ty
    assert print_type(ty) == text


def test_tile_buf_defaults_and_field_order():
    short = parse_type("!pto.tile_buf<cols=8, rows=4, dtype=f16, loc=left>")
    assert short == TileBufT("left", "f16", 4, 8, 4, 8)
    assert print_type(short) == ("!pto.tile_buf<loc=left, dtype=f16, rows=4, cols=8, v_row=4, v_col=8, "
                                 "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
    assert parse_type("!pto.tile_buf< loc = mat , dtype = f32 , rows = 2 , cols = 2 , v_row = ? >").v_row is None


@pytest.mark.parametrize("text,fragment", [
    ("!pto.tile_buf<loc=vec, dtype=f32, rows=4>", "tile_buf needs 'cols='"),
    ("!pto.tile_buf<loc=vec, loc=vec, dtype=f32, rows=4, cols=4>", "given twice"),
    ("!pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, blayout=1x>", "must be a name"),
    ("!pto.tile_buf<loc=vec, dtype=f32, rows=-4, cols=4>", "non-negative integer"),
    ("!pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, v_col=5>", "v_col=5 exceeds cols=4"),
    ("!pto.tile_buf<loc=vec dtype=f32>", "expected ',' after tile_buf field 'loc'"),
    ("!pto.tile_buf<loc=vec, , dtype=f32>", "expected 'field=value'"),
    ("!pto.tensor<xf32>", "a dimension must be a size or ?"),
    ("!pto.tensor<4xf32 x>", "expected an element type"),
    ("!pto.tensor<4x4>", "unknown element type '4'"),
    ("!pto.tensor<4xx4xf32>", "a dimension must be a size or ?"),
    ("!pto.ptr<?>", "unknown element type '?'"),
    ("f64", "unknown type 'f64'"),
    ("%x", "expected a type"),
    ("!pto.tile_buf", "expected a type"),
])
def test_type_errors(text: str, fragment: str):
    with pytest.raises(PtoParseError, match=None) as info:
        parse_type(text)
    assert fragment in info.value.message


_dim = st.one_of(st.none(), st.integers(0, 10**6))
_type = st.one_of(
    st.sampled_from(ELEMS).map(ScalarT),
    st.sampled_from(ELEMS).map(PtrT),
    st.builds(TensorViewT, st.integers(0, 5), st.sampled_from(ELEMS)),
    st.builds(PartitionViewT, st.lists(_dim, max_size=4).map(tuple), st.sampled_from(ELEMS)),
    st.builds(TensorT, st.lists(_dim, max_size=4).map(tuple), st.sampled_from(ELEMS)),
    st.integers(1, 512).flatmap(lambda r: st.integers(1, 512).flatmap(lambda c: st.builds(
        TileBufT, st.sampled_from(TILE_LOCS), st.sampled_from(ELEMS), st.just(r), st.just(c),
        st.one_of(st.none(), st.integers(0, r)), st.one_of(st.none(), st.integers(0, c)),
        st.sampled_from(["row_major", "col_major", "none_box"]), st.sampled_from(["row_major", "col_major", "none_box"]),
        st.sampled_from([0, 512, 1024]), st.integers(0, 3)))),
)


@given(_type)
def test_every_type_round_trips(ty):
    text = print_type(ty)
    assert parse_type(text) == ty
    assert print_type(parse_type(text)) == text


@given(st.text())
def test_strings_round_trip(s: str):
    q = quote(s)
    assert "\n" not in q
    assert unquote(q) == s


def test_float_bit_patterns():
    assert bits_to_float(0x7F800000, "f32") == float("inf")
    assert bits_to_float(0x3F800000, "f32") == 1.0
    assert bits_to_float(0x3C00, "f16") == 1.0
    assert bits_to_float(0x3F80, "bf16") == 1.0
    assert bits_to_float(0x3C, "f8e5m2") == 1.0
    assert bits_to_float(0x38, "f8e4m3") == 1.0 and bits_to_float(0x7F, "f8e4m3") != bits_to_float(0x7F, "f8e4m3")
    assert bits_to_float(0x2, "f4") == 1.0 and bits_to_float(0xF, "f4") == -6.0
    assert special_float_bits(float("-inf"), "f16") == "0xFC00"
    with pytest.raises(ValueError, match="wider"):
        bits_to_float(0x1FF, "f8e4m3")
