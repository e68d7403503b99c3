"""Malformed modules and bad arguments raise `InterpError` located at the op and function."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.backend import ascend910b
from pypto.backend.interp import InterpError, run_kernel, run_program
from pypto.pto.model import INDEX, Block, EnumAttr, Func, Module, Op, ScalarT, Sym, TensorT, Value, walk
from tests.programs.interp_kernels import Kernel


def _kernel() -> Module:
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.load("t", "a", (16, 64), "FP32")
    k.barrier()
    k.let("u", (16, 64), "FP32", "pl.exp(t)")
    k.barrier()
    k.let("e", (8, 16), "FP32", "pl.block.view(u, [8, 16], [4, 8])")
    k.barrier()
    k.store("u", [0, 0])
    return k.build()


def _ops(m: Module, name: str) -> list[Op]:
    return [op for op in walk(m.funcs[0].body) if op.name == name]


def _args():
    return [np.ones((16, 64), np.float32), np.zeros((16, 64), np.float32)]


def _const(m: Module, value: int) -> Value:
    v = Value(f"c_new{value}", INDEX)
    m.funcs[0].body.ops.insert(0, Op("arith.constant", [v], attrs={"value": value}))
    return v


def test_unknown_instruction():
    m = _kernel()
    _ops(m, "pto.texp")[0].name = "pto.tfrobnicate"
    with pytest.raises(InterpError) as ei:
        run_kernel(m, _args())
    assert "unknown instruction pto.tfrobnicate" in str(ei.value)
    assert ei.value.func == "k" and "op #" in ei.value.where


def test_wrong_operand_kind():
    m = _kernel()
    op = _ops(m, "pto.texp")[0]
    op.ins = [_const(m, 3)]
    with pytest.raises(InterpError, match="operand 'input' must be a tile"):
        run_kernel(m, _args())


def test_wrong_operand_count():
    m = _kernel()
    op = _ops(m, "pto.texp")[0]
    op.ins = op.ins * 2
    with pytest.raises(InterpError, match=r"pto.texp takes 1 operand\(s\)"):
        run_kernel(m, _args())


def test_load_into_a_tile_of_another_dtype():
    m = _kernel()
    load = _ops(m, "pto.tload")[0]
    alloc = next(op for op in _ops(m, "pto.alloc_tile") if op.results[0] is load.outs[0])
    from dataclasses import replace

    alloc.results[0].type = replace(alloc.results[0].type, dtype="i32")
    with pytest.raises(InterpError, match="pto.tload: the tensor holds float32, tile %t holds i32"):
        run_kernel(m, _args())


def test_partition_out_of_range():
    m = _kernel()
    pv = _ops(m, "pto.partition_view")[0]
    pv.operands[1] = _const(m, 8)  # rows 8..24 of a 16-row tensor
    with pytest.raises(InterpError) as ei:
        run_kernel(m, _args())
    assert "window [8, 24) of axis 0 is out of range for extent 16" in str(ei.value)
    assert "pto.partition_view" in ei.value.where


def test_extract_window_out_of_range():
    m = _kernel()
    ex = _ops(m, "pto.textract")[0]
    ex.ins[2] = _const(m, 60)
    with pytest.raises(InterpError, match=r"pto.textract: window \[4:12, 60:76\] is out of range"):
        run_kernel(m, _args())


def test_undefined_value():
    m = _kernel()
    _ops(m, "pto.texp")[0].ins = [Value("ghost", _ops(m, "pto.texp")[0].ins[0].type)]
    with pytest.raises(InterpError, match="use of %ghost"):
        run_kernel(m, _args())


def test_bad_kernel_arguments():
    m = _kernel()
    with pytest.raises(InterpError, match="takes 2 argument"):
        run_kernel(m, _args()[:1])
    with pytest.raises(InterpError, match="must hold f32"):
        run_kernel(m, [np.ones((16, 64), np.float64), np.zeros((16, 64), np.float32)])
    with pytest.raises(InterpError, match="must be a NumPy array"):
        run_kernel(m, [1.0, np.zeros((16, 64), np.float32)])
    # a smaller argument is seen at its own extents (a ragged view's valid part); the window that
    # leaves it is the error
    with pytest.raises(InterpError, match=r"window \[0, 16\) of axis 0 is out of range for extent 8"):
        run_kernel(m, [np.ones((8, 64), np.float32), np.zeros((16, 64), np.float32)])


def test_tiles_beyond_target_capacity():
    k = Kernel()
    k.tensor("a", (16, 64), "FP32")
    k.tensor("out", (16, 64), "FP32", "Out")
    k.load("t", "a", (16, 64), "FP32", mem=k.mem("Vec", 4096, addr=192 * 1024))
    k.barrier()
    k.store("t", [0, 0])
    m = k.build()
    run_kernel(m, _args())  # arenas sized by the kernel itself
    with pytest.raises(InterpError, match="more than the 0x30000 target Ascend910B has"):
        run_kernel(m, _args(), target=ascend910b())


def _orch(ops: list[Op], args: list[Value]) -> Module:
    attrs = {"pto.kind": EnumAttr("pto.kind", "orchestration"), "pto.param_dirs": ["inout"] * len(args)}
    return Module([Func("main", args, Block(ops=ops + [Op("func.return")]), [], attrs)])


def test_orchestration_errors_are_located():
    t = Value("t", TensorT((4, 8), "f32"))
    c0, c3, c6 = Value("c0", INDEX), Value("c3", INDEX), Value("c6", INDEX)
    consts = [Op("arith.constant", [v], attrs={"value": n}) for v, n in ((c0, 0), (c3, 3), (c6, 6))]
    s = Value("s", TensorT((3, 6), "f32"))
    # a window running past the end is cut back to the tensor (rows 3..4 here); one starting past it fails
    run_program({}, _orch(consts + [Op("pto.tensor_slice", [s], [t, c3, c0, c3, c6])], [t]), "main",
                [np.zeros((4, 8), np.float32)])
    bad_slice = Op("pto.tensor_slice", [s], [t, c6, c0, c3, c6])
    with pytest.raises(InterpError) as ei:
        run_program({}, _orch(consts + [bad_slice], [t]), "main", [np.zeros((4, 8), np.float32)])
    assert ei.value.func == "main" and "pto.tensor_slice" in ei.value.where
    assert "window [6, 9) of axis 0 is out of range for extent 4" in str(ei.value)

    x = Value("x", ScalarT("f32"))
    bad_read = Op("pto.tensor_read", [x], [t, c0, c6])
    run_program({}, _orch(consts + [bad_read], [t]), "main", [np.zeros((4, 8), np.float32)])
    bad_read.operands[2] = Value("c9", INDEX)
    consts.append(Op("arith.constant", [bad_read.operands[2]], attrs={"value": 9}))
    with pytest.raises(InterpError, match="index 9 out of range for axis 1 of extent 8"):
        run_program({}, _orch(consts + [bad_read], [t]), "main", [np.zeros((4, 8), np.float32)])

    sub = Op("pto.submit", operands=[t], attrs={"callee": Sym("nope"),
                                                "dirs": ["inout"]})
    with pytest.raises(InterpError, match="pto.submit of @nope, which is not among the kernels"):
        run_program({}, _orch([sub], [t]), "main", [np.zeros((4, 8), np.float32)])


def test_scalar_division_by_zero():
    a, b, r = Value("a", INDEX), Value("b", INDEX), Value("r", INDEX)
    ops = [Op("arith.constant", [a], attrs={"value": 7}), Op("arith.constant", [b], attrs={"value": 0}),
           Op("arith.divsi", [r], [a, b])]
    with pytest.raises(InterpError, match="integer division by zero") as ei:
        run_program({}, _orch(ops, []), "main", [])
    assert "arith.divsi" in ei.value.where
