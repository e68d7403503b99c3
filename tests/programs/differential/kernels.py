"""Single-kernel programs: one InCore kernel (loads with ragged valid regions, a random op DAG with
ifs and tile-carrying loops, an optional K-loop matmul through Mat/Left/Right/Acc) and an
orchestration that calls it."""

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
    iteration_index,
)
from .dag_gen import DagGen, Shape


def ttype(shape, dtype: str) -> str:
    return f"pl.Tensor[[{', '.join(str(d) for d in shape)}], pl.{dtype}]"


@dataclass
class Input:
    """A tensor parameter and the tile loaded from it (once, or once per loop iteration)."""

    name: str
    leaf: Leaf
    tshape: tuple[int, int]
    offset: tuple[int, int]
    tile: tuple[int, int]
    valid: tuple[int, int]
    explicit_valid: int  # 0: omit when full, 1: positional, 2: valid_shapes= keyword
    step: int = 0  # per-iteration column step (loop inputs)
    vnames: tuple[str | None, str | None] = (None, None)  # index parameters holding the valid extents
    data: np.ndarray | None = None

    def load_text(self, var: str, col: str | None = None) -> str:
        r0, c0 = self.offset
        cexpr = str(c0) if col is None else (f"{c0} + {col} * {self.step}" if c0 else f"{col} * {self.step}")
        full = self.valid == self.tile and self.vnames == (None, None)
        v = f"[{self.vnames[0] or self.valid[0]}, {self.vnames[1] or self.valid[1]}]"
        valid = ("" if full and not self.explicit_valid else
                 (f", valid_shapes={v}" if self.explicit_valid == 2 else f", {v}"))
        return f"{var} = pl.load({self.name}, [{r0}, {cexpr}], [{self.tile[0]}, {self.tile[1]}]{valid})"

    def region(self, t: int = 0) -> np.ndarray:
        assert self.data is not None
        r0, c0 = self.offset[0], self.offset[1] + t * self.step
        return self.data[r0:r0 + self.valid[0], c0:c0 + self.valid[1]]


@dataclass
class Output:
    name: str
    val: Val
    tshape: tuple[int, int]
    offset: tuple[int, int]
    src: str | None = None  # store this tile instead of the value's own name (the Acc tile of a matmul)
    pad: tuple[str, str | None] | None = None  # fillpad (zero/max/min), then maybe a row reduction: whole tile

    def store_shape(self, tile: tuple[int, int], valid: tuple[int, int]) -> tuple[int, int]:
        if self.pad is None:
            return valid
        return (tile[0], 1) if self.pad[1] else tile

    def finish(self, x: np.ndarray, tile: tuple[int, int], wide: bool) -> np.ndarray:
        """The stored array: the value, or its fillpad (and reduction) over the whole tile."""
        if self.pad is None:
            return x
        x = np.asarray(x)
        dt = NP_DTYPE[self.val.dtype]
        if self.val.dtype == "INT32":
            fill = {"zero": 0, "max": np.iinfo(np.int32).max, "min": np.iinfo(np.int32).min}[self.pad[0]]
        else:
            fill = {"zero": 0.0, "max": np.inf, "min": -np.inf}[self.pad[0]]
        full = np.full(tile, fill, np.float64 if wide and self.val.dtype in FLOATS else dt)
        full[:x.shape[0], :x.shape[1]] = x
        if self.pad[1] is None:
            return full
        cd = np.int64 if self.val.dtype == "INT32" else (np.float64 if wide else np.float32)
        r = {"row_sum": np.sum, "row_max": np.max, "row_min": np.min}[self.pad[1]](full.astype(cd), axis=1,
                                                                                 keepdims=True)
        return r if wide and self.val.dtype in FLOATS else r.astype(dt)


@dataclass
class Matmul:
    """acc = A[:, 0:kb] @ B[0:kb, :], then a K loop of matmul_acc (or the same unrolled)."""

    in_dtype: str
    M: int
    N: int
    kb: int
    nk: int
    vr: int
    vc: int
    b_trans: bool
    style: int  # 0: peeled first step + pl.range loop, 1: unrolled
    leaf: Leaf
    vnames: tuple[str | None, str | None] = (None, None)
    a: np.ndarray | None = None
    b: np.ndarray | None = None

    def lines(self, ind: str) -> list[str]:
        M, N, kb, K = self.M, self.N, self.kb, self.kb * self.nk

        vr, vc = self.vnames[0] or self.vr, self.vnames[1] or self.vc

        def a_load(k: str) -> str:
            v = f", [{vr}, {kb}]" if self.vr != M or self.vnames[0] else ""
            return f"pl.move(pl.load(a, [0, {k}], [{M}, {kb}]{v}, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)"

        def b_load(k: str) -> str:
            if self.b_trans:
                v = f", [{vc}, {kb}]" if self.vc != N or self.vnames[1] else ""
                ld = f"pl.load(b, [0, {k}], [{N}, {kb}]{v}, target_memory=pl.Mem.Mat, transpose=True)"
            else:
                v = f", [{kb}, {vc}]" if self.vc != N or self.vnames[1] else ""
                ld = f"pl.load(b, [{k}, 0], [{kb}, {N}]{v}, target_memory=pl.Mem.Mat)"
            return f"pl.move({ld}, target_memory=pl.Mem.Right)"

        out = [f"{ind}al0 = {a_load('0')}", f"{ind}br0 = {b_load('0')}", f"{ind}cacc = pl.matmul(al0, br0)"]
        if self.nk > 1 and self.style == 0:
            out += [f"{ind}for kk, (cc,) in pl.range({kb}, {K}, {kb}, init_values=(cacc,)):",
                    f"{ind}    al = {a_load('kk')}", f"{ind}    br = {b_load('kk')}",
                    f"{ind}    cc2 = pl.matmul_acc(cc, al, br)", f"{ind}    cacc_r = pl.yield_(cc2)"]
            acc = "cacc_r"
        else:
            acc = "cacc"
            for k in range(1, self.nk):
                out += [f"{ind}al{k} = {a_load(str(k * kb))}", f"{ind}br{k} = {b_load(str(k * kb))}",
                        f"{ind}cacc{k} = pl.matmul_acc({acc}, al{k}, br{k})"]
                acc = f"cacc{k}"
        out.append(f"{ind}mmv = pl.move({acc}, target_memory=pl.Mem.Vec)")
        self.acc_name = acc
        return out

    def value(self, wide: bool) -> np.ndarray:
        assert self.a is not None and self.b is not None
        cd = np.float64 if wide else np.float32
        K = self.kb * self.nk
        a = self.a[:self.vr, :K].astype(cd)
        b = (self.b[:self.vc, :K].T if self.b_trans else self.b[:K, :self.vc]).astype(cd)
        return (a @ b).astype(cd)


@dataclass(repr=False)
class KernelProgram:
    dtype: str
    shape: Shape
    inputs: list[Input]
    loop_inputs: list[Input]
    scalars: dict[str, tuple[str, float]]
    flags: dict[str, int]
    body: list
    outputs: list[Output]
    mm: Matmul | None
    call_style: int
    dtypes: set = field(default_factory=set)

    def __repr__(self) -> str:  # hypothesis prints the falsifying program as source
        return f"{type(self).__name__}:\n{self.text()}"

    # -- text --------------------------------------------------------------------------------

    def params(self) -> list[tuple[str, str, str]]:
        """(name, annotation, role) of the kernel's parameters, in order."""
        ps = [(i.name, ttype(i.tshape, i.leaf.dtype), "in") for i in self.inputs]
        if self.mm:
            K = self.mm.kb * self.mm.nk
            ps.append(("a", ttype((self.mm.M, K), self.mm.in_dtype), "in"))
            ps.append(("b", ttype((self.mm.N, K) if self.mm.b_trans else (K, self.mm.N), self.mm.in_dtype), "in"))
        ps += [(i.name, ttype(i.tshape, i.leaf.dtype), "in") for i in self.loop_inputs]
        ps += [(n, f"pl.Scalar[pl.{dt}]", "scalar") for n, (dt, _) in self.scalars.items()]
        ps += [(n, "pl.Scalar[pl.INDEX]", "scalar") for n in self.flags]
        ps += [(o.name, f"pl.Out[{ttype(o.tshape, o.val.dtype)}]", "out") for o in self.outputs]
        return ps

    def ret_type(self) -> str:
        ts = [ttype(o.tshape, o.val.dtype) for o in self.outputs]
        return ts[0] if len(ts) == 1 else f"tuple[{', '.join(ts)}]"

    def text(self) -> str:
        ctx = EmitCtx("tile", load_lines=self._loop_load, pinned={o.val for o in self.outputs})
        for i in self.inputs + self.loop_inputs:
            ctx.names[i.leaf] = f"{i.name}_t"
        ind = " " * 8
        sig = ", ".join(f"{n}: {t}" for n, t, _ in self.params())
        lines = ["    @pl.function(type=pl.FunctionType.InCore)",
                 f"    def kern(self, {sig}) -> {self.ret_type()}:"]
        lines += [ind + i.load_text(f"{i.name}_t") for i in self.inputs]
        if self.mm:
            lines += self.mm.lines(ind)
            ctx.names[self.mm.leaf] = "mmv"
        lines += emit(self.body, ind, ctx)
        rets = []
        for k, o in enumerate(self.outputs):
            src = o.src if o.src else ctx.names[o.val]
            if o.pad:
                lines.append(f"{ind}fp{k} = pl.fillpad({src}, \"{o.pad[0]}\")")
                src = f"fp{k}"
                if o.pad[1]:
                    lines.append(f"{ind}fr{k} = pl.{o.pad[1]}({src})")
                    src = f"fr{k}"
            lines.append(f"{ind}st{k} = pl.store({src}, [{o.offset[0]}, {o.offset[1]}], {o.name})")
            rets.append(f"st{k}")
        lines.append(f"{ind}return {', '.join(rets)}")
        names = [n for n, _, _ in self.params()]
        msig = ", ".join(f"{n}: {t}" for n, t, _ in self.params())
        lines += ["", "    @pl.function(type=pl.FunctionType.Orchestration)",
                  f"    def main(self, {msig}) -> {self.ret_type()}:"]
        outs = [f"r{k}" for k in range(len(self.outputs))]
        if self.call_style == 0 or len(outs) > 1:  # `return self.kern(...)` of a tuple: see test_regressions
            lines += [f"{ind}{', '.join(outs)} = self.kern({', '.join(names)})", f"{ind}return {', '.join(outs)}"]
        else:
            lines += [f"{ind}return self.kern({', '.join(names)})"]
        return "import pypto.language as pl\n\n\n@pl.program\nclass Diff:\n" + "\n".join(lines) + "\n"

    def _loop_load(self, leaf: Leaf, ind: str, var: str, style: int, trips: int) -> list[str]:
        inp = next(i for i in self.loop_inputs if i.leaf is leaf)
        return [ind + inp.load_text(f"{inp.name}_t", iteration_index(var, style))]

    # -- data and NumPy ----------------------------------------------------------------------

    def evaluate(self, wide: bool) -> tuple[list[np.ndarray], float]:
        env: dict = {i.leaf: i.region() for i in self.inputs}
        if self.mm:
            env[self.mm.leaf] = self.mm.value(wide)
        by_key = {i.leaf.key: i for i in self.loop_inputs}
        ctx = EvalCtx({n: v for n, (_, v) in self.scalars.items()} | dict(self.flags),
                      lambda key, t: by_key[key].region(t), wide=wide)
        evaluate(self.body, env, ctx)
        tiles = {"full": (self.shape.R, self.shape.C), "row": (self.shape.R, 1), "col": (1, self.shape.C)}
        return [o.finish(env[o.val], tiles[o.val.kind], wide) for o in self.outputs], ctx.peak

    def case(self, seed: int) -> Case:
        rng = np.random.default_rng(seed)
        for i in self.inputs + self.loop_inputs:
            i.data = rand(rng, i.tshape, i.leaf.dtype)
        if self.mm:
            K = self.mm.kb * self.mm.nk
            self.mm.a = rand(rng, (self.mm.M, K), self.mm.in_dtype, 1.0)
            self.mm.b = rand(rng, (self.mm.N, K) if self.mm.b_trans else (K, self.mm.N), self.mm.in_dtype, 1.0)
        outs = [rand(rng, o.tshape, o.val.dtype, 9.0) for o in self.outputs]
        ref, peak = self.evaluate(False)
        wide, _ = self.evaluate(True)
        args: list = [i.data for i in self.inputs]
        if self.mm:
            args += [self.mm.a, self.mm.b]
        args += [i.data for i in self.loop_inputs]
        args += [v for _, v in self.scalars.values()] + list(self.flags.values())
        first_out = len(args)
        args += outs
        prec = coarsest(self.dtypes)
        expected = []
        for k, (o, r, w) in enumerate(zip(self.outputs, ref, wide)):
            full_r, full_w = outs[k].copy(), outs[k].astype(np.float64)
            sl = (slice(o.offset[0], o.offset[0] + r.shape[0]), slice(o.offset[1], o.offset[1] + r.shape[1]))
            full_r[sl] = np.asarray(r).astype(NP_DTYPE[o.val.dtype])
            full_w[sl] = w
            expected.append(Expected(o.name, full_r, full_w, prec if o.val.dtype in FLOATS else "INT32", peak))
        note = (f"kernel {self.dtype} tile {self.shape.R}x{self.shape.C}, {len(self.inputs)} inputs, "
                f"mm={'yes' if self.mm else 'no'}")
        return Case(self.text(), args, list(range(first_out, first_out + len(outs))), expected, note)


# ---------------------------------------------------------------------------------------------
# generation


def _offset(draw) -> tuple[int, int]:
    return draw(st.integers(0, 3)), draw(st.integers(0, 5))


@st.composite
def kernel_programs(draw, dtypes=("FP32", "FP32", "FP32", "FP16", "BF16", "INT32"), allow_mm: bool = True,
                    max_stmts: int = 8, rows=(8, 16, 32), cols=(16, 32, 64)) -> KernelProgram:
    dtype = draw(st.sampled_from(dtypes))
    mm = None
    want_mm = allow_mm and dtype == "FP32" and draw(st.integers(0, 2)) == 0
    if want_mm:
        R, C = draw(st.sampled_from([16, 32])), draw(st.sampled_from([16, 32, 48]))
    else:
        R, C = draw(st.sampled_from(rows)), draw(st.sampled_from(cols))
    ragged = draw(st.booleans())
    vr = draw(st.integers(1, R)) if ragged else R
    vc = draw(st.integers(1, C)) if ragged else C
    dtypes_used = {dtype}
    # valid extents given at run time by index parameters (they may also steer ifs)
    flags: dict[str, int] = {}
    nr = "nr" if ragged and draw(st.integers(0, 2)) == 0 else None
    nc = "nc" if ragged and draw(st.integers(0, 2)) == 0 else None
    if nr:
        flags["nr"] = vr
    if nc:
        flags["nc"] = vc

    def make_input(name: str, kind: str, dt: str) -> Input:
        tile = {"full": (R, C), "row": (R, 1), "col": (1, C)}[kind]
        valid = {"full": (vr, vc), "row": (vr, 1), "col": (1, vc)}[kind]
        r0, c0 = _offset(draw)
        if kind == "row":
            c0 = 0
        if kind == "col":
            r0 = 0
        # a tensor at least as large as the tile (the type rule); a ragged window may run past its end
        tshape = (max(tile[0], r0 + valid[0] + draw(st.sampled_from([0, 2]))),
                  max(tile[1], c0 + valid[1] + (draw(st.sampled_from([0, 3])) if kind != "row" else 0)))
        leaf = Leaf(kind, dt, 8.0 if dt == "INT32" else 2.0, key=name)
        vn = {"full": (nr, nc), "row": (nr, None), "col": (None, nc)}[kind]
        return Input(name, leaf, tshape, (r0, c0), tile, valid, draw(st.integers(0, 2)), vnames=vn)

    inputs = [make_input(f"x{k}", "full", dtype) for k in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        inputs.append(make_input("xr", "row", dtype))
    if draw(st.booleans()):
        inputs.append(make_input("xc", "col", dtype))
    if want_mm:
        in_dt = draw(st.sampled_from(["FP32", "FP16", "BF16"]))
        kb, nk = draw(st.sampled_from([16, 32])), draw(st.integers(1, 3))
        dtypes_used.add(in_dt)
        mm = Matmul(in_dt, R, C, kb, nk, vr, vc, draw(st.booleans()), draw(st.integers(0, 1)),
                    Leaf("full", "FP32", float(kb * nk), key="mm"), vnames=(nr, nc))
    scalars = {}
    if draw(st.booleans()):
        scalars["s"] = ("INT32", draw(st.sampled_from([2, -3]))) if dtype == "INT32" else \
            ("FP32", draw(st.sampled_from([0.75, -1.25, 2.5])))
    if draw(st.booleans()):
        flags["flag"] = draw(st.integers(0, 4))
    loop_inputs: list[Input] = []

    def new_loop_input(dt: str, trips: int) -> Leaf:
        name = f"w{len(loop_inputs)}"
        r0, c0 = _offset(draw)
        inp = Input(name, Leaf("full", dt, 8.0 if dt == "INT32" else 2.0, key=name), (max(R, r0 + vr), c0 + max(trips, 1) * C),
                    (r0, c0), (R, C), (vr, vc), draw(st.integers(0, 2)), step=C, vnames=(nr, nc))
        loop_inputs.append(inp)
        return inp.leaf

    gen = DagGen(draw, "tile", Shape(R, C), scalars=scalars, flags=flags, new_loop_input=new_loop_input)
    pool: list[Val] = [i.leaf for i in inputs] + ([mm.leaf] if mm else [])
    body: list = []
    grown = gen.body(pool, draw(st.integers(1, max_stmts)), 0, body)
    made = defined(body)
    first = made[-1] if made else pool[-1]
    chosen = [first]
    if draw(st.booleans()):
        chosen.append(draw(st.sampled_from(grown)))
    outputs = []
    for k, v in enumerate(chosen):
        tile = {"full": (R, C), "row": (R, 1), "col": (1, C)}[v.kind]
        pad = None
        if ragged and v.kind == "full" and draw(st.integers(0, 3)) == 0:
            # the padding of a ragged tile made explicit: fillpad, then maybe the reduction it is for
            red = draw(st.sampled_from([None, "row_sum", "row_max", "row_min"]))
            pad = ({None: draw(st.sampled_from(["zero", "max", "min"])), "row_sum": "zero", "row_max": "min",
                    "row_min": "max"}[red], red)
            if red == "row_sum" and v.bound * C > LIMIT[v.dtype]:
                pad = ("zero", None)
        o = Output(f"o{k}", v, (0, 0), (0, 0), pad=pad)
        shape = o.store_shape(tile, {"full": (vr, vc), "row": (vr, 1), "col": (1, vc)}[v.kind])
        o.offset = (draw(st.integers(0, 2)), draw(st.integers(0, 3)) if shape[1] > 1 else 0)
        o.tshape = (max(tile[0] if not pad else shape[0], o.offset[0] + shape[0] + draw(st.sampled_from([0, 1]))),
                    max(tile[1] if not pad else shape[1],
                        o.offset[1] + shape[1] + (draw(st.sampled_from([0, 2])) if shape[1] > 1 else 0)))
        outputs.append(o)
    if mm and draw(st.integers(0, 2)) == 0:  # store the accumulator straight from Acc
        valid = (vr, vc)
        o0 = (draw(st.integers(0, 2)), draw(st.integers(0, 3)))
        outputs.append(Output(f"o{len(outputs)}", mm.leaf, (max(R, o0[0] + vr), max(C, o0[1] + vc)), o0, src="acc"))
    prog = KernelProgram(dtype, Shape(R, C), inputs, loop_inputs, scalars, flags, body, outputs, mm,
                         draw(st.integers(0, 1)))
    for v in all_values(body):
        dtypes_used.add(v.dtype)
    prog.dtypes = dtypes_used
    if mm:
        prog.text()  # names the accumulator
        for o in outputs:
            if o.src == "acc":
                o.src = mm.acc_name
    return prog
