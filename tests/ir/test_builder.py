"""IRBuilder: the seed guide's examples built imperatively, and misuse errors."""

import pytest

import pypto.ops  # noqa: F401  (registers operators)
from pypto.ir.builder import BuilderError, IRBuilder, as_expr
from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, FunctionType, MemorySpace, ParamDirection, ScopeKind
from pypto.ir.expr import (
    Add,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Eq,
    GlobalVar,
    IterArg,
    Lt,
    MakeTuple,
    Var,
)
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    WhileStmt,
    YieldStmt,
    stmt_list,
)
from pypto.ir.structural import structural_equal
from pypto.ir.types import ScalarType, TensorType, TileType

FP32, INDEX = DataType.FP32, DataType.INDEX


def T(*shape, dt=FP32):
    return TensorType(list(shape), dt)


def build_sum_16():
    """Seed guide: sum_16_elements with init_values and yield_."""
    ib = IRBuilder()
    with ib.function("sum_16_elements") as f:
        data = f.param("data", T(16))
        f.return_type(T(1))
        init = ib.let("init_sum", ib.call("tensor.create", [[1]], {"dtype": FP32}))
        with ib.for_loop("i", 0, 16) as loop:
            running = loop.iter_arg("running_sum", init)
            out = loop.return_var("sum_out")
            chunk = ib.let("chunk", ib.call("tensor.view", [data, [1], [loop.var]]))
            new = ib.let("new_sum", ib.call("tensor.add", [running, chunk]))
            ib.yield_(new)
        ib.return_(out)
    return f.get_result()


def test_sum_over_range_with_init_values():
    fn = build_sum_16()
    assert isinstance(fn, Function) and fn.name == "sum_16_elements"
    assert fn.func_type is FunctionType.Opaque
    body = stmt_list(fn.body)
    assert [type(s) for s in body] == [AssignStmt, ForStmt, ReturnStmt]
    loop = body[1]
    assert isinstance(loop.start, ConstInt) and loop.start.value == 0 and loop.start.dtype is INDEX
    assert loop.stop.value == 16 and loop.step.value == 1
    assert loop.loop_var.type == ScalarType(INDEX)
    (ia,) = loop.iter_args
    assert isinstance(ia, IterArg) and ia.init_value is body[0].var
    assert ia.type == T(1)
    (rv,) = loop.return_vars
    assert rv.name == "sum_out" and rv.type == T(1)
    inner = stmt_list(loop.body)
    assert isinstance(inner[-1], YieldStmt) and inner[-1].values[0] is inner[1].var
    assert body[2].values[0] is rv
    view = inner[0].value
    assert isinstance(view, Call) and view.op.name == "tensor.view"
    assert isinstance(view.args[1], MakeTuple) and view.args[2].elements[0] is loop.loop_var


def test_spans_point_at_the_builder_call():
    ib = IRBuilder()
    with ib.function("f") as f:
        x = f.param("x", T(4))
        y = ib.let("y", ib.call("tensor.add", [x, x])); line = _line()  # noqa: E702
        ib.return_(y)
    fn = f.get_result()
    assign = stmt_list(fn.body)[0]
    assert assign.span.filename == __file__
    assert assign.span.begin_line == line
    assert assign.span.begin_col > 0
    assert assign.value.span.begin_line == line
    assert fn.span.filename == __file__


def _line():
    import sys

    return sys._getframe(1).f_lineno


def test_if_else_with_yields_inside_loop():
    ib = IRBuilder()
    with ib.function("conditional_update") as f:
        a = f.param("a", T(64))
        delta = f.param("delta", T(64))
        f.return_type(T(64))
        init = ib.let("init", ib.call("tensor.create", [[64]], {"dtype": FP32}))
        with ib.for_loop("i", 0, 4) as loop:
            prev = loop.iter_arg("prev", init)
            with ib.if_stmt(Eq(loop.var, as_expr(0), DataType.BOOL)) as br:
                result = br.return_var("result", T(64))
                ib.yield_(a)
                with br.else_():
                    upd = ib.let("updated", ib.call("tensor.add", [prev, delta]))
                    ib.yield_(upd)
            ib.yield_(result)
        ib.return_(loop.output())
    fn = f.get_result()
    loop = stmt_list(fn.body)[1]
    assert loop.return_vars[0].name == "prev_out"  # undeclared results are named after iter_args
    if_stmt = stmt_list(loop.body)[0]
    assert isinstance(if_stmt, IfStmt) and if_stmt.return_vars == (result,)
    assert isinstance(if_stmt.then_body, YieldStmt) and if_stmt.then_body.values == (a,)
    els = stmt_list(if_stmt.else_body)
    assert isinstance(els[0], AssignStmt) and isinstance(els[1], YieldStmt)
    assert stmt_list(loop.body)[1].values == (result,)


def test_while_loop():
    ib = IRBuilder()
    with ib.function("count") as f:
        f.return_type(ScalarType(INDEX))
        with ib.while_loop() as w:
            x = w.iter_arg("x", 0)
            w.cond(Lt(x, as_expr(10), DataType.BOOL))
            nx = ib.let("new_x", Add(x, as_expr(1), INDEX))
            ib.yield_(nx)
        ib.return_(w.output(0))
    fn = f.get_result()
    ws = stmt_list(fn.body)[0]
    assert isinstance(ws, WhileStmt)
    assert ws.condition.lhs is ws.iter_args[0]
    assert ws.iter_args[0].init_value == ConstInt(0)
    assert ws.iter_args[0].type == ScalarType(INDEX)
    assert stmt_list(fn.body)[1].values == ws.return_vars


def build_program():
    """An InCore kernel doing load/add/store and an orchestration calling it."""
    ib = IRBuilder()
    with ib.program("HelloWorld") as p:
        with ib.function("tile_add", type=FunctionType.InCore) as k:
            a = k.param("a", T(128, 128))
            b = k.param("b", T(128, 128))
            c = k.param("c", T(128, 128), direction=ParamDirection.Out)
            k.return_type(T(128, 128))
            ta = ib.let("tile_a", ib.call("block.load", [a, [0, 0], [128, 128]]))
            tb = ib.let("tile_b", ib.call("block.load", [b, [0, 0], [128, 128]],
                                          {"target_memory": MemorySpace.Vec}))
            tc = ib.let("tile_c", ib.call("block.add", [ta, tb]))
            out = ib.let("out", ib.call("block.store", [tc, [0, 0], c]))
            ib.return_(out)
        kernel = k.get_result()
        with ib.function("main", type=FunctionType.Orchestration) as m:
            a = m.param("a", T(128, 128))
            b = m.param("b", T(128, 128))
            m.return_type(T(128, 128))
            c = ib.let("c", ib.call("tensor.create", [[128, 128]], {"dtype": FP32}))
            r = ib.let("r", ib.call(kernel, [a, b, c]))
            ib.return_(r)
    return p.get_result()


def test_program_with_incore_kernel_and_orchestration():
    prog = build_program()
    assert isinstance(prog, Program) and prog.name == "HelloWorld"
    assert prog.function_names == ["main", "tile_add"]
    kernel = prog.get_function("tile_add")
    assert kernel.func_type is FunctionType.InCore
    assert kernel.param_directions == (ParamDirection.In, ParamDirection.In, ParamDirection.Out)
    body = stmt_list(kernel.body)
    assert [s.value.op.name for s in body[:4]] == ["block.load", "block.load", "block.add", "block.store"]
    tile_t = body[0].var.type
    assert isinstance(tile_t, TileType) and tile_t.space is MemorySpace.Vec
    assert body[0].value.kwarg("target_memory") is MemorySpace.Vec  # defaults filled by the op
    main = prog.get_function("main")
    call = stmt_list(main.body)[1].value
    assert call.op == GlobalVar("tile_add") and call.type == T(128, 128)
    assert call.args[2] is stmt_list(main.body)[0].var


def test_call_global_var_by_name_uses_built_function():
    ib = IRBuilder()
    with ib.program("P") as p:
        with ib.function("g") as g:
            x = g.param("x", T(8))
            g.return_type(T(8))
            ib.return_(x)
        with ib.function("h") as h:
            y = h.param("y", T(8))
            h.return_type(T(8))
            ib.return_(ib.let("r", ib.call(GlobalVar("g"), [y])))
    prog = p.get_result()
    call = stmt_list(prog.get_function("h").body)[0].value
    assert call.type == T(8)


def test_python_values_become_constants():
    assert as_expr(3) == ConstInt(3, INDEX)
    assert as_expr(2.5) == ConstFloat(2.5, FP32)
    assert as_expr(True) == ConstBool(True)
    t = as_expr([1, [2, 3]])
    assert isinstance(t, MakeTuple) and isinstance(t.elements[1], MakeTuple)
    with pytest.raises(BuilderError, match="cannot use a str"):
        as_expr("x")


def test_scope_parallel_loop_eval_break_and_var_assign():
    ib = IRBuilder()
    with ib.function("f") as f:
        x = f.param("x", T(16))
        with ib.scope(ScopeKind.InCore) as sc:
            v = ib.var("y", T(16))
            ib.assign(v, ib.call("tensor.add", [x, x]))
        with ib.for_loop("i", 0, 8, 2, kind=ForKind.Parallel):
            ib.eval(ib.call("system.bar_all", []))
        with ib.for_loop(Var("j", ScalarType(INDEX)), 0, 8) as lj:
            ib.break_()
        ib.return_(v)
    fn = f.get_result()
    s = stmt_list(fn.body)
    assert isinstance(s[0], ScopeStmt) and s[0] is sc.get_result() and s[0].kind is ScopeKind.InCore
    assert s[0].body.var is v
    assert s[1].kind is ForKind.Parallel and s[1].step.value == 2
    assert isinstance(s[1].body, EvalStmt)
    assert isinstance(s[2].body, BreakStmt) and s[2].loop_var.name == "j" and lj.loop_var is s[2].loop_var


def test_empty_bodies_are_empty_seqs():
    ib = IRBuilder()
    with ib.function("f") as f:
        pass
    assert isinstance(f.get_result().body, SeqStmts) and f.get_result().body.stmts == ()


def test_builds_are_structurally_deterministic():
    assert structural_equal(build_program(), build_program())
    assert structural_equal(build_sum_16(), build_sum_16())


# ---------------------------------------------------------------------------------------------
# misuse


def test_emitting_outside_a_function():
    ib = IRBuilder()
    with pytest.raises(BuilderError, match="outside a function"):
        ib.let("x", 1)
    with pytest.raises(BuilderError, match="outside a function"):
        ib.for_loop("i", 0, 4)
    with ib.program("P"):
        with pytest.raises(BuilderError, match="outside a function"):
            ib.return_()


def test_yield_count_mismatch():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="yield_ of 2 value"):
            with ib.for_loop("i", 0, 4) as loop:
                loop.iter_arg("a", 0)
                ib.yield_(1, 2)


def test_loop_missing_yield():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="must end with ib.yield_"):
            with ib.for_loop("i", 0, 4) as loop:
                loop.iter_arg("a", 0)


def test_if_with_return_vars_needs_else():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="needs an else branch"):
            with ib.if_stmt(True) as br:
                br.return_var("r", ScalarType(INDEX))
                ib.yield_(1)


def test_yield_in_if_without_results():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="has no results"):
            with ib.if_stmt(True):
                ib.yield_(1)


def test_return_var_count_differs_from_iter_args():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="1 iter_args but 2 return vars"):
            with ib.for_loop("i", 0, 4) as loop:
                loop.iter_arg("a", 0)
                loop.return_var("r1")
                loop.return_var("r2", ScalarType(INDEX))
                ib.yield_(1)


def test_closing_in_the_wrong_order():
    ib = IRBuilder()
    with ib.function("f"):
        outer = ib.for_loop("i", 0, 4)
        outer.__enter__()
        inner = ib.for_loop("j", 0, 4)
        inner.__enter__()
        with pytest.raises(BuilderError, match="innermost first"):
            outer.__exit__(None, None, None)
        inner.__exit__(None, None, None)
        outer.__exit__(None, None, None)


def test_nested_function_and_result_before_end():
    ib = IRBuilder()
    with ib.function("f") as f:
        with pytest.raises(BuilderError, match="before its with block ended"):
            f.get_result()
        with pytest.raises(BuilderError, match="nest only in a program"):
            with ib.function("g"):
                pass


def test_statements_after_else_closed_and_else_twice():
    ib = IRBuilder()
    with ib.function("f"):
        with ib.if_stmt(True) as br:
            with br.else_():
                pass
            with pytest.raises(BuilderError, match="after the else block"):
                ib.eval(ib.call("system.bar_all", []))
            with pytest.raises(BuilderError, match="twice"):
                br.else_()


def test_yield_directly_in_function_or_scope():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="directly inside a function"):
            ib.yield_()


def test_op_type_errors_become_builder_errors():
    ib = IRBuilder()
    with ib.function("f") as f:
        x = f.param("x", T(16))
        with pytest.raises(BuilderError, match="block.add"):
            ib.call("block.add", [x, x])


def test_exception_inside_block_unwinds_frames():
    ib = IRBuilder()
    with pytest.raises(RuntimeError):
        with ib.function("f"):
            with ib.for_loop("i", 0, 2):
                raise RuntimeError("boom")
    with ib.function("g") as g:  # the builder is usable again
        ib.return_()
    assert isinstance(g.get_result(), Function)


def test_while_without_condition():
    ib = IRBuilder()
    with ib.function("f"):
        with pytest.raises(BuilderError, match="no condition"):
            with ib.while_loop():
                pass
