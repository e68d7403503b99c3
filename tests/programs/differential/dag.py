"""Random DAGs of tile (or tensor) operations: the description, its `pl` text and its NumPy value.

A *body* is a list of statements over values (`Val`): `Apply` (one op; it is its own value),
`IfStmt` (both branches yield values of one kind) and `LoopStmt` (a `pl.range` loop carrying
tiles as iter_args, optionally loading a new tile per iteration). Every value has a *kind* — `full`
([R, C]), `row` ([R, 1]) or `col` ([1, C]) — a dtype, and a static `bound` on its magnitude that
the generator keeps under the dtype's limit, so no program overflows, and domain-guarded ops
(exp, sqrt, log, rsqrt, recip, div) only ever see arguments in their domain.

`emit` writes a body as `pl` source lines; `evaluate` computes it with plain NumPy on arrays of the
valid region (the compiler's op registry is not used), rounding every result to its dtype the way
the language defines it (low-precision floats compute in fp32, integers wrap). Both read the same
description, so the text and the expected numbers cannot drift apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

FLOATS = ("FP32", "FP16", "BF16")
NP_DTYPE = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32}
LIMIT = {"FP32": 3e4, "FP16": 1e3, "BF16": 1e3, "INT32": 1e6}  # largest |value| a program may reach
EPS = {"FP32": 2.0 ** -23, "FP16": 2.0 ** -10, "BF16": 2.0 ** -7, "INT32": 0.0}


# ---------------------------------------------------------------------------------------------
# the description


@dataclass(eq=False)
class Val:
    kind: str  # "full" | "row" | "col"
    dtype: str
    bound: float


@dataclass(eq=False)
class Leaf(Val):
    """A value defined outside the op list: a loaded tile (`key` names the input), a tensor parameter,
    an iter_arg or the return var of an if / a loop."""

    key: str = ""


@dataclass(eq=False)
class Apply(Val):
    fn: str = ""
    args: tuple[Val, ...] = ()
    scalar: float | int | str | None = None  # a constant, or the name of a scalar parameter
    attr: str | None = None  # cast: "DTYPE/mode"; cmp: the comparison
    spelling: int = 0
    inline: bool = False  # written nested in its only user's call, when that is an op of the same block


@dataclass(eq=False)
class IfStmt:
    cond: tuple[str, str, int]  # (index parameter, comparison, constant)
    then: list
    then_res: list[Val]
    orelse: list
    else_res: list[Val]
    outs: list[Leaf]
    plain: bool = False  # spelled with plain assignments in both branches instead of pl.yield_


@dataclass(eq=False)
class LoopStmt:
    var: str
    trips: int
    style: int  # which spelling of the range / offsets
    accs: list[Leaf]
    inits: list[Val]
    loads: list[Leaf]  # loaded every iteration; Leaf.key names the (wide) input
    body: list
    yields: list[Val]
    outs: list[Leaf]
    plain: bool = False  # non-SSA spelling: `acc = init` before, `acc = new` at the end of the body
    unroll: bool = False  # with plain: `pl.unroll` (constant bounds; unrolled by the compiler)


Stmt = Apply | IfStmt | LoopStmt

# op name -> (form, allowed on ints, allowed on floats, tensor-level name or None)
OPS: dict[str, tuple[str, bool, bool, str | None]] = {
    "add": ("bin", True, True, "add"), "sub": ("bin", True, True, "sub"), "mul": ("bin", True, True, "mul"),
    "div": ("bin", False, True, "div"), "maximum": ("bin", True, True, "maximum"),
    "minimum": ("bin", True, True, "minimum"), "and_": ("bin", True, False, None), "or_": ("bin", True, False, None),
    "adds": ("scalar", True, True, "add"), "subs": ("scalar", True, True, "sub"), "muls": ("scalar", True, True, "mul"),
    "divs": ("scalar", True, True, "div"), "maxs": ("scalar", True, True, None), "mins": ("scalar", True, True, None),
    "neg": ("unary", True, True, "neg"), "abs": ("unary", True, True, "abs"), "relu": ("unary", True, True, "relu"),
    "exp": ("unary", False, True, "exp"), "sqrt": ("unary", False, True, "sqrt"), "rsqrt": ("unary", False, True, "rsqrt"),
    "recip": ("unary", False, True, "recip"), "log": ("unary", False, True, "log"),
    "row_sum": ("rowred", True, True, "row_sum"), "row_max": ("rowred", True, True, "row_max"),
    "row_min": ("rowred", True, True, "row_min"),
    "col_sum": ("colred", True, True, None), "col_max": ("colred", True, True, None),
    "col_min": ("colred", True, True, None),
    "row_expand_add": ("rowexp", True, True, "row_expand_add"), "row_expand_sub": ("rowexp", True, True, "row_expand_sub"),
    "row_expand_mul": ("rowexp", True, True, "row_expand_mul"), "row_expand_div": ("rowexp", False, True, "row_expand_div"),
    "col_expand_add": ("colexp", True, True, "col_expand_add"), "col_expand_sub": ("colexp", True, True, "col_expand_sub"),
    "col_expand_mul": ("colexp", True, True, "col_expand_mul"), "col_expand_div": ("colexp", False, True, "col_expand_div"),
    "col_expand": ("colbcast", True, True, None), "expands": ("fill", True, True, None),
    "cast": ("cast", True, True, "cast"),
    # tile-only families: compare / select (float operands must be exact, see `exact`), integer
    # remainder, shifts and bit ops, leaky relu, three-operand adds
    "cmp": ("cmp", True, True, None), "cmps": ("cmps", True, True, None), "sel": ("sel", True, True, None),
    "rem": ("bin", True, False, None), "rems": ("scalar", True, False, None),
    "xor": ("bin", True, False, None), "not_": ("unary", True, False, None),
    "shls": ("scalar", True, False, None), "shrs": ("scalar", True, False, None),
    "lrelu": ("scalar", False, True, None),
    "addc": ("ternary", True, True, None), "subc": ("ternary", True, True, None),
    "addsc": ("ternary_s", True, True, None), "subsc": ("ternary_s", True, True, None),
}
_SCALAR_BASE = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div", "maxs": "maximum", "mins": "minimum",
                "rems": "rem", "shls": "shl", "shrs": "shr", "lrelu": "lrelu"}
_NO_UNIFIED_SCALAR = {"rems", "shls", "shrs", "lrelu"}  # spelled only by their own names
CMP_TYPES = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
             "ge": np.greater_equal}
EXACT_OPS = {"neg", "abs", "relu", "maximum", "minimum", "maxs", "mins", "sel", "cmp", "cmps", "col_expand",
             "expands", "row_max", "row_min", "col_max", "col_min"}  # no rounding: equal on every backend
_OPERATOR = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
CAST_MODES = ("round", "rint", "floor", "ceil", "trunc")


# ---------------------------------------------------------------------------------------------
# NumPy semantics (independent of the compiler's registry)


def compute_dtype(dtype: str, wide: bool):
    if dtype == "INT32":
        return np.int64
    return np.float64 if wide else np.float32


def to_dtype(x: np.ndarray, dtype: str, wide: bool) -> np.ndarray:
    """Round a computed value to `dtype` (the wide reference keeps float64 for floats)."""
    if dtype == "INT32":
        return np.asarray(x).astype(np.int64).astype(np.int32)
    if wide:
        return np.asarray(x, np.float64)
    return np.asarray(x, np.float32).astype(NP_DTYPE[dtype])


def _cast(x: np.ndarray, src: str, attr: str, wide: bool) -> np.ndarray:
    dst, mode = attr.split("/")
    if dst == "INT32" and src != "INT32":
        v = x.astype(np.float64)
        r = {"round": lambda v: np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5)), "rint": np.rint,
             "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[mode](v)
        return r.astype(np.int64).astype(np.int32)
    if wide:
        return x.astype(np.float64) if dst != "INT32" else x.astype(np.int32)
    return x.astype(np.float32).astype(NP_DTYPE[dst]) if dst != "INT32" else x.astype(np.int32)


def _trunc_div(a, b):
    if np.result_type(a, b).kind in "iu":
        q = np.abs(a) // np.abs(b)
        return np.where((np.sign(a) * np.sign(b)) < 0, -q, q)
    return a / b


def _c_rem(a, b):
    """C `%`: the sign of the dividend."""
    return np.sign(a) * (np.abs(a) % np.abs(b))


_NP2: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _trunc_div, "maximum": np.maximum,
    "minimum": np.minimum, "and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor, "rem": _c_rem,
    "shl": np.left_shift, "shr": np.right_shift, "lrelu": lambda x, s: np.where(x > 0, x, x * s),
}
_NP1: dict[str, Callable] = {
    "neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, 0), "exp": np.exp, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "recip": lambda x: 1 / x, "log": np.log, "not_": np.invert,
}
_RED = {"sum": np.sum, "max": np.max, "min": np.min}


def apply_np(v: Apply, args: list[np.ndarray], scalars: dict, wide: bool) -> np.ndarray:
    form = OPS[v.fn][0]
    cd = compute_dtype(v.args[0].dtype if v.args else v.dtype, wide)
    xs = [np.asarray(a).astype(cd) for a in args]
    s = scalars.get(v.scalar, v.scalar) if isinstance(v.scalar, str) else v.scalar
    if s is not None:
        s = cd(s) if cd is not np.int64 else np.int64(s)
    if form == "bin":
        r = _NP2[v.fn](xs[0], xs[1])
    elif form == "scalar":
        r = _NP2[_SCALAR_BASE[v.fn]](xs[0], s)
    elif form == "unary":
        r = _NP1[v.fn](xs[0])
    elif form == "rowred":
        r = _RED[v.fn[4:]](xs[0], axis=1, keepdims=True)
    elif form == "colred":
        r = _RED[v.fn[4:]](xs[0], axis=0, keepdims=True)
    elif form in ("rowexp", "colexp"):
        r = _NP2[v.fn.rsplit("_", 1)[1]](xs[0], xs[1])
    elif form == "colbcast":
        r = np.broadcast_to(xs[1], xs[0].shape)
    elif form == "fill":
        r = np.full(xs[0].shape, s, cd)
    elif form in ("cmp", "cmps"):
        r = CMP_TYPES[v.attr or "eq"](xs[0], xs[1] if form == "cmp" else s).astype(cd)
    elif form == "sel":
        r = np.where(xs[0] != 0, xs[1], xs[2])
    elif form == "ternary":
        r = xs[0] + xs[1] + xs[2] if v.fn == "addc" else xs[0] - xs[1] - xs[2]
    elif form == "ternary_s":
        r = xs[0] + s + xs[1] if v.fn == "addsc" else xs[0] - s - xs[1]
    else:  # cast
        return _cast(np.asarray(args[0]), v.args[0].dtype, v.attr or "", wide)
    return to_dtype(r, v.dtype, wide)


@dataclass
class EvalCtx:
    """What a body needs besides its statements: scalar parameter values and per-iteration loads."""

    scalars: dict
    load: Callable[[str, int], np.ndarray]  # (input key, iteration) -> the valid region loaded
    wide: bool = False
    peak: float = 0.0  # largest |value| seen (scales the float tolerance)


def evaluate(body: list, env: dict, ctx: EvalCtx) -> None:
    """Run `body`, adding every value it defines to `env` (Val -> array)."""
    for s in body:
        if isinstance(s, Apply):
            env[s] = apply_np(s, [env[a] for a in s.args], ctx.scalars, ctx.wide)
            if s.dtype in FLOATS and env[s].size:
                ctx.peak = max(ctx.peak, float(np.max(np.abs(env[s].astype(np.float64)))))
        elif isinstance(s, IfStmt):
            name, cmp, k = s.cond
            take = CMP_OPS[cmp](ctx.scalars[name], k)
            inner = dict(env)
            evaluate(s.then if take else s.orelse, inner, ctx)
            for o, r in zip(s.outs, s.then_res if take else s.else_res):
                env[o] = inner[r]
        else:
            cur = [env[v] for v in s.inits]
            for t in range(s.trips):
                inner = dict(env)
                inner.update(zip(s.accs, cur))
                for ld in s.loads:
                    inner[ld] = ctx.load(ld.key, t)
                evaluate(s.body, inner, ctx)
                cur = [inner[y] for y in s.yields]
            env.update(zip(s.outs, cur))


CMP_OPS = {">": lambda a, b: a > b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
        "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


# ---------------------------------------------------------------------------------------------
# text


@dataclass
class EmitCtx:
    level: str  # "tile" or "tensor"
    # (leaf, indent, loop var, style) -> the lines loading a per-iteration tile
    load_lines: Callable[[Leaf, str, str, int, int], list[str]] | None = None
    names: dict = field(default_factory=dict)
    pinned: set = field(default_factory=set)  # values the caller refers to by name (stored, returned)
    n: int = 0

    def __post_init__(self) -> None:
        self.inlined: dict = {}  # value -> its call text, written where it is used

    def name(self, v: Val, hint: str = "t") -> str:
        if v in self.inlined:
            return self.inlined[v]
        if v not in self.names:
            self.n += 1
            self.names[v] = f"{hint}{self.n}"
        return self.names[v]


def _call_text(v: Apply, a: list[str], ctx: EmitCtx) -> str:
    form = OPS[v.fn][0]
    ns = "pl.block" if ctx.level == "tile" else "pl.tensor"
    sp = v.spelling
    if form == "bin":
        if sp == 2 and v.fn in _OPERATOR:
            return f"{a[0]} {_OPERATOR[v.fn]} {a[1]}"
        return f"{ns if sp == 1 else 'pl'}.{v.fn}({a[0]}, {a[1]})"
    if form == "scalar":
        s = _scalar_text(v)
        base = _SCALAR_BASE[v.fn]
        if ctx.level == "tensor":
            return [f"pl.{base}({a[0]}, {s})", f"pl.tensor.{base}({a[0]}, {s})",
                    f"{a[0]} {_OPERATOR[base]} {s}"][sp % 3]
        if v.fn in _NO_UNIFIED_SCALAR:
            return f"{'pl.block' if sp % 2 else 'pl'}.{v.fn}({a[0]}, {s})"
        if sp == 3 and base in _OPERATOR:
            return f"{a[0]} {_OPERATOR[base]} {s}"
        return [f"pl.{base}({a[0]}, {s})", f"pl.{v.fn}({a[0]}, {s})", f"pl.block.{v.fn}({a[0]}, {s})",
                f"pl.block.{base}({a[0]}, {s})"][sp % 4]
    if form == "fill":
        return f"pl.expands({a[0]}, {_scalar_text(v)})"
    if form in ("cmp", "cmps"):
        rhs = a[1] if form == "cmp" else _scalar_text(v)
        cmp = f'"{v.attr}"' if sp % 2 else f'cmp_type="{v.attr}"'
        # (a tile compare spelled pl.cmp is today's packed mask, docs/compat.md; the DAG's compare is the
        # 0 / 1 tile of pl.block.cmp)
        return f"{'pl.block' if sp % 2 or ctx.level == 'tile' else 'pl'}.{v.fn}({a[0]}, {rhs}, {cmp})"
    if form == "ternary_s":
        return f"{'pl.block' if sp % 2 else 'pl'}.{v.fn}({a[0]}, {_scalar_text(v)}, {a[1]})"
    if form == "cast":
        dst, mode = (v.attr or "").split("/")
        extra = f", mode=\"{mode}\"" if sp % 2 else (f", \"{mode}\"" if mode != "round" else "")
        return f"pl.cast({a[0]}, pl.{dst}{extra})"
    return f"{ns if sp % 2 else 'pl'}.{v.fn}({', '.join(a)})"


def _is_operator(v: Apply, ctx: EmitCtx) -> bool:
    """Is the op spelled with a Python operator (so it needs parentheses when nested)?"""
    form = OPS[v.fn][0]
    if form == "bin":
        return v.spelling == 2 and v.fn in _OPERATOR
    if form == "scalar":
        base = _SCALAR_BASE[v.fn]
        if ctx.level == "tensor":
            return v.spelling % 3 == 2
        return v.fn not in _NO_UNIFIED_SCALAR and v.spelling == 3 and base in _OPERATOR
    return False


def _scalar_text(v: Apply) -> str:
    s = v.scalar
    if isinstance(s, str):
        return s
    return repr(float(s)) if v.args and v.args[0].dtype in FLOATS else repr(int(s))


def _refs(body: list, into: Counter) -> Counter:
    """How often each value is referred to in a body, nested statements included."""
    for s in body:
        if isinstance(s, Apply):
            into.update(s.args)
        elif isinstance(s, IfStmt):
            into.update(s.then_res + s.else_res)
            _refs(s.then, into)
            _refs(s.orelse, into)
        else:
            into.update(s.inits + s.yields)
            _refs(s.body, into)
    return into


def emit(body: list, ind: str, ctx: EmitCtx) -> list[str]:
    """`pl` lines of a body (values named through `ctx`)."""
    out: list[str] = []
    refs = _refs(body, Counter())
    direct = Counter(a for s in body if isinstance(s, Apply) for a in s.args)
    for s in body:
        if isinstance(s, Apply):
            text = _call_text(s, [ctx.name(a) for a in s.args], ctx)
            if s.inline and s not in ctx.pinned and refs[s] == 1 and direct[s] == 1:
                ctx.inlined[s] = f"({text})" if _is_operator(s, ctx) else text
                continue
            out.append(f"{ind}{ctx.name(s)} = {text}")
        elif isinstance(s, IfStmt):
            name, cmp, k = s.cond
            res = [ctx.name(o, "y") for o in s.outs]
            out.append(f"{ind}if {name} {cmp} {k}:")
            for branch, results in ((s.then, s.then_res), (s.orelse, s.else_res)):
                out += emit(branch, ind + "    ", ctx)
                if s.plain:  # ConvertToSSA turns the names assigned in both branches into the if's results
                    out += [f"{ind}    {y} = {ctx.name(r)}" for y, r in zip(res, results)]
                else:
                    out.append(f"{ind}    {', '.join(res)} = pl.yield_({', '.join(ctx.name(r) for r in results)})")
                if branch is s.then:
                    out.append(f"{ind}else:")
        else:
            accs = ", ".join(ctx.name(a, "acc") for a in s.accs)
            inits = ", ".join(ctx.name(v) for v in s.inits)
            rng = {0: f"{s.trips}", 1: f"1, {s.trips + 1}", 2: f"0, {2 * s.trips}, 2"}[s.style]
            plain = s.plain and not any(y in s.accs for y in s.yields)  # sequential re-assignment would clash
            if plain:
                out += [f"{ind}{ctx.name(a)} = {ctx.name(v)}" for a, v in zip(s.accs, s.inits)]
                out.append(f"{ind}for {s.var} in pl.{'unroll' if s.unroll else 'range'}({rng}):")
            else:
                out.append(f"{ind}for {s.var}, ({accs},) in pl.range({rng}, init_values=({inits},)):")
            for ld in s.loads:
                assert ctx.load_lines is not None
                out += ctx.load_lines(ld, ind + "    ", s.var, s.style, s.trips)
            out += emit(s.body, ind + "    ", ctx)
            if plain:
                out += [f"{ind}    {ctx.name(a)} = {ctx.name(y)}" for a, y in zip(s.accs, s.yields)]
                for a, o in zip(s.accs, s.outs):
                    ctx.names[o] = ctx.name(a)
            else:
                out.append(f"{ind}    {', '.join(ctx.name(o, 'r') for o in s.outs)} = "
                           f"pl.yield_({', '.join(ctx.name(y) for y in s.yields)})")
    return out


def iteration_index(var: str, style: int) -> str:
    """The 0-based iteration number of a loop written in `style`, as a scalar expression."""
    return {0: var, 1: f"({var} - 1)", 2: f"({var} // 2)"}[style]


def exact(v: Val) -> bool:
    """Is the value the same bits on every backend (no rounding-order or transcendental differences)?"""
    if v.dtype == "INT32":
        return True
    if isinstance(v, Leaf):
        return v.key not in ("acc", "loop", "if", "mm", "h")
    assert isinstance(v, Apply)
    return (v.fn in EXACT_OPS or v.fn == "cast") and all(exact(a) for a in v.args)


def all_values(body: list):
    """Every op of a body, nested statements included."""
    for s in body:
        if isinstance(s, Apply):
            yield s
        elif isinstance(s, IfStmt):
            yield from all_values(s.then)
            yield from all_values(s.orelse)
        else:
            yield from all_values(s.body)


def defined(body: list) -> list[Val]:
    """The values a body makes visible after it (nested statements hide theirs)."""
    out: list[Val] = []
    for s in body:
        if isinstance(s, Apply):
            out.append(s)
        else:
            out += s.outs
    return out
