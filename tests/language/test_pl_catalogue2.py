"""The second part of the pl-head §3.1-3.6 catalogue (docs/pl_ops.md): `pl.array` (arrays of ints and of
task ids as `deps=`), the partial ops `pl.part_*`, `pl.get_subblock_idx` and the tensor spellings of
the block queries, the `pl.prefetch` no-ops, and the refusals -- on the interpreter and the native runtime."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

# ir.compile builds the CPU library whichever backend then runs the program: every compiling test is native
PLATFORMS = [pytest.param("interp", marks=pytest.mark.native), pytest.param("cpu", marks=pytest.mark.native)]
B, TM, N = 4, 16, 32  # branches per stage, rows per task, columns
STAGES = 2 * 3
ROWS = STAGES * B * TM


def _run(prog, platform, *arrays, **cfg):
    compiled = ir.compile(prog)
    compiled(*arrays, config=RunConfig(platform=platform, **cfg))
    return compiled


# ---------------------------------------------------------------------------------------------
# arrays of task ids: phase fences


@pl.program
class SubmitPhases:
    """Stage s (of 2 x 3) runs B tasks; each waits for every task of stage s - 1 (deps=[array])."""

    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[ROWS, N], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[ROWS, N], pl.FP32]]) -> pl.Tensor[[ROWS, N], pl.FP32]:
        t = pl.load(data, [row, 0], [TM, N])
        return pl.store(pl.exp(pl.adds(t, 1.0)), [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[ROWS, N], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, N], pl.FP32]]) -> pl.Tensor[[ROWS, N], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(B, pl.TASK_ID)
            for epoch, (tids_epoch,) in pl.range(2, init_values=(tids,)):
                for phase, (tids_iter,) in pl.range(3, init_values=(tids_epoch,)):
                    stage: pl.Scalar[pl.INDEX] = epoch * 3 + phase
                    tids_next = pl.array.create(B, pl.TASK_ID)
                    for branch in pl.parallel(B):
                        row: pl.Scalar[pl.INDEX] = (stage * B + branch) * TM
                        out, tid = pl.submit(self.stripe, data, row, out, deps=[tids_iter])
                        tids_next[branch] = tid
                    tids_phase = pl.yield_(tids_next)
                tids = pl.yield_(tids_phase)
        return out


@pl.program
class AtPhases:
    """The same fence with pl.at tasks and the functional form (update_element, arrays as loop values)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[ROWS, N], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, N], pl.FP32]]) -> pl.Tensor[[ROWS, N], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(B, pl.TASK_ID)
            for stage, (tids_iter, out_iter) in pl.range(STAGES, init_values=(tids, out)):
                tids_next = pl.array.create(B, pl.TASK_ID)
                for branch, (out_b, tids_b) in pl.parallel(B, init_values=(out_iter, tids_next)):
                    row: pl.Scalar[pl.INDEX] = (stage * B + branch) * TM
                    with pl.at(level=pl.Level.CORE_GROUP, deps=[tids_iter]) as tid:
                        t = pl.load(data, [row, 0], [TM, N])
                        out_n = pl.store(pl.exp(pl.adds(t, 1.0)), [row, 0], out_b)
                    tids_u = pl.array.update_element(tids_b, branch, tid)
                    out_o, tids_o = pl.yield_(out_n, tids_u)
                tids, out = pl.yield_(tids_o, out_o)
        return out


@pytest.mark.parametrize("prog", [SubmitPhases, AtPhases], ids=["submit", "pl_at"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_task_id_array_is_a_phase_fence(prog, platform):
    x = np.random.default_rng(0).standard_normal((ROWS, N)).astype(np.float32)
    out = np.zeros_like(x)
    c = _run(prog, platform, x, out, **({"num_workers": 4, "enable_trace": True} if platform == "cpu" else {}))
    np.testing.assert_allclose(out, np.exp(x + 1), rtol=1e-5)
    if platform == "cpu":  # every task of stage s + 1 starts after every task of stage s ended
        recs = sorted(c.last_run.trace.records, key=lambda r: r["task"])
        assert len(recs) == STAGES * B
        for s in range(STAGES - 1):
            done = max(r["end_ns"] for r in recs[s * B:(s + 1) * B])
            assert min(r["start_ns"] for r in recs[(s + 1) * B:(s + 2) * B]) >= done


def test_task_id_array_deps_reach_every_element():
    text = ir.python_print(SubmitPhases)
    assert "pl.task.begin([tids_iter_0, tids_iter_1, tids_iter_2, tids_iter_3]" in text
    assert "pl.const(-1, pl.INT64)" in text  # a TASK_ID array starts as "no task"


# ---------------------------------------------------------------------------------------------
# arrays of ints in a kernel


@pl.program
class KernelArray:
    """dst[row] = src[0] with row = idx[0, 0] round-tripped through an array (dynamic index), and
    slot 2 counting the rows by a loop (arrays carried through a loop and an if)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, idx: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[1, 32], pl.FP32],
               dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        it = pl.load(idx, [0, 0], [1, 8])
        st = pl.load(src, [0, 0], [1, 32])
        row: pl.Scalar[pl.INT32] = pl.tile.read(it, [0, 0])
        sel: pl.Scalar[pl.INT32] = pl.tile.read(it, [0, 1])
        arr = pl.array.create(4, pl.INT32)
        arr[sel] = row  # a run-time index
        arr[1] = arr[sel] + 1
        for _i in pl.range(3):
            arr[3] = arr[3] + 2
        if row > 100:
            arr[0] = 0
        else:
            arr[0] = arr[1]
        r0: pl.Scalar[pl.INDEX] = pl.cast(arr[0] - 1, pl.INDEX)
        r3: pl.Scalar[pl.INDEX] = pl.cast(arr[3], pl.INDEX)
        dst = pl.store(st, [r0, 0], dst)
        return pl.store(st, [r3, 0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, idx: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[1, 32], pl.FP32],
             dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        dst = self.kernel(idx, src, dst)
        return dst


@pytest.mark.parametrize("platform", PLATFORMS)
def test_int_array_in_a_kernel(platform):
    idx = np.array([[7, 2, 0, 0, 0, 0, 0, 0]], np.int32)
    src = np.arange(32, dtype=np.float32).reshape(1, 32)
    dst = np.zeros((32, 32), np.float32)
    _run(KernelArray, platform, idx, src, dst)
    want = np.zeros_like(dst)
    want[7] = src[0]  # arr[0] = arr[1] = arr[2] + 1 = 8 -> row 7
    want[6] = src[0]  # arr[3] = 0 + 3 * 2
    np.testing.assert_array_equal(dst, want)


# ---------------------------------------------------------------------------------------------
# partial ops


def _part_program(op: str, vr: int, vc: int):
    src = f'''
@pl.program
class Part:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32], valid_shapes=[{vr}, {vc}])
        return pl.store(pl.tile.{op}(ta, tb), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel(a, b, out)
        return out
'''
    return pl.parse_program(src)


_NP = {"part_add": np.add, "part_mul": np.multiply, "part_max": np.maximum, "part_min": np.minimum}


@pytest.mark.parametrize("op", sorted(_NP))
@pytest.mark.parametrize("valid", [(16, 32), (16, 9), (5, 32), (3, 7)])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_part_ops_combine_over_the_second_operands_valid_region(op, valid, platform):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((16, 32)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(a)
    _run(_part_program(op, *valid), platform, a, b, out)
    want = a.copy()
    vr, vc = valid
    want[:vr, :vc] = _NP[op](a[:vr, :vc], b[:vr, :vc])
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pl.function
def tensor_part(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
    return pl.part_max(pl.part_add(a, b), pl.tensor.part_min(a, b))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_part_ops_on_tensors_are_the_plain_ops(platform):
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((16, 32)).astype(np.float32) for _ in range(2))
    got = ir.compile(tensor_part)(a, b, config=RunConfig(platform=platform))
    np.testing.assert_allclose(got, np.maximum(a + b, np.minimum(a, b)), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# block queries, prefetch


@pl.program
class Queries:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(a, ctx)
        session = pl.prefetch.session(ctx)
        pl.prefetch.wait(evt, session)
        lane: pl.Scalar[pl.INDEX] = pl.cast(pl.get_subblock_idx(), pl.INDEX)
        lane2: pl.Scalar[pl.INDEX] = pl.cast(pl.tile.get_subblock_idx(), pl.INDEX)
        n: pl.Scalar[pl.INDEX] = pl.cast(pl.tensor.get_block_num(), pl.INDEX)
        b: pl.Scalar[pl.INDEX] = pl.cast(pl.tensor.get_block_idx(), pl.INDEX)
        t = pl.load(a, [lane + lane2 + b, 0], [16, 32])
        return pl.store(pl.muls(t, pl.cast(n, pl.FP32)), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel(a, out)
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_block_queries_and_prefetch_outside_a_grid(platform):
    a = np.random.default_rng(3).standard_normal((16, 32)).astype(np.float32)
    out = np.zeros_like(a)
    _run(Queries, platform, a, out)
    np.testing.assert_array_equal(out, a)  # lane 0, block 0 of 1; prefetching changes nothing


# ---------------------------------------------------------------------------------------------
# refusals


def _parse_error(body: str, params: str = "x: pl.Tensor[[16, 32], pl.FP32]") -> str:
    src = f"@pl.function\ndef f({params}) -> pl.Tensor[[16, 32], pl.FP32]:\n" + \
        "".join(f"    {line}\n" for line in body.splitlines()) + "    return x\n"
    with pytest.raises(pl.ParserError) as e:
        pl.parse(src)
    return str(e.value)


@pytest.mark.parametrize("body, message", [
    ("a = pl.array.create(0, pl.INT32)", "extent must be in 1..4096"),
    ("n = 4.0\na = pl.array.create(n, pl.INT32)", "extent must be a Python int"),
    ("a = pl.array.create(4, pl.FP32)", "must be an integer type, pl.BOOL or pl.TASK_ID"),
    ("a = pl.array.create(4, pl.INT32)\na[4] = 1", "out of range for an array of 4 elements"),
    ("a = pl.array.create(4, pl.INT32)\na[0] = 1.5", "holds an integer scalar"),
    ("a = pl.array.create(4, pl.INT32)\nb = pl.array.create(2, pl.INT32)\na = b",
     "cannot become one of 2 INT32"),
    ("a = pl.array.create(4, pl.INT32)\nv = a[0:2]", "takes one integer index"),
    ("a = pl.array.create(4, pl.INT32)\nx = pl.add(x, a)", "ArrayRef"),
    ("e = pl.prefetch.wait(1, 2)", "must be a prefetch event"),
    ("y = pl.part_add(x, pl.reshape(x, [32, 16]))", "the operands need the same shape"),
])
def test_refusals_name_the_problem(body, message):
    assert message in _parse_error(body)


def test_refusals_carry_the_source_line():
    with pytest.raises(pl.ParserError) as e:
        pl.parse("@pl.function\ndef f(x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
                 "    a = pl.array.create(4, pl.INT32)\n    a[7] = 1\n    return x\n")
    assert e.value.span.begin_line == 4
