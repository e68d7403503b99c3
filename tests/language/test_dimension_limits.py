"""Dimensions the backends cannot address are refused where they are written: a dimension outside
[1, 2**63 - 1], or a tensor whose size in bytes is beyond int64, in an annotation (evaluated
eagerly by Python, as in a user's module) or as the shape an op call produces."""

from __future__ import annotations

import inspect

import pytest

import pypto.language as pl

HERE = __file__
N = pl.dynamic("N")


def _line_of(fn, needle: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if needle in ln)


def _check(err: pl.ParserError, fn, mark: str, col_text: str) -> str:
    """Located at the line marked `mark`, column of `col_text`, with the line quoted and a hint."""
    line = _line_of(fn, mark)
    src_line = open(HERE).read().splitlines()[line - 1]
    text = str(err)
    assert (err.span.filename, err.lineno, err.col) == (HERE, line, src_line.index(col_text) + 1), text
    assert f"{HERE}:{line}:{err.col}" in text and src_line.strip() in text and "^" in text
    assert "= help: " in text
    return text


def _huge():
    @pl.function
    def f(x: pl.Tensor[[2**63, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-param
        return pl.add(x, x)


def _negative():
    @pl.function
    def f(x: pl.Tensor[[-3, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-param
        return pl.add(x, x)


def _zero():
    @pl.function
    def f(x: pl.Tensor[[0, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-param
        return pl.add(x, x)


def _far_beyond():
    @pl.function
    def f(x: pl.Tensor[[2**100, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-param
        return pl.add(x, x)


@pytest.mark.parametrize("body, shown", [(_huge, "9223372036854775808"), (_negative, "-3"), (_zero, "0"),
                                         (_far_beyond, str(2**100))], ids=lambda x: getattr(x, "__name__", ""))
def test_dimension_out_of_range_in_a_parameter_annotation(body, shown):
    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    text = _check(ei.value, body, "MARK-param", "pl.Tensor")
    assert f"dimension #0 of pl.Tensor[[{shown}, 16], pl.FP32] is {shown}, outside [1, 2**63 - 1]" in text


def test_dimension_out_of_range_in_a_return_and_a_tile_annotation():
    def ret():
        @pl.function
        def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, -1], pl.FP32]:  # MARK-ret
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        ret()
    assert "dimension #1 of pl.Tensor[[16, -1], pl.FP32] is -1" in _check(ei.value, ret, "MARK-ret", "pl.Tensor[[16, -1]")

    def tile():
        @pl.function(type=pl.FunctionType.InCore)
        def f(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[2**63, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])  # MARK-tile
            return pl.store(t, [0, 0], out)

    with pytest.raises(pl.ParserTypeError) as ei:
        tile()
    assert "dimension #0 of pl.Tile[[9223372036854775808, 16]" in _check(ei.value, tile, "MARK-tile", "pl.Tile")


def _fp32():
    @pl.function
    def f(x: pl.Tensor[[2**61, 1], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-bytes
        return pl.create_tensor([16, 16], dtype=pl.FP32)


def _fp16():
    @pl.function
    def f(x: pl.Tensor[[2**62, 2], pl.FP16]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-bytes
        return pl.create_tensor([16, 16], dtype=pl.FP32)


def _bool():
    @pl.function
    def f(x: pl.Tensor[[2**32, 2**31], pl.BOOL]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-bytes
        return pl.create_tensor([16, 16], dtype=pl.FP32)


def _dynamic():
    @pl.function
    def f(x: pl.Tensor[[N, 2**62], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:  # MARK-bytes
        return pl.create_tensor([16, 16], dtype=pl.FP32)


@pytest.mark.parametrize("body, text", [
    (_fp32, "holds 2305843009213693952 elements of 4 byte(s) (9223372036854775808 bytes)"),
    (_fp16, "holds 9223372036854775808 elements of 2 byte(s)"),
    (_bool, "holds 9223372036854775808 elements of 1 byte(s)"),  # bytes, not bits: 2**60 would fit
    (_dynamic, "holds at least 4611686018427387904 elements of 4 byte(s) (at least 18446744073709551616"),
], ids=lambda x: getattr(x, "__name__", ""))
def test_byte_size_beyond_int64_in_an_annotation(body, text):
    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    got = _check(ei.value, body, "MARK-bytes", "pl.Tensor")
    assert text in got and "more than the 2**63 - 1 bytes an int64 offset addresses" in got
    assert "split the data into smaller tensors" in got


def test_the_largest_sizes_are_accepted():
    @pl.function
    def f(a: pl.Tensor[[2**63 - 1], pl.INT8], b: pl.Tensor[[2**62 - 1, 2], pl.INT8],
          c: pl.Tensor[[2**61 - 1, 1], pl.FP32], d: pl.Tensor[[N, 2**59], pl.INT64]) -> pl.Tensor[[16], pl.FP32]:
        return pl.create_tensor([16], dtype=pl.FP32)

    assert [p.type.shape[0].value for p in f.params[:3]] == [2**63 - 1, 2**62 - 1, 2**61 - 1]


def test_shape_an_op_call_produces():
    def body():
        @pl.function
        def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.create_tensor([2**40, 2**40], dtype=pl.FP32)  # MARK-create
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    text = _check(ei.value, body, "MARK-create", "pl.create_tensor")
    assert "the result of pl.create_tensor: pl.Tensor[[1099511627776, 1099511627776], pl.FP32] holds" in text

    def zero():
        @pl.function
        def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.full([16, 0], dtype=pl.FP32, value=1.0)  # MARK-zero
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        zero()
    assert "dimension #1 of pl.Tensor[[16, 0], pl.FP32] is 0" in _check(ei.value, zero, "MARK-zero", "pl.full")
