"""Compile-time benchmark: the twelve-kernel LLaMA-style block (examples/llama_block.py).

Measures, warm (best of N): parsing the `pl` source text, the pass pipeline, PTO code generation
(+ printing the .pto text) — everything before the native compiler — and, separately, a whole
`ir.compile` (cold: empty cache; warm: cached, best of up to 5, of an already parsed program, which
is what `@pl.program` hands over; parse + compile is printed too). `measure()` returns the numbers
(benchmarks/run_all.py uses it). The public C++ implementation takes about 6 ms warm for
such a program; the goal for ours is under 60 ms.

    python benchmarks/bench_compile.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def measure(repeat: int = 10) -> dict:
    """Best-of-`repeat` front-end stage times (ms) and one cold / one warm `ir.compile` (ms)."""
    from llama_block import make_program

    import pypto.language as pl
    from pypto import ir
    from pypto.codegen import generate
    from pypto.passes.base import PassContext
    from pypto.passes.pass_manager import OptimizationStrategy, PassManager, VerificationLevel
    from pypto.pto.printer import print_module
    from pypto.target import BackendType, target_for

    text = ir.python_print(make_program())
    n_kernels = text.count("FunctionType.InCore")

    def once():
        t0 = time.perf_counter()
        prog = pl.parse(text)
        t1 = time.perf_counter()
        ctx = PassContext(target=target_for(BackendType.PTO))
        pm = PassManager.get_strategy(OptimizationStrategy.Default, verification_level=VerificationLevel.NONE)
        lowered = pm.run_passes(prog, ctx=ctx)
        t2 = time.perf_counter()
        cg = generate(lowered)
        texts = [print_module(m) for m in cg.kernels.values()]
        if cg.orchestration is not None:
            texts.append(print_module(cg.orchestration))
        t3 = time.perf_counter()
        return t1 - t0, t2 - t1, t3 - t2, pm.records

    once()  # warm up imports and caches
    best = None
    for _ in range(repeat):
        r = once()
        if best is None or sum(r[:3]) < sum(best[:3]):
            best = r
    assert best is not None
    parse_s, passes_s, cg_s, records = best

    # native build, cold (fresh cache) and warm (cached)
    from pypto.config import config

    saved = config.cache_dir
    tmp = Path(tempfile.mkdtemp(prefix="pypto-bench-cache-"))
    try:
        config.cache_dir = tmp
        out = tmp / "out"
        t0 = time.perf_counter()
        ir.compile(pl.parse(text), output_dir=out / "cold")
        cold = time.perf_counter() - t0
        warm = warm_parse = float("inf")
        for i in range(max(1, min(repeat, 5))):
            prog = pl.parse(text)   # what @pl.program does when the module is imported
            t0 = time.perf_counter()
            ir.compile(prog, output_dir=out / f"warm{i}")
            warm = min(warm, time.perf_counter() - t0)
            t0 = time.perf_counter()
            ir.compile(pl.parse(text), output_dir=out / f"warmp{i}")
            warm_parse = min(warm_parse, time.perf_counter() - t0)
    finally:
        config.cache_dir = saved
        shutil.rmtree(tmp, ignore_errors=True)
    return {"kernels": n_kernels, "lines": len(text.splitlines()), "parse_ms": parse_s * 1e3,
            "passes_ms": passes_s * 1e3, "codegen_ms": cg_s * 1e3,
            "total_ms": (parse_s + passes_s + cg_s) * 1e3,
            "passes": [(r.name, r.seconds * 1e3) for r in records],
            "cold_ms": cold * 1e3, "warm_ms": warm * 1e3, "warm_parse_ms": warm_parse * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    r = measure(args.repeat)
    print(f"LLaMA-style block: {r['kernels']} kernels, {r['lines']} lines of pl source")
    print(f"{'stage':<28}{'ms':>10}")
    print(f"{'parse (pl text -> IR)':<28}{r['parse_ms']:>10.2f}")
    print(f"{'passes':<28}{r['passes_ms']:>10.2f}")
    for name, ms in r["passes"]:
        print(f"{'  ' + name:<28}{ms:>10.2f}")
    print(f"{'PTO codegen + print':<28}{r['codegen_ms']:>10.2f}")
    print(f"{'total (before native)':<28}{r['total_ms']:>10.2f}   (reference C++: ~6 ms; goal < 60 ms; "
          f"ratio to reference {r['total_ms'] / 6:.1f}x)")
    print(f"{'ir.compile, cold cache':<28}{r['cold_ms']:>10.1f}")
    print(f"{'ir.compile, warm cache':<28}{r['warm_ms']:>10.1f}   (goal < 20 ms; best of "
          f"{max(1, min(args.repeat, 5))}; the program parsed before, as @pl.program does at import)")
    print(f"{'parse + ir.compile, warm':<28}{r['warm_parse_ms']:>10.1f}")


if __name__ == "__main__":
    main()
