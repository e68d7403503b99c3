"""`ir.compile` as the seed guide shows it: every strategy and backend type compiles and runs; the
output directory holds what the docs say; the result is a path and a callable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy
from pypto.runtime import RunConfig


@pl.program
class SoftmaxRows:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 64])
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
        return pl.store(pl.row_expand_div(e, pl.row_sum(e)), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = pl.create_tensor([32, 64], dtype=pl.FP32)
        return self.softmax(x, out)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.native
@pytest.mark.parametrize("strategy", [OptimizationStrategy.Default, OptimizationStrategy.PTOAS])
@pytest.mark.parametrize("backend", list(BackendType))
def test_seed_compile_example_every_strategy_and_backend(tmp_path, monkeypatch, strategy, backend, capsys):
    from pypto.config import config

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(config, "output_root", Path("build_output"))  # (the default; tests put it elsewhere)
    output_dir = ir.compile(
        SoftmaxRows,
        output_dir=None,                         # auto-created
        strategy=strategy,
        dump_passes=True,                        # print the IR after each pass
        backend_type=backend,
    )
    assert isinstance(output_dir, (str, os.PathLike))
    out = Path(output_dir)
    assert out.is_dir() and out.parent.name == "build_output"
    dumps = sorted(p.name for p in (out / "passes_dump").glob("*.py"))  # (next to them: .diff files, index.json)
    assert dumps[0] == "00_frontend.py" and any(d.endswith("_after_ConvertToSSA.py") for d in dumps)
    assert any(d.endswith("_after_InsertSync.py") for d in dumps) == (strategy is OptimizationStrategy.Default)
    for d in dumps:  # every dump parses back
        pl.loads(out / "passes_dump" / d)
    assert "# ===== IR 00_frontend =====" in capsys.readouterr().out
    assert (out / "kernels" / "softmax.pto").exists() and (out / "orchestration" / "main.pto").exists()
    assert json.loads((out / "report" / "memory.json").read_text())["kernels"]
    if backend is BackendType.CCE:
        assert (out / "kernels" / "softmax.cpp").exists()
    x = np.random.default_rng(0).standard_normal((32, 64), dtype=np.float32)
    np.testing.assert_allclose(output_dir(x), _softmax(x), rtol=1e-5, atol=1e-6)
    got = output_dir(x, config=RunConfig(platform="interp"))
    np.testing.assert_allclose(got, _softmax(x), rtol=1e-5, atol=1e-6)


@pytest.mark.native
def test_skip_ptoas_stops_at_pto_text(tmp_path):
    c = ir.compile(SoftmaxRows, output_dir=tmp_path / "o", skip_ptoas=True)
    assert (tmp_path / "o" / "kernels" / "softmax.pto").exists()
    assert not (tmp_path / "o" / "native").exists()
    x = np.ones((32, 64), np.float32)
    np.testing.assert_allclose(c(x), np.full((32, 64), 1 / 64, np.float32), rtol=1e-6)  # builds on first call


@pytest.mark.native
def test_compiled_program_is_a_path(tmp_path):
    c = ir.compile(SoftmaxRows, output_dir=tmp_path / "o")
    assert os.fspath(c) == str(tmp_path / "o")
    assert Path(c) == tmp_path / "o"
    assert os.path.join(c, "kernels") == str(tmp_path / "o" / "kernels")
    assert c + "/x" == str(tmp_path / "o") + "/x"


@pytest.mark.native
def test_compile_a_single_function(tmp_path):
    @pl.function
    def example(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        result: pl.Tensor[[64], pl.FP32] = pl.add(result, 1.0)
        return result

    c = ir.compile(example, output_dir=tmp_path / "o")
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(c(x), x * 2 + 1)


@pytest.mark.native
def test_verification_level_roundtrip(tmp_path):
    c = ir.compile(SoftmaxRows, output_dir=tmp_path / "o", verification_level="ROUNDTRIP")
    x = np.zeros((32, 64), np.float32)
    np.testing.assert_allclose(c(x), np.full((32, 64), 1 / 64, np.float32), rtol=1e-6)


def test_unknown_options_are_errors(tmp_path):
    with pytest.raises(TypeError, match="unexpected option"):
        ir.compile(SoftmaxRows, output_dir=tmp_path / "o", optimise=True)
    with pytest.raises(ValueError, match="unknown strategy"):
        ir.compile(SoftmaxRows, output_dir=tmp_path / "o", strategy="Fast")
    with pytest.raises(ValueError, match="unknown backend type"):
        ir.compile(SoftmaxRows, output_dir=tmp_path / "o", backend_type="GPU")


@pytest.mark.native
def test_cached_compile_is_equivalent(tmp_path):
    c1 = ir.compile(SoftmaxRows, output_dir=tmp_path / "a")
    c2 = ir.compile(SoftmaxRows, output_dir=tmp_path / "b")
    assert c2.timings.get("cached")
    assert (tmp_path / "b" / "kernels" / "softmax.pto").read_text() == (tmp_path / "a" / "kernels" /
                                                                       "softmax.pto").read_text()
    x = np.random.default_rng(1).standard_normal((32, 64), dtype=np.float32)
    np.testing.assert_array_equal(c1(x), c2(x))
    ir.assert_structural_equal(c1.program, c2.program, enable_auto_mapping=True)


@pytest.mark.native
def test_recompiling_into_the_same_output_dir_replaces_it(tmp_path):
    @pl.function
    def first(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.add(a, 1.0)

    @pl.function
    def second(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.mul(a, 3.0)

    out = tmp_path / "o"
    c1 = ir.compile(first, output_dir=out, dump_passes=True)
    c = ir.compile(second, output_dir=out)
    x = np.ones((16, 16), np.float32)
    np.testing.assert_array_equal(c(x), x * 3)
    np.testing.assert_array_equal(c1(x), x + 1)  # the earlier object keeps its own program (native)
    from pypto.runtime import RunConfig

    np.testing.assert_array_equal(c1(x, config=RunConfig(platform="interp")), x + 1)  # and its own PTO text
    assert len(list((out / "orchestration").glob("*.pto"))) == 1
    assert not (out / "passes_dump").exists()  # the first compile's dumps are gone


def test_a_directory_not_written_by_a_compile_is_refused_untouched(tmp_path):
    @pl.function
    def f(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.add(a, 1.0)

    mine = tmp_path / "project" / "kernels" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("user data")
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "project").rglob("*"))
    from pypto.compile.output import OutputDirError

    for _ in range(2):
        with pytest.raises(OutputDirError, match="not empty and no compile wrote it"):
            ir.compile(f, output_dir=tmp_path / "project")
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "project").rglob("*")) == before
    assert mine.read_text() == "user data"


@pytest.mark.native
def test_files_added_to_an_output_dir_survive_recompiles(tmp_path):
    @pl.function
    def f(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.add(a, 1.0)

    out = tmp_path / "o"
    ir.compile(f, output_dir=out)
    mine = out / "kernels" / "notes.txt"
    mine.write_text("user data")
    (out / "results.csv").write_text("1,2")
    ir.compile(f, output_dir=out, dump_passes=True)
    ir.compile(f, output_dir=out)  # (replaces only what a compile recorded as its own)
    assert mine.read_text() == "user data" and (out / "results.csv").read_text() == "1,2"
    assert not (out / "passes_dump").exists()


@pytest.mark.native
def test_dumps_of_a_chunked_unroll_parse_back(tmp_path, capsys):
    @pl.function
    def c2(x: pl.Tensor[[24, 32], pl.FP32], out: pl.Out[pl.Tensor[[24, 32], pl.FP32]]) -> pl.Tensor[[24, 32], pl.FP32]:
        with pl.auto_incore():
            for i in pl.unroll(0, 5, chunk=2):
                out = pl.assemble(out, pl.exp(pl.view(x, [4, 32], [i * 4, 0])), [i * 4, 0])
        return out

    c = ir.compile(c2, output_dir=tmp_path / "o", dump_passes=True)
    dumps = sorted((tmp_path / "o" / "passes_dump").glob("*.py"))
    assert len(dumps) > 10
    for f in dumps:
        pl.loads(f)  # (a chunked unroll carries values once in SSA form)
    x = np.random.default_rng(0).standard_normal((24, 32)).astype(np.float32)
    out = np.zeros_like(x)
    c(x, out)
    np.testing.assert_allclose(out[:20], np.exp(x[:20]), rtol=1e-6)
