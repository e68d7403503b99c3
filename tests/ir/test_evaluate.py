"""Constants and the reference evaluator for scalar programs (`pypto.ir.evaluate`)."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.evaluate import EvalError, evaluate, zero_of
from pypto.ir.expr import Add, ConstInt, IterArg, Var, scalar_type
from pypto.ir.stmt import BreakStmt, ContinueStmt, ForStmt, IfStmt, YieldStmt
from pypto.ir.walk import (
    make_body,
)
from tests.programs.toolkit_sample import IDX, T, sample


def test_zero_of():
    assert zero_of(T) == ConstInt(0, IDX)
    assert zero_of(scalar_type(DataType.FP16)) == ir.ConstFloat(0.0, DataType.FP16)
    assert zero_of(scalar_type(DataType.BOOL)) == ir.ConstBool(False)
    assert zero_of(ir.TensorType([4], DataType.FP32)) is None


def test_evaluate_loops_ifs_whiles_and_yields():
    assert evaluate(sample, [3, 4]) == (18,)  # acc: 3, 4, 6, 9
    assert evaluate(sample, [8, 4]) == (2 * (8 + 0 + 1 - 10 + 2 + 3),)

    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]:
        for i, (s,) in pl.range(n, init_values=(0,)):
            if i % 2 == 0:
                r = pl.yield_(s + i)
            else:
                r = pl.yield_(s)
            s2 = pl.yield_(r)
        for (k,) in pl.while_(init_values=(1,)):
            pl.cond(k < 100)
            k2 = pl.yield_(k * 3)
        return s2, k2

    assert evaluate(f, [7]) == (0 + 2 + 4 + 6, 243)
    assert evaluate(ir.Program("p", (f,)), [0]) == (0, 243)


def test_evaluate_break_continue_with_iter_args():
    x, i, r = Var("x", T), Var("i", T), Var("r", T)
    acc = IterArg("acc", T, x)
    body = make_body([
        IfStmt(ir.Eq(i, ConstInt(2), DataType.BOOL), ContinueStmt()),  # keeps acc
        IfStmt(ir.Eq(i, ConstInt(5), DataType.BOOL), BreakStmt()),  # leaves with acc
        YieldStmt((Add(acc, i, IDX),)),
    ])
    loop = ForStmt(i, ConstInt(0), ConstInt(10), ConstInt(1), (acc,), body, (r,))
    fn = ir.Function("f", (x,), (), (T,), make_body([loop, ir.ReturnStmt((r,))]))
    assert evaluate(fn, [100]) == (100 + 0 + 1 + 3 + 4,)


def test_evaluate_errors_and_calls():
    @pl.function
    def loop_forever(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        while k < n:
            k = k + 0
        return k

    with pytest.raises(EvalError, match="step limit"):
        evaluate(loop_forever, [1], max_steps=50)
    with pytest.raises(EvalError, match="takes 1 arguments"):
        evaluate(loop_forever, [1, 2])

    @pl.function
    def uses_call(a: pl.Tensor[[8], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        d = pl.tensor.dim(a, 0) * 2
        return d

    with pytest.raises(EvalError, match="no call handler"):
        evaluate(uses_call, [None])
    assert evaluate(uses_call, [None], calls=lambda c, args: 8) == (16,)
    x = Var("x", T)
    bad = ir.Function("f", (), (), (T,), ir.ReturnStmt((x,)))
    with pytest.raises(EvalError, match="read before it is defined"):
        evaluate(bad, [])


def test_evaluate_scalar_semantics():
    @pl.function
    def f(a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX],
                                                                    pl.Scalar[pl.FP32], pl.Scalar[pl.BOOL]]:
        q = a // b
        m = a % b
        fd = a / b
        c = (a < b) and not (a == b)
        return q, m, fd, c

    assert evaluate(f, [-7, 2]) == (-4, 1, -3.5, True)
