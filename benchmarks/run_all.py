"""Run every benchmark in one process and print one summary of where each goal stands.

    python benchmarks/run_all.py [--only softmax,matmul,...] [--repeats N] [--threads T] [--no-compile]
                                 [--no-cpu-time] [--quick] [--sizes 1024,2048,4096]

Kernel benchmarks (each also runnable alone: `python benchmarks/bench_<name>.py`): elementwise,
softmax, layernorm, rmsnorm, matmul, linear_gelu, swiglu, flash_attention. Each checks its numerics against
NumPy / torch first (a wrong kernel raises) and measures PyPTO against torch eager, torch.compile
and NumPy in the same run; the roofline (memory bandwidth, GEMM peaks) is measured once, in this
process, before the first benchmark that needs it. Then the task runtime (bench_runtime: time per
empty task) and the compiler (bench_compile: cold and warm `ir.compile`).
"""

from __future__ import annotations

import argparse
import importlib
import time
import traceback

import harness

KERNELS = ("elementwise", "softmax", "layernorm", "rmsnorm", "matmul", "linear_gelu", "swiglu", "flash_attention",
           "frontend")
EXTRA = ("runtime", "compile")


def parse_args(argv=None) -> argparse.Namespace:
    ap = harness.add_common_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--only", default=None, help="comma-separated subset of: " + ", ".join(KERNELS + EXTRA))
    ap.add_argument("--sizes", default=None, help="matmul sizes (default 1024,2048,4096)")
    ap.add_argument("--heads", type=int, default=8, help="flash attention heads")
    ap.add_argument("--seq", type=int, default=2048, help="flash attention sequence length")
    ap.add_argument("--dim", type=int, default=128, help="flash attention head dim")
    ap.add_argument("--tasks", type=int, default=100_000, help="runtime benchmark: tasks per run")
    return ap.parse_args(argv)


def _fmt_ratio(r: float) -> str:
    return "-" if r != r else f"{r:.2f}x"


def _row(r: harness.BenchResult, v: harness.View) -> str:
    bt_name, bt = v.best_peer("torch")
    npy = [t.best for k, t in v.times.items() if k.startswith("numpy")]
    vs_np = min(npy) / v.ours if npy else float("nan")
    rate = f"{r.rate(v.ours):.1f} {r.unit}"
    return (f"{v.ours * 1e3:10.2f}{rate:>16s}{r.pct_roof(v):7.0f}%{_fmt_ratio(bt / v.ours):>10s}"
            f"{_fmt_ratio(vs_np):>9s}  {bt_name}")


def summary(results: list[harness.BenchResult], extra_goals: list[harness.Goal], failures: list[str]) -> None:
    print("\n" + "=" * 120)
    print("SUMMARY  (speedup = peer time / PyPTO time: > 1 means PyPTO is faster; % roof = share of the roofline "
          "measured in the same run)")
    for label, pick in (("wall clock, all threads, best of N", lambda r: r.wall),
                        ("1 thread, thread CPU time (per-core efficiency; immune to lost time slices)",
                         lambda r: r.cpu)):
        rows = [(r, pick(r)) for r in results if pick(r) is not None]
        if not rows:
            continue
        print(f"\n[{label}]")
        print(f"{'benchmark':44s}{'pypto ms':>10s}{'rate':>16s}{'% roof':>8s}{'vs torch':>10s}{'vs numpy':>9s}"
              f"  best torch variant")
        for r, v in rows:
            print(f"{r.name:44s}{_row(r, v)}")
    print("\nGOALS")
    goals = [g for r in results for g in r.goals] + extra_goals
    for g in goals:
        print(f"  [{'MET   ' if g.ok else 'MISSED'}] {g.text}: {g.value}")
    met = sum(g.ok for g in goals)
    print(f"  {met} of {len(goals)} goal checks met")
    for f in failures:
        print(f"  FAILED: {f}")


def main() -> None:
    opts = parse_args()
    only = set(opts.only.split(",")) if opts.only else set(KERNELS + EXTRA)
    unknown = only - set(KERNELS + EXTRA)
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    results: list[harness.BenchResult] = []
    failures: list[str] = []
    extra_goals: list[harness.Goal] = []
    t_start = time.perf_counter()
    for name in KERNELS:
        if name not in only:
            continue
        mod = importlib.import_module(f"bench_{name}")
        print(f"\n### {name}", flush=True)
        t0 = time.perf_counter()
        try:
            res = mod.run(opts)
        except AssertionError:
            traceback.print_exc()
            failures.append(f"{name}: wrong numerics (see the traceback above)")
            continue
        except Exception as e:  # noqa: BLE001 - one broken benchmark must not hide the others
            traceback.print_exc()
            failures.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        harness.report(res)
        print(f"({name}: {time.perf_counter() - t0:.0f} s)", flush=True)
        results.extend(res)
    if "runtime" in only:
        import bench_runtime

        print("\n### runtime", flush=True)
        rt = bench_runtime.measure(opts.tasks, max(3, opts.repeats // 2))
        print(f"empty tasks, native graph, {rt['workers']} workers: independent {rt['independent-1']:.3f} us/task, "
              f"chain {rt['chain-1']:.3f} us/task; compiled pl program (tiny kernel): {rt['compiled pl']:.3f} "
              f"us/task ({rt['compiled pl, serial']:.3f} serial)")
        worst = max(rt["independent-1"], rt["chain-1"], rt["compiled pl"])
        extra_goals.append(harness.Goal("runtime cost per task < 2 us (worst of independent, chain, compiled pl)",
                                        f"{worst:.2f} us", worst < 2.0))
    if "compile" in only:
        import bench_compile

        print("\n### compile", flush=True)
        c = bench_compile.measure(max(3, opts.repeats // 2))
        print(f"LLaMA-style block ({c['kernels']} kernels): front end {c['total_ms']:.1f} ms, ir.compile cold "
              f"{c['cold_ms']:.0f} ms, warm (cached) {c['warm_ms']:.1f} ms (parse + warm ir.compile "
              f"{c['warm_parse_ms']:.1f} ms)")
        extra_goals.append(harness.Goal("warm (cached) ir.compile < 20 ms (LLaMA-style block, 12 kernels)",
                                        f"{c['warm_ms']:.1f} ms (cold {c['cold_ms']:.0f} ms; with parsing the pl "
                                        f"source {c['warm_parse_ms']:.1f} ms)", c["warm_ms"] < 20.0))
    if harness.compile_log():
        print("\nir.compile of the benchmark programs in this run:")
        for name, ms, how in harness.compile_log():
            print(f"  {name:28s}{ms:9.1f} ms  ({how})")
    summary(results, extra_goals, failures)
    print(f"(total {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
