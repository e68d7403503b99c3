"""How the CPU target computes each PTO instruction: one table, keyed by instruction.

- `Functor` rows are elementwise instructions computed by a functor of `pto::op` (pto/functors.hpp,
  or the row's own `body`). Their C++ entry points (`pto::TADD(dst, a, b)`, ...) are generated from
  the row (`instruction_source`), and the fuser (fusion.py) chains the fusable ones into one loop:
  what an instruction is and whether it fuses is said once, here.
- `Library` rows are instructions written by hand in the tile library (pto/<header>), or emitted
  by the kernel emitter itself (`header="emitter"`).

The registry (`pypto.ops`) says which instruction an op becomes (`OpDef.pto`); this table says how
the CPU runs it. `tests/ops/test_registry_completeness.py` checks that every op's instruction has
a row. Extension ops add rows with `register` (see pypto/extend.py and docs/extending.md).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from pypto.errors import InvalidValue


class Form(enum.Enum):
    """The operands of a functor instruction (destination first in C++)."""

    BINARY = "binary"  # (dst, a, b): F{}(a, b)
    SCALAR = "scalar"  # (dst, a, s): F<CT>{s}(a)
    UNARY = "unary"  # (dst, a): F{}(a)
    ROW_EXPAND = "row_expand"  # (dst, a, v): F{}(a, v[i, 0])
    COL_EXPAND = "col_expand"  # (dst, a, v): F{}(a, v[0, j])


_MACRO = {Form.BINARY: "PTO_BINARY", Form.SCALAR: "PTO_SCALAR", Form.UNARY: "PTO_UNARY",
          Form.ROW_EXPAND: "PTO_ROW_EXPAND", Form.COL_EXPAND: "PTO_COL_EXPAND"}


@dataclass(frozen=True)
class Functor:
    """An elementwise instruction: `pto::op::<functor>` over the destination's valid region."""

    functor: str
    form: Form
    fusable: bool = True
    scratch: bool = False  # the instruction also takes a scratch tile (the hardware's; unused here)
    body: str | None = None  # C++ of a functor pto/functors.hpp does not define: `template <class V>
    # PTO_INLINE V operator()(V x[, V y]) const { <body> }` (extension ops)


@dataclass(frozen=True)
class Fold:
    """A row (`axis="row"`: [R, C] -> [R, 1]) or column reduction computed element by element:
    acc = combine(acc, map(x)) from `init`, in the compute type. `map` and `combine` are C++
    expressions in `x` and in `a, b` (extension reductions)."""

    axis: str
    map: str
    combine: str
    init: float
    fusable: bool = False


@dataclass(frozen=True)
class Library:
    """An instruction written by hand: in the tile library's `header`, or by the kernel emitter."""

    header: str
    fusable: bool = False  # the fuser has its own code for it (loads, stores, moves, broadcasts)


Lowering = Functor | Fold | Library

B, S, U, RE, CE = Form.BINARY, Form.SCALAR, Form.UNARY, Form.ROW_EXPAND, Form.COL_EXPAND
ELEM, RED, MEM, MM, EMIT = "elementwise.hpp", "reduce.hpp", "memory.hpp", "matmul.hpp", "emitter"
SORT = "sort.hpp"
IDX = "indexing.hpp"
GS = "gather_sort.hpp"
GMEM = "gather_memory.hpp"
MASK = "masks.hpp"

CPU: dict[str, Lowering] = {
    # tile x tile
    "tadd": Functor("Add", B), "tsub": Functor("Sub", B), "tmul": Functor("Mul", B), "tdiv": Functor("Div", B),
    "tmax": Functor("Max", B), "tmin": Functor("Min", B),
    "trem": Functor("Rem", B, fusable=False),  # (lane by lane: no vector form to chain)
    "tand": Functor("And", B, fusable=False), "tor": Functor("Or", B, fusable=False),  # (integers only)
    "txor": Functor("Xor", B, fusable=False, scratch=True),
    "tshl": Functor("Shl", B, fusable=False), "tshr": Functor("Shr", B, fusable=False),
    # tile x scalar
    "tadds": Functor("AddS", S), "tsubs": Functor("SubS", S), "tmuls": Functor("MulS", S),
    "tdivs": Functor("DivS", S), "tmaxs": Functor("MaxS", S), "tmins": Functor("MinS", S),
    "tlrelu": Functor("LRelu", S),
    "trems": Functor("RemS", S, fusable=False), "tands": Functor("AndS", S, fusable=False),
    "tors": Functor("OrS", S, fusable=False), "txors": Functor("XorS", S, fusable=False, scratch=True),
    "tshls": Functor("ShlS", S, fusable=False), "tshrs": Functor("ShrS", S, fusable=False),
    # unary
    "texp": Functor("Exp", U), "tlog": Functor("Log", U), "tsqrt": Functor("Sqrt", U),
    "trsqrt": Functor("Rsqrt", U), "trecip": Functor("Recip", U), "tneg": Functor("Neg", U),
    "tabs": Functor("Abs", U), "trelu": Functor("Relu", U),
    # max(x, 0) + log1p(e ** -|x|), log1p(e) as log(1 + e) * e / ((1 + e) - 1) (exact where 1 + e rounds)
    "tsoftplus": Functor("Softplus", U, body="V e = simd::vexp(-simd::vabs(x)); V y = one<V>() + e; V d = y - one<V>(); "
                                             "return simd::vrelu(x) + select(d == zero<V>(), e, simd::vlog(y) * (e / d));"),
    # the math family: the C++ standard library, lane by lane, in fp32
    **{f"t{n}": Functor(n.capitalize() + "Std", U, body=f"return simd::lanewise(x, [](lane_t<V> v) {{ return "
                        f"lane_t<V>(std::{n}(v)); }});")
       for n in ("tanh", "sin", "cos", "exp2", "expm1", "log2", "log10", "log1p", "floor", "ceil", "trunc", "rint",
                 "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "cbrt")},
    **{f"t{n}": Functor(n.capitalize() + "Std", B, body=f"return simd::lanewise2(x, y, [](lane_t<V> a, lane_t<V> b) "
                        f"{{ return lane_t<V>(std::{n}(a, b)); }});")
       for n in ("pow", "atan2", "hypot", "copysign")},
    # sign: +-1, zeros (either sign) give +0, NaN stays
    "tsign": Functor("Sign", U, body="V z = zero<V>(); return select(x > z, one<V>(), select(x < z, z - one<V>(), "
                                     "select(x == z, z, x)));"),
    # predicates: 1 / 0 in the compute type, stored into a BOOL tile (!= 0); not fusable (a BOOL result)
    "tisnan": Functor("IsNan", U, fusable=False, body="return select(x != x, one<V>(), zero<V>());"),
    "tisfinite": Functor("IsFinite", U, fusable=False, body="if constexpr (is_fp<V>()) return select((x - x) == zero<V>(), "
                                                            "one<V>(), zero<V>()); else return one<V>();"),
    "tsignbit": Functor("SignBit", U, fusable=False, body="using L = lane_t<V>; if constexpr (is_fp<V>()) { using I = "
                        "std::conditional_t<sizeof(L) == 4, int32_t, int64_t>; return select(simd::as<I>(x) < I(0), "
                        "one<V>(), zero<V>()); } else return select(x < zero<V>(), one<V>(), zero<V>());"),
    "tfmod": Functor("Rem", B, fusable=False), "tfmods": Functor("RemS", S, fusable=False),  # (= trem / trems)
    # Python-style: a nonzero remainder takes the divisor's sign, a zero one too (floats, as NumPy)
    "tremainder": Functor("Remainder", B, fusable=False, body=(
        "using L = lane_t<V>; if constexpr (std::is_floating_point_v<L>) return simd::lanewise2(x, y, [](L a, L b) "
        "{ L m = std::fmod(a, b); if (b == L(0) || m != m) return m; if (m != L(0)) return (m < L(0)) != (b < L(0)) "
        "? m + b : m; return std::copysign(L(0), b); }); else { V z = zero<V>(); V r = Rem{}(x, y); "
        "return select((r != z) & ((r ^ y) < z), r + y, r); }")),
    # integers: the truncated quotient stepped down (up) where the remainder is nonzero and has the
    # divisor's other (same) sign; x / 0 = 0 as Div
    "tfloordiv": Functor("FloorDiv", B, fusable=False, body=(
        "using L = lane_t<V>; if constexpr (std::is_floating_point_v<L>) return simd::vfloor(x / y); else { "
        "V z = zero<V>(); V q = Div{}(x, y); V r = simd::wsub(x, simd::wmul(q, y)); "
        "return select((r != z) & (y != z) & ((r ^ y) < z), simd::wsub(q, one<V>()), q); }")),
    "tceildiv": Functor("CeilDiv", B, fusable=False, body=(
        "using L = lane_t<V>; if constexpr (std::is_floating_point_v<L>) return simd::vceil(x / y); else { "
        "V z = zero<V>(); V q = Div{}(x, y); V r = simd::wsub(x, simd::wmul(q, y)); "
        "return select((r != z) & (y != z) & ((r ^ y) >= z), simd::wadd(q, one<V>()), q); }")),
    # Euclid on the magnitudes (unsigned: |MIN| fits)
    "tgcd": Functor("Gcd", B, fusable=False, body=(
        "using L = lane_t<V>; return simd::lanewise2(x, y, [](L a, L b) { using U = std::make_unsigned_t<L>; "
        "U p = U(a), q = U(b); if constexpr (std::is_signed_v<L>) { if (a < 0) p = U(0) - p; if (b < 0) q = U(0) - q; } "
        "while (q != 0) { U t = U(p % q); p = q; q = t; } return L(p); });")),
    # a tile op a broadcast row / column vector
    "trowexpandadd": Functor("Add", RE), "trowexpandsub": Functor("Sub", RE), "trowexpandmul": Functor("Mul", RE),
    "trowexpanddiv": Functor("Div", RE),
    "trowexpandmax": Functor("Max", RE), "trowexpandmin": Functor("Min", RE),
    "tcolexpandadd": Functor("Add", CE), "tcolexpandsub": Functor("Sub", CE), "tcolexpandmul": Functor("Mul", CE),
    "tcolexpanddiv": Functor("Div", CE),
    "tcolexpandmax": Functor("Max", CE), "tcolexpandmin": Functor("Min", CE),
    "trowexpandexpdif": Functor("ExpDif", RE), "tcolexpandexpdif": Functor("ExpDif", CE),
    # written by hand in the tile library
    "tcmp": Library(ELEM), "tcmps": Library(ELEM), "tprelu": Library(ELEM), "taddc": Library(ELEM),
    "tsubc": Library(ELEM), "taddsc": Library(ELEM), "tsubsc": Library(ELEM), "tsel": Library(ELEM),
    "tsels": Library(ELEM), "tnot": Library(ELEM), "tcvt": Library(ELEM), "texpands": Library(ELEM, fusable=True),
    "ttri": Library(ELEM),  # a tile made from its coordinates
    "trowsum": Library(RED), "trowmax": Library(RED), "trowmin": Library(RED),
    "trowabsmax": Fold("row", map="x < 0 ? -x : x", combine="(a > b || a != a) ? a : b", init=0.0),  # NaN wins
    "tcolsum": Library(RED), "tcolmax": Library(RED), "tcolmin": Library(RED),
    "trowprod": Fold("row", map="x", combine="simd::wmul(a, b)", init=1.0),  # (integers wrap)
    "tcolprod": Fold("col", map="x", combine="simd::wmul(a, b)", init=1.0),
    # order-dependent (pto/sort.hpp)
    "trowargmax": Library(SORT), "trowargmin": Library(SORT), "tcolargmax": Library(SORT),
    "tcolargmin": Library(SORT), "trowcumsum": Library(SORT), "trowcumprod": Library(SORT),
    "trowtopk": Library(SORT), "trowtopkidx": Library(SORT), "tsort32": Library(SORT), "tmrgsort": Library(SORT),
    "trowexpand": Library(RED, fusable=True), "tcolexpand": Library(RED, fusable=True),
    "ttrans": Library(MEM), "treshape": Library(MEM), "tconcat": Library(MEM), "tfillpad": Library(MEM),
    "textract": Library(MEM), "tinsert": Library(MEM),
    "tgather": Library(IDX), "tscatter": Library(IDX), "tgathermask": Library(IDX),
    "treinterpret": Library(IDX), "tci": Library(ELEM), "trandom": Library(ELEM),
    # today's gather / scatter / sort forms (pypto/ops/gather_scatter.py)
    "tgatherflat": Library(GS), "tscattermask": Library(GS), "tscatterupdate": Library(GS),
    "tsort32idx": Library(GS), "tmrgsort1": Library(GS), "tmrgsort2": Library(GS),
    "tgathercmp": Library(GS), "tgathercnt": Library(GS), "tgatherb": Library(GS), "tscatterflat": Library(GS),
    # data-dependent DDR access (pypto/ops/gather_memory.py): the window is the whole tensor
    "tmgather": Library(GMEM), "tmscatter": Library(GMEM), "tpagedgather": Library(GMEM),
    "tpartadd": Library(ELEM), "tpartmul": Library(ELEM), "tpartmax": Library(ELEM), "tpartmin": Library(ELEM),
    # packed predicate masks (pto/masks.hpp)
    "tcmp.mask": Library(MASK), "tcmps.mask": Library(MASK), "tsel.mask": Library(MASK),
    "tmatmul": Library(MM), "tmatmul.acc": Library(MM), "tmatmul.bias": Library(MM),
    "tbatchmatmul": Library(MM), "tbatchmatmul.acc": Library(MM), "texpandclone": Library(MEM),
    "textract.tile": Library(MEM), "tsetvalid": Library(MEM),
    "tgemv": Library(MM), "tgemv.acc": Library(MM), "tgemv.bias": Library(MM),
    # emitted by KernelEmitter's own methods (op_tload, ...)
    "tload": Library(EMIT, fusable=True), "tstore": Library(EMIT, fusable=True), "tmov": Library(EMIT, fusable=True),
    "tgetval": Library(EMIT), "tsetval": Library(EMIT),
    "set_flag": Library(EMIT), "wait_flag": Library(EMIT), "pipe_barrier": Library(EMIT),
}

_INSTR = re.compile(r"t[a-z0-9_]+(\.[a-z0-9_]+)?")
_FUNCTOR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VERSION = [0]  # bumped by `register`, so cached instruction text is rebuilt


def register(instruction: str, lowering: Lowering) -> None:
    """Add the lowering of a new instruction (extension ops). Re-registering the same row is a
    no-op; a different row for a known instruction is an error."""
    if not _INSTR.fullmatch(instruction):
        raise InvalidValue(f"PTO instruction names are lowercase `t<name>` words, got {instruction!r}")
    if isinstance(lowering, Functor) and not _FUNCTOR.fullmatch(lowering.functor):
        raise InvalidValue(f"functor name {lowering.functor!r} is not a C++ identifier")
    if isinstance(lowering, Fold) and lowering.axis not in ("row", "col"):
        raise InvalidValue(f"pto.{instruction}: a fold runs along 'row' or 'col', not {lowering.axis!r}")
    if isinstance(lowering, Functor) and lowering.body is not None and lowering.form not in (U, B):
        raise InvalidValue(f"pto.{instruction}: a functor with its own body is unary or binary, not {lowering.form.value}")
    prev = CPU.get(instruction)
    if prev == lowering:
        return
    if prev is not None:
        raise InvalidValue(f"the CPU target already lowers pto.{instruction} ({prev})")
    CPU[instruction] = lowering
    _VERSION[0] += 1


def lowering(instruction: str) -> Lowering | None:
    return CPU.get(instruction)


def cpp_name(instruction: str) -> str:
    """The C++ entry point of an instruction: `tmatmul.acc` -> `TMATMUL_ACC`."""
    return instruction.replace(".", "_").upper()


def _double(v: float) -> str:
    v = float(v)
    if v != v:
        return "std::numeric_limits<double>::quiet_NaN()"
    if v in (float("inf"), float("-inf")):
        return f"{'-' if v < 0 else ''}std::numeric_limits<double>::infinity()"
    return repr(v)


_CACHE: dict[int, str] = {}


def instruction_source() -> str:
    """C++ for every functor row: extension functors, then one entry point per instruction (the
    macros are defined in pto/elementwise.hpp). Program sources include it after pto/pto.hpp."""
    got = _CACHE.get(_VERSION[0])
    if got is not None:
        return got
    lines = ["// ---- generated from pypto/backend/cpu/lowering.py: the functor instructions ----",
             "namespace pto {", "namespace op {"]
    for instr, row in sorted(CPU.items()):
        if isinstance(row, Functor) and row.body is not None:
            params = "V x" if row.form is U else "V x, V y"
            lines.append(f"struct {row.functor} {{ template <class V> PTO_INLINE V operator()({params}) const "
                         f"{{ {row.body} }} }};  // pto.{instr}")
        elif isinstance(row, Fold):
            base = cpp_name(instr).title().replace("_", "")
            lines.append(f"struct {base}Map {{ template <class V> PTO_INLINE V operator()(V x) const "
                         f"{{ return {row.map}; }} }};")
            lines.append(f"struct {base}Combine {{ template <class V> PTO_INLINE V operator()(V a, V b) const "
                         f"{{ return {row.combine}; }} }};")
    lines.append("}  // namespace op")
    for instr, row in sorted(CPU.items()):
        if isinstance(row, Functor):
            scratch = "_SCRATCH" if row.scratch else ""
            lines.append(f"{_MACRO[row.form]}{scratch}({cpp_name(instr)}, {row.functor})")
        elif isinstance(row, Fold):
            base = cpp_name(instr).title().replace("_", "")
            lines.append(f"PTO_{row.axis.upper()}_FOLD({cpp_name(instr)}, {base}Map, {base}Combine, "
                         f"{_double(row.init)})")
    lines.append("}  // namespace pto")
    text = "\n".join(lines) + "\n"
    _CACHE.clear()
    _CACHE[_VERSION[0]] = text
    return text


__all__ = ["CPU", "Fold", "Form", "Functor", "Library", "Lowering", "cpp_name", "instruction_source", "lowering", "register"]
