"""`@pl.jit` and its family: specialisation, the cache, compile / lower / signature mode, deps,
errors. Runs on the interpreter (RunConfig(platform="interp") compiles no C++); the native
backend's runs are in test_jit_native.py."""

from __future__ import annotations

import ast

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig
from tests.programs.jit_kernels import (  # noqa: F401
    INTERP,
    ROWS,
    add,
    copy_dyn,
    deps_entry,
    plus_one,
    scale_rows,
    sig_mode,
    twice_inline,
)


def _f32(*shape: int, fill: float | None = None) -> torch.Tensor:
    return torch.full(shape, fill) if fill is not None else torch.randn(*shape)


def test_call_runs_in_place_returns_none_and_caches_per_shape():
    add._cache.clear()
    a, b, c = _f32(32, 32), _f32(32, 32), torch.zeros(32, 32)
    assert add(a, b, c, config=INTERP) is None
    torch.testing.assert_close(c, a + b)
    a2, b2, c2 = _f32(32, 32), _f32(32, 32), torch.zeros(32, 32)
    add(a2, b2, c2, config=INTERP)  # warm: the call plan
    torch.testing.assert_close(c2, a2 + b2)
    assert len(add._cache) == 1
    a3, c3 = _f32(16, 64), torch.zeros(16, 64)
    add(a3, a3, c3, config=INTERP)
    torch.testing.assert_close(c3, a3 + a3)
    assert len(add._cache) == 2
    (k1, cp1), (k2, _) = add._cache.items()
    assert isinstance(cp1, ir.CompiledProgram) and k1 != k2 and hash(k1) != hash(k2)


def test_cache_clear_forces_recompilation_and_numpy_arguments_work():
    add._cache.clear()
    a = np.ones((16, 16), np.float32)
    c = np.zeros((16, 16), np.float32)
    add(a, a, c, config=INTERP)
    first = next(iter(add._cache.values()))
    add._cache.clear()
    add(a, a, c, config=INTERP)  # the plan is stale: compiles again
    assert len(add._cache) == 1 and next(iter(add._cache.values())) is not first
    np.testing.assert_array_equal(c, 2 * a)


def test_platform_is_part_of_the_key():
    add._cache.clear()
    a, c = _f32(16, 16), torch.zeros(16, 16)
    add(a, a, c, config=INTERP)
    add.compile(a, a, c, config=RunConfig(platform="interp", memory_planner=ir.MemoryPlanner.PTOAS))
    assert len(add._cache) == 2


def test_scalar_literal_and_python_constant():
    scale_rows._cache.clear()
    a, out = _f32(64, 32), torch.zeros(64, 32)
    scale_rows(a, out, 2, 3.0, config=INTERP)
    torch.testing.assert_close(out[:32], a[:32] * 3.0)
    assert bool((out[32:] == 0).all())
    scale_rows(a, out, 4, 0.5, config=INTERP)
    torch.testing.assert_close(out, a * 0.5)
    assert len(scale_rows._cache) == 2  # scalar values are in the key
    cp = next(iter(scale_rows._cache.values()))
    assert cp.param_names == ["a", "out", "n"]  # the Python constant is no parameter of the program


def test_dynamic_dim_one_artifact_for_every_extent():
    copy_dyn._cache.clear()
    for rows in (64, 56, 48):  # (the loop covers 64 rows: a window starting past the end is refused)
        a, out = _f32(rows, 32), torch.zeros(rows, 32)
        copy_dyn(a, out, config=INTERP)
        torch.testing.assert_close(out, a)
    assert len(copy_dyn._cache) == 1
    key = next(iter(copy_dyn._cache))
    assert (("a", ((None, 32), "FP32", "ND")) in key.call[0])


def test_incore_and_inline_deps_specialised_at_their_call_sites():
    deps_entry._cache.clear()
    src, mid, out = _f32(64, 32), torch.zeros(32, 32), torch.zeros(32, 32)
    deps_entry(src, mid, out, config=INTERP)
    torch.testing.assert_close(mid, src[:32] + 1)
    torch.testing.assert_close(out, (src[:32] + 1) * 2)
    prog = next(iter(deps_entry._cache.values())).source_program
    kinds = {f.name: f.func_type for f in prog.functions}
    assert kinds["plus_one"] is ir.FunctionType.InCore and "twice_inline" not in kinds
    assert [d.__name__ for d in deps_entry.deps()] == ["plus_one", "twice_inline"]


def test_compile_returns_the_cached_object_and_lower_gives_post_pass_ir():
    add._cache.clear()
    a, c = _f32(16, 16), torch.zeros(16, 16)
    cp = add.compile(a, a, c, config=INTERP)
    assert add.compile(a, a, c, config=INTERP) is cp and list(add._cache.values()) == [cp]
    add(a, a, c, config=INTERP)
    assert len(add._cache) == 1
    low = add.lower(a, a, c)
    assert isinstance(low, ir.Program)
    assert any(f.func_type is ir.FunctionType.InCore for f in low.functions)
    assert len(add._cache) == 1  # lower does not touch the cache


def test_signature_mode_with_runtime_scalar():
    sig_mode._cache.clear()
    cp = sig_mode.compile(config=INTERP)
    assert cp.param_names == ["x", "out", "n"]
    x, out = _f32(64, 32), torch.zeros(64, 32)
    cp(x, out, 3, config=INTERP)  # n supplied at dispatch
    torch.testing.assert_close(out[:48], x[:48])
    assert bool((out[48:] == 0).all())
    with pytest.raises(TypeError, match="pl.RUNTIME"):
        sig_mode(x, out, pl.RUNTIME, config=INTERP)
    with pytest.raises(TypeError, match="bare pl.Tensor"):
        add.compile(config=INTERP)


def test_debug_run_script_is_written():
    add._cache.clear()
    a, c = _f32(16, 8), torch.zeros(16, 8)
    add(a, a, c, config=INTERP)
    text = (next(iter(add._cache.values())).output_dir / "debug" / "run.py").read_text()
    ast.parse(text)
    assert "_inline_inputs" in text and "torch.randn((16, 8)" in text and "torch.zeros((16, 8)" in text


def test_save_kernels_dir_is_the_output_dir(tmp_path):
    add._cache.clear()
    a, c = _f32(8, 8), torch.zeros(8, 8)
    add(a, a, c, config=RunConfig(platform="interp", save_kernels_dir=str(tmp_path / "k")))
    assert next(iter(add._cache.values())).output_dir == tmp_path / "k"


# ---- errors ------------------------------------------------------------------------------------


def test_parse_error_points_at_the_users_file_and_line():
    @pl.jit
    def bad(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [8, 8])
            pl.store(pl.no_such_op(t), [0, 0], c)  # the line the error must name
        return c

    line = bad.fn.__code__.co_firstlineno + 4
    with pytest.raises(pl.ParserError) as ei:
        bad(_f32(8, 8), torch.zeros(8, 8), config=INTERP)
    assert ei.value.span.filename == __file__ and ei.value.span.begin_line == line


def test_decorator_options_and_misuse():
    with pytest.raises(TypeError, match="level="):
        pl.jit(level=pl.Level.AIC)
    with pytest.raises(TypeError, match="auto_scope"):
        pl.jit.incore(auto_scope=False)
    with pytest.raises(TypeError, match="auto_scope"):
        pl.jit.opaque(auto_scope=False)
    assert repr(add) == "JITFunction('add', func_type='orchestration')"
    assert repr(plus_one) == "JITFunction('plus_one', func_type='incore')"
    with pytest.raises(AttributeError):
        add.as_python  # noqa: B018
    with pytest.raises(TypeError, match="@pl.jit.incore function"):
        plus_one(_f32(8, 8), torch.zeros(8, 8))
    with pytest.raises(TypeError, match="annotated FP32 but the argument is FP16"):
        copy_dyn(torch.zeros(16, 32, dtype=torch.float16), torch.zeros(16, 32, dtype=torch.float16),
                 config=INTERP)


def test_extern_is_refused_with_the_reason(tmp_path):
    @pl.jit.extern(source="kern.cpp", core_type="aiv")
    def ext(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        ...

    @pl.jit
    def calls_ext(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = ext(x, y)
        return y

    with pytest.raises(NotImplementedError, match="Ascend AIC/AIV kernel"):
        calls_ext(_f32(8, 8), torch.zeros(8, 8), config=INTERP)
    with pytest.raises(ValueError, match="core_type"):
        pl.jit.extern(source="k.cpp", core_type="cube")


def test_runtime_marker():
    assert repr(pl.RUNTIME) == "pl.RUNTIME" and isinstance(pl.RUNTIME, pl.Scalar)
    with pytest.raises(RuntimeError, match="pl.RUNTIME"):
        pl.RUNTIME + 1  # noqa: B018
