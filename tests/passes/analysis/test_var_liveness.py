"""Liveness of variables (`pypto.passes.analysis.var_liveness`)."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir
from pypto.passes.analysis.var_liveness import Liveness
from tests.programs.toolkit_sample import _vars, sample


def test_liveness():
    live = Liveness(sample)
    v = _vars(sample)
    stmts = ir.stmt_list(sample.body)
    loop = stmts[1]
    assert live.live_in == {v["x"], v["n"]}
    assert live.after(stmts[0]) == {v["acc"], v["n"]}
    assert live.head(loop) == {v["acc"]}  # read by the next iteration and after the loop
    assert live.body_in(loop) == {v["acc"], v["i"]}
    if_ = ir.stmt_list(loop.body)[1]
    assert live.after(if_) == {v["acc"]}
    assert live.after(stmts[2]) == {v["u"]}


def test_liveness_while_condition_and_local_values():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        junk = 0
        while k < n:
            tmp = k * 2
            junk = tmp
            k = k + 1
        return k

    live = Liveness(f)
    loop = ir.stmt_list(f.body)[2]
    names = {x.name for x in live.head(loop)}
    assert names == {"k", "n"}  # junk and tmp are not needed at the head
