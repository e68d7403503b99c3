"""Shared by the tests of both API generations (tests/language/test_compat_*.py): a one-kernel
program around a body of tile code, compiled and run on the interpreter or the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

PLATFORMS = ["interp", pytest.param("cpu", marks=pytest.mark.native)]
RNG = np.random.default_rng(7)
A = RNG.standard_normal((16, 32)).astype(np.float32)
B = RNG.standard_normal((16, 32)).astype(np.float32)


def kernel(body: str) -> str:
    """A program whose kernel loads a and b as tiles ta, tb and stores tile r into c."""
    body_lines = body.strip().splitlines()
    if not body_lines[-1].startswith("c = "):  # (a body may end in its own store into c)
        body_lines.append("c = pl.store(r, [0, 0], c)")
    lines = "\n".join("        " + ln for ln in body_lines)
    return f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
{lines}
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.k(a, b, c)
        return c
'''


def compile_(prog, platform: str):
    """The interpreter runs the written PTO; only the CPU backend needs the C++ built."""
    return ir.compile(prog, skip_ptoas=platform == "interp")


def run(body: str, platform: str, a=A, b=B) -> np.ndarray:
    c = np.zeros((16, 32), np.float32)
    compile_(pl.parse_program(kernel(body)), platform)(a, b, c, config=RunConfig(platform=platform))
    return c
