"""Substitution, cloning and the statement rewriter (`pypto.ir.rewrite`)."""

from __future__ import annotations

from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.expr import Add, ConstInt, IterArg, Var
from pypto.ir.rewrite import StmtRewriter, clone_fresh, substitute
from pypto.ir.stmt import AssignStmt, IfStmt, WhileStmt, YieldStmt
from pypto.ir.variables import assigned_vars, defined_vars
from pypto.ir.walk import (
    body_stmts,
    contains_stmt,
    make_body,
)
from tests.programs.toolkit_sample import IDX, T, _vars, sample


def test_substitute_uses_definitions_and_types():
    k = Var("k", T)
    t = Var("t", ir.TensorType([k, 16], DataType.FP32))
    s = make_body([AssignStmt(t, ir.create_op_call("tensor.create", [ir.MakeTuple((k, ConstInt(16)))],
                                                   {"dtype": DataType.FP32})),
                   ir.ReturnStmt((t,))])
    out = substitute(s, {k: ConstInt(8)})
    new_t = out.stmts[0].var
    assert new_t is not t and new_t.type.shape[0] == ConstInt(8)
    assert out.stmts[1].values[0] is new_t  # uses follow the re-created variable
    k2 = Var("k2", T)
    renamed = substitute(AssignStmt(k, ConstInt(1)), {k: k2})
    assert renamed.var is k2  # Var -> Var renames the binding site too
    assert substitute(s, {}) is s
    untyped = substitute(s, {k: ConstInt(8)}, types=False)
    assert untyped.stmts[0].var is t


def test_clone_fresh_keeps_requested_vars():
    loop = ir.stmt_list(sample.body)[1]
    v = _vars(sample)
    copy, vm = clone_fresh(loop, {v["n"]: ConstInt(3)}, keep=[v["acc"]])
    assert copy.loop_var is not loop.loop_var and copy.stop == ConstInt(3)
    assert v["acc"] not in vm and v["t"] in vm and vm[v["t"]] is not v["t"]
    assert set(assigned_vars(copy.body)) == {vm[v["t"]], v["acc"]}
    renamed, _ = clone_fresh(loop, rename=lambda x: x.name + "_c")
    assert {x.name for x in defined_vars(renamed)} >= {"i_c", "t_c", "acc_c"}
    ia = IterArg("ia", T, v["x"])
    w = WhileStmt(ir.Lt(ia, ConstInt(3), DataType.BOOL), (ia,), YieldStmt((Add(ia, ConstInt(1), IDX),)),
                  (Var("r", T),))
    wc, wm = clone_fresh(w, {v["x"]: ConstInt(0)})
    assert isinstance(wc.iter_args[0], IterArg) and wc.iter_args[0].init_value == ConstInt(0)
    assert wc.condition.lhs is wc.iter_args[0]


def test_stmt_rewriter_expands_and_deletes():
    class DropIfs(StmtRewriter):
        def rewrite(self, s):
            if isinstance(s, IfStmt):
                return body_stmts(s.then_body)  # keep the then branch in place
            return self.recurse(s)

    out = DropIfs().rewrite_body(sample.body)
    assert not contains_stmt(out, IfStmt)
    loop = ir.stmt_list(out)[1]
    assert [type(s).__name__ for s in ir.stmt_list(loop.body)] == ["AssignStmt", "AssignStmt"]
    assert StmtRewriter().rewrite_body(sample.body) is sample.body  # nothing changed: same object
