"""Statement lists and walks over statement trees (`pypto.ir.walk`)."""

from __future__ import annotations

from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.expr import Add, ConstInt, Var
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, SeqStmts, YieldStmt
from pypto.ir.walk import (
    body_stmts,
    contains_stmt,
    flatten_stmts,
    has_call,
    last_stmt,
    make_body,
    make_else,
    split_yield,
    stmt_binders,
    walk_stmts,
)
from tests.programs.toolkit_sample import IDX, T, sample


def test_flatten_make_body_and_else():
    a, b = (AssignStmt(Var(n, T), ConstInt(1)) for n in "ab")
    nested = SeqStmts((a, SeqStmts((b,)), SeqStmts(())))
    assert flatten_stmts([nested, None]) == [a, b]
    assert body_stmts(nested) == [a, b] and body_stmts(None) == []
    assert make_body([a]) is a
    assert isinstance(make_body([nested]), SeqStmts) and make_body([nested]).stmts == (a, b)
    assert make_body([]) == make_body([]) or isinstance(make_body([]), SeqStmts)
    assert make_else([]) is None and make_else([SeqStmts(())]) is None and make_else([a]) is a


def test_split_yield_last_stmt_walk_and_binders():
    loop = ir.stmt_list(sample.body)[1]
    assert isinstance(loop, ForStmt)
    assert last_stmt(sample.body).__class__.__name__ == "ReturnStmt"
    y = YieldStmt((ConstInt(1),))
    a = AssignStmt(Var("a", T), ConstInt(2))
    assert split_yield(make_body([a, y])) == ([a], y)
    assert split_yield(a) == ([a], None)
    kinds = [type(s).__name__ for s in walk_stmts(sample)]
    assert kinds == ["AssignStmt", "ForStmt", "AssignStmt", "IfStmt", "AssignStmt", "AssignStmt", "AssignStmt",
                     "ReturnStmt"]
    assert [type(s).__name__ for s in walk_stmts(sample.body, into_loops=False)] == [
        "AssignStmt", "ForStmt", "AssignStmt", "ReturnStmt"]
    assert stmt_binders(loop) == [loop.loop_var]
    assert contains_stmt(sample.body, IfStmt) and not contains_stmt(sample.body, IfStmt, into_loops=False)


def test_has_call():
    a = Var("a", ir.TensorType([4], DataType.FP32))
    c = ir.create_op_call("tensor.dim", [a], {"axis": 0})
    assert has_call(c) and has_call(Add(c, ConstInt(1), IDX)) and not has_call(Add(Var("q", T), ConstInt(1), IDX))
