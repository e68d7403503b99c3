"""`arith` / `math` semantics and `scf` control flow, through hand-built orchestration functions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pypto.backend.interp import InterpError, run_program
from pypto.pto.model import INDEX, Block, EnumAttr, Func, Module, Op, ScalarT, Value

_ORCH = {"pto.kind": EnumAttr("pto.kind", "orchestration"), "pto.param_dirs": []}


def _run(ops: list[Op], results: list[Value], args: list[Value] = (), vals: list = ()) -> list:
    f = Func("main", list(args), Block(ops=ops + [Op("func.return", operands=results)]),
             [r.type for r in results], dict(_ORCH, **{"pto.param_dirs": ["scalar"] * len(args)}))
    return run_program({}, Module([f]), "main", list(vals))


def _eval(name: str, operands: list[tuple], rtype: str, attrs: dict | None = None):
    vals = [Value(f"a{i}", ScalarT(t)) for i, (_, t) in enumerate(operands)]
    r = Value("r", ScalarT(rtype))
    ops = [Op("arith.constant", [v], attrs={"value": x}) for v, (x, _) in zip(vals, operands)]
    ops.append(Op(name, [r], vals, attrs=attrs or {}))
    return _run(ops, [r])[0]


NAN = float("nan")
CASES = [
    ("arith.addi", [(127, "i8"), (1, "i8")], "i8", -128),
    ("arith.subi", [(0, "ui8"), (1, "ui8")], "ui8", 255),
    ("arith.muli", [(1 << 40, "index"), (1 << 30, "index")], "index", 0),
    ("arith.divsi", [(-7, "i32"), (2, "i32")], "i32", -3),
    ("arith.remsi", [(-7, "i32"), (2, "i32")], "i32", -1),
    ("arith.floordivsi", [(-7, "index"), (2, "index")], "index", -4),
    ("arith.ceildivsi", [(7, "index"), (2, "index")], "index", 4),
    ("arith.divui", [(-1, "i8"), (2, "i8")], "i8", 127),
    ("arith.remui", [(-1, "i32"), (10, "i32")], "i32", 5),
    ("arith.minsi", [(-3, "i32"), (2, "i32")], "i32", -3),
    ("arith.maxui", [(-3, "i32"), (2, "i32")], "i32", -3),
    ("arith.shli", [(1, "i32"), (31, "i32")], "i32", -(1 << 31)),
    ("arith.shrsi", [(-8, "i32"), (1, "i32")], "i32", -4),
    ("arith.shrui", [(-8, "i32"), (28, "i32")], "i32", 15),
    ("arith.xori", [(True, "i1"), (True, "i1")], "i1", False),
    ("arith.addf", [(0.1, "f32"), (0.2, "f32")], "f32", np.float32(np.float32(0.1) + np.float32(0.2))),
    ("arith.divf", [(1.0, "f32"), (0.0, "f32")], "f32", math.inf),
    ("arith.maximumf", [(NAN, "f32"), (1.0, "f32")], "f32", NAN),
    ("arith.maxnumf", [(NAN, "f32"), (1.0, "f32")], "f32", 1.0),
    ("arith.remf", [(-7.5, "f32"), (2.0, "f32")], "f32", -1.5),
    ("arith.negf", [(2.0, "bf16")], "bf16", -2.0),
    ("arith.index_cast", [(300, "index")], "i8", 44),
    ("arith.sitofp", [(-3, "i32")], "f16", -3.0),
    ("arith.uitofp", [(-1, "i8")], "f32", 255.0),
    ("arith.fptosi", [(-2.7, "f32")], "i32", -2),
    ("arith.extui", [(-1, "i8")], "i32", 255),
    ("arith.extsi", [(-1, "i8")], "i32", -1),
    ("arith.trunci", [(0x1FF, "i32")], "i8", -1),
    ("arith.truncf", [(1.0 + 2 ** -12, "f32")], "f16", 1.0),
    ("arith.bitcast", [(1.0, "f32")], "i32", 0x3F800000),
    ("math.absi", [(-5, "i32")], "i32", 5),
    ("math.sqrt", [(2.0, "f32")], "f32", np.float32(math.sqrt(2))),
    ("math.round", [(-2.5, "f32")], "f32", -3.0),
    ("math.roundeven", [(-2.5, "f32")], "f32", -2.0),
    ("math.ipowi", [(3, "i32"), (4, "i32")], "i32", 81),
    ("math.powf", [(2.0, "f32"), (0.5, "f32")], "f32", np.float32(math.sqrt(2))),
]


@pytest.mark.parametrize("name,operands,rtype,expected", CASES, ids=[c[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_scalar_op(name, operands, rtype, expected):
    got = _eval(name, operands, rtype)
    assert isinstance(got, np.generic)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(float(got))
    else:
        assert got == expected, (got, expected)


@pytest.mark.parametrize("pred,a,b,expected", [
    ("slt", -1, 0, True), ("ult", -1, 0, False), ("sge", 3, 3, True), ("ne", 1, 2, True),
])
def test_cmpi(pred, a, b, expected):
    assert bool(_eval("arith.cmpi", [(a, "i32"), (b, "i32")], "i1", {"predicate": pred})) is expected


@pytest.mark.parametrize("pred,a,b,expected", [
    ("olt", 1.0, 2.0, True), ("olt", NAN, 2.0, False), ("ult", NAN, 2.0, True), ("une", NAN, NAN, True),
    ("oeq", 1.0, 1.0, True), ("uno", 1.0, NAN, True), ("ord", 1.0, 2.0, True),
])
def test_cmpf(pred, a, b, expected):
    assert bool(_eval("arith.cmpf", [(a, "f32"), (b, "f32")], "i1", {"predicate": pred})) is expected


def test_fptosi_of_nan_is_an_error():
    with pytest.raises(InterpError, match="not representable"):
        _eval("arith.fptosi", [(NAN, "f32")], "i32")


def test_for_with_iter_args_if_and_select():
    """sum over i in [0, 10) of (i odd ? i : 0), and a count of the even i, with scf.if results."""
    n = Value("n", INDEX)
    c0, c1, c2 = Value("c0", INDEX), Value("c1", INDEX), Value("c2", INDEX)
    consts = [Op("arith.constant", [v], attrs={"value": k}) for v, k in ((c0, 0), (c1, 1), (c2, 2))]
    i, s, cnt = Value("i", INDEX), Value("s", INDEX), Value("cnt", INDEX)
    rem, odd = Value("rem", INDEX), Value("odd", ScalarT("i1"))
    add, s2, cnt2, inc = Value("add", INDEX), Value("s2", INDEX), Value("cnt2", INDEX), Value("inc", INDEX)
    then = Block(ops=[Op("scf.yield", operands=[cnt])])
    els = Block(ops=[Op("arith.addi", [inc], [cnt, c1]), Op("scf.yield", operands=[inc])])
    body = Block([i, s, cnt], [
        Op("arith.remsi", [rem], [i, c2]),
        Op("arith.cmpi", [odd], [rem, c1], attrs={"predicate": "eq"}),
        Op("arith.select", [add], [odd, i, c0]),
        Op("arith.addi", [s2], [s, add]),
        Op("scf.if", [cnt2], [odd], regions=[then, els]),
        Op("scf.yield", operands=[s2, cnt2]),
    ])
    total, evens = Value("total", INDEX), Value("evens", INDEX)
    loop = Op("scf.for", [total, evens], [c0, n, c1, c0, c0], regions=[body])
    assert [int(x) for x in _run(consts + [loop], [total, evens], [n], [10])] == [25, 5]
    assert [int(x) for x in _run(consts + [loop], [total, evens], [n], [0])] == [0, 0]


def test_break_and_continue():
    """for i in [0, 100): if i == 7: break; acc += i (iter_args carried at the break)."""
    c0, c1, c7, c100 = (Value(f"c{k}", INDEX) for k in (0, 1, 7, 100))
    consts = [Op("arith.constant", [v], attrs={"value": k}) for v, k in ((c0, 0), (c1, 1), (c7, 7), (c100, 100))]
    i, acc, hit, acc2 = Value("i", INDEX), Value("acc", INDEX), Value("hit", ScalarT("i1")), Value("acc2", INDEX)
    body = Block([i, acc], [
        Op("arith.cmpi", [hit], [i, c7], attrs={"predicate": "eq"}),
        Op("scf.if", [], [hit], regions=[Block(ops=[Op("scf.break")])]),
        Op("arith.addi", [acc2], [acc, i]),
        Op("scf.yield", operands=[acc2]),
    ])
    out = Value("out", INDEX)
    loop = Op("scf.for", [out], [c0, c100, c1, c0], regions=[body])
    assert int(_run(consts + [loop], [out])[0]) == sum(range(7))
