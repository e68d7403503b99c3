"""Tensor-level programs: one plain `@pl.function` of tensor ops that the compiler outlines into
kernels and tiles by itself (static or `pl.dynamic` rows, optional `with pl.incore()` scopes that
split it into several kernels, an optional matmul prologue, or a loop over row blocks that
`pl.assemble`s each block's result into a `pl.Out` tensor)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from .case import Case, Expected, coarsest, rand
from .dag import (
    NP_DTYPE,
    Apply,
    EmitCtx,
    EvalCtx,
    IfStmt,
    Leaf,
    Val,
    all_values,
    emit,
    evaluate,
    iteration_index,
)
from .dag_gen import DagGen, Shape
from .kernels import ttype


@dataclass(repr=False)
class TensorProgram:
    dtype: str
    rows: int
    C: int
    dynamic: bool
    inputs: list[tuple[str, Leaf]]  # full [R, C], row [R, 1] or col [1, C]
    s: float | int | None
    body: list
    outputs: list[Val]
    cuts: list[tuple[int, int, bool]]  # statement ranges, and whether each is a `with pl.incore()` scope
    mm: tuple[int, Leaf] | None = None  # (K, the product's leaf): h = matmul(xa [R, K], w [K, C])
    block: int | None = None  # rows per block of the assemble loop
    flag: int | None = None  # an index parameter steering ifs
    wide: list[tuple[str, Leaf, int]] = field(default_factory=list)  # loop inputs: (name, leaf, trips)
    data: dict = field(default_factory=dict)
    dtypes: set = field(default_factory=set)

    def __repr__(self) -> str:  # hypothesis prints the falsifying program as source
        return f"{type(self).__name__}:\n{self.text()}"

    def shape_of(self, leaf: Leaf, rows) -> tuple:
        return {"full": (rows, self.C), "row": (rows, 1), "col": (1, self.C)}[leaf.kind]

    def text(self) -> str:
        R = "M" if self.dynamic else str(self.rows)
        ps = [f"{n}: {ttype(self.shape_of(lf, R), lf.dtype)}" for n, lf in self.inputs]
        if self.mm:
            K = self.mm[0]
            ps += [f"xa: {ttype((R, K), 'FP32')}", f"w: {ttype((K, self.C), 'FP32')}"]
        ps += [f"{n}: {ttype((R, self.C * max(tr, 1)), lf.dtype)}" for n, lf, tr in self.wide]
        if self.s is not None:
            ps.append(f"s: pl.Scalar[pl.{'INT32' if self.dtype == 'INT32' else 'FP32'}]")
        if self.flag is not None:
            ps.append("flag: pl.Scalar[pl.INDEX]")
        ctx = EmitCtx("tensor", load_lines=self._loop_view, pinned=set(self.outputs))
        for n, lf, _ in self.wide:
            ctx.names[lf] = f"{n}_v"
        ind = " " * 8
        lines: list[str] = []
        if self.block:
            out_t = ttype((R, self.C), self.outputs[0].dtype)
            ps.append(f"out: pl.Out[{out_t}]")
            rty = out_t
            lines.append(f"{ind}for i in pl.range(0, {R}, {self.block}):")
            ind += "    "
            for n, lf in self.inputs:
                if lf.kind == "col":
                    ctx.names[lf] = n
                else:
                    ctx.names[lf] = f"{n}_v"
                    lines.append(f"{ind}{n}_v = pl.view({n}, [{self.shape_of(lf, self.block)[0]}, "
                                 f"{self.shape_of(lf, self.block)[1]}], [i, 0])")
        else:
            for n, lf in self.inputs:
                ctx.names[lf] = n
            tys = [ttype(self.shape_of(v, R), v.dtype) for v in self.outputs]
            rty = tys[0] if len(tys) == 1 else f"tuple[{', '.join(tys)}]"
        if self.mm:
            ctx.names[self.mm[1]] = "h"
            lines.append(f"{ind}h = pl.matmul(xa, w)")
        for a, b, scoped in self.cuts:
            if scoped:
                lines.append(f"{ind}with pl.incore():")
                lines += emit(self.body[a:b], ind + "    ", ctx) or [f"{ind}    pass"]
            else:
                lines += emit(self.body[a:b], ind, ctx)
        if self.block:
            lines.append(f"{ind}out = pl.assemble(out, {ctx.names[self.outputs[0]]}, [i, 0])")
            lines.append("        return out")
        else:
            lines.append(f"{ind}return {', '.join(ctx.names[v] for v in self.outputs)}")
        head = "import pypto.language as pl\n\n" + ('M = pl.dynamic("M")\n\n' if self.dynamic else "")
        return (head + "\n@pl.program\nclass Diff:\n    @pl.function\n"
                f"    def main(self, {', '.join(ps)}) -> {rty}:\n" + "\n".join(lines) + "\n")

    def _loop_view(self, leaf: Leaf, ind: str, var: str, style: int, trips: int) -> list[str]:
        """A loop input of a tensor-level body: a view of the iteration's column block of a wide tensor."""
        name = next(n for n, lf, _ in self.wide if lf is leaf)
        rows, r0 = (self.block, "i") if self.block else (self.rows, "0")
        return [f"{ind}{name}_v = pl.view({name}, [{rows}, {self.C}], [{r0}, {iteration_index(var, style)} * {self.C}])"]

    def evaluate(self, wide: bool) -> tuple[list[np.ndarray], float]:
        step = self.block or self.rows
        rows = [0]

        def load(key: str, t: int) -> np.ndarray:
            return self.data[key][rows[0]:rows[0] + step, t * self.C:(t + 1) * self.C]

        ctx = EvalCtx({"s": self.s, "flag": self.flag}, load, wide=wide)
        outs: list[list[np.ndarray]] = [[] for _ in self.outputs]
        for i in range(0, self.rows, step):
            rows[0] = i
            env: dict = {}
            for n, lf in self.inputs:
                a = self.data[n]
                env[lf] = a if lf.kind == "col" else a[i:i + step]
            if self.mm:
                cd = np.float64 if wide else np.float32
                env[self.mm[1]] = (self.data["xa"][i:i + step].astype(cd) @ self.data["w"].astype(cd)).astype(cd)
            evaluate(self.body, env, ctx)
            for k, v in enumerate(self.outputs):
                outs[k].append(np.asarray(env[v]))
        return [np.concatenate(o, axis=0) for o in outs], ctx.peak

    def case(self, seed: int) -> Case:
        rng = np.random.default_rng(seed)
        for n, lf in self.inputs:
            self.data[n] = rand(rng, self.shape_of(lf, self.rows), lf.dtype)
        for n, lf, tr in self.wide:
            self.data[n] = rand(rng, (self.rows, self.C * max(tr, 1)), lf.dtype)
        if self.mm:
            K = self.mm[0]
            self.data["xa"] = rand(rng, (self.rows, K), "FP32", 1.0)
            self.data["w"] = rand(rng, (K, self.C), "FP32", 1.0)
        ref, peak = self.evaluate(False)
        wide, _ = self.evaluate(True)
        args: list = [self.data[n] for n, _ in self.inputs]
        if self.mm:
            args += [self.data["xa"], self.data["w"]]
        args += [self.data[n] for n, _, _ in self.wide]
        if self.s is not None:
            args.append(self.s)
        if self.flag is not None:
            args.append(self.flag)
        inplace: list[int | None] = [None] * len(self.outputs)
        if self.block:
            args.append(rand(rng, (self.rows, self.C), self.outputs[0].dtype, 4.0))
            inplace = [len(args) - 1]
        prec = coarsest(self.dtypes)
        expected = [Expected(f"result{k}", np.asarray(r).astype(NP_DTYPE[v.dtype]), w.astype(np.float64),
                             prec if v.dtype != "INT32" else "INT32", peak)
                    for k, (v, r, w) in enumerate(zip(self.outputs, ref, wide))]
        note = (f"tensor-level {self.dtype} {'dynamic' if self.dynamic else 'static'} rows={self.rows} C={self.C} "
                f"scopes={sum(c[2] for c in self.cuts)} mm={'yes' if self.mm else 'no'} block={self.block}")
        return Case(self.text(), args, inplace, expected, note, skip_returned_aliases=bool(self.block))


@st.composite
def tensor_programs(draw, dtypes=("FP32", "FP32", "FP32", "FP16", "INT32")) -> TensorProgram:
    dtype = draw(st.sampled_from(dtypes))
    C = draw(st.sampled_from([16, 32, 64, 96]))
    form = draw(st.sampled_from(["plain", "plain", "dynamic", "block", "mm"] if dtype == "FP32" else
                                ["plain", "dynamic", "block"]))
    block = None
    if form == "dynamic":
        rows = draw(st.integers(1, 150))
    elif form == "block":
        block = draw(st.sampled_from([8, 16]))
        rows = block * draw(st.integers(1, 4))
    else:
        rows = draw(st.sampled_from([1, 8, 16, 24, 64]))
    bound = 8.0 if dtype == "INT32" else 2.0
    inputs = [(f"x{k}", Leaf("full", dtype, bound, key=f"x{k}")) for k in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        inputs.append(("xr", Leaf("row", dtype, bound, key="xr")))
    if draw(st.booleans()):
        inputs.append(("xc", Leaf("col", dtype, bound, key="xc")))
    s = None
    scalars = {}
    if draw(st.booleans()):
        s = draw(st.sampled_from([2, -3])) if dtype == "INT32" else draw(st.sampled_from([0.75, -1.5]))
        scalars["s"] = ("INT32" if dtype == "INT32" else "FP32", s)
    mm = None
    pool: list[Val] = [lf for _, lf in inputs]
    if form == "mm":
        K = draw(st.sampled_from([16, 32, 64]))
        mm = (K, Leaf("full", "FP32", float(K), key="h"))
        pool.append(mm[1])
    flag = draw(st.integers(0, 3)) if draw(st.booleans()) else None
    wide: list[tuple[str, Leaf, int]] = []

    def new_loop_input(dt: str, trips: int) -> Leaf:
        lf = Leaf("full", dt, bound, key=f"w{len(wide)}")
        wide.append((lf.key, lf, trips))
        return lf

    # loops carry tensors and ifs choose between tensor computations; a loop or if result is never
    # returned as is (test_regressions.py::test_returned_loop_result): outputs are top-level ops
    gen = DagGen(draw, "tensor", Shape(block or 64, C), scalars=scalars, casts=draw(st.booleans()),
                 flags={"flag": flag} if flag is not None else {},
                 new_loop_input=None if form == "dynamic" else new_loop_input,  # a view needs static rows
                 max_depth=draw(st.sampled_from([0, 0, 1, 2])))
    body: list = []
    gen.body(pool, draw(st.integers(1, 7)), 0, body)
    made = [v for v in body if isinstance(v, Apply) and v.kind in ("full", "row")]
    if not made:
        extra = gen.mk("neg", (pool[0],))
        body.append(extra)
        made.append(extra)
    if block:
        fulls = [v for v in made if v.kind == "full"]
        if not fulls:
            fulls = [gen.mk("abs", (pool[0],))]
            body.append(fulls[0])
        outputs = [fulls[-1]]
    else:
        outputs = [made[-1]]
        if len(made) > 1 and draw(st.booleans()):
            other = draw(st.sampled_from(made[:-1]))
            outputs.append(other)
    n = len(body)
    cuts_at = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=2)))) if n > 1 else []
    bounds = [0, *cuts_at, n]
    # a scope holding control flow is not row-local: with dynamic rows it cannot be tiled (by design)
    cuts = [(a, b, draw(st.booleans()) and _loops_start_local(body[a:b]) and
             not (form == "dynamic" and any(not isinstance(x, Apply) for x in body[a:b])))
            for a, b in zip(bounds, bounds[1:]) if b > a]
    prog = TensorProgram(dtype, rows, C, form == "dynamic", inputs, s, body, outputs, cuts, mm, block, flag, wide)
    prog.dtypes = {dtype} | {v.dtype for v in all_values(body)} | ({"FP32"} if mm else set())
    return prog


def _loops_start_local(seg: list, local: set | None = None) -> bool:
    """Inside a `with pl.incore()` scope a loop may carry only tensors computed in that scope: one that
    starts from a kernel parameter is rejected (test_regressions.py::test_incore_loop_from_a_parameter)."""
    local = set() if local is None else set(local)
    for s_ in seg:
        if isinstance(s_, Apply):
            local.add(s_)
        elif isinstance(s_, IfStmt):
            if not (_loops_start_local(s_.then, local) and _loops_start_local(s_.orelse, local)):
                return False
            local.update(s_.outs)
        else:
            if any(v not in local for v in s_.inits) or not _loops_start_local(s_.body, local):
                return False
            local.update(s_.outs)
    return True
