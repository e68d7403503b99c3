"""Random program generators (hypothesis strategies) shared by the parser, SSA and control-flow tests.

- `program_texts`: `pl` source of well-typed programs (tile kernels with their orchestration, or
  tensor functions) with loops carrying values and ifs yielding them.
- `scalar_programs`: IR functions of scalar code, not in SSA form (state reassigned in ifs and
  bounded for / while loops, optionally break and continue); `results` evaluates one.
"""

from __future__ import annotations

from hypothesis import strategies as st

from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.evaluate import EvalError, evaluate
from pypto.ir.expr import Add, ConstInt, Lt, Max, Min, Mul, Sub, Var, scalar_type
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, ForStmt, IfStmt, ReturnStmt, WhileStmt
from pypto.ir.walk import make_body, make_else

IDX = DataType.INDEX
T_IDX = scalar_type(IDX)

# ---------------------------------------------------------------------------------------------
# program_texts

TILE_BIN = ["pl.add", "pl.sub", "pl.mul", "pl.maximum", "pl.block.minimum"]
TILE_UN = ["pl.exp", "pl.neg", "pl.block.abs", "pl.block.relu", "pl.block.sqrt"]
TENSOR_BIN = ["pl.add", "pl.sub", "pl.mul", "pl.maximum"]


class _TextGen:
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
def program_texts(draw):
    """Random well-typed `pl` program texts: an InCore kernel over tiles with its orchestration, or a
    tensor-level function (nested loops with accumulators, if/else with yields, op chains)."""
    level = draw(st.sampled_from(["tile", "tensor"]))
    g = _TextGen(draw, level)
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


# ---------------------------------------------------------------------------------------------
# scalar_programs

@st.composite
def scalar_exprs(draw, vars_: list[Var], depth: int = 2, need_var: bool = False):
    """Scalar expressions over `vars_`; every operator has a variable operand (the parser folds
    constant-only subexpressions, which would break the print -> parse check)."""
    consts = st.integers(-3, 5).map(lambda v: ConstInt(v, IDX))
    leaves = st.sampled_from(vars_) if need_var else st.one_of(st.sampled_from(vars_), consts)
    if depth == 0 or draw(st.integers(0, 5)) <= 1:
        return draw(leaves)
    op = draw(st.sampled_from([Add, Sub, Mul, Min, Max]))
    return op(draw(scalar_exprs(vars_, depth - 1, True)), draw(scalar_exprs(vars_, depth - 1)), IDX)


class _ScalarGen:
    def __init__(self, draw, params: list[Var], state: list[Var], exits: bool) -> None:
        self.draw, self.params, self.state, self.exits = draw, params, state, exits
        self.n = 0

    def cond(self, vars_: list[Var]):
        # a variable on the left: the parser folds constant conditions (and drops the dead branch)
        return Lt(self.draw(scalar_exprs(vars_, 1, True)), self.draw(scalar_exprs(vars_, 1)), DataType.BOOL)

    def block(self, vars_: list[Var], depth: int, in_loop: bool) -> list:
        out = []
        for _ in range(self.draw(st.integers(1, 3))):
            out.append(self.stmt(vars_, depth, in_loop))
        return out

    def stmt(self, vars_: list[Var], depth: int, in_loop: bool):
        kinds = ["assign", "assign"]
        if depth > 0:
            kinds += ["if", "for", "while"]
        if in_loop and self.exits:
            kinds += ["break", "continue", "exit_if"]
        k = self.draw(st.sampled_from(kinds))
        if k == "assign":
            return AssignStmt(self.draw(st.sampled_from(self.state)), self.draw(scalar_exprs(vars_)))
        if k == "break":
            return BreakStmt()
        if k == "continue":
            return ContinueStmt()
        if k == "exit_if":
            exit_ = BreakStmt() if self.draw(st.booleans()) else ContinueStmt()
            return IfStmt(self.cond(vars_), make_body(self.block(vars_, 0, in_loop)[:1] + [exit_]), None)
        if k == "if":
            els = self.block(vars_, depth - 1, in_loop) if self.draw(st.booleans()) else []
            return IfStmt(self.cond(vars_), make_body(self.block(vars_, depth - 1, in_loop)), make_else(els))
        self.n += 1
        if k == "for":
            lv = Var(f"i{self.n}", T_IDX)
            start = ConstInt(self.draw(st.integers(-2, 2)), IDX)
            stop = self.draw(st.sampled_from(self.params + [ConstInt(self.draw(st.integers(-1, 5)), IDX)]))
            step = ConstInt(self.draw(st.sampled_from([1, 1, 2, -1])), IDX)
            body = self.block(vars_ + [lv], depth - 1, True)
            return ForStmt(lv, start, stop, step, (), make_body(body), ())
        w = Var(f"w{self.n}", T_IDX)  # a bounded while: its counter advances first
        body = [AssignStmt(w, Add(w, ConstInt(1, IDX), IDX))] + self.block(vars_ + [w], depth - 1, True)
        cond = ir.And(Lt(w, ConstInt(self.draw(st.integers(0, 4)), IDX), DataType.BOOL), self.cond(vars_),
                      DataType.BOOL)
        return make_body([AssignStmt(w, ConstInt(0, IDX)), WhileStmt(cond, (), make_body(body), ())])


@st.composite
def scalar_programs(draw, exits: bool = False) -> ir.Function:
    """Random non-SSA scalar functions: state variables reassigned in ifs, for and while loops
    (bounded), optionally with break/continue. Every variable is defined before it is read."""
    params = [Var("a", T_IDX), Var("b", T_IDX)]
    state = [Var(f"v{k}", T_IDX) for k in range(3)]
    g = _ScalarGen(draw, params, state, exits)
    init = [AssignStmt(v, draw(st.sampled_from(params + [ConstInt(1, IDX)]))) for v in state]
    body = g.block(params + state, 3, False)
    ret = ReturnStmt(tuple(state))
    return ir.Function("f", tuple(params), (), tuple(T_IDX for _ in state), make_body(init + body + [ret]))


def results(fn: ir.Function, args) -> object:
    try:
        return evaluate(fn, args, max_steps=20_000)
    except EvalError as e:
        return ("error", str(e))
