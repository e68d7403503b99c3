"""The printer's message dialect (`pypto.ir.message_text`): the spelling diagnostics use."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import (
    Abs,
    Add,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    MakeTuple,
    Max,
    Neg,
    Not,
    TupleGetItem,
    Var,
    scalar_type,
)
from pypto.ir.message_text import MessagePrinter, expr_text, stmt_text, type_text
from pypto.ir.printer import Printer, python_print
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt
from pypto.ir.types import MemRefType, ScalarType, TensorType, TileType, TupleType, UnknownType

I32 = DataType.INT32
x = Var("x", scalar_type(I32))
n = Var("n", scalar_type(DataType.INDEX))


def test_expressions():
    assert expr_text(Add(x, ConstInt(3, I32), I32)) == "(x + 3:int32)"
    assert expr_text(ConstInt(-5)) == "-5"  # index constants bare
    assert expr_text(ConstFloat(-1.5, DataType.FP16)) == "-1.5" and expr_text(ConstBool(True)) == "True"
    assert expr_text(Neg(x, I32)) == "neg(x)" and expr_text(Cast(x, DataType.FP32)) == "cast(x)"
    assert expr_text(Not(ConstBool(False), DataType.BOOL)) == "not(False)"
    assert expr_text(Max(x, x, I32)) == "max(x, x)" and expr_text(Abs(x, I32)) == "abs(x)"
    assert expr_text(TupleGetItem(MakeTuple((x, n)), 1)) == "[x, n][1]"
    deep = x
    for k in range(10):
        deep = Add(deep, ConstInt(k, I32), I32)
    assert expr_text(deep).startswith("(((((((... + ...) + 4:int32)")  # deeper than six levels: elided
    assert expr_text("not IR") == "str"  # never fails


def test_types():
    assert type_text(TensorType([16, n], DataType.FP32)) == "Tensor[[16, n], fp32]"
    assert type_text(TileType([16, 16], DataType.FP16, MemorySpace.Left)) == "Tile[[16, 16], fp16, Left]"
    assert type_text(TupleType((ScalarType(DataType.BOOL),))) == "Tuple[Scalar[bool]]"
    assert type_text(None) == "<no type>"
    assert type_text(MemRefType()) == "MemRefType" and type_text(UnknownType()) == "UnknownType"


def test_statements_one_line_each():
    y = Var("y", TensorType([16], DataType.FP32))
    assert stmt_text(AssignStmt(y, y)) == "y: Tensor[[16], fp32] = y"
    loop = ForStmt(Var("i", scalar_type(DataType.INDEX)), ConstInt(0), n, ConstInt(2), (), ReturnStmt(()), ())
    assert stmt_text(loop) == "for i in range(0, n, 2): ..."
    assert stmt_text(ReturnStmt((x,))) == "return x"


def test_dialect_overrides_do_not_leak_into_the_printer():
    e = Add(x, ConstInt(3, I32), I32)
    assert Printer().expr(e) == "x + pl.const(3, pl.INT32)"
    assert MessagePrinter().expr(e) == "(x + 3:int32)"
    assert Printer().expr(e) == "x + pl.const(3, pl.INT32)"  # per-class dispatch: no cross-talk
    assert python_print(TensorType([4], DataType.FP32)) == "pl.Tensor[[4], pl.FP32]"
