"""Variables read and bound, def-use (`pypto.ir.variables`)."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import Add, ConstInt
from pypto.ir.variables import assigned_vars, def_use, defined_vars, expr_vars, free_vars, used_vars
from pypto.passes.analysis.var_liveness import Liveness
from tests.programs.toolkit_sample import IDX, M, _vars, sample


def test_used_defined_free_assigned_vars():
    v = _vars(sample)
    assert [x.name for x in defined_vars(sample)] == ["x", "n", "acc", "i", "t", "u"]
    assert [x.name for x in used_vars(sample.body)] == ["x", "n", "acc", "i", "t", "u"]
    loop = ir.stmt_list(sample.body)[1]
    assert free_vars(loop) == [v["n"]]  # acc is bound inside (non-SSA): what it reads first is live-in
    assert Liveness(loop).live_in == {v["n"], v["acc"]}
    assert assigned_vars(loop.body) == [v["t"], v["acc"]]
    assert expr_vars(Add(v["x"], Add(v["n"], ConstInt(1), IDX), IDX)) == {v["x"], v["n"]}


def test_free_vars_of_types_skip_dynamic_dims():
    @pl.function
    def f(a: pl.Tensor[[M, 16], pl.FP32], k: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 16], pl.FP32]:
        b = pl.create_tensor([k, 16], dtype=pl.FP32)
        c = pl.add(a, a)
        return c

    body = f.body
    assert set(free_vars(body)) == {f.params[0], f.params[1]}
    assert M in used_vars(body, types=True) and M not in free_vars(body, types=True)


def test_def_use():
    du = def_use(sample)
    v = _vars(sample)
    assert du.num_defs(v["acc"]) == 3 and du.multiply_defined() == [v["acc"]]
    assert du.defs[v["x"]] == [sample]
    users = du.users(v["t"])
    assert [type(s).__name__ for s in users] == ["IfStmt", "AssignStmt", "AssignStmt"]
    assert du.num_defs(v["u"]) == 1 and len(du.users(v["u"])) == 1
