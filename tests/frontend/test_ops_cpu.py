"""The tensor-level ops of test_ops_interp.py on the CPU backend: one kernel computes every unary,
binary, broadcast and reduction row of those tables at once (one native build), on a dynamic row
count with a ragged tail, and each result is checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
from tests.programs.frontend_ops import BINARY, ROWS, UNARY, inputs

pytestmark = pytest.mark.native
M = pypto.frontend.dynamic("M")


def test_every_op_on_cpu():
    x, y, pos, row = inputs(ROWS)
    row = np.abs(row) + 0.5
    src = {"x": "a", "pos": "p"}
    spec, col = pypto.Tensor((M, 64), pypto.DT_FP32), pypto.Tensor((M, 1), pypto.DT_FP32)

    @pypto.frontend.jit
    def every(a: spec, b: spec, p: spec, r: col):
        env = {"a": a, "p": p}
        outs = [op(env[src[s]]) for _, op, _, s in UNARY]
        outs += [op(a, p if "div" in name else b) for name, op, _ in BINARY]
        outs += [a - r, a / r, pypto.amax(a, -1, keepdim=True), pypto.sum(a, -1, keepdim=True),
                 pypto.where(a > b, a, b), pypto.cast(a * 3.0, pypto.DT_INT32, pypto.CastMode.CAST_FLOOR)]
        return tuple(outs)

    got = every(x, y, pos, row)
    x64, y64, p64 = x.astype(np.float64), y.astype(np.float64), pos.astype(np.float64)
    want = [ref({"x": x64, "pos": p64}[s]) for _, _, ref, s in UNARY]
    want += [ref(x64, p64 if "div" in name else y64) for name, _, ref in BINARY]
    want += [x64 - row, x64 / row, x64.max(-1, keepdims=True), x64.sum(-1, keepdims=True), np.maximum(x64, y64),
             np.floor(x * 3).astype(np.int32)]
    names = [u[0] for u in UNARY] + [b[0] for b in BINARY] + ["sub_row", "div_row", "amax", "sum", "where", "cast"]
    bad = []
    for name, g, w in zip(names, got, want):
        try:
            np.testing.assert_allclose(g, w, rtol=3e-6, atol=3e-6)
        except AssertionError as e:
            bad.append(f"{name}: {str(e).splitlines()[3] if len(str(e).splitlines()) > 3 else e}")
    assert not bad, "\n".join(bad)
