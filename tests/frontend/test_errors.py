"""Bad calls and bad tensor-level programs get clear errors: the parameter by name for call-time
mistakes, the user's source line for trace-time ones; nothing is compiled or run."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
from pypto.frontend import FrontendError, JitArgumentError

INTERP = {"platform": "interp"}


@pypto.frontend.jit(runtime_options=INTERP)
def double(x: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32), out: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
    out[:] = x * 2.0


@pytest.mark.parametrize("args, message", [
    ((np.zeros((4, 64), np.float64), np.zeros((4, 64), np.float32)), "parameter 'x': dtype float64"),
    ((np.zeros((4, 64, 1), np.float32), np.zeros((4, 64), np.float32)), "parameter 'x': rank 3"),
    ((np.zeros((4, 32), np.float32), np.zeros((4, 32), np.float32)), "parameter 'x': dim 1 is 32"),
    ((np.zeros((64, 4), np.float32).T, np.zeros((4, 64), np.float32)), "parameter 'x': array is not C-contiguous"),
    (([[1.0] * 64], np.zeros((1, 64), np.float32)), "parameter 'x' is a tensor"),
])
def test_bad_arguments_name_the_parameter(args, message):
    with pytest.raises(JitArgumentError, match=message):
        double(*args)


def test_missing_and_extra_arguments():
    with pytest.raises(JitArgumentError, match="double"):
        double(np.zeros((4, 64), np.float32))
    with pytest.raises(JitArgumentError, match="double"):
        double(np.zeros((4, 64), np.float32), np.zeros((4, 64), np.float32), 3)


def test_torch_non_contiguous_tensor():
    torch = pytest.importorskip("torch")
    x = torch.zeros(64, 4).t()
    with pytest.raises(JitArgumentError, match="not contiguous"):
        double(x, torch.zeros(4, 64))


def _line_of(fn, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if text in ln)


def test_reduction_over_another_dim_names_the_line():
    # (an inner dim is reduced by a fold over its slices, up to 256 of them)
    def k(x: pypto.Tensor((4, 300, 64), pypto.DT_FP32)):
        return pypto.sum(x, dim=1)  # <- here

    with pytest.raises(FrontendError, match="pypto.sum: dim 1 has 300 elements") as e:
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((4, 300, 64), np.float32))
    assert f"{__file__}:{_line_of(k, '# <- here')}" in str(e.value)


def test_a_value_made_in_a_loop_used_after_it():
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        for i in pypto.loop(2):
            y = x + 1.0
        return y * 2.0  # <- here

    with pytest.raises(FrontendError, match="computed inside the pypto.loop") as e:
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((16, 64), np.float32))
    assert f":{_line_of(k, '# <- here')}" in str(e.value)


def test_tile_shape_rank_must_match_the_op():
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 64)
        return pypto.exp(x)  # <- here

    with pytest.raises(FrontendError, match="set_vec_tile_shapes gave 3 sizes") as e:
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((16, 64), np.float32))
    assert f":{_line_of(k, '# <- here')}" in str(e.value)


@pytest.mark.parametrize("shapes, message", [((0, 64), "positive ints"), ((16, 6), "multiple of 32 bytes")])
def test_bad_tile_shapes(shapes, message):
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*shapes)
        return pypto.exp(x)

    with pytest.raises(FrontendError, match=message):
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((16, 64), np.float32))


def test_branching_on_a_run_time_value_is_refused_clearly():
    def k(x: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
        if x.shape[0] > 4:
            return x * 2.0
        return x * 1.0

    with pytest.raises(pypto.Error, match="only known at run time"):
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((8, 64), np.float32))


def test_type_errors_of_ops_name_the_line():
    def k(x: pypto.Tensor((16, 64), pypto.DT_INT32)):
        return pypto.exp(x)  # <- here

    with pytest.raises(FrontendError, match="floating-point") as e:
        pypto.frontend.jit(k, runtime_options=INTERP)(np.zeros((16, 64), np.int32))
    assert f":{_line_of(k, '# <- here')}" in str(e.value)


def test_annotations_are_checked_when_written():
    with pytest.raises(pypto.Error, match="shape entry 1"):
        pypto.Tensor((4, "x"), pypto.DT_FP32)
    with pytest.raises(pypto.Error, match="`...` may only be the last"):
        pypto.Tensor((..., 4), pypto.DT_FP32)


def test_ellipsis_and_static_dims():
    """`...` takes the remaining dims from the first call (a new shape compiles again)."""
    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((pypto.STATIC, ...), pypto.DT_FP32)):
        return x + 1.0

    a = np.ones((8, 64), np.float32)
    np.testing.assert_array_equal(k(a), a + 1)
    np.testing.assert_array_equal(k(np.ones((4, 32), np.float32)), np.full((4, 32), 2, np.float32))
    assert len(k.compiled_programs) == 2


def test_options_scopes_and_the_report_of_ignored_options(capsys):
    """Process-wide and scoped options join the decorator's; honoured ones act, the others are listed
    on request; a changed option compiles again."""
    x = np.ones((16, 64), np.float32)

    @pypto.frontend.jit(debug_options={"report_options": True})
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        return x + 1.0

    try:
        with pypto.options(name="scope", runtime_options={"platform": "interp"},
                           pass_options={"cube_nbuffer_setting": {-1: 2}}):
            np.testing.assert_array_equal(k(x), x + 1)
            assert pypto.get_runtime_options() == {"platform": "interp"}
        err = capsys.readouterr().err
        assert "pass_options.cube_nbuffer_setting" in err and "runtime_options.platform" not in err
        pypto.set_pass_options(cube_l1_reuse_setting=2)
        pypto.set_runtime_options(platform="interp")
        np.testing.assert_array_equal(k(x), x + 1)
        assert len(k.compiled_programs) == 2  # (the options are part of the specialisation)
        assert "pass_options.cube_l1_reuse_setting" in capsys.readouterr().err
    finally:
        pypto.reset_options()
    assert pypto.get_pass_options() == {} and len(pypto.get_options_tree()) == 1


def test_a_dynamic_1d_result_in_a_kernel_is_refused_with_the_line():
    """keepdim=False over a dynamic-row tensor traces (the -1 of the reshape is not asked of a
    run-time size) and the compile refuses the [M] kernel value with the user's line."""
    m = pypto.frontend.dynamic("M")

    @pypto.frontend.jit(runtime_options={"platform": "interp"})
    def f(x: pypto.Tensor((m, 64), pypto.DT_FP32), y: pypto.Tensor((m,), pypto.DT_FP32)):
        y[:] = pypto.sum(x, -1)

    with pytest.raises(pypto.errors.Error, match="tile shapes must be static") as e:
        f(np.zeros((5, 64), np.float32), np.zeros(5, np.float32))
    assert "pypto.sum(x, -1)" in str(e.value)
