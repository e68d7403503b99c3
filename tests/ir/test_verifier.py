"""The IR verifier: one faulty IR per rule and code, clean programs, and the error rendering."""

import pytest

import pypto.ops  # noqa: F401  (registers operators)
from pypto.ir.builder import IRBuilder, as_expr
from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, FunctionType, MemorySpace, ScopeKind
from pypto.ir.expr import (
    Add,
    Call,
    ConstBool,
    ConstInt,
    DynVar,
    Eq,
    GlobalVar,
    IterArg,
    Lt,
    MakeTuple,
    Neg,
    TupleGetItem,
    Var,
    make_memref,
)
from pypto.ir.function import Function, Program
from pypto.ir.op import create_op_call, get_op
from pypto.ir.span import Span
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.types import MemRefType, ScalarType, TensorType, TileType
from pypto.ir.verifier import (
    DEFAULT_RULES,
    RULES,
    Diagnostic,
    NoNestedCall,
    Rule,
    SSAVerify,
    VerificationError,
    excerpt,
    type_diff,
    verify,
    verify_or_raise,
)

FP32, INDEX, BOOL = DataType.FP32, DataType.INDEX, DataType.BOOL
IDX = ScalarType(INDEX)


def T(*shape, dt=FP32):
    return TensorType(list(shape), dt)


def sp(line):
    return Span("prog.py", line, 4, line, 20)


def call(op, *args, **kw):
    return create_op_call(op, [as_expr(a) for a in args], kw)


def fn(body, params=(), rets=(), name="f", ftype=FunctionType.Opaque):
    return Function(name, tuple(params), (), tuple(rets), SeqStmts(tuple(body)) if isinstance(body, list) else body,
                    ftype, span=sp(1))


def codes(node, rules=None):
    return [(d.rule, d.code) for d in verify(node, rules)]


def only(node, rule, code, rules=None):
    """Exactly one diagnostic, of this rule and code; returns it."""
    diags = verify(node, rules)
    assert [(d.rule, d.code) for d in diags] == [(rule, code)], [str(d) for d in diags]
    return diags[0]


x = Var("x", T(16))


def add_xx(name="y"):
    v = Var(name, T(16))
    return v, AssignStmt(v, call("tensor.add", x, x))


# ---------------------------------------------------------------------------------------------
# clean programs


def _clean_programs():
    """The seed guide's shapes built with IRBuilder: accumulating loop, if/else with yields in a
    loop, while loop, scopes, and an InCore kernel called from an orchestration function."""
    ib = IRBuilder()
    with ib.program("Clean") as p:
        with ib.function("kernel", type=FunctionType.InCore) as k:
            a = k.param("a", T(64, 64))
            c = k.param("c", T(64, 64))
            k.return_type(T(64, 64))
            ta = ib.let("ta", ib.call("block.load", [a, [0, 0], [64, 64]]))
            tb = ib.let("tb", ib.call("block.add", [ta, ta]))
            ib.return_(ib.let("o", ib.call("block.store", [tb, [0, 0], c])))
        with ib.function("main", type=FunctionType.Orchestration) as m:
            a = m.param("a", T(64, 64))
            d = m.param("d", T(64, 64))
            m.return_type(T(64, 64))
            init = ib.let("init", ib.call("tensor.create", [[64, 64]], {"dtype": FP32}))
            with ib.for_loop("i", 0, 4) as loop:
                prev = loop.iter_arg("prev", init)
                with ib.if_stmt(Eq(loop.var, as_expr(0), BOOL)) as br:
                    res = br.return_var("res", T(64, 64))
                    ib.yield_(ib.let("k0", ib.call(k.get_result(), [a, prev])))
                    with br.else_():
                        ib.yield_(ib.let("upd", ib.call("tensor.add", [prev, d])))
                ib.yield_(res)
            with ib.while_loop() as w:
                n = w.iter_arg("n", 0)
                w.cond(Lt(n, as_expr(10), BOOL))
                with ib.scope(ScopeKind.InCore):
                    ib.let("tmp", ib.call("tensor.add", [a, d]))
                ib.yield_(Add(n, as_expr(1), INDEX))
            ib.return_(loop.output())
    return [p.get_result()] + [f for f in p.get_result().functions]


def test_clean_programs_have_no_diagnostics():
    for p in _clean_programs():
        assert verify(p, [r for r in RULES if r != "BreakContinue"] + ["NoNestedCall"]) == []
    verify_or_raise(_clean_programs()[0])


def test_name_shadowing_is_not_an_error():
    y1, s1 = add_xx("y")
    y2 = Var("y", T(16))  # same name, another variable
    f = fn([s1, AssignStmt(y2, call("tensor.add", y1, x)), ReturnStmt((y2,))], [x], [T(16)])
    assert verify(f) == []


def test_rule_selection():
    assert set(DEFAULT_RULES) == {"SSAVerify", "TypeCheck", "UseAfterDef", "BreakContinue", "SupportedTypes"}
    y, s = add_xx()
    f = fn([s, s], [x])
    assert codes(f, ["SSAVerify"]) == [("SSAVerify", 1)]
    assert codes(f, SSAVerify) == [("SSAVerify", 1)]
    assert codes(f, [SSAVerify()]) == [("SSAVerify", 1)]
    assert codes(f, "UseAfterDef") == []
    with pytest.raises(ValueError, match="unknown verifier rule"):
        verify(f, ["NoSuchRule"])
    assert all(issubclass(r, Rule) and r.codes for r in RULES.values())


# ---------------------------------------------------------------------------------------------
# SSAVerify


def test_ssa_1_multiple_assignment():
    y, s = add_xx()
    s2 = AssignStmt(y, call("tensor.add", x, x), span=sp(7))
    d = only(fn([s, s2], [x]), "SSAVerify", 1)
    assert "y is defined more than once" in d.message and d.span == sp(7) and d.stmt is s2
    # a parameter assigned again
    d = only(fn([AssignStmt(x, call("tensor.add", x, x))], [x]), "SSAVerify", 1)
    assert "x" in d.message


def _counting_loop(body_tail, iter_args=None, return_vars=None):
    i = Var("i", IDX)
    ia = IterArg("acc", IDX, ConstInt(0))
    rv = Var("acc_out", IDX)
    iter_args = (ia,) if iter_args is None else iter_args
    return_vars = (rv,) if return_vars is None else return_vars
    nx = Var("nx", IDX)
    body = [AssignStmt(nx, Add(ia, ConstInt(1), INDEX))] + body_tail(nx)
    return ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), iter_args, SeqStmts(tuple(body)), return_vars,
                   span=sp(3)), rv, nx


def test_ssa_3_missing_yield_in_loop():
    loop, rv, _ = _counting_loop(lambda nx: [])
    d = only(fn([loop, ReturnStmt((rv,))], rets=[IDX]), "SSAVerify", 3)
    assert "must end its body with a yield_" in d.message and d.span == sp(3)


def test_ssa_3_missing_yield_in_if():
    r = Var("r", IDX)
    no_else = IfStmt(ConstBool(True), YieldStmt((ConstInt(1),)), None, (r,), span=sp(5))
    d = only(fn([no_else, ReturnStmt((r,))], rets=[IDX]), "SSAVerify", 3)
    assert "no else branch" in d.message
    r2 = Var("r", IDX)
    bad_else = IfStmt(ConstBool(True), YieldStmt((ConstInt(1),)), EvalStmt(ConstInt(0)), (r2,))
    d = only(fn([bad_else, ReturnStmt((r2,))], rets=[IDX]), "SSAVerify", 3)
    assert "else branch" in d.message


def test_ssa_4_iter_args_return_vars_mismatch():
    loop, rv, _ = _counting_loop(lambda nx: [YieldStmt((nx,))], return_vars=())
    d = only(fn([loop]), "SSAVerify", 4)
    assert "1 iter_args but 0 return vars" in d.message
    ia = IterArg("c", IDX, ConstInt(0))
    w = WhileStmt(Lt(ia, ConstInt(3), BOOL), (ia,), YieldStmt((Add(ia, ConstInt(1), INDEX),)),
                  (Var("a", IDX), Var("b", IDX)))
    assert codes(fn([w])) == [("SSAVerify", 4)]


def test_ssa_5_yield_count_mismatch():
    loop, rv, nx = _counting_loop(lambda nx: [YieldStmt((nx, nx), span=sp(9))])
    d = only(fn([loop, ReturnStmt((rv,))], rets=[IDX]), "SSAVerify", 5)
    assert "yield_ of 2 value(s) in a for loop expecting 1" in d.message and d.span == sp(9)
    r = Var("r", IDX)
    branch = IfStmt(ConstBool(True), YieldStmt((ConstInt(1),)), YieldStmt(()), (r,))
    d = only(fn([branch, ReturnStmt((r,))], rets=[IDX]), "SSAVerify", 5)
    assert "in an if expecting 1" in d.message
    d = only(fn([YieldStmt((ConstInt(1),))]), "SSAVerify", 5)
    assert "outside any loop or if" in d.message


def test_ssa_6_scope_violation_body_var_after_loop():
    loop, rv, nx = _counting_loop(lambda nx: [YieldStmt((nx,))])
    use = ReturnStmt((nx,), span=sp(11))
    d = only(fn([loop, use], rets=[IDX]), "SSAVerify", 6)
    assert "nx is used outside the for loop" in d.message and d.stmt is use


def test_ssa_6_scope_violation_iter_arg_and_loop_var():
    loop, rv, nx = _counting_loop(lambda nx: [YieldStmt((nx,))])
    d = only(fn([loop, ReturnStmt((loop.iter_args[0],))], rets=[IDX]), "SSAVerify", 6)
    assert "acc" in d.message
    d = only(fn([loop, ReturnStmt((loop.loop_var,))], rets=[IDX]), "SSAVerify", 6)
    assert "variable i is used outside" in d.message


def test_ssa_6_scope_violation_across_branches():
    a = Var("a", IDX)
    ifs = IfStmt(ConstBool(True), AssignStmt(a, ConstInt(1)), EvalStmt(Add(a, ConstInt(1), INDEX)))
    only(fn([ifs]), "SSAVerify", 6)


def test_plain_loops_ifs_and_scopes_leak_their_definitions():
    i = Var("i", IDX)
    a, b, c = Var("a", IDX), Var("b", IDX), Var("c", IDX)
    loop = ForStmt(i, ConstInt(0), ConstInt(2), ConstInt(1), (), AssignStmt(a, Add(i, ConstInt(1), INDEX)), ())
    ifs = IfStmt(ConstBool(True), AssignStmt(b, ConstInt(1)), None)
    scope = ScopeStmt(ScopeKind.InCore, AssignStmt(c, ConstInt(2)))
    ret = ReturnStmt((Add(Add(a, b, INDEX), c, INDEX),))
    assert verify(fn([loop, ifs, scope, ret], rets=[IDX])) == []


# ---------------------------------------------------------------------------------------------
# UseAfterDef


def test_401_use_before_definition():
    y = Var("y", T(16))
    first = AssignStmt(Var("z", T(16)), call("tensor.add", y, x), span=sp(4))
    d = only(fn([first, AssignStmt(y, call("tensor.add", x, x))], [x]), "UseAfterDef", 401)
    assert d.message == "variable y is used before it is defined" and d.node is y and d.stmt is first


def test_401_undefined_variable_and_return_var_before_its_loop():
    ghost = Var("ghost", T(16))
    only(fn([ReturnStmt((ghost,))], [x], [T(16)]), "UseAfterDef", 401)
    loop, rv, nx = _counting_loop(lambda nx: [YieldStmt((nx,))])
    d = only(fn([EvalStmt(rv), loop]), "UseAfterDef", 401)
    assert "acc_out" in d.message


def test_401_unbound_dynamic_dimension():
    M = DynVar("M", IDX)
    N = DynVar("N", IDX)
    a = Var("a", T(M, 16))
    ok = fn([EvalStmt(Add(M, ConstInt(1), INDEX))], [a])
    assert verify(ok) == []
    d = only(fn([EvalStmt(Add(N, ConstInt(1), INDEX))], [a]), "UseAfterDef", 401)
    assert "dynamic dimension N is not bound by any parameter type of function f" in d.message
    t = Var("t", T(N, 16))
    d = only(fn([AssignStmt(t, call("tensor.create", [N, 16], dtype=FP32))], [a]), "UseAfterDef", 401)
    assert "N" in d.message


def test_401_memref_used_before_its_alloc():
    mem = make_memref(MemorySpace.Vec, 0, 4096, 0)
    a = Var("a", T(32, 32))
    tile_t = TileType([32, 32], FP32, MemorySpace.Vec, mem)
    t = Var("t", tile_t)
    load = Call(get_op("block.load"), (a, as_expr([0, 0]), as_expr([32, 32])),
                (("target_memory", MemorySpace.Vec), ("transpose", False)), tile_t)
    alloc = AssignStmt(mem, call("block.alloc", memory_space=MemorySpace.Vec, addr=0, size=4096, id=0))
    good = fn([alloc, AssignStmt(t, load)], [a])
    assert verify(good) == []
    d = only(fn([AssignStmt(t, load), alloc], [a]), "UseAfterDef", 401)
    assert "memref mem_vec_0 is used in the type of t before its alloc" in d.message
    assert verify(fn([AssignStmt(t, load)], [a])) == []  # no alloc statement: the memref is implicit


def test_statement_roots_treat_outside_variables_as_free():
    y = Var("y", T(16))
    s = SeqStmts((AssignStmt(y, call("tensor.add", x, x)), EvalStmt(call("tensor.add", y, x))))
    assert verify(s) == []
    late = SeqStmts((EvalStmt(call("tensor.add", y, x)), AssignStmt(y, call("tensor.add", x, x))))
    assert codes(late) == [("UseAfterDef", 401)]


# ---------------------------------------------------------------------------------------------
# TypeCheck


def _retyped(c, t):
    return Call(c.op, c.args, c.kwargs, t)


def test_101_recorded_call_type_kind_mismatch():
    y = Var("y", TileType([16], FP32, MemorySpace.Vec))
    bad = _retyped(call("tensor.add", x, x), y.type)
    d = only(fn([AssignStmt(y, bad)], [x]), "TypeCheck", 101)
    assert "recorded type of tensor.add differs from its inferred type: expected a Tensor, got a Tile" in d.message


def test_101_op_rejects_operands_and_unknown_callee():
    y = Var("y", T(16))
    bad = Call(get_op("block.add"), (x, x), (), T(16))
    d = only(fn([AssignStmt(y, bad)], [x]), "TypeCheck", 101)
    assert "block.add rejects its operands" in d.message and "Tile" in d.message
    g = Call(GlobalVar("nowhere"), (x,), (), T(16))
    p = Program("P", (fn([ReturnStmt((g,))], [x], [T(16)], name="main"),))
    d = only(p, "TypeCheck", 101)
    assert "nowhere" in d.message


def test_102_dtype_mismatch():
    y = Var("y", T(16))
    bad = _retyped(call("tensor.add", x, x), T(16, dt=DataType.FP16))
    assert ("TypeCheck", 102) in codes(fn([AssignStmt(y, bad)], [x]))
    z = Var("z", T(16, dt=DataType.INT32))
    d = only(fn([AssignStmt(z, call("tensor.add", x, x))], [x]), "TypeCheck", 102)
    assert "z is declared with another type than its value: expected dtype int32, got fp32" in d.message


def test_103_rank_mismatch():
    y = Var("y", T(16, 1))
    d = only(fn([AssignStmt(y, call("tensor.add", x, x))], [x]), "TypeCheck", 103)
    assert "expected rank 2, got 1" in d.message


def test_104_dimension_mismatch():
    y = Var("y", T(16))
    bad = _retyped(call("tensor.add", x, x), T(8))
    d = only(fn([AssignStmt(Var("y", T(8)), bad)], [x]), "TypeCheck", 104)
    assert "dimension 0: expected 16, got 8" in d.message
    d = only(fn([AssignStmt(Var("w", T(32)), call("tensor.add", x, x)), EvalStmt(y)], [x]), "UseAfterDef", 401,
             rules=["UseAfterDef"])
    assert verify(fn([AssignStmt(Var("w", T(32)), call("tensor.add", x, x))], [x]), "TypeCheck")[0].code == 104


def test_105_memory_space_and_counts():
    a = Var("a", T(32, 32))
    load = call("block.load", a, [0, 0], [32, 32])
    bad = _retyped(load, TileType([32, 32], FP32, MemorySpace.Mat))
    d = only(fn([AssignStmt(Var("t", bad.type), bad)], [a]), "TypeCheck", 105)
    assert "memory space Vec, got Mat" in d.message
    d = only(fn([ReturnStmt((x, x))], [x], [T(16)]), "TypeCheck", 105)
    assert "return of 2 value(s) from function f declared to return 1" in d.message


def test_105_tuple_index_and_101_untyped_call():
    tup = MakeTuple((x, x))
    d = only(fn([AssignStmt(Var("e", T(16)), TupleGetItem(tup, 2))], [x]), "TypeCheck", 105)
    assert "tuple index 2 out of range for Tuple[Tensor[[16], fp32], Tensor[[16], fp32]]" in d.message
    d = only(fn([AssignStmt(Var("e", T(16)), Call(get_op("tensor.add"), (x, x), (), None))], [x]), "TypeCheck", 101)
    assert "call of tensor.add has no type" in d.message


def test_106_condition_must_be_scalar():
    d = only(fn([IfStmt(x, EvalStmt(ConstInt(0)), None)], [x]), "TypeCheck", 106)
    assert "if condition must be a scalar, got Tensor[[16], fp32]" in d.message
    d = only(fn([WhileStmt(x, (), EvalStmt(ConstInt(0)), ())], [x]), "TypeCheck", 106)
    assert "while condition" in d.message


def test_107_for_range_must_be_scalar():
    loop = ForStmt(Var("i", IDX), ConstInt(0), x, ConstInt(1), (), EvalStmt(ConstInt(0)), ())
    d = only(fn([loop], [x]), "TypeCheck", 107)
    assert "for-loop stop must be a scalar" in d.message


def test_108_for_step_must_not_be_constant_zero():
    loop = ForStmt(Var("i", IDX), ConstInt(0), ConstInt(4), ConstInt(0), (), EvalStmt(ConstInt(0)), (),
                   span=Span("k.py", 3, 4))
    d = only(fn([loop], [x]), "TypeCheck", 108)
    assert "for-loop step cannot be zero" in d.message and d.span.begin_line == 3


def test_yield_and_init_types_match_iter_args():
    i = Var("i", IDX)
    ia = IterArg("acc", T(16), x)
    rv = Var("out", T(16))
    wrong = Var("w", T(16, dt=DataType.INT32))
    body = SeqStmts((AssignStmt(wrong, call("tensor.cast", ia, target_type=DataType.INT32)), YieldStmt((wrong,))))
    loop = ForStmt(i, ConstInt(0), ConstInt(2), ConstInt(1), (ia,), body, (rv,))
    d = only(fn([loop, ReturnStmt((rv,))], [x], [T(16)]), "TypeCheck", 102)
    assert "yielded value #0 for acc" in d.message
    ia2 = IterArg("acc", T(16), ConstInt(0))
    loop2 = ForStmt(Var("i", IDX), ConstInt(0), ConstInt(2), ConstInt(1), (ia2,), YieldStmt((ia2,)),
                    (Var("o", T(16)),))
    d = only(fn([loop2], [x]), "TypeCheck", 101)
    assert "init value of iter_arg acc" in d.message


def test_return_type_mismatch():
    d = only(fn([ReturnStmt((x,))], [x], [T(17)]), "TypeCheck", 104)
    assert "returned value #0" in d.message


def _callee(dim):
    a = Var("a", T(dim, 16))
    return fn([ReturnStmt((a,))], [a], [T(dim, 16)], name="callee")


def test_program_calls_match_callee_signature():
    M = DynVar("M", IDX)
    b = Var("b", T(8, 16))
    ok_call = Call(GlobalVar("callee"), (b,), (), T(8, 16))
    main = fn([AssignStmt(Var("r", T(8, 16)), ok_call)], [b], name="main")
    assert verify(Program("P", (_callee(M), main))) == []  # a dynamic dim accepts any size
    main2 = fn([AssignStmt(Var("r", T(8, 16)), Call(GlobalVar("callee"), (b,), (), T(8, 16)))], [b], name="main")
    diags = verify(Program("P", (_callee(4), main2)))
    assert [d.code for d in diags] == [104, 104]
    assert "argument a of callee: dimension 0: expected 4, got 8" in diags[0].message
    assert "result of callee" in diags[1].message
    main3 = fn([AssignStmt(Var("r", T(8, 16)), Call(GlobalVar("callee"), (b, b), (), T(8, 16)))], [b],
               name="main")
    d = only(Program("P", (_callee(M), main3)), "TypeCheck", 105)
    assert "callee takes 1 argument(s), got 2" in d.message


# ---------------------------------------------------------------------------------------------
# NoNestedCall, BreakContinue


def test_501_nested_calls():
    inner = call("tensor.add", x, x)
    nested = call("tensor.add", inner, x)
    y = Var("y", T(16))
    f = fn([AssignStmt(y, nested)], [x])
    assert verify(f) == []  # off by default
    d = only(f, "NoNestedCall", 501, rules=["NoNestedCall"])
    assert "call of tensor.add inside the arguments of tensor.add" in d.message and d.node is inner
    cond = IfStmt(call("tensor.dim", x, axis=0), EvalStmt(ConstInt(0)), None)
    d = only(fn([cond], [x]), "NoNestedCall", 501, rules=NoNestedCall)
    assert "an if condition" in d.message
    cond = IfStmt(Eq(call("tensor.dim", x, axis=0), ConstInt(16), BOOL), EvalStmt(ConstInt(0)), None)
    assert "a scalar expression" in only(fn([cond], [x]), "NoNestedCall", 501, rules=NoNestedCall).message
    loop = ForStmt(Var("i", IDX), ConstInt(0), call("tensor.dim", x, axis=0), ConstInt(1), (),
                   EvalStmt(ConstInt(0)), ())
    assert "a for-loop bound" in only(fn([loop], [x]), "NoNestedCall", 501, rules=NoNestedCall).message
    s = AssignStmt(Var("n", IDX), Neg(call("tensor.dim", x, axis=0), INDEX))
    assert "a scalar expression" in only(fn([s], [x]), "NoNestedCall", 501, rules=NoNestedCall).message
    in_tuple = call("tensor.view", x, [call("tensor.dim", x, axis=0)], [0])
    only(fn([EvalStmt(in_tuple)], [x]), "NoNestedCall", 501, rules=NoNestedCall)


def test_601_break_continue_outside_loop():
    d = only(fn([BreakStmt(span=sp(2))]), "BreakContinue", 601)
    assert d.message == "break outside a loop" and d.span == sp(2)
    par = ForStmt(Var("i", IDX), ConstInt(0), ConstInt(2), ConstInt(1), (), ContinueStmt(), (), ForKind.Parallel)
    assert "continue inside a Parallel loop" in only(fn([par]), "BreakContinue", 601).message
    seq_loop = ForStmt(Var("i", IDX), ConstInt(0), ConstInt(2), ConstInt(1), (),
                       IfStmt(ConstBool(True), BreakStmt(), ContinueStmt()), ())
    w = WhileStmt(ConstBool(True), (), ScopeStmt(ScopeKind.InCore, BreakStmt()), ())
    assert verify(fn([seq_loop, w])) == []


# ---------------------------------------------------------------------------------------------
# reporting


def test_verification_error_names_rules_spans_and_shows_the_ir():
    stmts = [AssignStmt(Var(f"v{k}", T(16)), call("tensor.add", x, x), span=sp(10 + k)) for k in range(8)]
    bad = AssignStmt(stmts[2].var, call("tensor.add", x, x), span=sp(30))
    stmts.insert(5, bad)
    loop = ForStmt(Var("i", IDX), ConstInt(0), ConstInt(2), ConstInt(1), (), SeqStmts(tuple(stmts)), (),
                   span=sp(9))
    f = fn([loop, BreakStmt(span=sp(40))], [x], name="kernel")
    with pytest.raises(VerificationError) as ei:
        verify_or_raise(Program("P", (f,)))
    err = ei.value
    assert [(d.rule, d.code) for d in err.diagnostics] == [("SSAVerify", 1), ("BreakContinue", 601)]
    msg = str(err)
    assert "[SSAVerify 1]" in msg and "in function kernel" in msg and "v2 is defined more than once" in msg
    assert "--> prog.py:30:5" in msg and "[BreakContinue 601]" in msg and "prog.py:40:5" in msg
    lines = msg.splitlines()
    marked = [ln for ln in lines if ln.startswith("  > ")]
    assert len(marked) == 2 and "v2" in marked[0] and "break" in marked[1]
    at = lines.index(marked[0])
    before, after = lines[at - 3:at], lines[at + 1:at + 4]
    assert [f"v{k}" in ln for k, ln in zip((2, 3, 4), before)] == [True] * 3  # three statements either side
    assert [f"v{k}" in ln for k, ln in zip((5, 6, 7), after)] == [True] * 3
    assert lines[at - 4].strip() == "..." and "v1" not in "\n".join(lines[at - 4:at + 4])
    assert any("def kernel(x)" in ln for ln in lines)
    assert any(ln.strip().startswith("for i") for ln in lines)
    assert isinstance(err, Exception) and not isinstance(err, ValueError)


def test_excerpt_without_printer(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pypto.ir.printer", None)  # as if the printer did not exist
    y, s = add_xx()
    ret = ReturnStmt((y,))
    f = fn([s, ret], [x], [T(16)])
    lines = excerpt(f, ret)
    assert lines[0].strip() == "def f(x):"
    assert lines[1].strip() == "y: Tensor[[16], fp32] = tensor.add(x, x)"
    assert lines[2] == "  >     return y"


def test_diagnostic_fields_and_type_diff():
    d = only(fn([BreakStmt()]), "BreakContinue", 601)
    assert isinstance(d, Diagnostic) and d.function == "f" and isinstance(d.node, BreakStmt)
    assert d.span == sp(1)  # the statement has no span: the function's is used
    assert type_diff(T(4), T(4)) is None
    assert type_diff(T(4), TileType([4], FP32))[0] == 101
    assert type_diff(MemRefType(), MemRefType()) is None
    assert type_diff(TileType([4], FP32), TileType([4], FP32, MemorySpace.Mat)) is None  # lenient: unset space
    assert type_diff(TileType([4], FP32), TileType([4], FP32, MemorySpace.Mat), strict=True)[0] == 105
    assert type_diff(ScalarType(INDEX), ScalarType(DataType.INT64))[0] == 102


def test_verify_accepts_expressions_and_rejects_other_objects():
    assert verify(call("tensor.add", x, x)) == []
    bad = Call(get_op("tensor.add"), (x, x), (), T(3))
    assert codes(bad) == [("TypeCheck", 104)]
    assert codes(MakeTuple((bad,))) == [("TypeCheck", 104)]
    with pytest.raises(TypeError):
        verify(42)
