"""`with pl.at(level=...)` (today's public spelling of an InCore region): the body becomes one
kernel, the level / role / hints are checked, and a call it refuses names the line."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir


def _program(level_expr: str, extra: str = "") -> str:
    return f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at({level_expr}{extra}):
            t = pl.load(a, [0, 0], [32, 64])
            c = pl.store(pl.add(t, t), [0, 0], c)
        return c
'''


@pytest.mark.native
@pytest.mark.parametrize("level_expr, extra", [
    ("level=pl.Level.CORE_GROUP", ""),
    ("pl.Level.CORE_GROUP", ", pl.Role.SubWorker"),
    ("level=pl.Level.CORE_GROUP", ", optimizations=[], name_hint='double', allow_early_resolve=True"),
])
def test_at_region_is_one_kernel(level_expr, extra):
    prog = pl.parse_program(_program(level_expr, extra))
    text = ir.python_print(prog)
    # (the region, as the printer spells an InCore scope; a name_hint names the kernel it becomes)
    assert ("with pl.incore(name_hint='double'):" if "name_hint" in extra else "with pl.incore():") in text
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    c = np.zeros_like(a)
    ir.compile(prog)(a, c)
    np.testing.assert_array_equal(c, a + a)


@pytest.mark.parametrize("extra, msg", [
    (", colour='red'", "unexpected keyword 'colour'"),
    (", optimizations=3", "optimizations= must be a list"),
])
def test_at_refuses_bad_arguments_with_the_line(extra, msg):
    with pytest.raises(pl.ParserSyntaxError, match=msg) as e:
        pl.parse_program(_program("level=pl.Level.CORE_GROUP", extra))
    assert "pl.at" in str(e.value)
