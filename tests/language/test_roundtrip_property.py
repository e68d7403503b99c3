"""Property: random well-typed programs (nested loops with accumulators, if/else with yields, op chains
over tensors and tiles) survive print -> parse -> print unchanged and reparse to an equal IR."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from tests.helpers import roundtrip

TILE_BIN = ["pl.add", "pl.sub", "pl.mul", "pl.maximum", "pl.block.minimum"]
TILE_UN = ["pl.exp", "pl.neg", "pl.block.abs", "pl.block.relu", "pl.block.sqrt"]
TENSOR_BIN = ["pl.add", "pl.sub", "pl.mul", "pl.maximum"]


class Gen:
    """Builds program text; every name it uses is defined and well typed by construction."""

    def __init__(self, draw, level: str):
        self.draw = draw
        self.level = level  # "tile" or "tensor"
        self.lines: list[str] = []
        self.n = 0

    def fresh(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def pick(self, xs):
        return self.draw(st.sampled_from(xs))

    def value_stmt(self, ind: int, vals: list[str], scalars: list[str]) -> str:
        pad = "    " * ind
        k = self.draw(st.integers(0, 4))
        name = self.fresh("v")
        a = self.pick(vals)
        if k == 0:
            rhs = f"{self.pick(TILE_BIN if self.level == 'tile' else TENSOR_BIN)}({a}, {self.pick(vals)})"
        elif k == 1 and self.level == "tile":
            rhs = f"{self.pick(TILE_UN)}({a})"
        elif k == 1:
            rhs = f"pl.exp({a})"
        elif k == 2:
            rhs = f"pl.mul({a}, {self.draw(st.sampled_from(['2.0', '0.5', '-1.5']))})"
        elif k == 3:
            rhs = f"{a} + {self.pick(vals)}"
        else:
            rhs = f"pl.add({a}, {self.pick(scalars)})" if self.level == "tile" and scalars else f"{a} * {a}"
        self.lines.append(f"{pad}{name} = {rhs}")
        return name

    def scalar_stmt(self, ind: int, scalars: list[str]) -> str:
        name = self.fresh("s")
        op = self.pick(["+", "-", "*", "//"])
        rhs = self.pick(["1", "2", "3"]) if op == "//" else self.pick([*scalars, "1", "4"])
        self.lines.append(f"{'    ' * ind}{name} = {self.pick(scalars)} {op} {rhs}")
        return name

    def block(self, ind: int, vals: list[str], scalars: list[str], depth: int) -> str:
        """Emit statements; return the name of a value computed last."""
        vals, scalars = list(vals), list(scalars)
        last = vals[-1]
        for _ in range(self.draw(st.integers(1, 3))):
            choice = self.draw(st.integers(0, 9 if depth < 2 else 4))
            if choice <= 3:
                last = self.value_stmt(ind, vals, scalars)
                vals.append(last)
            elif choice == 4:
                scalars.append(self.scalar_stmt(ind, scalars))
            elif choice <= 6:
                last = self.acc_loop(ind, vals, scalars, depth)
                vals.append(last)
            elif choice <= 8:
                last = self.if_yield(ind, vals, scalars, depth)
                vals.append(last)
            else:
                self.plain_loop(ind, vals, scalars, depth)
        return last

    def acc_loop(self, ind: int, vals, scalars, depth) -> str:
        pad = "    " * ind
        i, acc, res = self.fresh("i"), self.fresh("acc"), self.fresh("r")
        fn = self.pick(["pl.range", "pl.range", "pl.parallel"])
        bound = self.pick(["4", "2, 6", "0, 8, 2", *scalars[:1]])
        init = self.pick(vals)
        self.lines.append(f"{pad}for {i}, ({acc},) in {fn}({bound}, init_values=({init},)):")
        new = self.block(ind + 1, [*vals, acc], [*scalars, i], depth + 1)
        self.lines.append(f"{pad}    {res} = pl.yield_({new})")
        return res

    def plain_loop(self, ind: int, vals, scalars, depth) -> None:
        pad = "    " * ind
        i = self.fresh("j")
        self.lines.append(f"{pad}for {i} in pl.range({self.pick(['3', '1, 5'])}):")
        self.block(ind + 1, vals, [*scalars, i], depth + 1)

    def if_yield(self, ind: int, vals, scalars, depth) -> str:
        pad = "    " * ind
        res = self.fresh("y")
        cmp = self.pick(["<", ">", "==", "!=", "<=", ">="])
        self.lines.append(f"{pad}if {self.pick(scalars)} {cmp} {self.pick(['0', '2', *scalars])}:")
        a = self.block(ind + 1, vals, scalars, depth + 1)
        self.lines.append(f"{pad}    {res} = pl.yield_({a})")
        self.lines.append(f"{pad}else:")
        b = self.block(ind + 1, vals, scalars, depth + 1)
        self.lines.append(f"{pad}    {res} = pl.yield_({b})")
        return res


@st.composite
def programs(draw):
    level = draw(st.sampled_from(["tile", "tensor"]))
    g = Gen(draw, level)
    rows, cols = draw(st.sampled_from([(8, 16), (16, 64), (4, 128)]))
    if level == "tile":
        head = [
            "@pl.function(type=pl.FunctionType.InCore)",
            f"def kernel(self, a: pl.Tensor[[{rows}, {cols}], pl.FP32], b: pl.Tensor[[{rows}, {cols}], pl.FP32], "
            f"n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[{rows}, {cols}], pl.FP32]]) "
            f"-> pl.Tensor[[{rows}, {cols}], pl.FP32]:",
            f"    ta = pl.load(a, [0, 0], [{rows}, {cols}])",
            f"    tb = pl.load(b, [0, 0], [{rows}, {cols}])",
            "    s0 = n + 1",
        ]
        g.lines = head
        last = g.block(1, ["ta", "tb"], ["n", "s0"], 0)
        g.lines.append(f"    o = pl.store({last}, [0, 0], out)")
        g.lines.append("    return o")
        kernel = g.lines
        orch = [
            "@pl.function(type=pl.FunctionType.Orchestration)",
            f"def main(self, a: pl.Tensor[[{rows}, {cols}], pl.FP32], b: pl.Tensor[[{rows}, {cols}], pl.FP32]) "
            f"-> pl.Tensor[[{rows}, {cols}], pl.FP32]:",
            f"    c = pl.create_tensor([{rows}, {cols}], dtype=pl.FP32)",
            "    r = self.kernel(a, b, 3, c)",
            "    return r",
        ]
        body = kernel + [""] + orch
    else:
        g.lines = [
            "@pl.function",
            f"def main(self, a: pl.Tensor[[{rows}, {cols}], pl.FP32], b: pl.Tensor[[{rows}, {cols}], pl.FP32], "
            f"n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{rows}, {cols}], pl.FP32]:",
            "    s0 = n * 2",
        ]
        last = g.block(1, ["a", "b"], ["n", "s0"], 0)
        g.lines.append(f"    return {last}")
        body = g.lines
    text = "import pypto.language as pl\n\n@pl.program\nclass Random:\n" + "\n".join(
        ("    " + ln) if ln else "" for ln in body) + "\n"
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_roundtrip(text):
    prog = pl.parse(text)
    roundtrip(prog)
