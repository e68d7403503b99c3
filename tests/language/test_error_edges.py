"""Bad input found by probing: each gets a located pypto error, never a bare Python exception."""

from __future__ import annotations

import re

import pytest

import pypto.language as pl

HEAD = "import pypto.language as pl\n\n"


def _parse_error(text: str) -> pl.ParserError:
    with pytest.raises(pl.ParserError) as e:
        pl.parse(HEAD + text)
    return e.value


@pytest.mark.parametrize("deco, match", [
    ('@pl.function(type="banana")', "type= must be a pl.FunctionType, got 'banana'"),
    ("@pl.function(type=5)", "type= must be a pl.FunctionType, got 5"),
    ("@pl.function(1, 2)", "takes keyword options only"),
    ("@pl.function(colour=1)", r"unexpected option\(s\) colour"),
    ('@pl.function(strict_ssa="x")', "strict_ssa= must be True or False"),
])
def test_method_decorator_options_are_checked(deco, match):
    e = _parse_error(f"@pl.program\nclass P:\n    {deco}\n    def f(self, a: pl.Tensor[[8], pl.FP32]) -> "
                     "pl.Tensor[[8], pl.FP32]:\n        return pl.add(a, a)\n")
    assert isinstance(e, (pl.ParserSyntaxError, pl.ParserTypeError))
    assert re.search(match, str(e)) and ":5:" in str(e)


def test_async_kernel_is_refused():
    e = _parse_error("@pl.function\nasync def f(a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:\n"
                     "    return pl.add(a, a)\n")
    assert "async" in str(e) and ":4:" in str(e)
    e = _parse_error("@pl.program\nclass P:\n    @pl.function\n    async def f(self, a: pl.Tensor[[8], pl.FP32]) -> "
                     "pl.Tensor[[8], pl.FP32]:\n        return pl.add(a, a)\n")
    assert isinstance(e, pl.UnsupportedFeatureError) and "cannot be async" in str(e)


@pytest.mark.parametrize("shape, match", [
    ("[64.0, 64]", "must contain integers, got 64.0"),
    ("[10**30, 64]", "does not fit in an index"),
])
def test_shape_entries_are_integers_that_fit(shape, match):
    e = _parse_error("@pl.function(type=pl.FunctionType.InCore)\ndef k(a: pl.Tensor[[64, 64], pl.FP32]) -> "
                     f"pl.Tensor[[64, 64], pl.FP32]:\n    t = pl.load(a, [0, 0], {shape})\n    return pl.store(t, [0, 0], a)\n")
    assert isinstance(e, pl.ParserTypeError) and match in str(e) and ":5:" in str(e)


@pytest.mark.parametrize("value, dtype, match", [
    ("300", "INT8", r"300 does not fit in INT8 \[-128, 127\]"),
    ("-1", "UINT16", "does not fit in UINT16"),
    ("2.5", "INT32", "2.5 is not an integer"),
])
def test_typed_constants_fit_their_dtype(value, dtype, match):
    e = _parse_error(f"@pl.function\ndef f(a: pl.Tensor[[8], pl.INT32]) -> pl.Tensor[[8], pl.INT32]:\n"
                     f"    n = pl.const({value}, pl.{dtype})\n    return pl.add(a, 1)\n")
    assert isinstance(e, pl.ParserTypeError)
    assert re.search(match, str(e))


def test_absurdly_deep_source_is_a_syntax_error():
    with pytest.raises(pl.ParserSyntaxError, match="nested too deeply"):
        pl.parse("x = " + "+".join(["1"] * 100000))


def test_loading_a_binary_file(tmp_path):
    p = tmp_path / "k.py"
    p.write_bytes(bytes(range(256)))
    with pytest.raises(pl.ParserError, match="not UTF-8 text"):
        pl.loads(p)


@pytest.mark.native
def test_run_config_must_be_a_run_config(tmp_path):
    import numpy as np

    from pypto import ir
    from pypto.backend.launch import ArgumentError

    c = ir.compile(pl.parse(HEAD + "@pl.function\ndef f(a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:\n"
                            "    return pl.add(a, 1.0)\n"), output_dir=tmp_path / "o")
    with pytest.raises(ArgumentError, match="config must be a pypto.runtime.RunConfig, got str 'fast'"):
        c(np.ones(8, np.float32), config="fast")


@pytest.mark.parametrize("body, match", [
    ("    t = pl.load(a, [60, 0], [16, 64])\n    return pl.store(t, [0, 0], o)\n",
     r"block.load: the window \[60, 76\) of axis 0 is outside the tensor's extent 64"),
    ("    t = pl.load(a, [0, 0], [16, 64])\n    return pl.store(t, [56, 0], o)\n",
     r"block.store: the window \[56, 72\) of axis 0 is outside the tensor's extent 64"),
    ("    t = pl.load(a, [60, 0], [16, 64], [4, 64])\n    u = pl.load(a, [62, 0], [16, 64], [4, 64])\n"
     "    return pl.store(t, [0, 0], o)\n", r"the window \[62, 66\) of axis 0"),
])
def test_static_windows_outside_the_tensor(body, match):
    e = _parse_error("@pl.function(type=pl.FunctionType.InCore)\ndef k(a: pl.Tensor[[64, 64], pl.FP32], "
                     "o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n" + body)
    assert re.search(match, str(e))


def test_static_view_outside_the_tensor():
    e = _parse_error("@pl.function\ndef f(a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:\n"
                     "    return pl.add(pl.view(a, [16, 64], [56, 0]), 1.0)\n")
    assert "tensor.view: the window [56, 72) of axis 0 is outside the tensor's extent 64" in str(e)


def test_kernel_calling_itself_is_a_located_compile_error():
    from pypto import ir
    from pypto.ir.diagnostics import CompileError

    prog = pl.parse(HEAD + "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"
                    "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
                    "pl.Tensor[[64, 64], pl.FP32]:\n        t = pl.load(a, [0, 0], [64, 64])\n"
                    "        r = self.k(a, c)\n        return pl.store(t, [0, 0], c)\n")
    with pytest.raises(CompileError, match="kernel k calls itself") as e:
        ir.compile(prog, skip_ptoas=True)
    assert ":8:" in str(e.value) and "r = self.k(a, c)" in str(e.value)


@pytest.mark.parametrize("body", [
    "    return pl.add(pl.transpose(a, 0, 2), 0.0)\n",  # (1, 2: the last two axes, batch by batch, is supported)
])
def test_rank_3_transpose_in_a_kernel_is_refused_not_wrong(body):
    from pypto import ir
    from pypto.passes import PassError

    prog = pl.parse(HEAD + "@pl.function\ndef f(a: pl.Tensor[[4, 4, 4], pl.FP32]) -> pl.Tensor[[4, 4, 4], pl.FP32]:\n" + body)
    with pytest.raises(PassError, match="a tile transposes its last two axes"):
        ir.compile(prog, skip_ptoas=True)


@pytest.mark.parametrize("b_shape", ["[3, 16]", "[1, 3, 16]", "[2, 1, 16]"])
def test_broadcast_along_a_leading_axis_in_a_kernel_is_refused_not_wrong(b_shape):
    from pypto import ir
    from pypto.passes import PassError

    prog = pl.parse(HEAD + f"@pl.function\ndef f(a: pl.Tensor[[2, 3, 16], pl.FP32], b: pl.Tensor[{b_shape}, pl.FP32]) -> "
                    "pl.Tensor[[2, 3, 16], pl.FP32]:\n    return pl.add(a, b)\n")
    with pytest.raises(PassError, match="not along a leading axis"):
        ir.compile(prog, skip_ptoas=True)


@pytest.mark.native
@pytest.mark.parametrize("b_shape", ["[1, 1, 16]", "[2, 3, 1]", "[16]"])
def test_row_column_and_scalar_broadcasts_of_rank_3_still_run(b_shape, tmp_path):
    import numpy as np

    from pypto import ir

    prog = pl.parse(HEAD + f"@pl.function\ndef f(a: pl.Tensor[[2, 3, 16], pl.FP32], b: pl.Tensor[{b_shape}, pl.FP32]) -> "
                    "pl.Tensor[[2, 3, 16], pl.FP32]:\n    return pl.add(a, b)\n")
    c = ir.compile(prog, output_dir=tmp_path / "o")
    shape = tuple(int(x) for x in b_shape.strip("[]").split(","))
    a = np.arange(96, dtype=np.float32).reshape(2, 3, 16)
    b = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 10
    np.testing.assert_array_equal(c(a, b), a + b)


def test_static_print_and_static_assert(capsys):
    @pl.function
    def f(a: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        pl.static_print("shape is", a, 8 * 16)
        pl.static_assert(8 * 16 == 128, "size")
        return pl.add(a, 1.0)

    out = capsys.readouterr().out
    assert "shape is" in out and "pl.Tensor[[8, 16], pl.FP32]" in out and "128" in out
    from pypto import ir

    assert "static" not in ir.python_print(f)  # parse time only: no IR
    e = _parse_error("@pl.function\ndef g(a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:\n"
                     "    pl.static_assert(1 + 1 == 3, 'arithmetic')\n    return a\n")
    assert "static assertion failed: arithmetic" in str(e) and ":5:" in str(e)
