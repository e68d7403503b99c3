"""A scalar `pl` function the IR toolkit tests share (a loop holding an if, a reassigned accumulator)."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.dtype import DataType
from pypto.ir.expr import scalar_type
from pypto.ir.variables import defined_vars

IDX = DataType.INDEX
T = scalar_type(IDX)
M = pl.dynamic("M")


@pl.function
def sample(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
    acc = x
    for i in pl.range(n):
        t = acc + i
        if t > 10:
            acc = t - 10
        else:
            acc = t
    u = acc * 2
    return u


def _vars(fn):
    return {v.name: v for v in defined_vars(fn)}
