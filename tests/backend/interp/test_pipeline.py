"""End to end: `pl` programs through the pass pipeline and codegen, run by the interpreter.

With the Default strategy InsertSync's flags and barriers must satisfy the hazard checker; with
PTOAS (no InsertSync) the same kernels are unsynchronized, so they run only with
`check_hazards=False` (and give the same results).
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.backend.interp import HazardError, run_program
from pypto.codegen import generate
from pypto.passes.pass_manager import OptimizationStrategy, PassManager

SOFTMAX_ROWS = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(4):
            ta = pl.load(a, [i * 16, 0], [16, 64])
            tb = pl.load(b, [i * 16, 0], [16, 64])
            tc = pl.add(ta, tb)
            td = pl.exp(tc)
            te = pl.row_sum(td)
            tf = pl.row_expand_div(td, te)
            out = pl.store(tf, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.create_tensor([64, 64], dtype=pl.FP32)
        r = self.k(a, b, c)
        return r
"""

MATMUL_ROWS = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(2):
            am = pl.load(a, [i * 32, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            al = pl.move(am, target_memory=pl.MemorySpace.Left)
            br = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c = pl.matmul(al, br)
            out = pl.store(c, [i * 32, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.create_tensor([64, 64], dtype=pl.FP32)
        r = self.k(a, b, c)
        return r
"""

ACCUMULATE = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        acc = pl.block.full([16, 64], dtype=pl.FP32, value=0.0)
        for i, (s,) in pl.range(4, init_values=(acc,)):
            ta = pl.load(a, [i * 16, 0], [16, 64])
            tb = pl.load(b, [i * 16, 0], [16, 64])
            t = pl.mul(ta, tb)
            s2 = pl.add(s, t)
            r = pl.yield_(s2)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
        c = pl.create_tensor([16, 64], dtype=pl.FP32)
        r = self.k(a, b, c)
        return r
"""


def _softmax_ref(a, b):
    e = np.exp(a.astype(np.float64) + b)
    return e / e.sum(axis=1, keepdims=True)


PROGRAMS = {
    "softmax_rows": (SOFTMAX_ROWS, np.float32, _softmax_ref),
    "matmul_rows": (MATMUL_ROWS, np.float16, lambda a, b: a.astype(np.float64) @ b.astype(np.float64)),
    "accumulate": (ACCUMULATE, np.float32, lambda a, b: (a.astype(np.float64) * b).reshape(4, 16, 64).sum(0)),
}


def _compile(text: str, strategy: OptimizationStrategy):
    program = PassManager.get_strategy(strategy).run_passes(pl.parse(text))
    res = generate(program)
    return res.kernels, res.orchestration, res.entry


def _inputs(dt, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (64, 64)).astype(dt), rng.uniform(-1, 1, (64, 64)).astype(dt)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_insert_sync_output_is_hazard_free(name: str):
    text, dt, ref = PROGRAMS[name]
    a, b = _inputs(dt, 1)
    (c,) = run_program(*_compile(text, OptimizationStrategy.Default), [a, b])
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_ptoas_kernels_need_check_hazards_off(name: str):
    text, dt, ref = PROGRAMS[name]
    a, b = _inputs(dt, 2)
    compiled = _compile(text, OptimizationStrategy.PTOAS)
    with pytest.raises(HazardError):
        run_program(*compiled, [a, b])
    (c,) = run_program(*compiled, [a, b], check_hazards=False)
    np.testing.assert_allclose(c, ref(a, b), rtol=1e-5, atol=1e-5)
