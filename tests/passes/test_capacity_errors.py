"""Kernels that do not fit a target's on-chip memory fail in AllocateMemoryAddr with a located error."""

from __future__ import annotations

import dataclasses
import os

import pytest

import pypto.language as pl
from pypto.ir.enums import MemorySpace
from pypto.passes.allocate_memory_addr import AllocateMemoryAddr
from pypto.passes.base import PassContext, PassError
from pypto.passes.init_memref import InitMemRef
from pypto.passes.memory_reuse import MemoryReuse
from pypto.target import ascend910b, ascend950, cpu

HERE = os.path.basename(__file__)
HINT = ("use smaller tiles, or loop over blocks of the data (load, compute and store one block per iteration) so "
        "that fewer bytes are live at once")
NOTE_INDENT = " " * 11

# on the CPU the Vec arena is sized from this machine's L2: one tile a little larger than it
CPU_VEC = cpu().capacity(MemorySpace.Vec)
CPU_ROWS = CPU_VEC // 4096 + 16


def plan(prog, target, tmp_path=None):
    ctx = PassContext(target=target, output_dir=tmp_path)
    with pytest.raises(PassError) as info:
        AllocateMemoryAddr()(MemoryReuse()(InitMemRef()(prog, ctx), ctx), ctx)
    return info.value, ctx


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, text in enumerate(f, start=1):
            if text.rstrip().endswith(marker):
                return i
    raise AssertionError(marker)


def assert_located(err: PassError, marker: str, name: str) -> int:
    """The error points at the definition of tile `name` on the line marked `marker`."""
    n = line_of(marker)
    with open(__file__) as f:
        src = f.readlines()[n - 1].rstrip("\n")
    col = src.index(f"{name} = ") + 1
    assert err.span.filename == __file__ and (err.lineno, err.col) == (n, col)
    text = str(err)
    assert f"  --> {__file__}:{n}:{col}\n" in text
    assert f" | {src}\n" in text and f" | {' ' * (col - 1)}{'^' * len(name)}\n" in text
    return n


def test_vec_overflow_on_ascend910b(tmp_path):
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def too_big(self, a: pl.Tensor[[256, 256], pl.FP32],
                    out: pl.Out[pl.Tensor[[256, 128], pl.FP32]]) -> pl.Tensor[[256, 128], pl.FP32]:
            x = pl.load(a, [0, 0], [256, 128])    # 128 KiB       <vec-x>
            y = pl.load(a, [0, 128], [256, 128])  # another 128 KiB: over 192 KiB       <vec-y>
            z = pl.add(x, y)
            o = pl.store(z, [0, 0], out)
            return o

    err, ctx = plan(Prog, ascend910b(), tmp_path)
    assert err.message == ("kernel 'too_big' needs 262144 bytes of Vec memory but target Ascend910B has 196608 bytes "
                           "(192 KiB); buffer mem_vec_1 (y) at [131072, 262144) crosses the capacity")
    n = assert_located(err, "<vec-y>", "y")
    assert err.note == (
        f"largest tiles live where the kernel needs the most Vec memory (line {n}, 262144 bytes live):\n"
        f"{NOTE_INDENT}x: [256, 128] FP32, 131072 bytes, defined at {HERE}:{line_of('<vec-x>')}\n"
        f"{NOTE_INDENT}y: [256, 128] FP32, 131072 bytes, defined at {HERE}:{n}")
    assert err.hint == HINT
    # the memory map is still written, so the overflow can be looked at
    (kern,) = ctx.reports["memory"]["kernels"]
    assert kern["spaces"][0]["fits"] is False and (tmp_path / "report" / "memory.json").exists()


def test_left_overflow_on_ascend950():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def two_lhs(self, a: pl.Tensor[[320, 128], pl.FP16], b: pl.Tensor[[128, 64], pl.FP16],
                    out: pl.Out[pl.Tensor[[320, 64], pl.FP32]]) -> pl.Tensor[[320, 64], pl.FP32]:
            a1 = pl.load(a, [0, 0], [192, 128], target_memory=pl.MemorySpace.Mat)
            a2 = pl.load(a, [192, 0], [128, 128], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [128, 64], target_memory=pl.MemorySpace.Mat)
            l1 = pl.move(a1, target_memory=pl.MemorySpace.Left)   # 48 KiB       <left-1>
            l2 = pl.move(a2, target_memory=pl.MemorySpace.Left)   # 32 KiB more: over 64 KiB       <left-2>
            r = pl.move(bm, target_memory=pl.MemorySpace.Right)
            c1 = pl.matmul(l1, r)
            c2 = pl.matmul(l2, r)
            o1 = pl.store(c1, [0, 0], out)
            o2 = pl.store(c2, [192, 0], o1)
            return o2

    err, _ = plan(Prog, ascend950())
    assert err.message == ("kernel 'two_lhs' needs 81920 bytes of Left memory but target Ascend950 has 65536 bytes "
                           "(64 KiB); buffer mem_left_4 (l2) at [49152, 81920) crosses the capacity")
    n = assert_located(err, "<left-2>", "l2")
    assert err.note == (
        f"largest tiles live where the kernel needs the most Left memory (line {n}, 81920 bytes live):\n"
        f"{NOTE_INDENT}l1: [192, 128] FP16, 49152 bytes, defined at {HERE}:{line_of('<left-1>')}\n"
        f"{NOTE_INDENT}l2: [128, 128] FP16, 32768 bytes, defined at {HERE}:{n}")
    assert err.hint == HINT


def test_vec_overflow_on_the_cpu_target():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def huge(self, a: pl.Tensor[[CPU_ROWS, 1024], pl.FP32],
                 out: pl.Out[pl.Tensor[[CPU_ROWS, 1024], pl.FP32]]) -> pl.Tensor[[CPU_ROWS, 1024], pl.FP32]:
            t = pl.load(a, [0, 0], [CPU_ROWS, 1024])  # larger than the whole Vec arena       <cpu-t>
            e = pl.exp(t)
            o = pl.store(e, [0, 0], out)
            return o

    target = cpu()
    err, _ = plan(Prog, target)
    need = CPU_ROWS * 4096
    kib = f"{CPU_VEC // 1024} KiB"
    assert err.message == (f"kernel 'huge' needs {need} bytes of Vec memory but target CPU has {CPU_VEC} bytes "
                           f"({kib}); buffer mem_vec_0 (t) at [0, {need}) crosses the capacity")
    n = assert_located(err, "<cpu-t>", "t")
    assert err.note == (
        f"largest tiles live where the kernel needs the most Vec memory (line {n}, {need} bytes live):\n"
        f"{NOTE_INDENT}t: [{CPU_ROWS}, 1024] FP32, {need} bytes, defined at {HERE}:{n}")
    assert err.hint == HINT


def test_a_space_the_target_does_not_have():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def biased(self, a: pl.Tensor[[1, 64], pl.FP32],
                   out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            b = pl.load(a, [0, 0], [1, 64], target_memory=pl.MemorySpace.Bias)  # <bias-b>
            v = pl.move(b, target_memory=pl.MemorySpace.Vec)
            o = pl.store(v, [0, 0], out)
            return o

    # (Ascend910B has a bias table; a target like it without one)
    no_bias = dataclasses.replace(ascend910b(), name="NoBias",
                                  memory=tuple(m for m in ascend910b().memory if m.space is not MemorySpace.Bias))
    err, _ = plan(Prog, no_bias)
    assert err.message == "kernel 'biased' puts tiles in Bias memory, which target NoBias does not have"
    assert_located(err, "<bias-b>", "b")
    assert err.hint == "use one of Vec, Mat, Left, Right, Acc"
