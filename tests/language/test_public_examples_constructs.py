"""Constructs the public project's examples (hw-native-sys/pypto `examples/`, run by
tools/run_public_examples.py) rely on, each exercised by a small program of our own:

- slices whose bounds share a variable (`x[c + 64:c + 128]`, `x[k * 4:(k + 1) * 4]`) have a static
  extent (the Qwen3 decode layer's RoPE kernel);
- `pl.TensorView(...)` as the third item of a `pl.Tensor[...]` parameter annotation (dynamic paged
  attention);
- `Program.functions` read as a map, `node.as_python()`;
- `pl.parse` errors that are also `ValueError` / `SyntaxError`;
- `ChipWorker.aicpu_dlopen_count`;
- a `@pl.jit` whose Out parameter is rebound (its write dropped) is refused with
  `PartialCodegenError`.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.annotations import AnnotationError
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

PLATFORMS = ["interp", pytest.param("cpu", marks=pytest.mark.native)]
HEADS, DIM, HALF = 4, 32, 16


@pl.program
class RotateHalves:
    """Per head h: out swaps the two halves of x's columns h*DIM .. (h+1)*DIM, dbl doubles them (the
    slices' bounds all mention the loop variable; only their differences are static)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, HEADS * DIM], pl.FP32], out: pl.Out[pl.Tensor[[2, HEADS * DIM], pl.FP32]],
             dbl: pl.Out[pl.Tensor[[2, HEADS * DIM], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for h in pl.range(HEADS):
                col = h * DIM
                lo = x[0:2, col:col + HALF]
                hi = x[0:2, col + HALF:col + DIM]  # extent (col + 32) - (col + 16) = 16
                out = pl.assemble(out, pl.mul(hi, 1.0), [0, col])
                out = pl.assemble(out, pl.mul(lo, 1.0), [0, col + HALF])
                dbl = pl.assemble(dbl, pl.mul(x[0:2, h * DIM:(h + 1) * DIM], 2.0), [0, col])  # (h+1)*32 - h*32
        return out, dbl


@pytest.mark.native  # (ir.compile builds the CPU library even for an interpreter run)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_slices_whose_variables_cancel_have_static_extents(platform):
    x = np.arange(2 * HEADS * DIM, dtype=np.float32).reshape(2, HEADS * DIM)
    out, dbl = np.zeros_like(x), np.zeros_like(x)
    ir.compile(RotateHalves)(x, out, dbl, config=RunConfig(platform=platform))
    want = x.reshape(2, HEADS, 2, HALF)[:, :, ::-1, :].reshape(2, HEADS * DIM)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(dbl, 2 * x)


def test_slice_extent_folds_affine_bounds():
    from pypto.ir.dtype import DataType
    from pypto.ir.expr import Add, ConstInt, Mul, Var
    from pypto.ir.types import ScalarType
    from pypto.language.parser.affine import static_extent

    k = Var("k", ScalarType(DataType.INDEX))
    c = lambda v: ConstInt(v, DataType.INDEX)  # noqa: E731
    assert static_extent(Add(k, c(128), DataType.INDEX), Add(k, c(64), DataType.INDEX)) == 64
    assert static_extent(Mul(Add(k, c(1), DataType.INDEX), c(4), DataType.INDEX), Mul(k, c(4), DataType.INDEX)) == 4
    assert static_extent(Mul(k, k, DataType.INDEX), k) is None  # not affine
    assert static_extent(Add(k, c(8), DataType.INDEX), c(0)) is None  # the variable does not cancel


def test_an_empty_symbolic_slice_is_an_error_at_its_line():
    with pytest.raises(ParserTypeError, match="empty") as e:
        @pl.program
        class Empty:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[2, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 8], pl.FP32]]):
                with pl.at(level=pl.Level.CORE_GROUP):
                    for h in pl.range(2):
                        out = pl.assemble(out, x[0:2, h + 8:h + 8], [0, 0])
                return out
    assert e.value.span is not None and e.value.span.begin_line > 0


# ---- pl.TensorView in a parameter annotation -------------------------------------------------

VALID = pl.dynamic("VALID")


@pl.program
class MaskedRowMax:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Tensor[[8, 32], pl.FP32, pl.TensorView(valid_shape=[8, VALID], layout=pl.TensorLayout.ND)],
          n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        t = pl.load(s, [0, 0], [8, 32], valid_shape=[8, n])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
        return pl.store(pl.mul(t, 1.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[8, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        return self.k(s, n, out)


@pytest.mark.native
@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_view_annotation_compiles_and_runs(platform):
    s = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    out = np.zeros_like(s)
    ir.compile(MaskedRowMax)(s, 20, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out[:, :20], s[:, :20])
    assert np.all(out[:, 20:] < -1e30)  # padded with the dtype's minimum


def test_tensor_view_layout_and_stride_checks():
    ann = pl.Tensor[[16, 8], pl.FP32, pl.TensorView(stride=[1, 16], layout=pl.TensorLayout.DN)]
    assert ann.layout is pl.TensorLayout.DN
    assert pl.Tensor[[16, 8], pl.FP32, pl.TensorView(stride=[8, 1], layout=pl.TensorLayout.ND)].layout \
        is pl.TensorLayout.ND
    with pytest.raises(AnnotationError, match="packed stride"):
        pl.Tensor[[16, 8], pl.FP32, pl.TensorView(stride=[16, 1], layout=pl.TensorLayout.ND)]
    with pytest.raises(AnnotationError, match="valid_shape has 1 dims"):
        pl.Tensor[[16, 8], pl.FP32, pl.TensorView(valid_shape=[4], layout=pl.TensorLayout.ND)]
    with pytest.raises(AnnotationError, match="layout is required"):  # (as the public factory says)
        pl.TensorView(valid_shape=[16, 8])


# ---- Program.functions as a map, as_python, pl.parse errors ---------------------------------

def test_program_functions_read_as_a_map_and_walkers_still_see_a_tuple():
    prog = MaskedRowMax
    fns = prog.functions
    assert [f.name for f in fns.values()] == ["k", "main"] == [f.name for f in fns]
    assert [g.name for g in fns.keys()] == ["k", "main"]
    assert fns["main"] is fns[1] and fns[ir.GlobalVar("k")] is fns[0]
    assert "main" in fns and "nope" not in fns and fns[0] in fns
    assert {g.name: f.name for g, f in fns.items()} == {"k": "k", "main": "main"}
    with pytest.raises(KeyError, match="nope"):
        fns["nope"]
    again = ir.deserialize(ir.serialize(prog))
    ir.assert_structural_equal(prog, again)
    assert type(again.functions).__name__ == "FunctionTable"
    text = prog.as_python()
    assert text == ir.python_print(prog) and "class MaskedRowMax" in text
    assert fns["k"].as_python(concise=True) == ir.python_print(fns["k"], "pl", True)
    assert [p.name_hint for p in fns["main"].params] == ["s", "n", "out"]  # (the public IR's spelling)
    ir.assert_structural_equal(pl.parse(text), prog)


def test_parse_errors_are_value_and_syntax_errors():
    with pytest.raises(ValueError, match="no @pl.program"):
        pl.parse("x = 42\n")
    two = ("@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:\n    return x\n\n"
           "@pl.function\ndef g(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:\n    return x\n")
    with pytest.raises(ValueError, match=r"2 functions \(f, g\)"):
        pl.parse(two)
    with pytest.raises(SyntaxError, match="invalid Python syntax"):
        pl.parse("@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    return x +\n")
    assert pl.parse(two.split("\n\n")[0]).name == "f"


# ---- runtime: ChipWorker's load counter; @pl.jit refuses a dropped Out write ----------------

@pl.jit
def _add_one(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, 1.0)
    return out


@pl.jit
def _dropped_write(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.add(a, 1.0)  # rebinds the name: the caller's buffer is never written
    return out


@pytest.mark.native
def test_chip_worker_counts_each_program_it_loads_once():
    import torch

    from pypto.runtime import ChipWorker

    a = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    out = torch.zeros_like(a)
    compiled = _add_one.compile(a, out)
    with ChipWorker(config=RunConfig()) as worker:
        assert worker.aicpu_dlopen_count == 0
        h = worker.register(compiled)
        assert worker.aicpu_dlopen_count == 1
        for _ in range(3):
            h(a, out)
        worker.run(compiled, a, out)
        assert worker.aicpu_dlopen_count == 1
    assert torch.equal(out, a + 1)
    assert worker.aicpu_dlopen_count == 0  # (closed)


@pytest.mark.native
def test_jit_refuses_an_out_parameter_whose_write_is_dropped():
    import torch

    from pypto.backend.pto_backend import PartialCodegenError

    a = torch.ones(8, 8)
    out = torch.zeros(8, 8)
    with pytest.raises(PartialCodegenError, match=r"out\[:\] = expr"):
        _dropped_write(a, out, config=RunConfig())
    _add_one(a, out, config=RunConfig())  # the subscript form writes through
    assert torch.equal(out, a + 1)


# ---- the March 2026 run(program, tensor_specs, golden, config) ------------------------------

@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return self.k(a, f)


@pytest.mark.native
@pytest.mark.parametrize("platform", PLATFORMS)
def test_march_run_with_specs_and_golden_reports_a_run_result(platform):
    import torch

    from pypto.runtime import TensorSpec, run

    specs = [TensorSpec("a", [16, 16], torch.float32, init_value=2.0),
             TensorSpec("f", [16, 16], torch.float32, is_output=True)]

    def golden(tensors, params=None):
        tensors["f"][:] = tensors["a"] + 1

    def wrong(tensors, params=None):
        tensors["f"][:] = tensors["a"] + 2

    cfg = RunConfig(platform=platform, rtol=1e-5, atol=1e-5)
    ok = run(AddOne, specs, golden, cfg)  # positional, as the March examples call it
    assert ok.passed and ok.error is None and str(ok).startswith("PASS"), ok
    bad = run(program=AddOne, tensor_specs=specs, golden=wrong, config=cfg)
    assert not bad.passed and "output 'f' does not match the golden: 256/256" in bad.error
    broken = run(AddOne, [TensorSpec("a", [8, 8], torch.float32), specs[1]], golden, cfg)
    assert not broken.passed and broken.error  # a wrong shape: reported in the result, not raised


# ---- the older IR-builder API: ir.op.<level>.<op>, Expr arithmetic, declare_function ---------

def test_ir_op_namespaces_build_typed_calls_and_scalar_arithmetic():
    from pypto.ir import IRBuilder
    from pypto.ir.dtype import DataType
    from pypto.ir.types import ScalarType, TensorType
    from pypto.language.errors import ParserTypeError as PTE

    ib = IRBuilder()
    with ib.program("P") as prog:
        gv = prog.declare_function("f")
        assert isinstance(gv, ir.GlobalVar) and gv.name == "f"
        with ib.function("f") as f:
            x = f.param("x", TensorType((64, 128), DataType.FP32))
            n = f.param("n", ScalarType(DataType.INT64))
            f.return_type(TensorType((32, 128), DataType.FP32))
            t = ib.let("t", ir.op.tensor.create([64, 128], DataType.FP32))
            m = ib.let("m", ir.op.tensor.row_max(x))
            s = ib.let("s", ir.op.tensor.slice(x, [32, 128], [0, 0]))
            k = ib.let("k", n * 2 + 1 - n // 4 % 3)
            ib.return_stmt(s)
        prog.add_function(f.get_result())
    assert str(t.type) == "pl.Tensor[[64, 128], pl.FP32]" and str(m.type) == "pl.Tensor[[64, 1], pl.FP32]"
    assert k.type == ScalarType(DataType.INT64)
    assert (-n).type == ScalarType(DataType.INT64) and (1.5 * n).type.dtype is DataType.FP32
    text = prog.get_result().as_python()
    assert "n * pl.const(2, pl.INT64) + pl.const(1, pl.INT64) - n // pl.const(4, pl.INT64)" in text
    assert "pl.tensor.row_max(x)" in text
    ir.assert_structural_equal(pl.parse(text), prog.get_result())
    assert ir.op.tile.add is not None and ir.op.block.load is not None
    with pytest.raises(AttributeError, match="no op 'nope'"):
        ir.op.tensor.nope
    with pytest.raises(PTE, match="window dimension 0 is 128"):  # the language's checks, at this line
        ir.op.tensor.slice(x, [128, 128], [0, 0])
    with pytest.raises(TypeError):
        x * 2  # tensors have no operators here
