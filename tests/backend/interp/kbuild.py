"""Build small post-pipeline kernels from `pl` text (explicit buffers and addresses) for interp tests.

`Kernel` collects tensor parameters, scalar parameters, buffers and body lines, then prints a
`@pl.program` with one InCore function, parses it with `pl.parse` and runs `pypto.codegen.generate`.
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
