"""Lexical pieces of the PTO text format shared by the printer, the parser and the verifier.

One table per concern: the token regex, the scalar type names, the scalar (`arith` / `math`) op
forms, the PTO ops that have their own syntax, comparison predicates, string escapes and the bit
patterns of special float constants. See docs/pto_format.md, "Grammar details".
"""

from __future__ import annotations

import math
import re
import struct

from pypto.errors import InvalidValue

# ---------------------------------------------------------------------------------------------
# tokens

# One regex, tried at every non-blank position; a token's kind is read from its first character.
# `[^<>\n]*` keeps `!dialect.type<...>` and `#dialect<...>` single tokens (our types never nest).
# The catch-all `\S` turns any stray character into a one-character token the parser rejects.
# Blanks before a token are eaten by the same match (the group is the token): much faster than
# letting findall retry every alternative at each blank.
TOKEN = re.compile(
    r"[ \t\r\f\v]*("
    r"%[A-Za-z0-9_.$]+(?:#[0-9]+)?"  # value use / def (`%r#1` names result 1 of `%r:2`)
    r"|[(){}\[\],=:]"  # punctuation
    r"|[A-Za-z_][A-Za-z0-9_.$]*"  # identifier, keyword, op name, scalar type
    r"|![A-Za-z_][A-Za-z0-9_.]*<[^<>\n]*>"  # dialect type
    r"|#[A-Za-z_][A-Za-z0-9_.]*<[^<>\n]*>"  # enum attribute
    r"|[@^][A-Za-z0-9_.$]+"  # symbol, block label
    r'|@"(?:[^"\\\n]|\\.)*"'  # quoted symbol (any name: unicode identifiers)
    r"|->"
    r'|"(?:[^"\\\n]|\\.)*"'  # string
    r"|0[xX][0-9a-fA-F]+"  # hex integer (bit pattern of a float constant)
    r"|-?(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)"  # float
    r"|-?[0-9]+"  # integer
    r"|-inf\b"
    r"|//[^\n]*"  # comment (dropped)
    r"|\S)"
)

NAME_RE = re.compile(r"[A-Za-z0-9_.$]+")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.$]*")
_BAD_NAME_CHAR = re.compile(r"[^A-Za-z0-9_.$]")

def symbol_name(tok: str) -> str:
    """The name of a symbol token: `@name` or `@"any name"`."""
    return unquote(tok[1:]) if tok[1:2] == '"' else tok[1:]


# A value name printed by the printer: invalid characters become `_`.
def sanitize_name(name: str) -> str:
    if NAME_RE.fullmatch(name):
        return name
    return _BAD_NAME_CHAR.sub("_", name) or "v"


# ---------------------------------------------------------------------------------------------
# scalar types

INT_BITS: dict[str, int] = {
    "index": 64, "i1": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
    "ui4": 4, "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64,
}
FLOAT_BITS: dict[str, int] = {"f4": 4, "f8e4m3": 8, "f8e5m2": 8, "f16": 16, "bf16": 16, "f32": 32}
SCALAR_NAMES = frozenset(INT_BITS) | frozenset(FLOAT_BITS)
TILE_LOCS = ("vec", "mat", "left", "right", "acc", "bias")


def int_fits(value: int, ty: str) -> bool:
    """MLIR's rule: an N-bit constant may be written signed or unsigned (`i8` takes -128..255)."""
    bits = INT_BITS[ty]
    if ty.startswith("ui"):
        return 0 <= value < (1 << bits)
    if ty == "i1":
        return value in (0, 1)
    return -(1 << (bits - 1)) <= value < (1 << bits)


# ---------------------------------------------------------------------------------------------
# scalar ops: name -> form. Forms fix the syntax and the typing rule:
#   binary / unary: `%r = op %a[, %b] : T`             operands and result of type T
#   cast:           `%r = op %a : T to U`              operand T, result U
#   cmp:            `%r = op pred, %a, %b : T`         operands T, result i1, attrs["predicate"]
#   select:         `%r = op %c, %a, %b : T`           %c : i1, operands and result T
#   constant:       `%r = arith.constant V : T`        attrs["value"]

SCALAR_OPS: dict[str, str] = {"arith.constant": "constant", "arith.cmpi": "cmp", "arith.cmpf": "cmp",
                              "arith.select": "select"}
for _n in ("addi subi muli divsi divui remsi remui floordivsi ceildivsi minsi maxsi minui maxui andi ori "
           "xori shli shrsi shrui addf subf mulf divf minimumf maximumf minnumf maxnumf remf").split():
    SCALAR_OPS["arith." + _n] = "binary"
SCALAR_OPS["arith.negf"] = "unary"
for _n in "index_cast index_castui sitofp uitofp fptosi fptoui extf truncf extsi extui trunci bitcast".split():
    SCALAR_OPS["arith." + _n] = "cast"
for _n in "absi absf exp exp2 log log2 log1p sqrt rsqrt tanh sin cos erf ceil floor round roundeven trunc".split():
    SCALAR_OPS["math." + _n] = "unary"
for _n in "powf ipowi copysign atan2".split():
    SCALAR_OPS["math." + _n] = "binary"
SCALAR_ARITY = {"binary": 2, "unary": 1, "cast": 1, "cmp": 2, "select": 3, "constant": 0}

CMP_PREDICATES = {
    "arith.cmpi": frozenset("eq ne slt sle sgt sge ult ule ugt uge".split()),
    "arith.cmpf": frozenset("false oeq ogt oge olt ole one ord ueq ugt uge ult ule une uno true".split()),
}

# PTO ops with their own syntax (every other `pto.*` op is a DPS instruction `ins(...) outs(...)`,
# a nullary `%r = pto.x : T`, or an attribute-only op `pto.x {...}`).
PTO_FORMS: dict[str, str] = {
    "pto.make_tensor_view": "make_tensor_view",
    "pto.partition_view": "window",
    "pto.tensor_slice": "window",
    "pto.alloc_tile": "alloc_tile",
    "pto.alloc_tensor": "alloc_tensor",
    "pto.tensor_reshape": "reshape",
    "pto.tgetval": "read",
    "pto.tensor_read": "read",
    "pto.tensor_write": "write",
    "pto.tensor_dim": "dim",
    "pto.submit": "submit",
}
TERMINATORS = frozenset(("scf.yield", "scf.condition", "func.return", "scf.break", "scf.continue"))
REGION_OPS = frozenset(("scf.for", "scf.if", "scf.while"))
SUBMIT_DIRS = frozenset(("in", "out", "inout", "scalar"))
# operands of a submit that are not kernel arguments (the task language): explicit dependencies
# (task ids), the predicate element (tensor + indices) and the spmd block count
TASK_DIRS = frozenset(("dep", "pred", "pred_idx", "core_num"))
JOIN_KERNEL = "__pto_join"  # the callee of a task without work (pl.system.task_dummy)


def is_dps_name(name: str) -> bool:
    """`pto.t*` instructions without a syntax of their own are destination-passing."""
    return name.startswith("pto.t") and name not in PTO_FORMS


# ---------------------------------------------------------------------------------------------
# strings

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_UNESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))")
_SIMPLE = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def quote(s: str) -> str:
    if not _NEEDS_ESCAPE.search(s):
        return f'"{s}"'
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\{ord(m.group()):02X}"), s) + '"'


def unquote(tok: str) -> str:
    """The value of a string token; raises ValueError on an unknown escape."""
    body = tok[1:-1]
    if "\\" not in body:
        return body

    def sub(m: re.Match) -> str:
        if m.group(1) is not None:
            return chr(int(m.group(1), 16))
        c = _SIMPLE.get(m.group(2))
        if c is None:
            raise InvalidValue(f"unknown escape '\\{m.group(2)}' in string (use \\\\, \\\", \\n, \\t or \\XX)")
        return c

    return _UNESCAPE.sub(sub, body)


# ---------------------------------------------------------------------------------------------
# floats

def format_float(v: float) -> str:
    """An untyped float attribute: shortest round-trip decimal, `inf`, `-inf` or `nan`."""
    v = float(v)
    if math.isfinite(v):
        return repr(v)
    return "nan" if v != v else ("inf" if v > 0 else "-inf")


def _f8e4m3_decode(b: int) -> float:
    sign = -1.0 if b & 0x80 else 1.0
    e, m = (b >> 3) & 0xF, b & 0x7
    if e == 0xF and m == 0x7:
        return math.nan
    if e == 0:
        return sign * m * 2.0 ** -9
    return sign * (1 + m / 8) * 2.0 ** (e - 7)


def _f4_decode(b: int) -> float:  # e2m1: no inf, no nan
    sign = -1.0 if b & 0x8 else 1.0
    e, m = (b >> 1) & 0x3, b & 0x1
    if e == 0:
        return sign * m * 0.5
    return sign * (1 + m / 2) * 2.0 ** (e - 1)


def bits_to_float(bits: int, ty: str) -> float:
    """The value of a float constant written as its bit pattern (`0x7F800000 : f32` is +inf)."""
    width = FLOAT_BITS[ty]
    if bits >= 1 << width:
        raise InvalidValue(f"bit pattern 0x{bits:X} is wider than {ty} ({width} bits)")
    if ty == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if ty == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if ty == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if ty == "f8e5m2":
        return struct.unpack("<e", struct.pack("<H", bits << 8))[0]
    if ty == "f8e4m3":
        return _f8e4m3_decode(bits)
    return _f4_decode(bits)


def special_float_bits(v: float, ty: str) -> str:
    """`0x...` for an infinite or NaN constant of type `ty` (the only constants printed as bits)."""
    if ty == "f32":
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
    elif ty == "f16":
        bits = struct.unpack("<H", struct.pack("<e", v))[0]
    elif ty == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", v))[0] >> 16
    elif ty == "f8e5m2":
        bits = struct.unpack("<H", struct.pack("<e", v))[0] >> 8
    elif ty == "f8e4m3" and v != v:
        bits = 0x7F
    else:
        raise InvalidValue(f"{ty} cannot hold {format_float(v)}")
    return f"0x{bits:0{FLOAT_BITS[ty] // 4}X}"
