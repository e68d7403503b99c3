"""`pypto.ir.limits` and the verifier's SupportedTypes rule: element types no target stores (701)
and dimensions or sizes beyond int64 (702), named by function and parameter or variable; and
`ir.compile` refusing a program built with the IR builder before any pass runs."""

from __future__ import annotations

import pytest

import pypto.ops  # noqa: F401  (registers operators)
from pypto import ir
from pypto.ir.builder import IRBuilder
from pypto.ir.dtype import DataType
from pypto.ir.expr import DynVar, Var, scalar_type
from pypto.ir.limits import INT64_MAX, dtype_problem, shape_problem, type_problem
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType
from pypto.ir.verifier import verify
from pypto.passes.base import PassError

FP32 = DataType.FP32


def test_dtype_problems_name_the_type_and_what_to_use():
    assert dtype_problem(FP32) is None and dtype_problem(DataType.BOOL) is None
    p = dtype_problem(DataType.FP8E5M2)
    assert p.is_dtype and p.message.startswith("element type pl.FP8E5M2 is not supported by the CPU and interpreter")
    assert p.hint.startswith("use pl.FP16 or pl.BF16")
    assert dtype_problem(DataType.INT4).hint.startswith("use pl.INT8")


@pytest.mark.parametrize("shape, dt, ok", [
    ([INT64_MAX], DataType.INT8, True), ([INT64_MAX + 1], DataType.INT8, False), ([0, 4], FP32, False),
    ([-1, 4], FP32, False), ([2**61 - 1], FP32, True), ([2**61], FP32, False),
    ([2**32, 2**31 - 1], DataType.BOOL, True), ([2**32, 2**31], DataType.BOOL, False),  # one byte per BOOL
])
def test_shape_bounds(shape, dt, ok):
    assert (shape_problem(TensorType(shape, dt)) is None) == ok
    assert (shape_problem(TileType(shape, dt)) is None) == ok


def test_dynamic_dimensions_count_as_one():
    n = DynVar("n", scalar_type(DataType.INDEX))
    assert shape_problem(TensorType([n, 2**61 - 1], FP32)) is None
    assert "at least" in shape_problem(TensorType([n, 2**61], FP32)).message


def test_type_problem_looks_inside_tuples_and_scalars():
    assert type_problem(TupleType((TensorType([4], FP32), TensorType([4], DataType.HF4)))).is_dtype
    assert type_problem(ScalarType(DataType.UINT4)).is_dtype
    assert not type_problem(TupleType((TensorType([4], FP32), TensorType([-4], FP32)))).is_dtype
    assert type_problem(TupleType((TensorType([4], FP32), ScalarType(DataType.INDEX)))) is None


# ---------------------------------------------------------------------------------------------
# the verifier rule


def _program(param_type, cast_to=None, name="main"):
    """x: param_type; y = x + x (or cast(x, cast_to)); return y."""
    ib = IRBuilder()
    with ib.program("prog") as pb:
        with ib.function(name) as f:
            x = f.param("x", param_type)
            if cast_to is None:
                y = ib.let("y", ib.call("tensor.add", [x, x]))
            else:
                y = ib.let("y", ib.call("tensor.cast", [x], {"target_type": cast_to}))
            f.return_type(y.type)
            ib.return_(y)
    return pb.get_result()


def test_701_on_a_parameter_names_function_and_parameter():
    diags = verify(_program(TensorType([16, 16], DataType.FP8E4M3FN)), ["SupportedTypes"])
    # the parameter and the return type; the body's values repeat the problem and are not reported
    assert [(d.code, d.message.split(":")[0]) for d in diags] == [(701, "parameter x of function main"),
                                                                  (701, "return type #0 of function main")]
    assert "element type pl.FP8E4M3FN is not supported" in diags[0].message
    assert diags[0].hint.startswith("use pl.FP16") and diags[0].span.filename == __file__


def test_701_on_a_cast_in_the_body_names_the_variable():
    diags = verify(_program(TensorType([16, 16], FP32), cast_to=DataType.INT4), ["SupportedTypes"])
    assert [(d.code, d.message.split(":")[0]) for d in diags] == [(701, "variable y of function main"),
                                                                  (701, "return type #0 of function main")]


def test_702_dimension_and_size():
    (d, _) = verify(_program(TensorType([2**63, 16], FP32)), ["SupportedTypes"])
    assert d.code == 702 and d.message.startswith("parameter x of function main: dimension #0 of")
    (d, _) = verify(_program(TensorType([2**40, 2**30], FP32)), ["SupportedTypes"])
    assert d.code == 702 and "more than the 2**63 - 1 bytes" in d.message


def test_a_default_rule_quiet_on_supported_programs():
    from pypto.ir.verifier import DEFAULT_RULES

    assert "SupportedTypes" in DEFAULT_RULES
    for dt in DataType:
        if dtype_problem(dt) is None:
            assert verify(_program(TensorType([16, 16], dt)), ["SupportedTypes"]) == [], dt


# ---------------------------------------------------------------------------------------------
# ir.compile of a program built with the IR builder


@pytest.mark.parametrize("t, text", [
    (TensorType([16, 16], DataType.UINT4), "element type pl.UINT4 is not supported by the CPU and interpreter targets"),
    (TensorType([2**63, 16], FP32), "dimension #0 of pl.Tensor[[9223372036854775808, 16], pl.FP32] is "
                                    "9223372036854775808, outside [1, 2**63 - 1]"),
    (TensorType([-2, 16], FP32), "dimension #0 of pl.Tensor[[-2, 16], pl.FP32] is -2"),
    (TensorType([2**40, 2**30], DataType.INT64), "holds 1180591620717411303424 elements of 8 byte(s)"),
])
def test_compile_refuses_before_any_pass(t, text, tmp_path):
    with pytest.raises(PassError) as ei:
        ir.compile(_program(t, name="kernel_entry"), output_dir=tmp_path)
    msg = str(ei.value)
    assert msg.startswith("Error: cannot compile program prog: parameter x of function kernel_entry: "), msg
    assert text in msg.splitlines()[0]
    assert f"--> {__file__}:" in msg and 'x = f.param("x", param_type)' in msg  # the builder call
    assert "= help: " in msg and "also return type #0 of function kernel_entry" in msg
    assert not (tmp_path / "kernels").exists()


def test_pass_manager_checks_its_input(tmp_path):
    """The check is the pass manager's first step, so running the passes directly is covered too."""
    from pypto.passes.pass_manager import PassManager

    with pytest.raises(PassError, match="parameter x of function main: element type pl.HF8"):
        PassManager.get_strategy().run_passes(_program(TensorType([4, 4], DataType.HF8)))


def test_a_var_made_by_hand_is_checked_too():
    """Not only builder parameters: any variable bound in the body."""
    from pypto.ir.function import Function
    from pypto.ir.stmt import AssignStmt, ReturnStmt, SeqStmts

    x = Var("x", TensorType([4], FP32))
    y = Var("y", TensorType([4], DataType.INT4))
    body = SeqStmts((AssignStmt(y, x), ReturnStmt((x,))))
    f = Function("g", (x,), (), (TensorType([4], FP32),), body)
    (d,) = verify(f, ["SupportedTypes"])
    assert d.code == 701 and d.message.startswith("variable y of function g: element type pl.INT4")
