"""Drawing random op DAGs (see dag.py for the description they are made of).

`DagGen` draws a body statement by statement from a hypothesis `draw`: ops over the values defined
so far (with domain guards in front of exp / sqrt / log / rsqrt / recip / div), ifs on index
parameters, and loops carrying one or two values. Every op's result has a static bound on its
magnitude; an op whose bound would pass the dtype's limit is not drawn, and a loop's iter_args are
combined with values computed independently of them, so the bound after the loop is known too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from .dag import (
    CAST_MODES,
    CMP_OPS,
    CMP_TYPES,
    FLOATS,
    LIMIT,
    OPS,
    Apply,
    IfStmt,
    Leaf,
    LoopStmt,
    Val,
    exact,
)


@dataclass
class Shape:
    R: int
    C: int


class DagGen:
    """Draws a random body. `level` "tile" allows every op; "tensor" only what the compiler tiles
    automatically (row-local ops). Ifs and loops nest up to `max_depth` (ifs need `flags`)."""

    def __init__(self, draw, level: str, shape: Shape, *, scalars: dict[str, tuple[str, float]] | None = None,
                 flags: dict[str, int] | None = None, new_loop_input: Callable[[str, int], Leaf] | None = None,
                 casts: bool = True, max_depth: int = 2, fresh: Callable[[str], str] | None = None):
        self.draw = draw
        self.level = level
        self.shape = shape
        self.scalars = scalars or {}  # name -> (dtype, value)
        self.flags = flags or {}  # index parameters usable in if conditions -> value
        self.new_loop_input = new_loop_input
        self.casts = casts
        self.max_depth = max_depth
        self._n = 0
        self.fresh = fresh or self._fresh

    def _fresh(self, p: str) -> str:
        self._n += 1
        return f"{p}{self._n}"

    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    # -- bounds --------------------------------------------------------------------------------

    def bound_of(self, fn: str, args: tuple[Val, ...], s: float | None) -> float:
        form = OPS[fn][0]
        b = [a.bound for a in args]
        if form == "bin" or form in ("rowexp", "colexp"):
            op = fn.rsplit("_", 1)[1] if form != "bin" else fn
            return {"add": b[0] + b[1], "sub": b[0] + b[1], "mul": b[0] * b[1], "div": b[0], "maximum": max(b),
                    "minimum": max(b), "and_": 2 * max(b) + 1, "or_": 2 * max(b) + 1, "xor": 2 * max(b) + 1,
                    "rem": max(b)}[op]
        if form == "scalar":
            a = abs(s or 0.0)
            return {"adds": b[0] + a, "subs": b[0] + a, "muls": b[0] * a, "divs": b[0] / max(a, 1e-9) + 1,
                    "maxs": max(b[0], a), "mins": max(b[0], a), "rems": b[0], "shls": b[0] * 2 ** a,
                    "shrs": b[0], "lrelu": b[0] * max(1.0, a)}[fn]
        if form == "unary":
            return {"exp": math.exp(min(b[0], 50)), "sqrt": math.sqrt(b[0]), "rsqrt": 1.0, "recip": 1.0,
                    "log": math.log(max(b[0], 1.0)) + 1, "not_": b[0] + 1}.get(fn, b[0])
        if form == "rowred":
            return b[0] * self.shape.C if fn == "row_sum" else b[0]
        if form == "colred":
            return b[0] * self.shape.R if fn == "col_sum" else b[0]
        if form == "colbcast":
            return b[1]
        if form == "fill":
            return abs(s or 0.0)
        if form in ("cmp", "cmps"):
            return 1.0
        if form == "sel":
            return max(b[1], b[2])
        if form == "ternary":
            return b[0] + b[1] + b[2]
        if form == "ternary_s":
            return b[0] + abs(s or 0.0) + b[1]
        return b[0] + 1  # cast

    def mk(self, fn: str, args: tuple[Val, ...], *, scalar=None, attr=None, bound=None, dtype=None) -> Apply:
        form = OPS[fn][0]
        kind = {"rowred": "row", "colred": "col"}.get(form, args[0].kind)
        sval = self.scalars[scalar][1] if isinstance(scalar, str) else scalar
        if bound is None:
            bound = self.bound_of(fn, args, sval)
        n_sp = 4 if form == "scalar" else (3 if form == "bin" else 2)
        sp = self.draw(st.integers(0, n_sp - 1))
        return Apply(kind, dtype or args[0].dtype, bound, fn=fn, args=args, scalar=scalar, attr=attr, spelling=sp,
                     inline=self.draw(st.integers(0, 3)) == 0)

    def ok(self, v: Val) -> bool:
        return v.bound <= LIMIT[v.dtype]

    def allowed(self, fn: str, dtype: str) -> bool:
        form, ints, floats, tname = OPS[fn]
        if self.level == "tensor" and tname is None:
            return False
        return ints if dtype == "INT32" else floats

    # -- statements ------------------------------------------------------------------------------

    def body(self, pool: list[Val], n: int, depth: int, out: list) -> list[Val]:
        """Append about `n` statements to `out`; return the pool grown by the values they define."""
        pool = list(pool)
        for _ in range(n):
            c = self.draw(st.integers(0, 9))
            if c == 8 and depth < self.max_depth and self.flags:
                pool += self.if_stmt(pool, depth, out)
            elif c == 9 and depth < self.max_depth:
                pool += self.loop_stmt(pool, depth, out)
            else:
                pool += self.op(pool, out)
        return pool

    def op(self, pool: list[Val], out: list) -> list[Val]:
        """One op (with its domain guard), over values of the pool."""
        for _ in range(8):
            made = self._try_op(pool)
            if made and all(self.ok(m) for m in made):
                out += made
                return [made[-1]]
        v = self.pick(pool)  # fall back to a bound-preserving op
        made = [self.mk(self.pick(["neg", "abs"]), (v,))]
        out += made
        return made

    def _try_op(self, pool: list[Val]) -> list[Apply] | None:
        x = self.pick(pool)
        dt = x.dtype
        forms = ["bin", "bin", "scalar", "scalar", "unary", "unary", "rowred", "colred", "rowexp", "colexp",
                 "cast", "colbcast", "fill", "cmp", "cmps", "sel", "ternary", "ternary_s"]
        form = self.pick(forms)
        fns = [f for f, o in OPS.items() if o[0] == form and self.allowed(f, dt)]
        if not fns:
            return None
        fn = self.pick(fns)
        same = [v for v in pool if v.dtype == dt]
        if form in ("cmp", "cmps", "sel", "ternary", "ternary_s"):
            return self._select_family(form, fn, x, [v for v in same if v.kind == x.kind])
        if form == "bin":
            y = self.pick([v for v in same if v.kind == x.kind])
            if fn in ("div", "rem"):
                g = self.guard(y)
                return [*g, self.mk(fn, (x, g[-1]))]
            return [self.mk(fn, (x, y))]
        if form == "scalar":
            return [self.mk(fn, (x,), scalar=self.scalar_operand(fn, dt))]
        if form == "unary":
            if fn == "exp":
                return self.exp_guard(x, pool)
            if fn in ("sqrt", "rsqrt", "recip", "log"):
                g = self.guard(x)
                return [*g, self.mk(fn, (g[-1],))]
            return [self.mk(fn, (x,))]
        if form in ("rowred", "colred", "rowexp", "colexp", "colbcast"):
            fulls = [v for v in same if v.kind == "full"]
            if not fulls:
                return None
            f = x if x.kind == "full" else self.pick(fulls)
            if form in ("rowred", "colred"):
                return [self.mk(fn, (f,))]
            want = "row" if form == "rowexp" else "col"
            vecs = [v for v in same if v.kind == want]
            if not vecs:
                red = self.mk(("row_" if want == "row" else "col_") + self.pick(["sum", "max", "min"]), (f,))
                if not self.allowed(red.fn, dt):
                    return None
                vecs, pre = [red], [red]
            else:
                pre = []
            r = self.pick(vecs)
            if fn.endswith("_div"):
                g = self.guard(r)
                return [*pre, *g, self.mk(fn, (f, g[-1]))]
            return [*pre, self.mk(fn, (f, r))]
        if form == "fill":
            return [self.mk(fn, (x,), scalar=self.scalar_operand("adds", dt))]
        return self.cast(x)

    def _select_family(self, form: str, fn: str, x: Val, same: list[Val]) -> list[Apply] | None:
        """cmp / cmps / sel / addc-style ops; float compares and masks only over exact values."""
        ok = [v for v in same if exact(v)]
        if form == "cmp":
            if not exact(x):
                return None
            return [self.mk(fn, (x, self.pick(ok)), attr=self.pick(list(CMP_TYPES)))]
        if form == "cmps":
            if not exact(x):
                return None
            return [self.mk(fn, (x,), scalar=self.scalar_operand("adds", x.dtype), attr=self.pick(list(CMP_TYPES)))]
        if form == "sel":
            masks = [v for v in ok if isinstance(v, Apply) and v.fn in ("cmp", "cmps")] or ok
            if not masks:
                return None
            return [self.mk(fn, (self.pick(masks), x, self.pick(same)))]
        if form == "ternary":
            return [self.mk(fn, (x, self.pick(same), self.pick(same)))]
        return [self.mk(fn, (x, self.pick(same)), scalar=self.scalar_operand("adds", x.dtype))]

    def scalar_operand(self, fn: str, dt: str):
        if fn in ("shls", "shrs"):
            return self.pick([0, 1, 2, 3])
        names = [n for n, (sdt, _) in self.scalars.items() if (sdt == "INT32") == (dt == "INT32")]
        if names and self.draw(st.integers(0, 2)) == 0:
            return self.pick(names)
        if dt == "INT32":
            return self.pick([3, -2, 5, 1] if fn != "divs" else [2, 3, -4])
        return self.pick([0.5, 2.0, -1.5, 0.25, 3.0] if fn != "divs" else [2.0, 0.5, -4.0])

    def guard(self, x: Val) -> list[Apply]:
        """abs(x) + 1: the argument of a division, sqrt, log, rsqrt or recip."""
        a = self.mk("abs", (x,))
        return [a, self.mk("adds", (a,), scalar=1.0 if x.dtype in FLOATS else 1)]

    def exp_guard(self, x: Val, pool: list[Val]) -> list[Apply]:
        k = self.draw(st.integers(0, 2))
        if k == 0 and self.level == "tile":
            m = self.mk("mins", (x,), scalar=2.0, bound=max(x.bound, 2.0))
            return [m, self.mk("exp", (m,), bound=math.exp(2.0))]
        if k == 1 and x.kind == "full":
            mx = self.mk("row_max", (x,))
            d = self.mk("row_expand_sub", (x, mx))
            return [mx, d, self.mk("exp", (d,), bound=1.0)]
        a = self.mk("abs", (x,))
        n = self.mk("neg", (a,))
        return [a, n, self.mk("exp", (n,), bound=1.0)]

    def cast(self, x: Val) -> list[Apply] | None:
        if not self.casts:
            return None
        if x.dtype in FLOATS:
            if exact(x) and self.draw(st.booleans()):
                # float -> int only of exact values: computed ones may sit on a rounding edge
                return [self.mk("cast", (x,), attr=f"INT32/{self.pick(CAST_MODES)}", dtype="INT32")]
            dst = self.pick([d for d in FLOATS if d != x.dtype])
        else:
            dst = self.pick(FLOATS)
        if x.bound > LIMIT[dst]:
            return None
        return [self.mk("cast", (x,), attr=f"{dst}/round", dtype=dst)]

    def if_stmt(self, pool: list[Val], depth: int, out: list) -> list[Val]:
        flag = self.pick(sorted(self.flags))
        cmp = self.pick(list(CMP_OPS))
        k = self.draw(st.integers(0, 3))
        kinds = sorted({(v.kind, v.dtype) for v in pool})
        n_res = self.draw(st.integers(1, 2))
        want = [self.pick(kinds) for _ in range(n_res)]
        branches = []
        for _ in range(2):
            stmts: list = []
            grown = self.body(pool, self.draw(st.integers(0, 3)), depth + 1, stmts)
            new = [v for v in grown if v not in pool]
            res = []
            for kd in want:
                cands = [v for v in new if (v.kind, v.dtype) == kd] or [v for v in pool if (v.kind, v.dtype) == kd]
                res.append(self.pick(cands))
            branches.append((stmts, res))
        outs = [Leaf(r.kind, r.dtype, max(a.bound, b.bound), key="if")
                for r, a, b in zip(branches[0][1], branches[0][1], branches[1][1])]
        out.append(IfStmt((flag, cmp, k), branches[0][0], branches[0][1], branches[1][0], branches[1][1], outs,
                          plain=self.draw(st.integers(0, 2)) == 0))
        return outs

    def loop_stmt(self, pool: list[Val], depth: int, out: list) -> list[Val]:
        fulls = [v for v in pool if v.kind == "full"]
        if not fulls:
            return self.op(pool, out)
        trips = self.draw(st.integers(0, 3))
        style = self.draw(st.integers(0, 2))
        var = self.fresh("j")
        inits = [self.pick(fulls) for _ in range(self.draw(st.integers(1, 2)))]
        loads: list[Leaf] = []
        if self.new_loop_input is not None and self.draw(st.booleans()):
            dt = inits[0].dtype
            loads.append(self.new_loop_input(dt, trips))
        accs = [Leaf(v.kind, v.dtype, v.bound, key="acc") for v in inits]
        stmts: list = []
        # the body computes from the pool and this iteration's loads; the iter_args enter only through
        # the combining op below, so the bound after `trips` iterations is known
        grown = self.body(pool + loads, self.draw(st.integers(1, 3)), depth + 1, stmts)
        # how each iter_arg is updated: combine(acc, h) (then maybe neg/abs); or kept; or replaced by an
        # outer value; with two iter_args of one dtype the updates may also be swapped
        plans = []
        for acc in accs:
            hs = [v for v in grown if v.kind == "full" and v.dtype == acc.dtype]
            way = self.draw(st.integers(0, 9))
            if way == 0:
                plans.append(("keep", None, None))
            elif way == 1:
                plans.append(("outer", self.pick([v for v in pool if v.kind == "full" and v.dtype == acc.dtype]),
                              None))
            else:
                plans.append((self.pick(["add", "maximum", "minimum", "decay"] if acc.dtype in FLOATS else
                                        ["add", "maximum", "minimum"]), self.pick(hs),
                              self.pick(["neg", "abs"]) if self.draw(st.integers(0, 3)) == 0 else None))
        swap = len(accs) == 2 and accs[0].dtype == accs[1].dtype and self.draw(st.integers(0, 3)) == 0

        def step(plan, b: float) -> float:
            comb, h, _ = plan
            if comb == "keep":
                return b
            if comb == "outer":
                return max(b, h.bound)
            return {"add": b + h.bound, "maximum": max(b, h.bound), "minimum": max(b, h.bound),
                    "decay": 0.5 * b + h.bound}[comb]

        bounds = [v.bound for v in inits]
        for _ in range(trips):
            new = [step(p, b) for p, b in zip(plans, bounds)]
            bounds = new[::-1] if swap else new
        if any(b > LIMIT[a.dtype] for a, b in zip(accs, bounds)):
            plans = [("maximum", p[1], None) if p[0] not in ("keep", "outer") else p for p in plans]
            swap = False
            bounds = [max(v.bound, p[1].bound if p[1] is not None else 0.0) for v, p in zip(inits, plans)]
        if swap:
            bounds = [max(bounds)] * 2
        for acc, b in zip(accs, bounds):
            acc.bound = b
        yields: list[Val] = []
        for acc, (comb, h, post), b in zip(accs, plans, bounds):
            if comb == "keep":
                yields.append(acc)
                continue
            if comb == "outer":
                yields.append(h)
                continue
            if comb == "decay":
                half = self.mk("muls", (acc,), scalar=0.5, bound=b)
                stmts.append(half)
                y = self.mk("add", (half, h), bound=b)
            else:
                y = self.mk(comb, (acc, h), bound=b)
            stmts.append(y)
            if post:
                y = self.mk(post, (y,), bound=b)
                stmts.append(y)
            yields.append(y)
        if swap:
            yields = yields[::-1]
        finals = bounds
        outs = [Leaf(a.kind, a.dtype, b, key="loop") for a, b in zip(accs, finals)]
        plain = self.draw(st.integers(0, 2)) == 0
        out.append(LoopStmt(var, trips, style, accs, inits, loads, stmts, yields, outs, plain=plain,
                            unroll=plain and self.draw(st.booleans())))
        return outs
