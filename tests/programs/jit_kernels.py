"""`@pl.jit` kernels shared by tests/language/test_jit.py (interpreter) and test_jit_native.py
(the CPU backend): the entry, scalar, dynamic-dim, incore / inline and deps forms."""

from __future__ import annotations

import pypto.language as pl
from pypto.runtime import RunConfig

INTERP = RunConfig(platform="interp")
ROWS = pl.dynamic("ROWS")


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        M, N = a.shape
        pl.store(pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N])), [0, 0], c)
    return c


@pl.jit
def scale_rows(a: pl.Tensor, out: pl.Out[pl.Tensor], n: pl.INDEX, factor):
    """n: a pl scalar (specialised, stays a parameter); factor: a Python value (dropped)."""
    for i in pl.range(n):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i * 16, 0], [16, 32])
            pl.store(pl.mul(t, factor), [i * 16, 0], out)
    return out


@pl.jit
def copy_dyn(a: pl.Tensor[[ROWS, 32], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]]):
    rows = pl.tensor.dim(a, 0)
    for r0 in pl.parallel(0, 64, 16):
        valid = pl.max(pl.min(16, rows - r0), 0)
        with pl.at(level=pl.Level.CORE_GROUP):
            chunk = pl.slice(a, [16, 32], [r0, 0], valid_shape=[valid, 32])
            out = pl.assemble(out, chunk, [r0, 0])
    return out


@pl.jit.incore(level=pl.Level.AIV)
def plus_one(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    R, C = x.shape
    pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], y)
    return y


@pl.jit.inline
def twice_inline(x: pl.Tensor, y: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        R, C = x.shape
        pl.store(pl.mul(pl.load(x, [0, 0], [R, C]), 2.0), [0, 0], y)
    return y


@pl.jit
def deps_entry(src: pl.Tensor, mid: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    mid = plus_one(src[0:32], mid)  # a slice forwarded: the dep is specialised for a [32, 32] view
    out = twice_inline(mid, out)
    return out


@pl.jit
def sig_mode(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]], n: pl.INDEX = pl.RUNTIME):
    for i in pl.range(n):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [i * 16, 0], [16, 32]), [i * 16, 0], out)
    return out
