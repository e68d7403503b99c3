"""pipes: which pipe runs each op, and what each instruction reads and writes."""

from __future__ import annotations

import pytest

import pypto.ops  # noqa: F401  (registers operators)
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection, PipeType
from pypto.ir.expr import Add, ConstBool, ConstInt, IterArg, MakeTuple, Var, make_memref, scalar_type
from pypto.ir.function import Function
from pypto.ir.op import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, YieldStmt
from pypto.ir.types import TensorType, TileType
from pypto.ir.walk import make_body
from pypto.ops.registry import OPS, Level
from pypto.passes.analysis.pipes import (
    Buffer,
    Instruction,
    TensorRegion,
    accesses,
    instruction,
    pipe_of,
    tensor_roots,
)

FP32, INDEX = DataType.FP32, DataType.INDEX
VEC, MAT, LEFT, RIGHT, ACC = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc
P = PipeType


def tup(*xs):
    return MakeTuple(tuple(ConstInt(x, INDEX) if isinstance(x, int) else x for x in xs))


def tensor(name="a", shape=(128, 64)):
    return Var(name, TensorType(list(shape), FP32))


_IDS = iter(range(1000, 100000))


def tile(space=VEC, mem=None, shape=(64, 64), name="t"):
    m = mem if mem is not None else make_memref(space, -1, 16384, next(_IDS))
    return Var(name, TileType(list(shape), FP32, space, m))


def call(op, *args, **kw):
    return create_op_call(op, list(args), kw)


def assign(var, op, *args, **kw):
    return AssignStmt(var, call(op, *args, **kw))


def mem_of(v):
    return v.type.memref


# ---------------------------------------------------------------------------------------------
# pipes


@pytest.mark.parametrize("src,dst,pipe", [
    (MAT, LEFT, P.MTE1), (MAT, RIGHT, P.MTE1), (VEC, VEC, P.V), (ACC, VEC, P.FIX), (ACC, MAT, P.FIX),
    (VEC, MAT, P.MTE1),
])
def test_move_pipe_depends_on_the_spaces(src, dst, pipe):
    assert pipe_of(call("block.move", tile(src), target_memory=dst)) is pipe


def test_store_from_acc_runs_on_fix():
    c = tensor("c", (64, 64))
    assert pipe_of(call("block.store", tile(VEC), tup(0, 0), c)) is P.MTE3
    assert pipe_of(call("block.store", tile(ACC), tup(0, 0), c)) is P.FIX


def test_a_cross_core_push_drains_like_a_store():
    for name in ("block.tpush_to_aiv", "block.tpush_to_aic"):
        assert pipe_of(call(name, tile(VEC), split=0, id=0)) is P.MTE3
        assert pipe_of(call(name, tile(ACC), split=0, id=0)) is P.FIX


def test_other_ops_use_the_registry_pipe():
    a = tensor()
    assert pipe_of(call("block.load", a, tup(0, 0), tup(64, 64), tup(64, 64))) is P.MTE2
    assert pipe_of(call("block.matmul", tile(LEFT), tile(RIGHT))) is P.M
    acc = tile(ACC)
    assert pipe_of(call("block.matmul_acc", acc, tile(LEFT), tile(RIGHT))) is P.M
    assert pipe_of(call("block.exp", tile())) is P.V
    assert pipe_of(call("block.read", tile(), tup(0, 0))) is P.S
    assert pipe_of(call("block.create_tile", tup(64, 64), dtype=FP32)) is None
    assert pipe_of(call("block.alloc", memory_space=VEC, addr=-1, size=64, id=0)) is None
    for name, op in OPS.items():  # every block op with a registry pipe keeps it, but the ops that write DDR
        if op.level is Level.BLOCK and op.pipe is not None and name not in ("block.store", "block.move",
                                                                               "block.mscatter", "block.tpush_to_aiv",
                                                                               "block.tpush_to_aic"):
            assert op.pipe in (P.V, P.M, P.S, P.MTE2), name


def test_sync_ops_run_on_their_pipes():
    kw = {"set_pipe": P.MTE2, "wait_pipe": P.V, "event_id": 3}
    assert pipe_of(call("system.sync_src", **kw)) is P.MTE2
    assert pipe_of(call("system.sync_dst", **kw)) is P.V
    assert pipe_of(call("system.bar_v")) is P.V
    assert pipe_of(call("system.bar_m")) is P.M
    assert pipe_of(call("system.bar_all")) is P.ALL
    assert instruction(EvalStmt(call("system.bar_all"))) is None  # sync ops are not instructions


# ---------------------------------------------------------------------------------------------
# accesses


def test_load_reads_a_tensor_window_and_writes_its_buffer():
    a, t = tensor(), tile()
    reads, writes = accesses(assign(t, "block.load", a, tup(64, 0), tup(64, 64), tup(64, 64)))
    assert len(reads) == 1 and reads[0].tensor is a and reads[0].window == ((64, 128), (0, 64))
    assert len(writes) == 1 and writes[0].memref is mem_of(t)


def test_a_loop_dependent_window_is_unknown():
    a, t, i = tensor(), tile(), Var("i", scalar_type(INDEX))
    reads, _ = accesses(assign(t, "block.load", a, MakeTuple((i, ConstInt(0, INDEX))), tup(64, 64), tup(64, 64)))
    assert reads[0].window is None and reads[0].tensor is a


def test_store_reads_its_buffer_and_writes_the_output_window():
    c, t = tensor("c"), tile()
    out = Var("o", c.type)
    reads, writes = accesses(assign(out, "block.store", t, tup(0, 0), c))
    assert [r.memref for r in reads] == [mem_of(t)]
    assert len(writes) == 1 and writes[0].tensor is c and writes[0].window == ((0, 64), (0, 64))
    reads, writes = accesses(assign(out, "block.store", tile(shape=(1, 4096)), tup(64, 0), c, tup(64, 64)))
    assert writes[0].window == ((64, 128), (0, 64))


def test_matmul_acc_updates_its_accumulator():
    acc, lhs, rhs = tile(ACC), tile(LEFT), tile(RIGHT)
    res = Var("r", acc.type)
    ins = instruction(assign(res, "block.matmul_acc", acc, lhs, rhs))
    assert ins.pipe is P.M
    assert [r.memref for r in ins.reads] == [mem_of(acc), mem_of(lhs), mem_of(rhs)]
    assert [w.memref for w in ins.writes] == [mem_of(acc)]


def test_scratch_operands_are_read_and_written():
    x, tmp = tile(), tile()
    res = tile(shape=(64, 1))
    reads, writes = accesses(assign(res, "block.row_sum", x, tmp))
    assert {id(r.memref) for r in reads} == {id(mem_of(x)), id(mem_of(tmp))}
    assert {id(w.memref) for w in writes} == {id(mem_of(tmp)), id(mem_of(res))}


def test_scalar_access_runs_on_s():
    t = tile()
    ins = instruction(AssignStmt(Var("s", scalar_type(FP32)), call("block.read", t, tup(0, 0))))
    assert ins.pipe is P.S and [r.memref for r in ins.reads] == [mem_of(t)] and ins.writes == ()
    from pypto.ir.expr import ConstFloat

    ins = instruction(EvalStmt(call("block.write", t, tup(0, 0), ConstFloat(1.0, FP32))))
    assert ins.pipe is P.S and [w.memref for w in ins.writes] == [mem_of(t)]


def test_what_is_not_an_instruction():
    t = tile()
    alias = Var("r", TileType([4096], FP32, VEC, mem_of(t)))
    assert instruction(assign(alias, "block.reshape", t, tup(4096))) is None  # same buffer: a view
    other = tile(shape=(4096,))
    assert instruction(assign(other, "block.reshape", t, tup(4096))).pipe is P.V  # a copy
    assert instruction(AssignStmt(Var("y", t.type), t)) is None
    assert instruction(assign(tile(), "block.create_tile", tup(64, 64), dtype=FP32)) is None
    n = Var("n", scalar_type(INDEX))
    assert instruction(AssignStmt(Var("m", scalar_type(INDEX)), Add(n, ConstInt(1, INDEX), INDEX))) is None
    assert accesses(ReturnStmt(())) == ((), ())


# ---------------------------------------------------------------------------------------------
# overlap and conflicts


def test_buffer_overlap():
    m0, m1 = make_memref(VEC, -1, 1024, 0), make_memref(VEC, -1, 1024, 1)
    assert Buffer(m0).overlaps(Buffer(m0))
    assert not Buffer(m0).overlaps(Buffer(m1))
    assert Buffer(m0).overlaps(Buffer(make_memref(VEC, -1, 1024, 0)))  # same (space, id)
    assert not Buffer(m0).overlaps(Buffer(make_memref(MAT, -1, 1024, 0)))
    a, b = make_memref(VEC, 0, 1024, 0), make_memref(VEC, 512, 1024, 1)
    assert Buffer(a).overlaps(Buffer(b))
    assert not Buffer(a).overlaps(Buffer(make_memref(VEC, 1024, 1024, 2)))
    assert not Buffer(m0).overlaps(TensorRegion(tensor()))


def test_tensor_region_overlap():
    a, b = tensor("a"), tensor("b")
    top, bottom = TensorRegion(a, ((0, 64), (0, 64))), TensorRegion(a, ((64, 128), (0, 64)))
    assert not top.overlaps(bottom)
    assert top.overlaps(TensorRegion(a, ((32, 96), (0, 64))))
    assert top.overlaps(TensorRegion(a))  # unknown window
    assert not top.overlaps(TensorRegion(b, ((0, 64), (0, 64))))  # distinct parameters do not alias
    assert top.overlaps(TensorRegion(None))  # unknown tensor


def test_conflicts_need_a_write():
    m = Buffer(make_memref(VEC, -1, 1024, 0))
    r, w = Instruction(P.V, (m,), ()), Instruction(P.MTE2, (), (m,))
    assert not r.conflicts_with(r)
    assert r.conflicts_with(w) and w.conflicts_with(r) and w.conflicts_with(w)


# ---------------------------------------------------------------------------------------------
# tensor roots


def _kernel(params, body):
    return Function("k", tuple(params), tuple(ParamDirection.InOut for _ in params), (), make_body(body),
                    FunctionType.InCore)


def test_tensor_roots_follow_stores_loops_and_ifs():
    c, d, t = tensor("c"), tensor("d"), tile()
    o1 = Var("o1", c.type)
    acc = IterArg("acc", c.type, o1)
    o2, r = Var("o2", c.type), Var("r", c.type)
    loop = ForStmt(Var("i", scalar_type(INDEX)), ConstInt(0, INDEX), ConstInt(4, INDEX), ConstInt(1, INDEX),
                   (acc,), make_body([assign(o2, "block.store", t, tup(0, 0), acc), YieldStmt((o2,))]), (r,))
    same, mixed = Var("same", c.type), Var("mixed", c.type)
    cond = ConstBool(True)
    if_same = IfStmt(cond, YieldStmt((r,)), YieldStmt((o1,)), (same,))
    if_mixed = IfStmt(cond, YieldStmt((r,)), YieldStmt((d,)), (mixed,))
    fn = _kernel([c, d], [assign(o1, "block.store", t, tup(0, 0), c), loop, if_same, if_mixed, ReturnStmt((r,))])
    roots = tensor_roots(fn)
    assert roots[o1] is c and roots[acc] is c and roots[o2] is c and roots[r] is c and roots[same] is c
    assert roots[mixed] is None and roots[d] is d
    load = assign(tile(), "block.load", mixed, tup(0, 0), tup(64, 64), tup(64, 64))
    assert accesses(load, roots)[0][0].tensor is None  # overlaps every tensor


# ---------------------------------------------------------------------------------------------
# one instruction per statement


def test_bind_instructions_hoists_returned_yielded_and_init_calls():
    from pypto.ir.walk import walk_stmts
    from pypto.passes.analysis.pipes import bind_instructions

    c, t = tensor("c"), tile()
    acc = IterArg("acc", c.type, call("block.store", t, tup(0, 0), c))  # a store as the loop's init value
    r = Var("r", c.type)
    body = make_body([YieldStmt((call("block.store", t, tup(64, 0), acc),))])
    loop = ForStmt(Var("i", scalar_type(INDEX)), ConstInt(0, INDEX), ConstInt(2, INDEX), ConstInt(1, INDEX),
                   (acc,), body, (r,))
    fn = _kernel([c], [loop, ReturnStmt((call("block.store", t, tup(0, 0), r),))])
    out = bind_instructions(fn)
    stmts = list(walk_stmts(out))
    stores = [s for s in stmts if instruction(s) is not None]
    assert [s.var.name for s in stores] == ["store__tmp_v1", "store__tmp_v2", "store__tmp_v3"]
    new_loop = next(s for s in stmts if isinstance(s, ForStmt))
    assert new_loop.iter_args[0].init_value is stores[0].var
    assert isinstance(stmts[-1], ReturnStmt) and stmts[-1].values == (stores[2].var,)
    assert bind_instructions(out) is out


def test_bind_instructions_without_loop_inits_rewrites_only_what_it_must():
    """Without a call as a loop init value, only the statements binding something (and the bodies
    holding them) are rebuilt — with the same result, names included, as the general rewrite; a
    function with nothing to bind is returned as is."""
    from pypto import ir
    from pypto.ir.names import NameGen
    from pypto.passes.analysis.pipes import _BindCalls, bind_instructions

    c, t, u = tensor("c"), tile(), tile(name="u")
    taken = Var("store__tmp_v1", c.type)  # a name already in use: the temporaries go around it
    acc, r, r2 = IterArg("acc", c.type, c), Var("r", c.type), Var("r2", c.type)
    untouched = ForStmt(Var("j", scalar_type(INDEX)), ConstInt(0, INDEX), ConstInt(2, INDEX), ConstInt(1, INDEX), (),
                        make_body([assign(u, "block.exp", t), assign(Var("x", t.type), "block.exp", u)]), ())
    loop = ForStmt(Var("i", scalar_type(INDEX)), ConstInt(0, INDEX), ConstInt(2, INDEX), ConstInt(1, INDEX), (acc,),
                   make_body([IfStmt(ConstBool(True), make_body([YieldStmt((call("block.store", t, tup(0, 0), acc),))]),
                                     make_body([YieldStmt((call("block.store", u, tup(64, 0), acc),))]), (r2,)),
                              YieldStmt((r2,))]), (r,))
    body = [assign(taken, "block.store", t, tup(0, 0), c), untouched, loop,
            AssignStmt(Var("pair", c.type), MakeTuple((call("block.store", t, tup(0, 0), r), r))),
            ReturnStmt((call("block.store", u, tup(64, 0), r),))]
    fn = _kernel([c], body)
    fast = bind_instructions(fn)
    general = _BindCalls(NameGen.for_node(fn)).visit(fn)
    assert ir.python_print(fast) == ir.python_print(general)
    ir.assert_structural_equal(fast, general)
    assert fast.body.stmts[1] is untouched and fast.body.stmts[0] is body[0]
    assert bind_instructions(fast) is fast
