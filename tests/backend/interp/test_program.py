"""Orchestrations run by the interpreter: loops submitting kernels over slices, dynamic shapes,
scalar reads of tensors, branches, and hand-built orchestration modules."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.backend.interp import HazardError, InterpError, run_program
from pypto.pto.model import INDEX, Block, Func, Module, Op, ScalarT, TensorT, Value
from tests.programs.interp_kernels import ADD_KERNEL, SLICES, build_program


def test_loop_submits_kernels_over_slices():
    kernels, orch, entry = build_program(SLICES)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 64), np.float32), rng.standard_normal((64, 64), np.float32)
    (c,) = run_program(kernels, orch, entry, [a, b])
    assert np.array_equal(c, a + b)


def test_hazard_in_a_submitted_kernel_names_the_submit():
    unsynced = "\n".join(line for line in SLICES.splitlines() if "pl.system.sync" not in line)
    kernels, orch, entry = build_program(unsynced)
    a = np.zeros((64, 64), np.float32)
    with pytest.raises(HazardError) as ei:
        run_program(kernels, orch, entry, [a, a])
    assert ei.value.kernel == "add_k" and ei.value.kind == "RAW"
    assert "called from @main" in str(ei.value) and "pto.submit" in str(ei.value)
    assert "iteration i=0" in ei.value.callers[0]
    (c,) = run_program(kernels, orch, entry, [a + 1, a + 2], check_hazards=False)
    assert (c == 3).all()


def test_wrong_arguments_are_reported():
    kernels, orch, entry = build_program(SLICES)
    a = np.zeros((64, 64), np.float32)
    with pytest.raises(InterpError, match="must hold f32"):
        run_program(kernels, orch, entry, [a, a.astype(np.float64)])
    with pytest.raises(InterpError, match="static extent 64"):
        run_program(kernels, orch, entry, [a, np.zeros((32, 64), np.float32)])
    with pytest.raises(InterpError, match="takes 2 argument"):
        run_program(kernels, orch, entry, [a])


DYNAMIC = """
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_k(self, a: pl.Tensor[[M, 64], pl.FP32], i: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32],
                out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 4096, 0)
        m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 4096, 4096, 1)
        m = pl.tensor.dim(a, 0)
        n = pl.min(16, m - i)
        ta: pl.Tile[[16, 64], pl.FP32, m0, pl.TileView(valid_shape=[n, 64])] = pl.load(a, [i, 0], [16, 64], [n, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        tb: pl.Tile[[16, 64], pl.FP32, m1, pl.TileView(valid_shape=[n, 64])] = pl.muls(ta, s)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        o = pl.store(tb, [i, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 64], pl.FP32], scale: pl.Tensor[[2], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
        m = pl.tensor.dim(a, 0)
        c = pl.create_tensor([M, 64], dtype=pl.FP32)
        s = pl.tensor.read(scale, [1])
        for i in pl.range(0, m, 16):
            r = self.scale_k(a, i, s, c)
        return c
"""


@pytest.mark.parametrize("rows", [16, 40, 5])
def test_dynamic_shapes_and_scalar_reads(rows: int):
    kernels, orch, entry = build_program(DYNAMIC)
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, 64), np.float32)
    scale = np.array([0.0, 2.5], np.float32)
    (c,) = run_program(kernels, orch, entry, [a, scale])
    assert c.shape == (rows, 64)
    assert np.array_equal(c, a * np.float32(2.5))


BRANCH = """
import pypto.language as pl


@pl.program
class P:
""" + ADD_KERNEL + """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], flag: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        f = pl.tensor.read(flag, [0])
        if f > 0:
            r1 = self.add_k(a, a, out)
        else:
            pl.tensor.write(out, [0, 0], 5.0)
        v = pl.tensor.read(out, [0, 0])
        pl.tensor.write(out, [15, 63], v)
        return out
"""


@pytest.mark.parametrize("flag", [1, 0])
def test_branches_and_tensor_writes(flag: int):
    kernels, orch, entry = build_program(BRANCH)
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros((16, 64), np.float32)
    (res,) = run_program(kernels, orch, entry, [a, np.array([flag], np.int32), out])
    assert res is out
    exp = a + a if flag else np.zeros_like(a)
    if not flag:
        exp[0, 0] = 5.0
    exp[15, 63] = exp[0, 0]
    assert np.array_equal(out, exp)


def test_single_kernel_entry_returns_outputs():
    kernels, orch, entry = build_program("import pypto.language as pl\n\n\n@pl.program\nclass P:\n" + ADD_KERNEL)
    assert orch is None
    a = np.ones((16, 64), np.float32)
    out = np.zeros((16, 64), np.float32)
    (res,) = run_program(kernels, None, entry, [a, a, out])
    assert res is out and (out == 2).all()


# ---- hand-built orchestration: reshape views, while loops, scalar results --------------------


def _v(name: str, t) -> Value:
    return Value(name, t)


def _const(name: str, value, t=INDEX) -> tuple[Value, Op]:
    v = _v(name, t)
    return v, Op("arith.constant", [v], attrs={"value": value})


def test_reshape_view_while_loop_and_scalar_return():
    t = _v("t", TensorT((4, 8), "f32"))
    flat = _v("flat", TensorT((32,), "f32"))
    c32, k32 = _const("c32", 32)
    c0, k0 = _const("c0", 0)
    c1, k1 = _const("c1", 1)
    fz, kf = _const("fz", 0.0, ScalarT("f32"))
    # while (i < 32) { acc += flat[i]; flat[i] = i; i += 1 }
    bi, bacc = _v("i", INDEX), _v("acc", ScalarT("f32"))
    cond = _v("cond", ScalarT("i1"))
    before = Block([bi, bacc], [Op("arith.cmpi", [cond], [bi, c32], attrs={"predicate": "slt"}),
                                Op("scf.condition", operands=[cond, bi, bacc])])
    ai, aacc = _v("i2", INDEX), _v("acc2", ScalarT("f32"))
    x, acc3, ni, xf = _v("x", ScalarT("f32")), _v("acc3", ScalarT("f32")), _v("ni", INDEX), _v("xf", ScalarT("f32"))
    after = Block([ai, aacc], [Op("pto.tensor_read", [x], [flat, ai]), Op("arith.addf", [acc3], [aacc, x]),
                               Op("arith.sitofp", [xf], [ai]), Op("pto.tensor_write", operands=[xf, flat, ai]),
                               Op("arith.addi", [ni], [ai, c1]), Op("scf.yield", operands=[ni, acc3])])
    ri, racc = _v("ri", INDEX), _v("racc", ScalarT("f32"))
    body = Block(ops=[k32, k0, k1, kf, Op("pto.tensor_reshape", [flat], [t, c32]),
                      Op("scf.while", [ri, racc], [c0, fz], regions=[before, after]),
                      Op("func.return", operands=[t, racc, ri])])
    from pypto.pto.model import EnumAttr

    f = Func("main", [t], body, [t.type, ScalarT("f32"), INDEX],
             {"pto.kind": EnumAttr("pto.kind", "orchestration"), "pto.param_dirs": ["inout"]})
    arr = np.ones((4, 8), np.float32)
    res_t, total, n = run_program({}, Module([f]), "main", [arr])
    assert res_t is arr and float(total) == 32.0 and int(n) == 32
    assert np.array_equal(arr.reshape(-1), np.arange(32, dtype=np.float32))
