"""PTO text round trips: golden texts are printer fixed points; printed models parse back equivalent."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.pto import (
    I1,
    INDEX,
    Block,
    EnumAttr,
    Func,
    Module,
    Op,
    PartitionViewT,
    PtrT,
    ScalarT,
    Sym,
    TensorT,
    TensorViewT,
    TileBufT,
    Value,
    assert_equivalent,
    equivalent,
    first_difference,
    module_issues,
    parse_module,
    print_func,
    print_module,
    print_op,
    verify_module,
)

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.pto"))
F32 = ScalarT("f32")


def roundtrip(text: str, name: str = "<pto>") -> Module:
    """text -> model -> text is the identity, and the reparsed model is equivalent."""
    m = parse_module(text, name)
    again = print_module(m)
    assert again == text, f"{name}: printing the parsed text changed it"
    m2 = parse_module(again)
    assert_equivalent(m, m2)
    return m


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_is_a_printer_fixed_point(path: Path):
    m = roundtrip(path.read_text(), str(path))
    assert m.funcs
    assert module_issues(m, check_types=True) == []
    verify_module(m)


def test_golden_covers_every_construct():
    text = "\n".join(p.read_text() for p in GOLDEN)
    for construct in [
        "scf.for", "iter_args", "%r:2 = scf.for", "scf.if", "} else {", "scf.while", "^bb0(", "scf.condition(",
        "scf.yield", "scf.break", "scf.continue", "func.return %", "{pto.loop_kind = \"parallel\"}",
        "pto.make_tensor_view", "pto.partition_view", "pto.alloc_tile addr", "valid_row =", "valid_col =",
        "v_row=?", "v_col=?", "pto.tload", "pto.tstore", "pto.tadd", "pto.tmatmul ins", "pto.tmatmul.acc",
        "loc=mat", "loc=left", "loc=right", "loc=acc", "pto.trowmax", "pto.trowexpandsub", "pto.tgetval",
        "pto.tsetval", "pto.get_block_idx", "pto.set_flag", "pto.wait_flag", "pto.pipe_barrier",
        "#pto<cmp gt>", "#pto<round_mode ROUND>", "#pto<pad max>", "pto.alloc_tensor", "pto.tensor_slice",
        "pto.tensor_reshape", "pto.submit @", "pto.tensor_read", "pto.tensor_write", "pto.tensor_dim",
        "0x7F800000 : f32", "arith.cmpi", "arith.cmpf", "arith.select", "arith.index_cast", "math.",
        "!pto.tensor<", "!pto.ptr<", "!pto.partition_tensor_view<?x64xf32>",
    ]:
        assert construct in text, construct


def test_comments_and_layout_are_not_significant():
    canonical = (GOLDEN[0].parent / "control.pto").read_text()
    messy = "// a comment line\n" + canonical.replace("  ", "\t").replace(" : ", " :  ").replace(
        "func.return\n", "func.return // done\n")
    m = parse_module(messy)
    assert print_module(m) == canonical


# ---------------------------------------------------------------------------------------------
# models built in code (as codegen does)

TILE = TileBufT("vec", "f32", 16, 64, 16, 64)
DYN_TILE = TileBufT("vec", "f32", 16, 64, None, 64)


def const(name: str, value, ty=INDEX) -> Op:
    return Op("arith.constant", [Value(name, ty)], attrs={"value": value})


def kernel() -> Module:
    a = Value("arg0", PtrT("f32"))
    n = Value("n", INDEX)
    c0, c1, c16, c64 = const("c0", 0), const("c1", 1), const("c16", 16), const("c64", 64)
    tv = Op("pto.make_tensor_view", [Value("tv", TensorViewT(2, "f32"))],
            [a, n, c64.result, c64.result, c1.result], attrs={"layout": EnumAttr("pto.layout", "nd")})
    t = Op("pto.alloc_tile", [Value("t", DYN_TILE)], [c0.result, c16.result])
    u = Op("pto.alloc_tile", [Value("t", TILE)], [c0.result])  # same name: the printer renames
    i = Value("i", INDEX)
    acc_in = Value("acc", F32)
    pv = Op("pto.partition_view", [Value("pv", PartitionViewT((16, 64), "f32"))],
            [tv.result, i, c0.result, c16.result, c64.result])
    load = Op("pto.tload", ins=[pv.result], outs=[t.result])
    add = Op("pto.tadds", ins=[t.result, acc_in], outs=[u.result], attrs={"note": "x"})
    get = Op("pto.tgetval", [Value("v", F32)], [u.result, c0.result, c0.result])
    s = Op("arith.addf", [Value("s", F32)], [acc_in, get.result])
    y = Op("scf.yield", operands=[s.result])
    zero = const("zero", 0, F32)  # an int value for a float constant: compares as 0.0
    loop = Op("scf.for", [Value("r#0", F32)], [c0.result, n, c16.result, zero.result],
              regions=[Block([i, acc_in], [pv, load, add, get, s, y])], attrs={"pto.loop_kind": "parallel"})
    ret = Op("func.return")
    body = Block([], [c0, c1, c16, c64, zero, tv, t, u, loop, ret])
    f = Func("k", [a, n], body, attrs={"pto.kind": EnumAttr("pto.kind", "kernel"), "dirs": ("in", "scalar")})
    return Module([f], {"pto.target": "cpu"})


def test_built_module_prints_and_parses_back_equivalent():
    m = kernel()
    verify_module(m)
    text = print_module(m)
    assert "%t_1 = pto.alloc_tile addr = %c0 : " in text  # duplicate name renamed
    assert "%t = pto.alloc_tile addr = %c0 valid_row = %c16 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, " \
           "cols=64, v_row=?, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>" in text
    assert "%zero = arith.constant 0.0 : f32" in text
    assert '} {pto.loop_kind = "parallel"}' in text
    assert 'pto.tadds ins(%t, %acc : ' in text and ' {note = "x"}' in text
    m2 = parse_module(text)
    assert equivalent(m, m2), first_difference(m, m2)
    assert print_module(m2) == text


def test_result_groups_and_name_cleanup():
    a = Value("a b", INDEX)  # invalid characters become '_'
    c0 = const("c0", 0)
    x0, x1 = Value("x", INDEX), Value("x", INDEX)
    inner = Value("r", INDEX)  # shadows the loop's result group name inside the body: renamed
    body = Block([Value("i", INDEX), x0, x1], [
        Op("arith.addi", [inner], [x0, x1]),
        Op("scf.yield", operands=[inner, x1]),
    ])
    loop = Op("scf.for", [Value("r#0", INDEX), Value("r#1", INDEX)], [c0.result, a, a, c0.result, a],
              regions=[body])
    use = Op("arith.addi", [Value("s", INDEX)], [loop.results[0], loop.results[1]])
    f = Func("g", [a], Block([], [c0, loop, use, Op("func.return", operands=[use.result])]), [INDEX])
    text = print_func(f)
    assert "func.func @g(%a_b: index) -> index {" in text
    assert "%r:2 = scf.for %i = %c0 to %a_b step %a_b iter_args(%x = %c0, %x_1 = %a_b) -> (index, index) {" in text
    assert "%s = arith.addi %r#0, %r#1 : index" in text
    m = Module([f])
    m2 = parse_module(print_module(m))
    assert_equivalent(m, m2)
    assert [r.name for r in m2.funcs[0].body.ops[1].results] == ["r#0", "r#1"]


def test_multiple_results_without_a_group_name():
    c = Value("c", I1)
    a, b = Value("a", INDEX), Value("b", INDEX)
    then = Block([], [Op("scf.yield", operands=[a, b])])
    other = Block([], [Op("scf.yield", operands=[b, a])])
    op = Op("scf.if", [Value("lo", INDEX), Value("hi", INDEX)], [c], regions=[then, other])
    f = Func("h", [c, a, b], Block([], [op, Op("func.return", operands=list(op.results))]), [INDEX, INDEX])
    text = print_func(f)
    assert "%lo, %hi = scf.if %c -> (index, index) {" in text
    assert "func.func @h(%c: i1, %a: index, %b: index) -> (index, index) {" in text
    assert_equivalent(Module([f]), parse_module(print_module(Module([f]))))


def test_special_float_constants_print_as_bit_patterns():
    vals = [math.inf, -math.inf, math.nan, 1.5, -0.0, 1e-30]
    ops = [const(f"f{j}", v, F32) for j, v in enumerate(vals)]
    ops += [const("h", math.inf, ScalarT("f16")), const("q", -math.inf, ScalarT("bf16")),
            const("e5", math.inf, ScalarT("f8e5m2")), const("e4", math.nan, ScalarT("f8e4m3")),
            const("b", True, I1), const("big", -(2**63), ScalarT("i64")), const("u", 2**64 - 1, ScalarT("ui64"))]
    m = Module([Func("c", [], Block([], [*ops, Op("func.return")]))])
    text = print_module(m)
    for frag in ["0x7F800000 : f32", "0xFF800000 : f32", "0x7FC00000 : f32", "1.5 : f32", "-0.0 : f32",
                 "1e-30 : f32", "0x7C00 : f16", "0xFF80 : bf16", "0x7C : f8e5m2", "0x7F : f8e4m3",
                 "true : i1", "-9223372036854775808 : i64", "18446744073709551615 : ui64"]:
        assert frag in text, frag
    m2 = parse_module(text)
    assert_equivalent(m, m2)
    got = [op.attrs["value"] for op in m2.funcs[0].body.ops[:6]]
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2]) and math.copysign(1, got[4]) == -1
    with pytest.raises(ValueError, match="cannot hold"):
        print_module(Module([Func("c", [], Block([], [const("x", math.inf, ScalarT("f8e4m3"))]))]))


def test_every_attribute_kind_round_trips():
    attrs = {
        "i": 3, "neg": -4, "f": 0.1, "e": 1e-05, "inf": math.inf, "ninf": -math.inf, "nan": math.nan,
        "t": True, "s": 'a "q" \\ \n\t\x01 ü', "arr": [1, [2.5, "x"], []], "tup": (1, 2), "sym": Sym("k.v"),
        "enum": EnumAttr("pto", "cmp lt"), "en2": EnumAttr("pto.kernel_kind", "vector"),
        "ty": TileBufT("acc", "f32", 16, 16, 16, 16, "col_major", "row_major", 1024),
        "ty2": TensorT((None, 4), "bf16"), "ty3": F32, "d": {"x": 1, "y": [Sym("a")]}, "odd key": "v",
    }
    m = Module([Func("f", [], Block([], [Op("pto.set_flag", attrs=attrs), Op("func.return")]))], attrs)
    text = print_module(m)
    assert '"odd key" = "v"' in text and "tup = [1, 2]" in text and r'"a \"q\" \\ \n\t\01 ü"' in text
    assert "inf = inf, ninf = -inf, nan = nan" in text
    m2 = parse_module(text)
    assert_equivalent(m, m2)
    assert print_module(m2) == text


def test_print_op_for_messages():
    a = Value("a", INDEX)
    assert print_op(Op("arith.addi", [Value("b", INDEX)], [a, a])) == "%b = arith.addi %a, %a : index"


def test_printer_rejects_ops_it_cannot_write():
    with pytest.raises(ValueError, match="no PTO syntax"):
        print_op(Op("foo.bar", [], [Value("a", INDEX)]))
    with pytest.raises(ValueError, match="predicate"):
        print_op(Op("arith.cmpi", [Value("c", I1)], [Value("a", INDEX), Value("b", INDEX)]))
    with pytest.raises(ValueError, match="empty symbol name"):
        print_func(Func("", [], Block()))


@pytest.mark.parametrize("name", ["σ_kernel", "bad name", 'q"uote', "k" * 300])
def test_any_symbol_name_round_trips_quoted(name):
    m = Module([Func(name, [], Block([], [Op("func.return")]))])
    text = print_module(m)
    assert ("@" + name) not in text or name == "k" * 300
    m2 = parse_module(text)
    assert m2.funcs[0].name == name and print_module(m2) == text


# ---------------------------------------------------------------------------------------------
# the equivalence helper


def test_equivalence_detects_differences():
    base = parse_module((GOLDEN[0].parent / "elementwise.pto").read_text())

    def changed(edit) -> str | None:
        m = parse_module(print_module(base))
        edit(m.funcs[0])
        return first_difference(base, m)

    assert changed(lambda f: None) is None
    assert "value 0 vs 5" in changed(lambda f: f.body.ops[0].attrs.update(value=5))
    assert "attribute" in changed(lambda f: f.body.ops[5].attrs.clear())
    assert "pto.tadd vs pto.tsub" in changed(lambda f: setattr(f.body.ops[-2].regions[0].ops[4], "name", "pto.tsub"))
    # swapping two operands that have the same type is caught by position
    def swap(f):
        add = f.body.ops[-2].regions[0].ops[4]
        add.ins.reverse()
    assert "different places" in changed(swap)
    assert "ops" in changed(lambda f: f.body.ops.pop(0))
    assert "@add_kernel vs @x" in changed(lambda f: setattr(f, "name", "x"))
    # names and locations do not matter
    def rename(f):
        for a in f.args:
            a.name = "z" + a.name
        f.body.ops[0].loc = None
    assert changed(rename) is None
    with pytest.raises(AssertionError, match="PTO modules differ"):
        other = parse_module(print_module(base))
        other.attrs["x"] = 1
        assert_equivalent(base, other)


def test_equivalence_is_strict_about_attribute_kinds():
    def mod(v):
        return Module([], {"a": v})
    assert equivalent(mod(1), mod(1))
    assert not equivalent(mod(1), mod(1.0))
    assert not equivalent(mod(True), mod(1))
    assert equivalent(mod(math.nan), mod(float("nan")))
    assert equivalent(mod([1, 2]), mod((1, 2)))
    assert not equivalent(mod(Sym("a")), mod("a"))


# ---------------------------------------------------------------------------------------------
# random models with hostile names: the printer's renaming must agree with the parser's scoping

_NAMES = st.sampled_from(["a", "a_1", "r", "r#0", "r#1", "", "x y", "0", "v", "%", "a.b", "$"])


@st.composite
def _models(draw):
    args = [Value(draw(_NAMES), INDEX) for _ in range(draw(st.integers(1, 3)))]
    cond = Value(draw(_NAMES), I1)

    def block(visible: list[Value], depth: int) -> list[Op]:
        ops: list[Op] = []
        visible = list(visible)
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["add", "if", "group"] if depth < 3 else ["add"]))
            a, b = draw(st.sampled_from(visible)), draw(st.sampled_from(visible))
            if kind == "add":
                op = Op("arith.addi", [Value(draw(_NAMES), INDEX)], [a, b])
            elif kind == "group":  # two results named r#0 / r#1, or freely
                names = draw(st.sampled_from([["r#0", "r#1"], [draw(_NAMES), draw(_NAMES)]]))
                then = Block([], [*block(visible, depth + 1), Op("scf.yield", operands=[a, b])])
                other = Block([], [*block(visible, depth + 1), Op("scf.yield", operands=[b, a])])
                op = Op("scf.if", [Value(n, INDEX) for n in names], [cond], regions=[then, other])
            else:
                op = Op("scf.if", [], [cond], regions=[Block([], block(visible, depth + 1))])
            ops.append(op)
            visible += op.results
        return ops

    body = block(args, 0)
    return Module([Func("f", [*args, cond], Block([], [*body, Op("func.return")]))])


@settings(max_examples=120, deadline=None)
@given(_models())
def test_random_models_with_hostile_names_round_trip(m: Module):
    verify_module(m)
    text = print_module(m)
    m2 = parse_module(text)
    assert_equivalent(m, m2)
    assert print_module(m2) == text
