"""The tensor-level frontend (`@pypto.frontend.jit`) against the hand-written `pl` kernels of the
other benchmarks and PyTorch, in the same run: LayerNorm and RMSNorm over 8192 x 4096 fp32 rows and
a row softmax over 4096 x 4096, a SwiGLU feed-forward and multi-head attention, each written the
way an algorithm developer would (a `pypto.loop` over blocks of rows, whole-tensor ops inside;
tests/programs/tensor_blocks.py), and the warm call overhead of a 64 x 64 softmax
(jit kernel, the same kernel compiled from `pl`, torch eager).

    python benchmarks/bench_frontend.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time] [--rows R]

The "pypto" row is the tensor-level kernel; "pl kernel" is the hand-written one (bench_layernorm,
bench_rmsnorm, bench_softmax). The goal of issue 9 is tensor-level within 1.25x of the pl kernel.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import bench_flash_attention
import bench_layernorm
import bench_rmsnorm
import bench_softmax
import bench_swiglu
import harness
import numpy as np

import pypto

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.programs import tensor_blocks as blocks  # noqa: E402  (the tensor-level programs, shared with the tests)

BLOCK = 64  # rows per loop iteration (one task each) of the tensor-level kernels
TILE_ROWS = 1  # set_vec_tile_shapes(1, C): each task loops over single rows (a [1, C] row stays in L1)


def _bench_norms(env, opts) -> list[harness.BenchResult]:
    import torch
    import torch.nn.functional as F

    n, c = bench_layernorm.N, bench_layernorm.C
    ln = blocks.layer_norm(n, c, BLOCK, bench_layernorm.EPS, tile_rows=TILE_ROWS)
    rms = blocks.rms_norm(n, c, BLOCK, bench_rmsnorm.EPS, tile_rows=TILE_ROWS)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((n, c), dtype=np.float32) * 2 + 0.5).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal((1, c))).astype(np.float32)
    beta = (0.1 * rng.standard_normal((1, c))).astype(np.float32)
    y, y_pl = np.zeros_like(x), np.zeros_like(x)

    pl_ln = harness.compile_program(bench_layernorm.make_program(), "layernorm")
    ln(x, gamma, beta, y)
    pl_ln(x, gamma, beta, y_pl, config=env.run_cfg)
    harness.check_close("layernorm tensor-level vs pl", y, y_pl, atol=1e-4, rtol=1e-4)
    tx, tg, tb = torch.from_numpy(x), torch.from_numpy(gamma[0]), torch.from_numpy(beta[0])
    ty, tm, tr = torch.zeros(n, c), torch.zeros(n, 1), torch.zeros(n, 1)

    def ln_torch() -> None:
        torch.ops.aten.native_layer_norm.out(tx, [c], tg, tb, bench_layernorm.EPS, out0=ty, out1=tm, out2=tr)

    cands = {harness.OURS: lambda: ln(x, gamma, beta, y),
             "pl kernel": lambda: pl_ln(x, gamma, beta, y_pl, config=env.run_cfg),
             "torch eager (native_layer_norm.out)": ln_torch}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(
            lambda inp, out: out.copy_(F.layer_norm(inp, (c,), tg, tb, bench_layernorm.EPS)), (tx, ty),
            opts.compile_mode)
    res_ln = harness.measure(env, f"layernorm {n}x{c} fp32, tensor level", "GB/s", 2.0 * x.nbytes, cands)
    res_ln.goals = (harness.goal_ratio(res_ln, "tensor-level layernorm within 1.25x of the pl kernel", 0.8,
                                       prefix="pl kernel")
                    + harness.goal_ratio(res_ln, "tensor-level layernorm faster than the best torch variant", 1.0,
                                         prefix="torch"))

    pl_rms = harness.compile_program(bench_rmsnorm.make_program(), "rmsnorm")
    rms(x, gamma, y)
    pl_rms(x, gamma, y_pl, config=env.run_cfg)
    harness.check_close("rmsnorm tensor-level vs pl", y, y_pl, atol=1e-4, rtol=1e-4)

    def rms_torch() -> None:
        torch.mul(tx, torch.rsqrt(tx.pow(2).mean(-1, keepdim=True) + bench_rmsnorm.EPS), out=ty).mul_(tg)

    cands = {harness.OURS: lambda: rms(x, gamma, y), "pl kernel": lambda: pl_rms(x, gamma, y_pl, config=env.run_cfg),
             "torch eager (out= composite)": rms_torch}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(
            lambda inp, out: out.copy_(inp * torch.rsqrt(inp.pow(2).mean(-1, keepdim=True) + bench_rmsnorm.EPS) * tg),
            (tx, ty), opts.compile_mode)
    res_rms = harness.measure(env, f"rmsnorm {n}x{c} fp32, tensor level", "GB/s", 2.0 * x.nbytes, cands)
    res_rms.goals = (harness.goal_ratio(res_rms, "tensor-level rmsnorm within 1.25x of the pl kernel", 0.8,
                                        prefix="pl kernel")
                     + harness.goal_ratio(res_rms, "tensor-level rmsnorm faster than the best torch variant", 1.0,
                                          prefix="torch"))
    return [res_ln, res_rms]


def _softmax_kernel(n: int, c: int):
    @pypto.frontend.jit
    def softmax(x: pypto.Tensor((n, c), pypto.DT_FP32), y: pypto.Tensor((n, c), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE_ROWS, c)
        for i in pypto.loop(0, n // BLOCK, name="rows", idx_name="i"):
            y[i * BLOCK:(i + 1) * BLOCK, :] = pypto.softmax(x[i * BLOCK:(i + 1) * BLOCK, :], dim=-1)

    return softmax


def _bench_softmax(env, opts) -> list[harness.BenchResult]:
    import torch

    n = c = 4096
    sm = _softmax_kernel(n, c)  # (defined here: the row softmax of bench_softmax)
    x = np.random.default_rng(1).standard_normal((n, c), dtype=np.float32)
    y, y_pl = np.zeros_like(x), np.zeros_like(x)
    pl_sm = harness.compile_program(bench_softmax.make_program(n, c), "softmax")
    sm(x, y)
    pl_sm(x, y_pl, config=env.run_cfg)
    harness.check_close("softmax tensor-level vs pl", y, y_pl, atol=1e-6, rtol=1e-5)
    tx, ty = torch.from_numpy(x), torch.zeros(n, c)
    cands = {harness.OURS: lambda: sm(x, y), "pl kernel": lambda: pl_sm(x, y_pl, config=env.run_cfg),
             "torch eager (_softmax.out)": lambda: torch._softmax(tx, -1, False, out=ty)}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(lambda inp, out: out.copy_(torch.softmax(inp, -1)), (tx, ty),
                                                       opts.compile_mode)
    res = harness.measure(env, f"softmax {n}x{c} fp32, tensor level", "GB/s", 2.0 * x.nbytes, cands)
    res.goals = (harness.goal_ratio(res, "tensor-level softmax within 1.25x of the pl kernel", 0.8, prefix="pl kernel")
                 + harness.goal_ratio(res, "tensor-level softmax faster than the best torch variant", 1.0,
                                      prefix="torch"))
    return [res]


def _bench_swiglu(env, opts) -> list[harness.BenchResult]:
    """SwiGLU feed-forward: the tensor-level program (two stages, set_cube_tile_shapes splitting K)
    beside the hand-written pl kernel of bench_swiglu.py (the same blocking) and torch."""
    t, h, f = bench_swiglu.T, bench_swiglu.H, bench_swiglu.F
    ffn = blocks.swiglu_ffn(t, h, f, tb=bench_swiglu.TM, fb=bench_swiglu.TF, kb=bench_swiglu.TK, nb=bench_swiglu.TN)
    pl_ffn = harness.compile_program(bench_swiglu.make_program(), "swiglu")
    x, w1, w3, w2 = bench_swiglu.make_inputs()
    out, out_pl = np.zeros((t, h), np.float32), np.zeros((t, h), np.float32)
    ffn(x, w1, w3, w2, out)
    pl_ffn(x, w1, w3, w2, out_pl, config=env.run_cfg)
    harness.check_close("swiglu tensor-level vs float64", out, bench_swiglu.reference(x, w1, w3, w2), atol=1e-3,
                        rtol=1e-3)
    harness.check_close("swiglu tensor-level vs pl", out, out_pl, atol=1e-4, rtol=1e-4)
    peers, _ = bench_swiglu.torch_candidates(x, w1, w3, w2, (t, h), opts)
    cands = {harness.OURS: lambda: ffn(x, w1, w3, w2, out),
             "pl kernel": lambda: pl_ffn(x, w1, w3, w2, out_pl, config=env.run_cfg), **peers}
    res = harness.measure(env, f"swiglu ffn {t}x{h}x{f} fp32, tensor level", "GFLOP/s", 6.0 * t * h * f, cands)
    res.goals = (harness.goal_ratio(res, "tensor-level swiglu within 1.25x of the pl kernel", 0.8, prefix="pl kernel")
                 + harness.goal_ratio(res, "tensor-level swiglu vs the best torch variant", 1.0, prefix="torch"))
    return [res]


def _bench_attention(env, opts) -> list[harness.BenchResult]:
    import torch
    import torch.nn.functional as F

    hd, s, d = 8, 512, 64
    att = blocks.attention(hd, s, d, qb=128)  # (128 query rows per task, as the pl kernel)
    pl_fa = harness.compile_program(bench_flash_attention.make_program(hd, s, d, 128, 128),
                                    f"flash_attention_{hd}_{s}_{d}")
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((hd * s, d), dtype=np.float32) for _ in range(3))
    o, o_pl = np.zeros_like(q), np.zeros_like(q)
    att(q, k, v, o)
    pl_fa(q, k, v, o_pl, config=env.run_cfg)
    harness.check_close("attention tensor-level vs pl flash attention", o, o_pl, atol=2e-5, rtol=1e-4)
    tq, tk, tv = (torch.from_numpy(a).view(1, hd, s, d) for a in (q, k, v))
    cands = {harness.OURS: lambda: att(q, k, v, o), "pl kernel (flash attention)":
             lambda: pl_fa(q, k, v, o_pl, config=env.run_cfg),
             "torch SDPA": lambda: F.scaled_dot_product_attention(tq, tk, tv)}
    res = harness.measure(env, f"attention H={hd} S={s} D={d} fp32, tensor level", "GFLOP/s", 4.0 * hd * s * s * d,
                          cands)
    res.goals = (harness.goal_ratio(res, "tensor-level attention within 1.25x of the pl kernel", 0.8,
                                    prefix="pl kernel")
                 + harness.goal_ratio(res, "tensor-level attention vs torch SDPA", 1.0, prefix="torch"))
    return [res]


def _bench_call_overhead(repeats: int) -> None:
    """Per-call time of a 64 x 64 softmax: the jit kernel, the same program called directly (the jit
    layer's own cost is the difference), the hand-written pl kernel, torch eager."""
    import torch

    @pypto.frontend.jit
    def small(x: pypto.Tensor((64, 64), pypto.DT_FP32)):
        return pypto.softmax(x, dim=-1)

    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    small(x)
    (compiled,) = small.compiled_programs
    pl_small = harness.compile_program(bench_softmax.make_program(64, 64), "softmax64")
    y = np.zeros_like(x)
    tx = torch.from_numpy(x)
    fns = {"jit kernel (pypto.frontend)": lambda: small(x), "its compiled program, called directly":
           lambda: compiled(x), "pl kernel (bench_softmax)": lambda: pl_small(x, y),
           "torch eager softmax": lambda: torch.softmax(tx, -1)}
    n = 2000
    best = {}
    for _ in range(max(3, repeats)):
        for name, f in fns.items():
            f()
            t = time.perf_counter()
            for _ in range(n):
                f()
            best[name] = min(best.get(name, 1e9), (time.perf_counter() - t) / n * 1e6)
    print("\nwarm call, softmax 64x64 fp32 (best of rounds of 2000 calls)")
    for name, us in best.items():
        print(f"  {name:<40} {us:9.2f} us   {us / best['torch eager softmax']:6.2f}x torch eager")
    jit_layer = best["jit kernel (pypto.frontend)"] - best["its compiled program, called directly"]
    print(f"  the jit layer's own cost: {jit_layer:.2f} us per call")


def run(opts) -> list[harness.BenchResult]:
    env = harness.setup(opts)
    results = (_bench_norms(env, opts) + _bench_softmax(env, opts) + _bench_swiglu(env, opts)
               + _bench_attention(env, opts))
    _bench_call_overhead(opts.repeats)
    return results


if __name__ == "__main__":
    harness.main_for(run, __doc__)
