"""Orchestrations: loops over row (and column) blocks submitting several kernels per iteration.

Each iteration runs a list of steps. A *stage* is a kernel call: it loads blocks of one or two
tensors, runs a random op DAG, stores its result into a block of a tensor — a `pl.create_tensor`
intermediate that a later stage reads (RAW), the output, or an input that earlier stages read (WAR;
the input becomes `pl.InOut`) — and may fold a column reduction of it into an accumulator row
(`pl.InOut`, one reduction across all row blocks). A stage may read a block other than the
iteration's own (the next or previous row block, half a block down, a column block over, all
wrapping around), so tasks of different iterations depend on each other and partially overlap.
Stages may run under `if flag ...`, and may call a kernel of an earlier stage on other tensors.
*Scalar steps* read one element of a tensor in the orchestration (`pl.tensor.read`, which must wait
for the kernels writing it; the value becomes a later kernel's scalar argument) or write one
(`pl.tensor.write`, ordered against the kernels around it).

With `dynamic` the row count is `pl.dynamic`: kernels take whole tensors and the block offsets, and
load `min(RB, rows - i)` valid rows, so the last block is ragged.

NumPy runs the same loops over the same blocks in program order: the meaning every schedule must
reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from .case import Case, Expected, coarsest, rand
from .dag import (
    FLOATS,
    LIMIT,
    NP_DTYPE,
    EmitCtx,
    EvalCtx,
    Leaf,
    Val,
    all_values,
    defined,
    emit,
    evaluate,
)
from .dag_gen import DagGen, Shape
from .kernels import ttype

CLAMP = {"FP32": 16.0, "INT32": 16, "FP16": 4.0, "BF16": 4.0}  # every stored block stays within +-CLAMP


@dataclass
class Read:
    tensor: str
    shift: tuple[int, int]  # (rows, cols) from the iteration's block, wrapping around (static only)
    leaf: Leaf


@dataclass
class Stage:
    name: str  # the kernel it calls
    reads: list[Read]
    write: str
    body: list
    result: Val
    acc_leaf: Leaf | None = None
    acc_val: Val | None = None
    guard: tuple[str, str, int] | None = None  # run only if (flag cmp k)
    pass_n: bool = False  # dynamic: the valid row count comes from the orchestration
    view_vars: bool = False  # static: bind views to names before the call
    scalar: str | None = None  # the orchestration value passed as the kernel's scalar `s`
    scalar_dtype: str = "FP32"
    reuse: bool = False  # calls the kernel of an earlier stage

    @property
    def inout(self) -> bool:
        return any(r.shift == (0, 0) and r.tensor == self.write for r in self.reads)


@dataclass
class ScalarRead:
    var: str
    tensor: str
    at: tuple[int, int]  # inside the iteration's block


@dataclass
class ScalarWrite:
    tensor: str
    at: tuple[int, int]
    value: str | float | int  # a ScalarRead's var or a constant


@dataclass(repr=False)
class OrchProgram:
    dtype: str
    RB: int
    CB: int
    ncb: int
    dynamic: bool
    rows: int  # the row count of the data
    order: str  # "ij", "ji" or "i" (one column block, no j loop)
    parallel: bool  # iterations are independent: pl.parallel loops
    inputs: list[str]
    created: list[str]
    steps: list
    flag: int | None
    s: float | int | None
    ret_created: str | None
    dtypes: set = field(default_factory=set)

    def __repr__(self) -> str:  # hypothesis prints the falsifying program as source
        return f"{type(self).__name__}:\n{self.text()}"

    @property
    def C(self) -> int:
        return self.CB * self.ncb

    @property
    def stages(self) -> list[Stage]:
        return [s for s in self.steps if isinstance(s, Stage)]

    @property
    def has_acc(self) -> bool:
        return any(s.acc_leaf is not None for s in self.stages)

    def written(self) -> set[str]:
        return {s.write for s in self.stages} | {s.tensor for s in self.steps if isinstance(s, ScalarWrite)}

    def main_params(self) -> list[tuple[str, str]]:
        R = "M" if self.dynamic else str(self.rows)
        mat = ttype((R, self.C), self.dtype)
        ps = [(x, f"pl.InOut[{mat}]" if x in self.written() else mat) for x in self.inputs]
        if self.flag is not None:
            ps.append(("flag", "pl.Scalar[pl.INDEX]"))
        if self.s is not None:
            ps.append(("s", f"pl.Scalar[pl.{'INT32' if self.dtype == 'INT32' else 'FP32'}]"))
        if self.has_acc:
            ps.append(("acc", f"pl.InOut[{ttype((1, self.C), self.dtype)}]"))
        ps.append(("out", f"pl.Out[{mat}]"))
        return ps

    def returns(self) -> list[str]:
        names = ["out"] + (["acc"] if self.has_acc else [])
        names += [x for x in self.inputs if x in self.written()]
        return names + ([self.ret_created] if self.ret_created else [])

    # -- text --------------------------------------------------------------------------------

    def _unique_reads(self, st_: Stage) -> list[tuple[str, tuple[int, int]]]:
        seen: list[tuple[str, tuple[int, int]]] = []
        for r in st_.reads:
            if (r.tensor, r.shift) not in seen:
                seen.append((r.tensor, r.shift))
        return seen

    def kernel_text(self, st_: Stage) -> list[str]:
        RB, CB, dt = self.RB, self.CB, self.dtype
        ctx = EmitCtx("tile", pinned={st_.result, st_.acc_val})
        blk = ttype(("M", self.C) if self.dynamic else (RB, CB), dt)
        accty = ttype((1, self.C) if self.dynamic else (1, CB), dt)
        uniq = self._unique_reads(st_)
        params = [f"p{k}: pl.InOut[{blk}]" if (t == st_.write and sh == (0, 0)) else f"p{k}: {blk}"
                  for k, (t, sh) in enumerate(uniq)]
        if self.dynamic:
            params += ["i: pl.Scalar[pl.INDEX]", "j: pl.Scalar[pl.INDEX]"]
            if st_.pass_n:
                params.append("n: pl.Scalar[pl.INDEX]")
        if st_.scalar:
            params.append(f"s: pl.Scalar[pl.{st_.scalar_dtype}]")
        if st_.acc_leaf is not None:
            params.append(f"acc: pl.InOut[{accty}]")
        out_name = f"p{uniq.index((st_.write, (0, 0)))}" if st_.inout else "o"
        if not st_.inout:
            params.append(f"o: pl.Out[{blk}]")
        rets = [blk] + ([accty] if st_.acc_leaf is not None else [])
        ind = " " * 8
        lines = ["    @pl.function(type=pl.FunctionType.InCore)",
                 f"    def {st_.name}(self, {', '.join(params)}) -> "
                 f"{rets[0] if len(rets) == 1 else 'tuple[' + ', '.join(rets) + ']'}:"]
        if self.dynamic and not st_.pass_n:
            lines.append(f"{ind}n = pl.min({RB}, pl.tensor.dim(p0, 0) - i)")
        for k, r in enumerate(st_.reads):
            ctx.names[r.leaf] = f"a{k}"
            p = f"p{uniq.index((r.tensor, r.shift))}"
            lines.append(f"{ind}a{k} = pl.load({p}, [i, j], [{RB}, {CB}], [n, {CB}])" if self.dynamic else
                         f"{ind}a{k} = pl.load({p}, [0, 0], [{RB}, {CB}])")
        j0 = "j" if self.dynamic else "0"
        if st_.acc_leaf is not None:
            ctx.names[st_.acc_leaf] = "acc_t"
            lines.append(f"{ind}acc_t = pl.load(acc, [0, {j0}], [1, {CB}])")
        lines += emit(st_.body, ind, ctx)
        at = "[i, j]" if self.dynamic else "[0, 0]"
        lines.append(f"{ind}st0 = pl.store({ctx.names[st_.result]}, {at}, {out_name})")
        rnames = ["st0"]
        if st_.acc_val is not None:
            lines.append(f"{ind}st1 = pl.store({ctx.names[st_.acc_val]}, [0, {j0}], acc)")
            rnames.append("st1")
        lines.append(f"{ind}return {', '.join(rnames)}")
        return lines

    def text(self) -> str:
        lines: list[str] = []
        for st_ in self.stages:
            if not st_.reuse:
                lines += self.kernel_text(st_) + [""]
        ps = self.main_params()
        rets = self.returns()
        R = "M" if self.dynamic else str(self.rows)
        rty = [ttype((1, self.C) if n == "acc" else (R, self.C), self.dtype) for n in rets]
        lines += ["    @pl.function(type=pl.FunctionType.Orchestration)",
                  f"    def main(self, {', '.join(f'{n}: {t}' for n, t in ps)}) -> "
                  f"{rty[0] if len(rty) == 1 else 'tuple[' + ', '.join(rty) + ']'}:"]
        ind = " " * 8
        if self.dynamic:
            lines.append(f"{ind}m = pl.tensor.dim({self.inputs[0]}, 0)")
        for c in self.created:
            lines.append(f"{ind}{c} = pl.create_tensor([{R}, {self.C}], dtype=pl.{self.dtype})")
        rows = "m" if self.dynamic else str(self.rows)
        loops = {"ij": [("i", rows, self.RB), ("j", str(self.C), self.CB)],
                 "ji": [("j", str(self.C), self.CB), ("i", rows, self.RB)], "i": [("i", rows, self.RB)]}[self.order]
        for var, stop, step in loops:
            lines.append(f"{ind}for {var} in pl.{'parallel' if self.parallel else 'range'}(0, {stop}, {step}):")
            ind += "    "
        jv = "0" if self.order == "i" else "j"
        for k, s in enumerate(self.steps):
            if isinstance(s, ScalarRead):
                lines.append(f"{ind}{s.var} = pl.tensor.read({s.tensor}, [{_plus('i', s.at[0])}, "
                             f"{_plus(jv, s.at[1])}])")
            elif isinstance(s, ScalarWrite):
                v = s.value if isinstance(s.value, str) else (repr(float(s.value)) if self.dtype in FLOATS
                                                               else repr(int(s.value)))
                lines.append(f"{ind}pl.tensor.write({s.tensor}, [{_plus('i', s.at[0])}, {_plus(jv, s.at[1])}], {v})")
            else:
                pre, args = self._call_args(s, jv, ind)
                call = f"self.{s.name}({', '.join(args)})"
                if s.guard:
                    f, cmp, v = s.guard
                    lines.append(f"{ind}if {f} {cmp} {v}:")
                    lines += ["    " + p for p in pre]
                    lines.append(f"{ind}    c{k} = {call}")
                else:
                    lines += pre
                    lines.append(f"{ind}c{k} = {call}")
        lines.append(f"        return {', '.join(rets)}")
        head = "import pypto.language as pl\n\n" + ('M = pl.dynamic("M")\n\n' if self.dynamic else "") + \
            "\n@pl.program\nclass Diff:\n"
        return head + "\n".join(lines) + "\n"

    def _offsets(self, shift: tuple[int, int], jv: str) -> tuple[str, str]:
        dr, dc = shift
        row = f"(i + {dr}) % {self.rows - self.RB + 1}" if dr else "i"
        col = f"({jv} + {dc}) % {self.C - self.CB + 1}" if dc else jv
        return row, col

    def _call_args(self, st_: Stage, jv: str, ind: str) -> tuple[list[str], list[str]]:
        RB, CB = self.RB, self.CB
        pre: list[str] = []

        def view(t: str, shift: tuple[int, int]) -> str:
            if self.dynamic:
                return t
            row, col = self._offsets(shift, jv)
            v = f"pl.view({t}, [{RB}, {CB}], [{row}, {col}])"
            if st_.view_vars:
                name = f"v_{t}_{len(pre)}_{st_.name}"
                pre.append(f"{ind}{name} = {v}")
                return name
            return v

        args = [view(t, sh) for t, sh in self._unique_reads(st_)]
        if self.dynamic:
            args += ["i", jv]
            if st_.pass_n:
                pre.append(f"{ind}n_{st_.name} = pl.min({RB}, m - i)")
                args.append(f"n_{st_.name}")
        if st_.scalar:
            args.append(st_.scalar)
        if st_.acc_leaf is not None:
            args.append("acc" if self.dynamic else f"pl.view(acc, [1, {CB}], [0, {jv}])")
        if not st_.inout:
            args.append(view(st_.write, (0, 0)))
        return pre, args

    # -- NumPy -------------------------------------------------------------------------------

    def evaluate(self, data: dict[str, np.ndarray], wide: bool) -> tuple[dict[str, np.ndarray], float]:
        conv = (lambda a: a.astype(np.float64)) if wide and self.dtype in FLOATS else (lambda a: a.copy())
        arrs = {k: conv(v) for k, v in data.items()}
        for c in self.created:
            arrs[c] = conv(np.zeros((self.rows, self.C), NP_DTYPE[self.dtype]))
        scal: dict = {"flag": self.flag, "s": self.s}
        ctx = EvalCtx(scal, lambda key, t: None, wide=wide)
        blocks = [(i, j) for i in range(0, self.rows, self.RB) for j in range(0, self.C, self.CB)]
        if self.order == "ji":
            blocks.sort(key=lambda b: (b[1], b[0]))
        for i, j in blocks:
            n = min(self.RB, self.rows - i)
            for s in self.steps:
                if isinstance(s, ScalarRead):
                    scal[s.var] = arrs[s.tensor][i + s.at[0], j + s.at[1]].item()
                    continue
                if isinstance(s, ScalarWrite):
                    v = scal[s.value] if isinstance(s.value, str) else s.value
                    arrs[s.tensor][i + s.at[0], j + s.at[1]] = v
                    continue
                if s.guard and not _holds(s.guard, self.flag):
                    continue
                env: dict = {}
                for r in s.reads:
                    ri = (i + r.shift[0]) % (self.rows - self.RB + 1) if r.shift[0] else i
                    cj = (j + r.shift[1]) % (self.C - self.CB + 1) if r.shift[1] else j
                    env[r.leaf] = arrs[r.tensor][ri:ri + n, cj:cj + self.CB]
                if s.acc_leaf is not None:
                    env[s.acc_leaf] = arrs["acc"][0:1, j:j + self.CB]
                ctx.scalars = dict(scal, s=scal[s.scalar] if s.scalar else None)
                evaluate(s.body, env, ctx)
                res = env[s.result]
                acc_new = env[s.acc_val] if s.acc_val is not None else None
                arrs[s.write][i:i + n, j:j + self.CB] = res
                if acc_new is not None:
                    arrs["acc"][0:1, j:j + self.CB] = acc_new
        return arrs, ctx.peak

    def case(self, seed: int) -> Case:
        rng = np.random.default_rng(seed)
        data = {x: rand(rng, (self.rows, self.C), self.dtype) for x in self.inputs}
        data["out"] = rand(rng, (self.rows, self.C), self.dtype)
        if self.has_acc:
            data["acc"] = rand(rng, (1, self.C), self.dtype)
        ref, peak = self.evaluate(data, False)
        wide, _ = self.evaluate(data, True)
        names = [n for n, _ in self.main_params()]
        args = [self.flag if n == "flag" else self.s if n == "s" else data[n] for n in names]
        prec = coarsest(self.dtypes)
        rets = self.returns()
        expected = [Expected(n, ref[n], wide[n].astype(np.float64), prec, peak) for n in rets]
        inplace = [names.index(n) if n in names else None for n in rets]
        note = (f"orchestration {self.dtype} {'dynamic' if self.dynamic else 'static'} rows={self.rows} "
                f"C={self.C} RB={self.RB} CB={self.CB} order={self.order} steps={len(self.steps)}")
        return Case(self.text(), args, inplace, expected, note)


def _plus(v: str, k: int) -> str:
    return f"{v} + {k}" if k else v


def _holds(guard: tuple[str, str, int], flag: int | None) -> bool:
    _, cmp, k = guard
    assert flag is not None
    return {">": flag > k, "<": flag < k, "==": flag == k, "!=": flag != k, ">=": flag >= k, "<=": flag <= k}[cmp]


# ---------------------------------------------------------------------------------------------
# generation


def _clamp(gen: DagGen, v: Val, limit: float) -> tuple[list, Val]:
    if v.bound <= limit:
        return [], v
    lo = gen.mk("maxs", (v,), scalar=-limit, bound=v.bound)
    hi = gen.mk("mins", (lo,), scalar=limit, bound=limit)
    return [lo, hi], hi


class _OrchGen:
    def __init__(self, draw, dtype: str, RB: int, CB: int, ncb: int, dynamic: bool, rows: int):
        self.draw, self.dtype, self.RB, self.CB, self.ncb = draw, dtype, RB, CB, ncb
        self.dynamic, self.rows = dynamic, rows
        self.limit = CLAMP[dtype]
        self.n = 0
        self.created: list[str] = []
        self.acc_bound = 2.0
        self.n_iter = max(1, -(-rows // RB)) * ncb

    def fresh(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def shift(self) -> tuple[int, int]:
        d = self.draw
        if self.dynamic or d(st.integers(0, 3)):
            return (0, 0)
        rows = [0] + ([self.RB, self.RB // 2, self.rows - self.RB] if self.rows > self.RB else [])
        cols = [0] + ([self.CB, self.CB // 2] if self.ncb > 1 else [])
        return d(st.sampled_from(rows)), d(st.sampled_from(cols))

    def stage(self, k: int, readable: list[str], inputs: list[str], last: bool, svars: list[str],
              s_dtype: str | None) -> Stage:
        d = self.draw
        reads = []
        for _ in range(d(st.integers(1, 2))):
            sh = self.shift()
            t = d(st.sampled_from(readable if sh == (0, 0) else inputs + self.created + ["out"]))
            reads.append(Read(t, sh, Leaf("full", self.dtype, float(self.limit), key=t)))
        if last:
            write = "out"
        else:
            c = d(st.integers(0, 3))
            if c == 0 or not self.created:
                write = self.fresh("t")
                self.created.append(write)
            else:
                write = d(st.sampled_from(self.created if c == 1 else inputs if c == 2 else ["out"]))
        scalar, sdt = None, "FP32"
        sources = (["s"] if s_dtype else []) + svars
        if sources and d(st.booleans()):
            scalar = d(st.sampled_from(sources))
            sdt = s_dtype if scalar == "s" and s_dtype else self.dtype
        gen = DagGen(d, "tile", Shape(self.RB, self.CB),
                     scalars={"s": (sdt, float(self.limit) if self.dtype in FLOATS else int(self.limit))}
                     if scalar else {}, max_depth=1, casts=d(st.booleans()), fresh=self.fresh)
        body: list = []
        leaves = [r.leaf for r in reads]
        grown = gen.body(leaves, d(st.integers(1, 5)), 0, body)
        cands = [v for v in grown if v.kind == "full" and v.dtype == self.dtype]
        made = [v for v in defined(body) if v in cands]
        result = made[-1] if made else d(st.sampled_from(cands))
        extra, result = _clamp(gen, result, self.limit)
        body += extra
        stage = Stage(f"k{k}", reads, write, body, result, scalar=scalar, scalar_dtype=sdt,
                      pass_n=self.dynamic and d(st.booleans()), view_vars=d(st.booleans()))
        if d(st.integers(0, 2)) == 0:
            red = d(st.sampled_from(["col_sum", "col_max", "col_min"]))
            comb = d(st.sampled_from(["add", "maximum", "minimum"]))
            grow = (self.RB * self.limit if red == "col_sum" else self.limit) * (self.n_iter if comb == "add" else 1)
            if self.acc_bound + grow <= LIMIT[self.dtype]:
                self.acc_bound += grow
                stage.acc_leaf = Leaf("col", self.dtype, self.acc_bound, key="acc")
                r = gen.mk(red, (result,))
                cv = gen.mk(comb, (stage.acc_leaf, r), bound=self.acc_bound)
                body += [r, cv]
                stage.acc_val = cv
        return stage

    def reuse(self, k: int, orig: Stage, readable: list[str], inputs: list[str], last: bool) -> Stage | None:
        """The kernel of `orig` on other tensors (only for kernels without aliasing between parameters)."""
        d = self.draw
        uniq = {(r.tensor, r.shift) for r in orig.reads}
        if orig.inout or len(uniq) != len(orig.reads) or any(r.shift != (0, 0) for r in orig.reads):
            return None
        if len(set(readable)) < len(orig.reads):
            return None
        ts = d(st.permutations(sorted(set(readable))))[:len(orig.reads)]
        writable = [t for t in [*self.created, *inputs, "out"] if t not in ts]
        if last:
            writable = ["out"] if "out" not in ts else []
        if not writable:
            return None
        reads = [Read(t, (0, 0), r.leaf) for t, r in zip(ts, orig.reads)]
        if orig.acc_leaf is not None:
            grow = self.acc_bound - 2.0  # the same growth again
            if self.acc_bound + grow > LIMIT[self.dtype]:
                return None
            self.acc_bound += grow
        return Stage(orig.name, reads, d(st.sampled_from(writable)), orig.body, orig.result, orig.acc_leaf,
                     orig.acc_val, scalar=orig.scalar, scalar_dtype=orig.scalar_dtype, pass_n=orig.pass_n,
                     view_vars=d(st.booleans()), reuse=True)


@st.composite
def orch_programs(draw, dtypes=("FP32", "FP32", "INT32", "FP16"), max_steps: int = 5, row_blocks: int = 3,
                  col_blocks: int = 2) -> OrchProgram:
    dtype = draw(st.sampled_from(dtypes))
    RB, CB = draw(st.sampled_from([8, 16])), draw(st.sampled_from([16, 32]))
    ncb = draw(st.integers(1, col_blocks))
    dynamic = draw(st.booleans())
    rows = draw(st.integers(1, row_blocks * RB + 3)) if dynamic else RB * draw(st.integers(1, row_blocks))
    order = draw(st.sampled_from(["ij", "ji"] if ncb > 1 else ["i", "ij"]))
    inputs = [f"x{k}" for k in range(draw(st.integers(1, 2)))]
    flag = draw(st.integers(0, 3)) if draw(st.booleans()) else None
    s = (draw(st.sampled_from([2, -1])) if dtype == "INT32" else draw(st.sampled_from([0.5, -1.5]))) \
        if draw(st.booleans()) else None
    s_dtype = ("INT32" if dtype == "INT32" else "FP32") if s is not None else None
    g = _OrchGen(draw, dtype, RB, CB, ncb, dynamic, rows)
    written_now: list[str] = []  # written earlier in this iteration: readable in the same block
    steps: list = []
    svars: list[str] = []
    n_steps = draw(st.integers(1, max_steps))
    for k in range(n_steps):
        last = k == n_steps - 1
        readable = inputs + written_now
        kind = draw(st.integers(0, 9)) if not last else 0
        if kind == 8:  # read one element of a block this iteration wrote (the orchestration waits for it)
            t = draw(st.sampled_from(readable))
            var = g.fresh("sv")
            steps.append(ScalarRead(var, t, (0, draw(st.integers(0, CB - 1)))))
            svars.append(var)
            continue
        if kind == 9:  # write one element; later kernels of the block must see it
            t = draw(st.sampled_from(written_now or inputs))
            val = draw(st.sampled_from(svars)) if svars and draw(st.booleans()) else \
                (draw(st.sampled_from([3, -5])) if dtype == "INT32" else draw(st.sampled_from([1.5, -0.25])))
            steps.append(ScalarWrite(t, (0, draw(st.integers(0, CB - 1))), val))
            if t not in written_now:
                written_now.append(t)
            continue
        stage = None
        prior = [s_ for s_ in steps if isinstance(s_, Stage) and not s_.reuse]
        if prior and kind == 7:
            stage = g.reuse(k, draw(st.sampled_from(prior)), readable, inputs, last)
        if stage is None:
            stage = g.stage(k, readable, inputs, last, svars, s_dtype)
        if flag is not None and not last and draw(st.integers(0, 3)) == 0:
            stage.guard = ("flag", draw(st.sampled_from([">", "<=", "=="])), draw(st.integers(0, 3)))
        steps.append(stage)
        if not stage.guard and stage.write not in written_now:
            written_now.append(stage.write)
    created = g.created
    # return only an intermediate that every iteration writes whole and that no step reads before it is
    # written: a returned pl.create_tensor starts uninitialized on cpu instead of zeroed
    # (test_regressions.py::test_returned_created_tensor_is_zero_filled)
    early = {r.tensor for s_ in steps if isinstance(s_, Stage) for r in s_.reads if r.shift != (0, 0)}
    whole = [t for t in created if t not in early and
             any(isinstance(s_, Stage) and s_.write == t and not s_.guard for s_ in steps)]
    ret_created = draw(st.sampled_from(whole)) if whole and draw(st.booleans()) else None
    cross = any(r.shift != (0, 0) for s_ in steps if isinstance(s_, Stage) for r in s_.reads) or \
        any(isinstance(s_, Stage) and s_.acc_leaf is not None for s_ in steps)
    parallel = not cross and draw(st.booleans())
    prog = OrchProgram(dtype, RB, CB, ncb, dynamic, rows, order, parallel, inputs, created, steps, flag, s,
                       ret_created)
    prog.dtypes = {dtype} | {v.dtype for st_ in prog.stages for v in all_values(st_.body)}
    return prog
