"""Build small post-pipeline kernels from `pl` text (explicit buffers and addresses) for interp tests.

`Kernel` collects tensor parameters, scalar parameters, buffers and body lines, then prints a
`@pl.program` with one InCore function, parses it with `pl.parse` and runs `pypto.codegen.generate`.
Below it, the kernels and programs that several interpreter test modules run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

import pypto.language as pl
from pypto.codegen import generate

NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32, "INT8": np.int8,
      "INT16": np.int16, "UINT8": np.uint8, "INDEX": np.int64, "BOOL": np.bool_}
FLOATS = ("FP32", "FP16", "BF16")
INTS = ("INT32", "INT8")
ALL = FLOATS + INTS
SPACES = ("Vec", "Mat", "Left", "Right", "Acc", "Bias")


def itemsize(dt: str) -> int:
    return np.dtype(NP[dt]).itemsize


def rand(shape, dt: str, rng: np.random.Generator, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    if dt in INTS or dt in ("INT16", "UINT8"):
        info = np.iinfo(NP[dt])
        lo_i, hi_i = max(int(lo * 16), info.min), min(int(hi * 16), info.max)
        if dt == "INT8":
            lo_i, hi_i = -128, 127
        return rng.integers(lo_i, hi_i + 1, size=shape).astype(NP[dt])
    return rng.uniform(lo, hi, size=shape).astype(NP[dt])


@dataclass
class Kernel:
    """A kernel under construction. `dyn` adds an index parameter `n` usable in valid shapes."""

    name: str = "k"
    params: list[str] = field(default_factory=list)
    allocs: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    next_addr: dict[str, int] = field(default_factory=dict)
    n_mem: int = 0
    out: tuple[str, str] | None = None  # (param name, its type text)

    def tensor(self, name: str, shape, dt: str, direction: str = "") -> str:
        t = f"pl.Tensor[{list(shape)}, pl.{dt}]"
        self.params.append(f"{name}: {f'pl.{direction}[{t}]' if direction else t}")
        if direction in ("Out", "InOut") and self.out is None:
            self.out = (name, t)
        return name

    def scalar(self, name: str, dt: str) -> str:
        self.params.append(f"{name}: pl.Scalar[pl.{dt}]")
        return name

    def mem(self, space: str, nbytes: int, addr: int | None = None) -> str:
        if addr is None:
            addr = self.next_addr.get(space, 0)
        self.next_addr[space] = max(self.next_addr.get(space, 0), (addr + nbytes + 63) // 64 * 64)
        m = f"m{self.n_mem}"
        self.allocs.append(f"{m}: pl.MemRefType = pl.block.alloc(pl.MemorySpace.{space}, {addr}, {nbytes}, "
                           f"{self.n_mem})")
        self.n_mem += 1
        return m

    def tile_type(self, shape, dt: str, mem: str, valid=None) -> str:
        view = f", pl.TileView(valid_shape=[{', '.join(map(str, valid))}])" if valid is not None else ""
        return f"pl.Tile[{list(shape)}, pl.{dt}, {mem}{view}]"

    def let(self, var: str, shape, dt: str, expr: str, *, space: str = "Vec", valid=None, mem: str | None = None,
            addr: int | None = None) -> str:
        """`var: Tile[...] = expr` in a fresh buffer (or `mem`)."""
        n = 1
        for d in shape:
            n *= d
        mem = mem or self.mem(space, n * itemsize(dt), addr)
        self.body.append(f"{var}: {self.tile_type(shape, dt, mem, valid)} = {expr}")
        return var

    def load(self, var: str, tensor: str, shape, dt: str, *, valid=None, offsets=None, space: str = "Vec",
             mem: str | None = None) -> str:
        offs = offsets or [0] * len(shape)
        vs = f", [{', '.join(map(str, valid))}]" if valid is not None else ""
        tgt = f", target_memory=pl.MemorySpace.{space}" if space != "Vec" else ""
        return self.let(var, shape, dt, f"pl.load({tensor}, {offs}, {list(shape)}{vs}{tgt})", space=space,
                        valid=valid, mem=mem)

    def line(self, text: str) -> None:
        self.body.append(text)

    def barrier(self) -> None:
        self.body.append("pl.system.bar_all()")

    def set_flag(self, src: str, dst: str, event: int = 0) -> None:
        self.body.append(f"pl.system.sync_src(set_pipe=pl.PipeType.{src}, wait_pipe=pl.PipeType.{dst}, "
                         f"event_id={event})")

    def wait_flag(self, src: str, dst: str, event: int = 0) -> None:
        self.body.append(f"pl.system.sync_dst(set_pipe=pl.PipeType.{src}, wait_pipe=pl.PipeType.{dst}, "
                         f"event_id={event})")

    def sync(self, src: str, dst: str, event: int = 0) -> None:
        self.set_flag(src, dst, event)
        self.wait_flag(src, dst, event)

    def store(self, tile: str, offsets, tensor: str | None = None) -> None:
        tensor = tensor or (self.out[0] if self.out else "out")
        self.body.append(f"o = pl.store({tile}, {list(offsets)}, {tensor})")

    def text(self) -> str:
        ret = self.out[1] if self.out else "None"
        lines = ["import pypto.language as pl", "", "", "@pl.program", "class P:",
                 "    @pl.function(type=pl.FunctionType.InCore)",
                 f"    def {self.name}(self, {', '.join(self.params)}) -> {ret}:"]
        lines += [f"        {s}" for s in self.allocs + self.body]
        lines.append("        return o" if self.out else "        return")
        return "\n".join(lines) + "\n"

    def build(self):
        """The kernel's PTO module."""
        prog = pl.parse(self.text())
        return generate(prog).kernels[self.name]


def build_program(text: str):
    """(kernels, orchestration, entry) of a `pl` program text."""
    res = generate(pl.parse(text))
    return res.kernels, res.orchestration, res.entry


def build_kernel(text: str):
    """The entry kernel's PTO module of a `pl` program text."""
    kernels, _, entry = build_program(text)
    return kernels[entry]


# ---------------------------------------------------------------------------------------------
# kernels and programs several interpreter tests run (hazards, programs, PTO text round trips)


def loop_kernel(back_sync: bool) -> str:
    """Each iteration loads a row block into t, exp's it into u and stores u. Reusing t and u in the
    next iteration needs the previous exp (V) done before the load (MTE2) overwrites t, and the
    previous store (MTE3) done before the exp overwrites u: flags set at the end of one iteration and
    waited in the next, balanced by sets before the loop and waits after it."""
    def sync(kind: str, src: str, dst: str) -> str:
        return (f"pl.system.sync_{kind}(set_pipe=pl.PipeType.{src}, wait_pipe=pl.PipeType.{dst}, event_id=1)"
                if back_sync else "pass")
    return f"""
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def loop_k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 4096, 0)
        m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 4096, 4096, 1)
        {sync("src", "V", "MTE2")}
        {sync("src", "MTE3", "V")}
        for i in pl.range(4):
            {sync("dst", "V", "MTE2")}
            t: pl.Tile[[16, 64], pl.FP32, m0] = pl.load(a, [i * 16, 0], [16, 64])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            {sync("dst", "MTE3", "V")}
            u: pl.Tile[[16, 64], pl.FP32, m1] = pl.exp(t)
            {sync("src", "V", "MTE2")}
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            o = pl.store(u, [i * 16, 0], out)
            {sync("src", "MTE3", "V")}
        {sync("dst", "V", "MTE2")}
        {sync("dst", "MTE3", "V")}
        return o
"""


def cube_kernel(fix_flag: bool) -> Kernel:
    """tload (MTE2) -> tmov Mat->Left/Right (MTE1) -> tmatmul (M) -> tstore from Acc (FIX)."""
    k = Kernel()
    k.tensor("a", (16, 32), "FP16")
    k.tensor("b", (32, 16), "FP16")
    k.tensor("out", (16, 16), "FP32", "Out")
    k.load("am", "a", (16, 32), "FP16", space="Mat")
    k.load("bm", "b", (32, 16), "FP16", space="Mat")
    k.sync("MTE2", "MTE1")
    k.let("al", (16, 32), "FP16", "pl.move(am, target_memory=pl.MemorySpace.Left)", space="Left")
    k.let("br", (32, 16), "FP16", "pl.move(bm, target_memory=pl.MemorySpace.Right)", space="Right")
    k.sync("MTE1", "M")
    k.let("c", (16, 16), "FP32", "pl.matmul(al, br)", space="Acc")
    if fix_flag:
        k.sync("M", "FIX")
    k.store("c", [0, 0])
    return k


ADD_KERNEL = """
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        m0: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 0, 4096, 0)
        m1: pl.MemRefType = pl.block.alloc(pl.MemorySpace.Vec, 4096, 4096, 1)
        ta: pl.Tile[[16, 64], pl.FP32, m0] = pl.load(a, [0, 0], [16, 64])
        tb: pl.Tile[[16, 64], pl.FP32, m1] = pl.load(b, [0, 0], [16, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        tc: pl.Tile[[16, 64], pl.FP32, m0] = pl.add(ta, tb)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        o = pl.store(tc, [0, 0], out)
        return o
"""

SLICES = """
import pypto.language as pl


@pl.program
class P:
""" + ADD_KERNEL + """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = pl.create_tensor([64, 64], dtype=pl.FP32)
        for i in pl.range(4):
            sa = pl.view(a, [16, 64], [i * 16, 0])
            sb = pl.view(b, [16, 64], [i * 16, 0])
            sc = pl.view(c, [16, 64], [i * 16, 0])
            r = self.add_k(sa, sb, sc)
        return c
"""
