"""Structural equality: variables matched at binding sites, free variables by identity (or matched
with auto-mapping), spans and names ignored; shared subtrees compare like copies of themselves."""

from __future__ import annotations

import pytest

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Add, Call, ConstInt, MakeTuple, Var, make_memref
from pypto.ir.function import Function
from pypto.ir.op import get_op
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, SeqStmts
from pypto.ir.structural import StructuralMismatch, assert_structural_equal, structural_equal, structural_hash
from pypto.ir.types import ScalarType, TileType

INDEX = ScalarType(DataType.INDEX)


def _var(name: str) -> Var:
    return Var(name, INDEX)


def _fn(params, *stmts) -> Function:
    return Function("f", tuple(params), (), (INDEX,), SeqStmts(tuple(stmts)))


def test_names_and_spans_are_ignored_binders_are_matched():
    a, b = _var("a"), _var("b")
    x, y = _var("x"), _var("y")
    f = _fn([a], AssignStmt(x, Add(a, ConstInt(1), DataType.INDEX)), ReturnStmt((x,)))
    g = _fn([b], AssignStmt(y, Add(b, ConstInt(1), DataType.INDEX)), ReturnStmt((y,)))
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)
    h = _fn([b], AssignStmt(y, Add(b, ConstInt(2), DataType.INDEX)), ReturnStmt((y,)))
    assert not structural_equal(f, h)
    with pytest.raises(StructuralMismatch, match=r"functions|body"):
        assert_structural_equal(f, h)


def test_free_variables_compare_by_identity_unless_auto_mapped():
    n, m = _var("n"), _var("m")
    e1, e2 = Add(n, ConstInt(1), DataType.INDEX), Add(m, ConstInt(1), DataType.INDEX)
    assert not structural_equal(e1, e2)
    assert structural_equal(e1, e2, enable_auto_mapping=True)
    assert structural_equal(e1, e1)


def test_a_shared_statement_binds_its_variables_like_a_copy():
    """The same statement object on both sides still matches the variable it defines: a later
    redefinition of that variable must then be the same variable on both sides (non-SSA IR)."""
    p = _var("p")
    v, w = _var("v"), _var("w")
    shared = AssignStmt(v, p)
    left = _fn([p], shared, AssignStmt(v, Add(p, p, DataType.INDEX)), ReturnStmt((v,)))
    right = _fn([p], shared, AssignStmt(w, Add(p, p, DataType.INDEX)), ReturnStmt((w,)))
    assert not structural_equal(left, right)
    same = _fn([p], shared, AssignStmt(v, Add(p, p, DataType.INDEX)), ReturnStmt((v,)))
    assert structural_equal(left, same)


def test_a_shared_expression_under_a_non_identity_match():
    """Once a variable is matched to another one, a subtree shared by both sides that reads it is
    not equal to itself."""
    a, b = _var("a"), _var("b")
    shared = Add(a, ConstInt(1), DataType.INDEX)
    x, y = _var("x"), _var("y")
    f = _fn([a], AssignStmt(x, shared), ReturnStmt((x,)))
    g = _fn([b], AssignStmt(y, shared), ReturnStmt((y,)))
    assert not structural_equal(f, g)


def test_shared_loop_body_with_loop_variable():
    p = _var("p")
    i, acc = _var("i"), _var("acc")
    body = AssignStmt(acc, Add(i, p, DataType.INDEX))
    f = _fn([p], ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (), body, ()), ReturnStmt((p,)))
    j = _var("j")
    g = _fn([p], ForStmt(j, ConstInt(0), ConstInt(4), ConstInt(1), (), body, ()), ReturnStmt((p,)))
    assert structural_equal(f, f)
    assert not structural_equal(f, g)  # the shared body reads i, which g binds as j


def test_types_with_memrefs_and_calls_compare_structurally():
    m1 = make_memref(MemorySpace.Vec, 0, 1024, 0)
    m2 = make_memref(MemorySpace.Vec, 0, 1024, 0)
    t1 = TileType([16, 16], DataType.FP32, MemorySpace.Vec, m1)
    t2 = TileType([16, 16], DataType.FP32, MemorySpace.Vec, m2)
    assert not structural_equal(t1, t2)
    assert structural_equal(t1, t2, enable_auto_mapping=True)
    op = get_op("block.full")
    c1 = Call(op, (MakeTuple((ConstInt(16), ConstInt(16))),), (("dtype", DataType.FP32), ("value", 0.0)), t1)
    c2 = Call(op, (MakeTuple((ConstInt(16), ConstInt(16))),), (("dtype", DataType.FP32), ("value", 0.0)), t1)
    c3 = Call(op, (MakeTuple((ConstInt(16), ConstInt(16))),), (("dtype", DataType.FP32), ("value", 1.0)), t1)
    assert structural_equal(c1, c2)
    assert not structural_equal(c1, c3)
    nan1 = Call(op, c1.args, (("dtype", DataType.FP32), ("value", float("nan"))), t1)
    nan2 = Call(op, c1.args, (("dtype", DataType.FP32), ("value", float("nan"))), t1)
    assert structural_equal(nan1, nan2)
