"""PTO parse errors: class, line, column and message; and fuzzing that only PtoParseError escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pypto.pto import PtoParseError, assert_equivalent, parse_module, parse_type, print_module
from pypto.pto.syntax import TOKEN

GOLDEN = {p.stem: p.read_text() for p in sorted((Path(__file__).parent / "golden").glob("*.pto"))}

TILE = "!pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, v_row=4, v_col=4>"
DYN = "!pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, v_row=?, v_col=4>"
MARK = "¦"  # marks where the error must point; removed before parsing


def kernel(*body: str, args: str = "%a: index, %c: i1, %p: !pto.ptr<f32>", results: str = "") -> str:
    lines = ["module {", f"  func.func @f({args}){results} {{", *("    " + b for b in body), "  }", "}", ""]
    return "\n".join(lines)


# (name, text with MARK at the fault, message fragment)
CASES = [
    ("undefined", kernel("%b = arith.addi %a, ¦%x : index", "func.return"), "use of undefined value %x"),
    ("type_mismatch", kernel("%b = arith.addi %a, %a : ¦i32", "func.return"),
     "type mismatch: %a has type index, but i32 is written here"),
    ("unknown_op", kernel("%b = ¦foo.bar %a : index", "func.return"), "unknown operation 'foo.bar'"),
    ("unknown_arith", kernel("%b = ¦arith.frob %a : index", "func.return"), "unknown operation 'arith.frob'"),
    ("redefinition", kernel("¦%a = arith.constant 1 : index", "func.return"), "redefinition of %a"),
    ("arity", kernel("%b = ¦arith.addi %a : index", "func.return"), "arith.addi takes 2 operand(s), 1 given"),
    ("predicate", kernel("%b = arith.cmpi ¦foo, %a, %a : index", "func.return"), "unknown predicate 'foo'"),
    ("float_literal", kernel("%f = arith.constant ¦1 : f32", "func.return"), "expected a float literal"),
    ("int_range", kernel("%f = arith.constant ¦300 : i8", "func.return"), "300 does not fit in i8"),
    ("hex_width", kernel("%f = arith.constant ¦0x7F800000 : f16", "func.return"), "wider than f16"),
    ("unknown_type", kernel("%f = arith.constant 1 : ¦int", "func.return"), "unknown type 'int'"),
    ("tile_loc", kernel("%t = pto.alloc_tile addr = %a : !pto.tile_buf<loc=¦vex, dtype=f32, rows=4, cols=4>",
                        "func.return"), "tile_buf loc must be one of vec, mat"),
    ("tile_field", kernel("%t = pto.alloc_tile addr = %a : !pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, "
                          "¦colour=red>", "func.return"), "tile_buf field 'colour' is unknown"),
    ("tile_vrow", kernel("%t = pto.alloc_tile addr = %a : !pto.tile_buf<loc=vec, dtype=f32, rows=4, cols=4, "
                         "v_row=¦9>", "func.return"), "v_row=9 exceeds rows=4"),
    ("tile_dim", kernel("%t = pto.alloc_tile addr = %a : !pto.tile_buf<loc=vec, dtype=f32, rows=¦x, cols=4>",
                        "func.return"), "rows must be a non-negative integer"),
    ("view_elem", kernel("%v = pto.make_tensor_view %p, shape = [%a], strides = [%a] : "
                         "!pto.tensor_view<?x¦f33>", "func.return"), "unknown element type 'f33'"),
    ("view_static", kernel("%v = pto.make_tensor_view %p, shape = [%a], strides = [%a] : "
                           "!pto.tensor_view<¦4xf32>", "func.return"), "tensor_view extents are all dynamic"),
    ("view_rank", kernel("%v = ¦pto.make_tensor_view %p, shape = [%a, %a], strides = [%a] : "
                         "!pto.tensor_view<?xf32>", "func.return"), "one value per dimension"),
    ("unknown_dialect_type", kernel("%f = arith.constant 1 : ¦!foo.bar<x>", "func.return"),
     "unknown type '!foo.bar<...>'"),
    ("dps_no_outs", kernel(f"%t = pto.alloc_tile addr = %a : {TILE}", f"¦pto.tadd ins(%t : {TILE}) outs()",
                           "func.return"), "pto.tadd needs at least one outs operand"),
    ("dps_result", kernel(f"%t = pto.alloc_tile addr = %a : {TILE}", f"%x = ¦pto.texp ins(%t : {TILE}) "
                          f"outs(%t : {TILE})", "func.return"), "pto.texp has no results"),
    ("dps_bare", kernel("¦pto.tadd", "func.return"), "pto.tadd needs at least one outs operand"),
    ("attr_only_junk", kernel("pto.set_flag ¦%a", "func.return"), "unexpected '%a' after pto.set_flag"),
    ("valid_row_missing", kernel(f"%t = pto.alloc_tile addr = %a : ¦{DYN}", "func.return"),
     "v_row=? needs a valid_row operand"),
    ("valid_row_static", kernel(f"%t = pto.alloc_tile addr = %a valid_row = %a : ¦{TILE}", "func.return"),
     "valid_row operand given but the type's v_row is static"),
    ("if_cond", kernel("scf.if ¦%a {", "}", "func.return"), "scf.if condition %a must be i1"),
    ("for_results", kernel("%r = ¦scf.for %i = %a to %a step %a iter_args(%x = %a, %y = %a) -> (index, index) {",
                           "  scf.yield %x, %y : index, index", "}", "func.return"),
     "scf.for has 2 result(s) but 1 name(s) are bound"),
    ("for_types", kernel("%r = scf.for %i = %a to %a step %a iter_args(%x = %a) -> ¦(f32) {",
                         "  scf.yield %x : f32", "}", "func.return"), "type mismatch: %a has type index"),
    ("yield_count", kernel("%r:2 = scf.for %i = %a to %a step %a iter_args(%x = %a, %y = %a) -> (index, index) {",
                           "  ¦scf.yield %x : index", "}", "func.return"),
     "scf.yield passes (index) where (index, index) is expected"),
    ("yield_missing", kernel("¦%r = scf.for %i = %a to %a step %a iter_args(%x = %a) -> (index) {", "}",
                             "func.return"), "must end with scf.yield"),
    ("region_scope", kernel("scf.if %c {", "  %x = arith.addi %a, %a : index", "}",
                            "%y = arith.addi %a, ¦%x : index", "func.return"), "use of undefined value %x"),
    ("result_visible_inside", kernel("%r = scf.if %c -> (index) {", "  scf.yield ¦%r : index", "} else {",
                                     "  scf.yield %a : index", "}", "func.return"), "use of undefined value %r"),
    ("group_whole", kernel("%r:2 = scf.for %i = %a to %a step %a iter_args(%x = %a, %y = %a) -> (index, index) {",
                           "  scf.yield %x, %y : index, index", "}", "%s = arith.addi ¦%r, %a : index",
                           "func.return"), "%r names 2 results: use %r#0 .. %r#1"),
    ("group_index", kernel("%r:2 = scf.for %i = %a to %a step %a iter_args(%x = %a, %y = %a) -> (index, index) {",
                           "  scf.yield %x, %y : index, index", "}", "%s = arith.addi ¦%r#2, %a : index",
                           "func.return"), "use of undefined value %r#2"),
    ("group_def_hash", kernel("¦%r#0 = arith.addi %a, %a : index", "func.return"), "'#' is for uses"),
    ("break_outside", kernel("scf.if %c {", "  ¦scf.break", "}", "func.return"), "scf.break outside a loop"),
    ("terminator_middle", kernel("¦func.return", "%b = arith.addi %a, %a : index", "func.return"),
     "func.return must be the last op of its region"),
    ("return_types", kernel("¦func.return %a : index", results=" -> f32"),
     "func.return passes (index) where (f32) is expected"),
    ("no_return", "module {\n  ¦func.func @f() {\n  }\n}\n", "the function body must end with func.return"),
    ("while_cond", kernel("%w = scf.while (%x = %a) : (index) -> (index) {", "  scf.condition(¦%x) %x : index",
                          "} do {", "^bb0(%y: index):", "  scf.yield %y : index", "}", "func.return"),
     "scf.condition %x must be i1"),
    ("while_after_types", kernel("¦%w = scf.while (%x = %a) : (index) -> (index) {",
                                 "  scf.condition(%c) %x : index", "} do {", "^bb0(%y: i1):", "  scf.yield %a : index",
                                 "}", "func.return"), "the after region's args must match the results"),
    ("tile_not_allocated", kernel(f"%t = pto.alloc_tile addr = %a : {TILE}",
                                  f"%r = scf.for %i = %a to %a step %a iter_args(%u = %t) -> ({TILE}) {{",
                                  f"  ¦pto.texp ins(%u : {TILE}) outs(%u : {TILE})", f"  scf.yield %u : {TILE}",
                                  "}", "func.return"), "tile %u does not come from pto.alloc_tile"),
    ("window_src", kernel("%v = pto.make_tensor_view %p, shape = [%a], strides = [%a] : !pto.tensor_view<?xf32>",
                          "%w = pto.partition_view %v, offsets = [%a], sizes = [%a] : ¦!pto.tensor_view<?xf16> -> "
                          "!pto.partition_tensor_view<4xf32>", "func.return"), "type mismatch: %v"),
    ("submit_types", kernel("pto.submit @k(%a, %c) : ¦(index)", "func.return"), "2 argument(s) but 1 type(s)"),
    ("submit_dirs", kernel('¦pto.submit @k(%a) {dirs = ["sideways"]} : (index)', "func.return"), "dirs must give"),
    ("submit_callee", kernel("pto.submit @k(%a) {¦callee = 1} : (index)", "func.return"),
     "attribute 'callee' is part of the op's syntax"),
    ("const_value_attr", kernel("%x = arith.constant 1 {¦value = 2} : index", "func.return"),
     "attribute 'value' is part of the op's syntax"),
    ("bare_yield_then_op", kernel("scf.if %c {", "  ¦scf.yield", "  %b = arith.addi %a, %a : index", "}",
                                  "func.return"), "scf.yield must be the last op"),
    ("attr_twice", kernel("pto.set_flag {a = 1, ¦a = 2}", "func.return"), "attribute 'a' is given twice"),
    ("attr_value", kernel("pto.set_flag {a = ¦}}", "func.return"), "expected an attribute value"),
    ("attr_sep", kernel("pto.set_flag {a = 1 ¦b = 2}", "func.return"), "expected ',' or '}'"),
    ("unterminated", kernel('pto.set_flag {a = ¦"abc}', "func.return"), "unterminated string"),
    ("bad_escape", kernel(r'pto.set_flag {a = ¦"a\q"}', "func.return"), "unknown escape"),
    ("stray_char", kernel("%b = arith.addi %a, %a ¦; index", "func.return"), "expected ':', found ';'"),
    ("missing_brace", "module {\n  func.func @f() {\n    func.return¦\n", "a region is missing its '}'"),
    ("after_module", "module {\n}\n¦}\n", "unexpected '}' after the end of the module"),
    ("not_module", "¦modul {\n}\n", "expected 'module', found 'modul'"),
    ("empty", "¦", "expected 'module', found end of input"),
    ("func_twice", "module {\n  func.func @f() {\n    func.return\n  }\n  func.func ¦@f() {\n    func.return\n  }\n}\n",
     "redefinition of function @f"),
    ("nested_func", kernel("¦func.func @g() {", "}", "func.return"), "only allowed at the module level"),
    ("result_count_token", kernel("%r:¦x = scf.if %c {", "}", "func.return"), "expected a result count"),
    ("tensor_dim", kernel("%d = pto.tensor_dim %p, ¦x : !pto.ptr<f32>", "func.return"),
     "expected an axis number"),
    ("tab_column", "module {\n\tfunc.func @f(%a: index) {\n\t\t%b = arith.addi %a, ¦%zz : index\n\t}\n}\n",
     "use of undefined value %zz"),
]


def _locate(marked: str) -> tuple[str, int, int]:
    at = marked.index(MARK)
    text = marked.replace(MARK, "", 1)
    line = marked.count("\n", 0, at) + 1
    col = at - (marked.rfind("\n", 0, at) + 1) + 1
    return text, line, col


@pytest.mark.parametrize("name,marked,message", CASES, ids=[c[0] for c in CASES])
def test_error_location_and_message(name: str, marked: str, message: str):
    text, line, col = _locate(marked)
    with pytest.raises(PtoParseError) as info:
        parse_module(text, "k.pto")
    e = info.value
    assert isinstance(e, ValueError)
    assert message in e.message, e.message
    assert (e.filename, e.line, e.col) == ("k.pto", line, col), str(e)
    rendered = str(e)
    assert f"--> k.pto:{line}:{col}" in rendered
    src = text.split("\n")[line - 1]
    if len(src) <= 150:
        assert src in rendered
        caret = rendered.split("\n")[4]
        assert caret.endswith("^") and len(caret.split("| ", 1)[1]) == col


def test_error_rendering_has_hint_and_caret():
    with pytest.raises(PtoParseError) as info:
        parse_module(kernel("%b = arith.addi %a, %x : index", "func.return"), "k.pto")
    assert str(info.value) == (
        "Error: use of undefined value %x\n"
        "  --> k.pto:3:25\n"
        "    |\n"
        "  3 |     %b = arith.addi %a, %x : index\n"
        "    |                         ^\n"
        "   = help: define %x before this line, in this region or an enclosing one")


def test_limits_are_errors_not_crashes():
    deep = "module {\n func.func @f(%c: i1) {\n" + "scf.if %c {\n" * 5000 + "}\n" * 5000 + "func.return\n}\n}\n"
    with pytest.raises(PtoParseError, match="nested more than 100 levels"):
        parse_module(deep)
    with pytest.raises(PtoParseError, match="nested more than 50 levels"):
        parse_module("module attributes {a = " + "[" * 5000 + "]" * 5000 + "} {\n}\n")
    with pytest.raises(PtoParseError, match="too long"):
        parse_module("module attributes {a = " + "9" * 100000 + "} {\n}\n")
    with pytest.raises(PtoParseError, match="result count"):
        parse_module(kernel("%r:99999999 = scf.if %c {", "}", "func.return"))
    with pytest.raises(PtoParseError, match="character"):
        parse_module("\x00module {\n}\n")
    with pytest.raises(TypeError):
        parse_module(b"module {}")  # type: ignore[arg-type]


def test_parse_type_errors():
    with pytest.raises(PtoParseError, match="unexpected"):
        parse_type("f32 f32")
    with pytest.raises(PtoParseError, match="tile_buf needs 'dtype='") as info:
        parse_type("!pto.tile_buf<loc=vec, rows=1, cols=1>")
    assert info.value.filename == "<type>"


# ---------------------------------------------------------------------------------------------
# fuzzing: every mutation of a valid text either parses (and round-trips) or raises PtoParseError


def _check(text: str) -> None:
    try:
        m = parse_module(text, "fuzz.pto")
    except PtoParseError as e:
        assert e.line >= 1 and e.col >= 1 and e.message
        str(e)
        return
    printed = print_module(m)
    m2 = parse_module(printed)
    assert print_module(m2) == printed
    assert_equivalent(m, m2)


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span(1) for m in TOKEN.finditer(text)]


def test_every_prefix_and_every_token_deletion_of_a_kernel():
    text = GOLDEN["softmax"]
    for a, b in _spans(text):
        _check(text[:a])
        _check(text[:a] + text[b:])


_MUTATION = st.tuples(st.sampled_from(["del_token", "dup_token", "move_tokens", "del_line", "dup_line",
                                       "char", "truncate"]),
                      st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 8),
                      st.sampled_from(list('%@{}()[]<>:,="\\!#^-0x.?/ \n\t') + ["\x00", "ü"]))


def _mutate(text: str, mutation) -> str:
    kind, x, y, n, ch = mutation
    spans = _spans(text)
    lines = text.split("\n")
    if kind == "del_token":
        a, b = spans[x % len(spans)]
        return text[:a] + text[b:]
    if kind == "dup_token":
        a, b = spans[x % len(spans)]
        return text[:a] + text[a:b] + " " + text[a:]
    if kind == "move_tokens":
        i = x % len(spans)
        j = min(len(spans) - 1, i + n)
        at = spans[y % len(spans)][0]
        return text[:at] + text[spans[i][0]:spans[j][1]] + " " + text[at:]
    if kind == "del_line":
        del lines[x % len(lines)]
        return "\n".join(lines)
    if kind == "dup_line":
        lines.insert(y % len(lines), lines[x % len(lines)])
        return "\n".join(lines)
    if kind == "char":
        at = x % (len(text) + 1)
        return text[:at] + ch + text[at + n % 3:]
    return text[: x % (len(text) + 1)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(GOLDEN)), st.lists(_MUTATION, min_size=1, max_size=4))
def test_fuzz_mutations_raise_only_parse_errors(name: str, mutations):
    text = GOLDEN[name]
    for m in mutations:
        text = _mutate(text, m)
        if not text:
            break
    _check(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(sorted({m.group(1) for t in GOLDEN.values() for m in TOKEN.finditer(t)})),
                max_size=40))
def test_fuzz_token_soup(tokens: list[str]):
    _check(" ".join(tokens))
    _check("module {\n  func.func @f(%a: index) {\n" + " ".join(tokens) + "\n  }\n}\n")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_arbitrary_text(text: str):
    _check(text)
    _check("module {\n" + text)
