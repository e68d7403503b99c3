"""A statement's callee is looked at before the call is built (to recognise `pl.yield_` and
`pl.cond`); the call must still use the callee of its own evaluation: an inline function whose
callable parameter differs from one inlining to the next."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.expr import Call
from pypto.ir.walk import walk_stmts


@pl.inline
def _apply(op, x):
    y = op(x)
    return y


@pl.program
class _Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, t: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
          ) -> pl.Tensor[[16, 16], pl.FP32]:
        a: pl.Tile[[16, 16], pl.FP32] = pl.load(t, [0, 0], [16, 16])
        b = _apply(pl.exp, a)
        c = _apply(pl.neg, b)
        return pl.store(c, [0, 0], out)


def test_inlined_callable_parameter_is_evaluated_per_call():
    fn = _Twice.functions[0]
    ops = [s.value.op.name for s in walk_stmts(fn) if isinstance(getattr(s, "value", None), Call)]
    assert ops == ["block.load", "block.exp", "block.neg"]
