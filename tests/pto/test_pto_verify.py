"""The PTO verifier on modules built in code (as codegen builds them): one test per rule."""

from __future__ import annotations

import pytest

from pypto.pto import (
    I1,
    INDEX,
    Block,
    Func,
    Module,
    Op,
    PartitionViewT,
    PtoVerifyError,
    PtrT,
    ScalarT,
    Sym,
    TensorT,
    TensorViewT,
    TileBufT,
    Value,
    module_issues,
    operand_groups,
    verify_module,
)

F32 = ScalarT("f32")
TILE = TileBufT("vec", "f32", 16, 16, 16, 16)


def const(name: str, value=0, ty=INDEX) -> Op:
    return Op("arith.constant", [Value(name, ty)], attrs={"value": value})


def func(*ops: Op, args: list[Value] | None = None, results=None, ret: list[Value] | None = None) -> Module:
    body = Block([], [*ops, Op("func.return", operands=ret or [])])
    return Module([Func("f", args or [], body, results or [])])


def messages(m: Module) -> list[str]:
    return [i.message for i in module_issues(m, check_types=True)]


def only(m: Module, fragment: str) -> None:
    msgs = messages(m)
    assert len(msgs) >= 1 and any(fragment in x for x in msgs), msgs


def test_well_formed_module_passes():
    c0 = const("c0")
    t = Op("pto.alloc_tile", [Value("t", TILE)], [c0.result])
    texp = Op("pto.texp", ins=[t.result], outs=[t.result])
    m = func(c0, t, texp)
    assert messages(m) == []
    verify_module(m)


def test_use_before_definition_and_outside_scope():
    a = Value("a", INDEX)
    early = Op("arith.addi", [Value("b", INDEX)], [a, a])
    only(func(early, const("a").__class__("arith.constant", [a], attrs={"value": 1})), "%a is used but not defined")
    c = Value("c", I1)
    inner = const("x")
    branch = Op("scf.if", [], [c], regions=[Block([], [inner])])
    after = Op("arith.addi", [Value("y", INDEX)], [inner.result, inner.result])
    only(func(branch, after, args=[c]), "%x is used but not defined")


def test_value_defined_twice():
    c = const("c")
    again = Op("arith.constant", [c.result], attrs={"value": 1})
    only(func(c, again), "%c is defined twice")


def test_terminators():
    only(Module([Func("f", [], Block([], [const("c")]))]), "must end with func.return")
    only(func(Op("scf.yield")), "scf.yield cannot end this region")
    only(func(Op("scf.break")), "scf.break outside a loop")
    misplaced = Op("func.return")
    only(func(misplaced, const("c")), "func.return must be the last op of its region")
    x = Value("x", INDEX)
    only(func(args=[x], results=[F32], ret=[x]), "func.return passes (index) where (f32) is expected")


def test_scf_for_iter_args_yield_and_results():
    lb, iv, acc = Value("lb", INDEX), Value("i", INDEX), Value("acc", F32)
    init = Value("z", F32)

    def loop(results, yielded, args=None):
        body = Block(args if args is not None else [iv, acc], [Op("scf.yield", operands=yielded)])
        return Op("scf.for", results, [lb, lb, lb, init], regions=[body])

    ok = func(loop([Value("r", F32)], [acc]), args=[lb, init])
    assert messages(ok) == []
    only(func(loop([], [acc]), args=[lb, init]), "must have 1 result(s)")
    only(func(loop([Value("r", F32)], []), args=[lb, init]), "scf.yield passes () where (f32) is expected")
    only(func(loop([Value("r", F32)], [acc], args=[iv]), args=[lb, init]), "region args must be")
    bad_bounds = Op("scf.for", [], [lb, init, lb], regions=[Block([iv], [])])
    only(func(bad_bounds, args=[lb, init]), "same type")
    only(func(Op("scf.for", [], [lb], regions=[Block([iv], [])]), args=[lb]), "lb, ub, step")


def test_scf_if_and_while():
    c, a = Value("c", I1), Value("a", INDEX)
    one_region = Op("scf.if", [Value("r", INDEX)], [c], regions=[Block([], [Op("scf.yield", operands=[a])])])
    only(func(one_region, args=[c, a]), "needs an else region")
    not_bool = Op("scf.if", [], [a], regions=[Block()])
    only(func(not_bool, args=[a]), "one i1 condition")
    x, y = Value("x", INDEX), Value("y", INDEX)
    before = Block([x], [Op("scf.condition", operands=[c, x])])
    after = Block([y], [Op("scf.yield", operands=[y])])
    good = Op("scf.while", [Value("w", INDEX)], [a], regions=[before, after])
    assert messages(func(good, args=[c, a])) == []
    no_cond = Op("scf.while", [Value("w", INDEX)], [a], regions=[Block([x], []), after])
    only(func(no_cond, args=[c, a]), "must end with scf.condition")


def test_scalar_op_rules():
    a, b, f = Value("a", INDEX), Value("b", ScalarT("i32")), Value("f", F32)
    only(func(Op("arith.addi", [Value("r", INDEX)], [a, b]), args=[a, b]), "operands must have the result type")
    only(func(Op("arith.addi", [Value("r", INDEX)], [a]), args=[a]), "takes 2 operand(s)")
    only(func(Op("arith.cmpi", [Value("r", I1)], [a, a], attrs={"predicate": "lt"}), args=[a]), "unknown predicate")
    only(func(Op("arith.select", [Value("r", INDEX)], [a, a, a]), args=[a]), "arith.select takes an i1")
    only(func(const("k", 300, ScalarT("i8"))), "does not fit i8")
    only(func(const("k", "x", F32)), "needs a number")
    del f


def test_dps_rules():
    c0 = const("c0")
    t = Op("pto.alloc_tile", [Value("t", TILE)], [c0.result])
    only(func(c0, t, Op("pto.texp", ins=[t.result])), "needs at least one outs operand")
    only(func(c0, t, Op("pto.tadd")), "needs at least one outs operand")
    only(func(c0, t, Op("pto.texp", [Value("r", TILE)], ins=[t.result], outs=[t.result])), "has no results")
    s = Value("s", F32)
    only(func(c0, t, Op("pto.texpands", ins=[t.result], outs=[s]), args=[s]), "outs %s is a scalar")
    p = Value("p", PtrT("f32"))
    only(func(c0, t, Op("pto.tmov", ins=[p], outs=[t.result]), args=[p]), "cannot be an operand")
    only(func(c0, t, Op("pto.tload", ins=[t.result], outs=[t.result])), "reads a partition view into one tile")
    stray = Value("u", TILE)
    only(func(Op("pto.texp", ins=[stray], outs=[stray]), args=[stray]), "does not come from pto.alloc_tile")


def test_alloc_tile_operands_follow_the_type():
    c0 = const("c0")
    dyn = TileBufT("vec", "f32", 16, 16, None, None)
    ok = Op("pto.alloc_tile", [Value("t", dyn)], [c0.result, c0.result, c0.result])
    assert messages(func(c0, ok)) == []
    assert operand_groups(ok)["valid_col"] == [c0.result]
    short = Op("pto.alloc_tile", [Value("t", dyn)], [c0.result])
    only(func(c0, short), "valid_row / valid_col")
    f = Value("f", F32)
    only(func(Op("pto.alloc_tile", [Value("t", TILE)], [f]), args=[f]), "index values")


def test_views_and_tensors():
    p, n = Value("p", PtrT("f32")), Value("n", INDEX)
    tv = Op("pto.make_tensor_view", [Value("tv", TensorViewT(2, "f32"))], [p, n, n, n, n])
    assert messages(func(tv, args=[p, n])) == []
    wrong_rank = Op("pto.make_tensor_view", [Value("tv", TensorViewT(3, "f32"))], [p, n, n, n, n])
    only(func(wrong_rank, args=[p, n]), "need 3 values each")
    pv = Op("pto.partition_view", [Value("pv", PartitionViewT((4,), "f32"))], [tv.result, n, n, n, n])
    only(func(tv, pv, args=[p, n]), "one entry per source dimension")
    t = Value("t", TensorT((None, 4), "f32"))
    only(func(Op("pto.tensor_read", [Value("x", F32)], [t, n]), args=[t, n]), "one index per dimension")
    only(func(Op("pto.tensor_write", [], [n, t, n, n]), args=[t, n]), "stores a scalar of the element type")
    only(func(Op("pto.tensor_dim", [Value("d", INDEX)], [t], attrs={"axis": 2}), args=[t]), "axis in range")
    only(func(Op("pto.alloc_tensor", [Value("a", TensorT((4,), "f32"))], [n, n]), args=[n]), "one value per dimension")


def test_submit():
    t = Value("t", TensorT((4,), "f32"))
    assert messages(func(Op("pto.submit", [], [t], attrs={"callee": Sym("k"), "dirs": ["in"]}), args=[t])) == []
    only(func(Op("pto.submit", [], [t], attrs={"dirs": ["in"]}), args=[t]), "needs attrs['callee']")
    only(func(Op("pto.submit", [], [t], attrs={"callee": Sym("k"), "dirs": ["in", "out"]}), args=[t]), "dirs must")


def test_types_built_in_code_are_checked():
    bad = [Value("a", ScalarT("f64")), Value("b", TileBufT("ub", "f32", 4, 4, 4, 4)),
           Value("c", TileBufT("vec", "f32", 4, 4, 8, 4)), Value("d", TensorT((-1,), "f32")),
           Value("e", PtrT("float"))]
    msgs = messages(func(args=bad))
    assert len(msgs) == 7, msgs  # five bad types, and two tile-typed arguments
    assert any("tile loc 'ub'" in m for m in msgs) and any("exceeds the tile" in m for m in msgs)


def test_verify_module_raises_with_every_issue():
    with pytest.raises(PtoVerifyError) as info:
        verify_module(func(Op("scf.break"), Op("pto.tadd")))
    e = info.value
    assert len(e.issues) >= 2
    assert "PTO verification failed" in str(e) and "@f: scf.break: scf.break outside a loop" in str(e)


def test_duplicate_function_names():
    f = Func("f", [], Block([], [Op("func.return")]))
    g = Func("f", [], Block([], [Op("func.return")]))
    assert "function @f is defined twice" in messages(Module([f, g]))
