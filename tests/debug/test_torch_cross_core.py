"""The cross-core queues of `torch_codegen`'s code: tpush / tpop between a cube kernel and vector lanes."""

from __future__ import annotations

import pytest
import torch

from pypto.debug import torch_codegen
from pypto.debug.cross_core_rt import CrossCoreRuntime, split_code
from pypto.debug.torch_rt import TorchRuntimeError
from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection
from pypto.ir.function import Function, Program
from pypto.ir.op import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts
from pypto.ir.types import ScalarType, TensorType, TileType


def _lanes(rt: CrossCoreRuntime, fn, lanes: int = 2):
    rt.launch(fn, (), lanes=lanes)
    rt.join()


def test_split_codes():
    assert [split_code(s) for s in (None, 0, 1, 2, "UP_DOWN", "left_right", "NONE")] == [0, 0, 1, 2, 1, 2, 0]
    for bad in (3, -1, "DIAGONAL", True):
        with pytest.raises(ValueError, match="invalid split mode"):
            split_code(bad)


@pytest.mark.parametrize(("split", "axis"), [(1, 0), (2, 1)])
def test_cube_to_vector_halves_and_back(split, axis):
    rt = CrossCoreRuntime(timeout=5)
    tile = torch.arange(8 * 6, dtype=torch.float32).reshape(8, 6)
    got: dict[int, torch.Tensor] = {}

    def vector():
        half = rt.pop_from_aic(split=split)
        got[rt.lane()] = half
        rt.push_to_aic(half * 10, split=split)

    rt.push_to_aiv(tile, split=split)
    rt.launch(vector, (), lanes=2)
    back = rt.pop_from_aiv(split=split)
    rt.join()
    top, bottom = torch.chunk(tile, 2, dim=axis)
    torch.testing.assert_close(got[0], top)
    torch.testing.assert_close(got[1], bottom)
    torch.testing.assert_close(back, tile * 10)


def test_no_split_is_one_whole_tile():
    rt = CrossCoreRuntime(timeout=5)
    rt.push_to_aiv(torch.ones(4, 4))
    torch.testing.assert_close(rt.pop_from_aic(), torch.ones(4, 4))


def test_a_pop_without_a_push_times_out_with_the_queue_depths():
    rt = CrossCoreRuntime(timeout=0.2)
    with pytest.raises(TimeoutError, match="tpop_from_aic on lane 0: nothing was pushed"):
        rt.pop_from_aic()


def test_join_reraises_a_lane_failure_and_reports_unpopped_tiles():
    rt = CrossCoreRuntime(timeout=5)

    def boom():
        raise ValueError("lane failed")

    with pytest.raises(ValueError, match="lane failed"):
        _lanes(rt, boom)
    rt.push_to_aiv(torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="pushed but never popped"):
        rt.join()


def test_pipe_ids_are_separate_fifos_and_lane_stride_cuts_unevenly():
    rt = CrossCoreRuntime(timeout=5)
    tile = torch.arange(10 * 2, dtype=torch.float32).reshape(10, 2)
    rt.push_to_aiv(tile, split=1, lane_stride=6, id=1)
    rt.push_to_aiv(torch.zeros(2, 2), split=0, id=0)
    got = {}

    def vector():
        got[rt.lane()] = rt.pop_from_aic(split=1, id=1)

    rt.launch(vector, (), lanes=2)
    torch.testing.assert_close(rt.pop_from_aic(id=0), torch.zeros(2, 2))
    rt.join()
    torch.testing.assert_close(got[0], tile[:6])
    torch.testing.assert_close(got[1], tile[6:])


def test_an_odd_extent_cannot_be_split():
    with pytest.raises(ValueError, match="even extent"):
        CrossCoreRuntime().push_to_aiv(torch.ones(5, 4), split=1)


# --- generated code: a cube kernel pushes halves of a tile, two vector lanes pop, scale and store them

_F32 = DataType.FP32


def _c(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


def _shape(*dims: int) -> E.MakeTuple:
    return E.MakeTuple(tuple(_c(d) for d in dims))


def _group_program(push_name: str = "xc.tpush_to_aiv", with_cube: bool = True) -> Program:
    a = E.Var("a", TensorType((_c(16), _c(32)), _F32))
    t = E.Var("t", TileType((_c(16), _c(32)), _F32, memory_space=MemorySpace.Vec))
    load = create_op_call("block.load", [a, _shape(0, 0), _shape(16, 32)], {"target_memory": MemorySpace.Vec})
    push = E.Call(E.Op(push_name), (t,), (("split", 1),))
    setup = E.Call(E.Op("xc.aic_initialize_pipe"), (), (("dir_mask", 1), ("slot_size", 1024)))
    cube = Function("cube", (a,), (ParamDirection.In,), (),
                    SeqStmts((EvalStmt(setup), AssignStmt(t, load), EvalStmt(push), ReturnStmt(()))),
                    FunctionType.InCore)

    out = E.Var("out", TensorType((_c(16), _c(32)), _F32))
    h = E.Var("h", TileType((_c(8), _c(32)), _F32, memory_space=MemorySpace.Vec))
    lane = E.Var("lane", ScalarType(DataType.INDEX))
    r = E.Var("r", TileType((_c(8), _c(32)), _F32, memory_space=MemorySpace.Vec))
    o = E.Var("o", out.type)
    pop = E.Call(E.Op("xc.tpop_from_aic"), (), (("split", 1),), h.type)
    idx = E.Call(E.Op("xc.get_subblock_idx"), (), (), lane.type)
    mul = create_op_call("block.muls", [h, E.ConstFloat(2.0, _F32)])
    store = create_op_call("block.store", [r, E.MakeTuple((E.Mul(lane, _c(8), DataType.INDEX), _c(0))), out])
    vec = Function("vec", (out,), (ParamDirection.Out,), (out.type,),
                   SeqStmts((AssignStmt(h, pop), AssignStmt(lane, idx), AssignStmt(r, mul),
                             EvalStmt(E.Call(E.Op("xc.tfree_to_aic"), (h,), (("split", 1),))), AssignStmt(o, store),
                             ReturnStmt((o,)))), FunctionType.InCore)

    ma, mo, res = E.Var("a", a.type), E.Var("out", out.type), E.Var("res", out.type)
    main = Function("main", (ma, mo), (ParamDirection.In, ParamDirection.Out), (out.type,),
                    SeqStmts(((EvalStmt(E.Call(E.GlobalVar("cube"), (ma,))),) if with_cube else ())
                             + (AssignStmt(res, E.Call(E.GlobalVar("vec"), (mo,), (), out.type)),
                                ReturnStmt((res,)))), FunctionType.Orchestration)
    return Program("Group", (cube, vec, main))


def test_generated_group_runs_its_kernels_together():
    code = torch_codegen(_group_program(), check_shapes=True)
    assert "_cross_core_rt.push_to_aiv(t, split=1)" in code
    assert "_cross_core_rt.pop_from_aic(split=1)" in code
    assert "_cross_core_rt.launch(vec, (out,), lanes=2)" in code  # (the vector kernel runs as two lanes)
    assert "tfree" not in code and "initialize_pipe" not in code  # (no slots to free, no ring to set up)
    ns: dict = {}
    exec(code, ns)  # noqa: S102
    a = torch.randn(16, 32)
    out = torch.zeros(16, 32)
    res = ns["main"](a, out)
    torch.testing.assert_close(out, a * 2)
    assert res is out


def test_generated_group_reports_a_missing_push():
    ns: dict = {}
    exec(torch_codegen(_group_program(with_cube=False)), ns)  # noqa: S102
    ns["_cross_core_rt"].timeout = 0.2
    with pytest.raises(TimeoutError, match="tpop_from_aic on lane [01]: nothing was pushed"):
        ns["main"](torch.zeros(16, 32), torch.zeros(16, 32))


def test_an_unknown_op_is_named():
    ns: dict = {}
    exec(torch_codegen(_group_program(push_name="xc.not_a_push")), ns)  # noqa: S102
    with pytest.raises(TorchRuntimeError, match="unknown op 'xc.not_a_push'"):
        ns["main"](torch.zeros(16, 32), torch.zeros(16, 32))
