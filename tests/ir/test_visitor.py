"""IRVisitor / IRMutator dispatch: `visit_<Class>` along the MRO, generic walks over the fields that
can hold nodes, types only with `visit_types`, and the shortcuts for constants and lists of them
never hiding a node from a walker that asks for it."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Add, Call, ConstFloat, ConstInt, DynVar, MakeTuple, Op, Var
from pypto.ir.node import Node, walk_fields
from pypto.ir.op import get_op
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.visitor import IRMutator, IRVisitor

INDEX = ScalarType(DataType.INDEX)


def _load(t: Var, offs: MakeTuple) -> Call:
    return Call(get_op("block.load"), (t, offs, MakeTuple((ConstInt(16), ConstInt(16)))),
                (("target_memory", MemorySpace.Vec), ("transpose", False)),
                TileType([16, 16], DataType.FP32, MemorySpace.Vec))


def test_walk_fields_skip_plain_values_and_types_unless_asked():
    assert [n for n, _ in walk_fields(Call, False)] == ["op", "args"]  # kwargs hold plain values only
    assert [n for n, _ in walk_fields(Call, True)] == ["op", "args", "type"]
    assert walk_fields(ConstInt, True) == ()
    assert [n for n, _ in walk_fields(TileType, True)] == ["shape", "memref", "tile_view"]


def test_constants_inside_lists_reach_a_walker_that_wants_them():
    class Consts(IRVisitor):
        def __init__(self) -> None:
            self.seen: list[int] = []

        def visit_ConstInt(self, c: ConstInt) -> None:
            self.seen.append(c.value)

    t = Var("t", TensorType([64, 64], DataType.FP32))
    v = Consts()
    v.visit(EvalStmt(_load(t, MakeTuple((ConstInt(0), ConstInt(32))))))
    assert v.seen == [0, 32, 16, 16]


def test_a_mutator_rewriting_constants_rewrites_them_in_lists():
    class Double(IRMutator):
        def visit_ConstInt(self, c: ConstInt) -> ConstInt:
            return ConstInt(c.value * 2, c.dtype)

    e = MakeTuple((ConstInt(1), ConstInt(2)))
    out = Double().visit(e)
    assert [x.value for x in out.elements] == [2, 4]
    same = IRMutator().visit(e)
    assert same is e


def test_lists_mixing_variables_and_constants_are_walked():
    i = Var("i", INDEX)

    class Uses(IRVisitor):
        def __init__(self) -> None:
            self.uses: list[Var] = []

        def visit_Var(self, var: Var) -> None:
            self.uses.append(var)

    t = Var("t", TensorType([64, 64], DataType.FP32))
    u = Uses()
    u.visit(EvalStmt(_load(t, MakeTuple((Add(i, ConstInt(1), DataType.INDEX), ConstInt(0))))))
    assert u.uses == [t, i]
    j = Var("j", INDEX)
    m = IRMutator()
    m.var_map[i] = j
    out = m.visit(MakeTuple((i, ConstInt(0))))
    assert out.elements[0] is j


def test_a_catch_all_method_sees_operators_too():
    class All(IRVisitor):
        def __init__(self) -> None:
            self.kinds: list[str] = []

        def visit_Node(self, n: Node) -> None:
            self.kinds.append(type(n).__name__)
            self.generic_visit(n)

    a = All()
    t = Var("t", TensorType([64, 64], DataType.FP32))
    a.visit(EvalStmt(_load(t, MakeTuple((ConstInt(0), ConstInt(0))))))
    assert a.kinds[:3] == ["EvalStmt", "Call", "OpDef"]
    assert isinstance(get_op("block.load"), Op)


def test_types_are_walked_only_with_visit_types():
    n = DynVar("n", INDEX)
    x = Var("x", TensorType([n, 64], DataType.FP32))

    class Dyn(IRVisitor):
        def __init__(self, types: bool) -> None:
            self.visit_types = types
            self.found: list[Var] = []

        def visit_DynVar(self, v: DynVar) -> None:
            self.found.append(v)

    body = SeqStmts((AssignStmt(Var("y", x.type), x), EvalStmt(ConstFloat(1.0, DataType.FP32))))
    off, on = Dyn(False), Dyn(True)
    off.visit(body)
    on.visit(body)
    assert off.found == [] and on.found == [n]
