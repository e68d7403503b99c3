"""`pl.at(..., name_hint="X")` names the kernel its region is outlined to; `kernel_config.py` in the
output directory lists the kernels (name, PTO source, aic / aiv) and the task program."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserSyntaxError


@pl.program
class Hinted:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             output: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="GetKVCache"):
            out = pl.matmul(a, b)
            output = pl.assemble(output, out, [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            output = pl.assemble(output, pl.add(pl.slice(output, [32, 32], [0, 0]), 1.0), [0, 0])
        return output


def test_name_hint_survives_print_and_parse():
    text = ir.python_print(Hinted)
    assert "name_hint='GetKVCache'" in text
    ir.assert_structural_equal(pl.parse(text), Hinted)


def test_a_name_hint_must_be_an_identifier():
    src = '''
import pypto.language as pl

@pl.function
def main(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="not a name"):
        b = pl.add(a, a)
    return b
'''
    with pytest.raises(ParserSyntaxError, match="name_hint must be a string that is a valid identifier") as e:
        pl.parse(src)
    assert e.value.span is not None and e.value.span.begin_line == 6


@pytest.mark.native
def test_kernel_named_by_hint_and_listed_in_kernel_config(tmp_path):
    compiled = ir.compile(Hinted, output_dir=tmp_path)
    cfg = runpy.run_path(str(tmp_path / "kernel_config.py"))
    kernels = {k["name"]: k for k in cfg["KERNELS"]}
    assert set(kernels) == {"GetKVCache", "main_incore_1"}
    assert kernels["GetKVCache"]["core_type"] == "aic" and kernels["main_incore_1"]["core_type"] == "aiv"
    assert all((tmp_path / k["source"]).is_file() for k in kernels.values())
    assert cfg["ORCHESTRATION"]["name"] == "main" and (tmp_path / cfg["ORCHESTRATION"]["source"]).is_file()
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 64), np.float32), rng.standard_normal((64, 32), np.float32)
    o = np.zeros((32, 32), np.float32)
    compiled(a, b, o)
    np.testing.assert_allclose(o, a @ b + 1, rtol=1e-4, atol=1e-4)
