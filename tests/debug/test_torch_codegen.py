"""`pypto.debug.torch_codegen`: the generated PyTorch code runs and computes what the program does.

Each program is generated at the level the parser gives and after the Default pass pipeline, run
with torch tensors, and compared with NumPy; the `native` tests also compare with our compiled run
(CPU backend and interpreter).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.debug import torch_codegen
from pypto.debug.torch_rt import TorchRuntimeError
from pypto.errors import InvalidType
from pypto.passes.pass_manager import OptimizationStrategy, PassManager
from pypto.runtime import RunConfig
from tests.programs.axpy import Axpy

N = pl.dynamic("N")


@pl.program
class Elementwise:
    @pl.function
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        return pl.add(pl.exp(pl.mul(x, 0.5)), pl.sub(y, 1.0))


@pl.program
class Reductions:
    @pl.function
    def main(self, x: pl.Tensor[[16, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]
             ) -> pl.Tensor[[16, 128], pl.FP32]:
        m = pl.row_max(x)
        e = pl.exp(pl.row_expand_sub(x, m))
        out = pl.assemble(out, pl.row_expand_div(e, pl.row_sum(e)), [0, 0])
        return out


@pl.program
class MatmulLoop:
    """c[:, blk] += a @ b[:, blk] over 4 column blocks, inside a pl.at scope (loop-carried c)."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
             c: pl.Tensor[[32, 128], pl.FP32]) -> pl.Tensor[[32, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(0, 4):
                prev = pl.slice(c, [32, 32], [0, i * 32])
                c = pl.assemble(c, pl.add(prev, pl.matmul(a, pl.slice(b, [64, 32], [0, i * 32]))), [0, i * 32])
        return c


@pl.program
class TileKernel:
    """An InCore kernel on tiles with an if on a scalar and a loop carrying a tile."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], flag: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        acc = pl.mul(t, 0.0)
        for k in pl.range(3):
            acc = pl.add(acc, t)
        if flag > 0:
            r = pl.mul(acc, 2.0)
        else:
            r = pl.neg(acc)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], flag: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.kernel(x, flag, out)
        return out


@pl.program
class ClippedLoad:
    """A view cut short by its tensor's end, loaded whole: the max and sum see only its valid part."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32], mx: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
               sm: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 128])
        mx = pl.store(pl.row_max(t), [0, 0], mx)
        sm = pl.store(pl.row_sum(t), [0, 0], sm)
        return mx, sm

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX],
             mx: pl.Out[pl.Tensor[[16, 1], pl.FP32]], sm: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
        mx, sm = self.kernel(pl.slice(x, [16, n], [0, 0]), mx, sm)
        return mx, sm


@pl.program
class Bf16Rows:
    @pl.function
    def main(self, x: pl.Tensor[[N, 64], pl.BF16]) -> pl.Tensor[[N, 64], pl.FP32]:
        return pl.mul(pl.cast(x, target_type=pl.FP32), 3.0)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _run(program, *args, passes: bool = False, check_shapes: bool = True):
    """Generate (optionally after the Default pipeline), exec, call `main` with torch tensors."""
    if passes:
        program = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(program)
    code = torch_codegen(program, check_shapes=check_shapes)
    ns: dict = {}
    exec(compile(code, "<torch_codegen>", "exec"), ns)  # noqa: S102
    return ns["main"](*[torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]), code


LEVELS = pytest.mark.parametrize("passes", [False, True], ids=["parsed", "after_passes"])


@LEVELS
def test_elementwise(passes):
    x, y = _rng().standard_normal((2, 32, 64), dtype=np.float32)
    got, code = _run(Elementwise, x, y, passes=passes)
    np.testing.assert_allclose(got.numpy(), np.exp(x * 0.5) + (y - 1.0), rtol=1e-6)
    assert "_rt.check_shape(x, (32, 64), _dt.FP32" in code


@LEVELS
def test_row_reductions_write_the_output_in_place(passes):
    x = _rng(1).standard_normal((16, 128), dtype=np.float32)
    out = np.zeros_like(x)
    got, _ = _run(Reductions, x, out, passes=passes)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5)  # (the caller's array)
    np.testing.assert_allclose(got.numpy(), out)


@LEVELS
def test_matmul_in_a_loop_with_iter_args_and_a_scope(passes):
    a, b, c = (_rng(2).standard_normal(s, dtype=np.float32) for s in ((32, 64), (64, 128), (32, 128)))
    want = c + a @ b
    _, code = _run(MatmulLoop, a, b, c, passes=passes)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    assert ("for i in range(0, 4, 1)" in code) or passes


@LEVELS
@pytest.mark.parametrize("flag", [1, 0])
def test_tile_kernel_with_if_and_loop(passes, flag):
    x = _rng(3).standard_normal((16, 64), dtype=np.float32)
    out = np.zeros_like(x)
    _run(TileKernel, x, flag, out, passes=passes)
    np.testing.assert_allclose(out, 6 * x if flag else -3 * x, rtol=1e-6)


def test_valid_region_of_a_clipped_view():
    x = -np.abs(_rng(4).standard_normal((16, 128), dtype=np.float32)) - 1.0  # all negative: padding would win a max
    mx, sm = np.zeros((16, 1), np.float32), np.zeros((16, 1), np.float32)
    _run(ClippedLoad, x, 72, mx, sm)
    np.testing.assert_allclose(mx, x[:, :72].max(axis=1, keepdims=True))
    np.testing.assert_allclose(sm, x[:, :72].sum(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("rows", [16, 37])
def test_dynamic_shapes(rows):
    x, y = (_rng(5).standard_normal((rows, 32), dtype=np.float32) for _ in range(2))
    out = np.zeros_like(x)
    _, code = _run(Axpy, x, y, 2.5, out)
    np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
    assert "M = x.shape[0]" in code


def test_bf16_and_dynamic_rows():
    x = torch.randn(24, 64).to(torch.bfloat16)
    got, _ = _run(Bf16Rows, x)
    torch.testing.assert_close(got, x.float() * 3.0)


def test_one_function():
    @pl.function
    def f(x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        return pl.abs(x)

    code = torch_codegen(f)
    ns: dict = {}
    exec(code, ns)  # noqa: S102
    x = torch.randn(8, 16)
    torch.testing.assert_close(ns["f"](x), x.abs())
    assert "check_shape" not in code  # (only with check_shapes=True)


def test_check_shapes_rejects_a_wrong_argument():
    with pytest.raises(AssertionError, match=r"parameter x: expected shape \[32, 64\], got \[32, 63\]"):
        _run(Elementwise, np.zeros((32, 63), np.float32), np.zeros((32, 64), np.float32))


def test_runtime_errors_name_the_op_and_line():
    @pl.function
    def f(x: pl.Tensor[[8, 16], pl.FP32], y: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        return pl.add(x, y)

    ns: dict = {}
    exec(torch_codegen(f), ns)  # noqa: S102
    with pytest.raises(TorchRuntimeError, match=r"test_torch_codegen.py:\d+: tensor.add failed"):
        ns["f"](torch.zeros(8, 16), torch.zeros(3, 5))


@pytest.mark.parametrize("bad", [42, "program", None, Elementwise.functions[0].body])
def test_not_a_program_or_function(bad):
    with pytest.raises(InvalidType, match="torch_codegen takes a pypto.ir.Program or pypto.ir.Function"):
        torch_codegen(bad)


# --- against our compiled run


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_matches_the_compiled_program(platform):
    x = _rng(6).standard_normal((16, 128), dtype=np.float32)
    want = np.zeros_like(x)
    ir.compile(Reductions)(x, want, config=RunConfig(platform=platform))
    out = np.zeros_like(x)
    _run(Reductions, x, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)

    a, b, c = (_rng(7).standard_normal(s, dtype=np.float32) for s in ((32, 64), (64, 128), (32, 128)))
    c_compiled = ir.compile(MatmulLoop)(a, b, c.copy(), config=RunConfig(platform=platform))
    _run(MatmulLoop, a, b, c, passes=True)
    np.testing.assert_allclose(c, np.asarray(c_compiled), rtol=1e-4, atol=1e-4)


def test_the_doc_runs_as_written(capsys, tmp_path):
    """docs/debugging.md's example: the parsed and the lowered softmax give torch's numbers."""
    import re
    import runpy
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "debugging.md").read_text()
    script = tmp_path / "debugging_example.py"  # (pl.program reads its source from a file)
    script.write_text(re.findall(r"```python\n(.*?)```", text, re.S)[0])
    runpy.run_path(str(script))
    assert "def main(x, out):" in capsys.readouterr().out


@pl.function
def count_up(n: pl.Scalar[pl.INDEX], x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
    k = 0
    while k < n:
        k = k + 1
        if k * x > 12:
            break
    return k


@pl.program
class ReadScalar:
    """A scalar read from a tensor bounds a loop in the task program; an element is written back."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lens: pl.Tensor[[4], pl.INT32], acc: pl.Tensor[[2], pl.INT64]) -> pl.Tensor[[2], pl.INT64]:
        n = pl.tensor.read(lens, [2])
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(0, n):
            s = s + i
        acc[1] = s
        return acc


def _python_count_up(n, x):
    k = 0
    while k < n:
        k += 1
        if k * x > 12:
            break
    return k


@pytest.mark.parametrize("ssa", [False, True], ids=["parsed", "ssa"])
def test_while_with_break_on_scalars(ssa):
    fn = count_up
    if ssa:  # the front passes: the break becomes a flag, the loop's values iter_args
        from pypto import passes

        front = [p for p in passes.pipeline() if p.name in ("UnrollLoops", "CtrlFlowTransform", "ConvertToSSA")]
        fn = PassManager(front).run_passes(ir.Program("P", (count_up,))).functions[0]
    ns: dict = {}
    exec(torch_codegen(fn), ns)  # noqa: S102
    for n, x in ((10, 1), (10, 5), (0, 3), (3, 100)):
        assert ns["count_up"](n, x) == _python_count_up(n, x)


def test_scalar_read_bounds_a_loop_and_an_element_is_written():
    lens = np.array([5, 6, 7, 8], np.int32)
    acc = np.zeros(2, np.int64)
    _run(ReadScalar, lens, acc)
    assert acc.tolist() == [0, sum(range(7))]
