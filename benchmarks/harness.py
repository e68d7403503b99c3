"""Shared benchmark harness: timing, the machine's roofline measured in the same run, peers, tables.

Every `bench_*.py` kernel benchmark uses this module the same way:

    env = harness.setup(opts)                 # threads for torch and for the PyPTO runtime
    harness.check_close(...)                  # numerics first: a wrong kernel fails loudly
    res = harness.measure(env, name, "GB/s", bytes_per_call, {"pypto": ..., "torch eager": ...}, cpu={...})
    res.goals = harness.goal_memory(res)      # goals, judged in both views below
    harness.report([res])                     # time, speedup, GB/s or GFLOP/s, % of the roofline

Two views of every benchmark. The machine is a small shared VM: other processes take time
slices, and a multi-threaded peer whose threads meet at a barrier (OpenMP) loses a whole step
whenever one of its threads is descheduled (a 4 ms scheduler tick inside a 0.2 ms task shows up in
the runtime's trace).
  wall   all threads (torch.set_num_threads(T), RunConfig(num_workers=T)); every candidate runs
         round-robin with the others (interleaved, so a noisy moment hurts all of them alike);
         best of N, median printed beside it.
  cpu    one thread, *thread CPU time* (CLOCK_THREAD_CPUTIME_ID): PyPTO's serial runtime (the
         calling thread runs every task) against torch with one intra-op thread and NumPy. Time
         slices lost to other processes do not count, so this view measures per-core efficiency
         and stays stable when the machine is busy. (torch.compile is wall-only: inductor fixes
         its thread count when it compiles.)

Roofline, measured in the same run, in both views. Memory bandwidth: stream kernels on 64 MiB
arrays (the size of the benchmarks' operands; 16 MiB ones would sit in the L3), counting bytes read
+ written like the kernels' traffic: torch copy / scale / add / triad and a NumPy copy chunked over
T Python threads once at start-up, and a torch copy and a chunked NumPy copy again interleaved with
each memory-bound benchmark's own rounds; the roofline is the best of all of them (1 thread, thread
CPU time, for the cpu view). GEMM peaks: torch.matmul 4096 x 4096 (fp32, bf16; T threads wall, and
1 thread CPU time).

Peers. torch eager with `out=` forms where they exist (preallocated outputs on both sides: a
fresh 64 MiB output costs ~13 ms of page faults, more than some kernels), `torch.compile`
(inductor, CPU) of the same function writing into a preallocated output (inductor stores straight
into it), warmed up, weights frozen (`torch._inductor.config.freezing`), and NumPy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MiB = 1 << 20
OURS = "pypto"


# ---- options and environment -------------------------------------------------------------------

def add_common_args(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    ap.add_argument("--repeats", type=int, default=10, help="best of this many interleaved runs per candidate")
    ap.add_argument("--threads", type=int, default=None, help="threads for torch and PyPTO workers (default: cores)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile peer (it compiles for ~20 s)")
    ap.add_argument("--compile-mode", default="default",
                    help="torch.compile mode: default, max-autotune-no-cudagraphs, ...")
    ap.add_argument("--no-cpu-time", action="store_true", help="skip the single-thread CPU-time comparison")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    return ap


def parse_args(doc: str | None, argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    return add_common_args(ap).parse_args(argv)


def default_threads() -> int:
    from pypto.config import config

    return config.num_workers


@dataclass
class Env:
    """Threads, run configurations and the lazily measured roofline of one benchmark run."""

    threads: int
    repeats: int
    opts: argparse.Namespace
    run_cfg: Any = None       # RunConfig with `threads` workers
    serial_cfg: Any = None    # RunConfig with 0 workers: the calling thread runs every task

    def roofline(self, gemm: bool = False) -> Roofline:
        """Measured once per process (shared by all benchmarks of one `run_all`); GEMM peaks on demand."""
        global _SHARED_ROOF
        r = _SHARED_ROOF
        if r is None or r.threads != self.threads:
            r = _SHARED_ROOF = measure_roofline(self.threads, repeats=max(5, self.repeats))
        if gemm and not r.gflops:
            r.gflops, r.gflops_1t = measure_gemm_peak(self.threads)
        return r


_SHARED_ROOF: Roofline | None = None


def setup(opts: argparse.Namespace) -> Env:
    import torch

    from pypto.runtime import RunConfig

    threads = opts.threads or default_threads()
    torch.set_num_threads(threads)
    repeats = max(3, opts.repeats // 2) if opts.quick else opts.repeats
    return Env(threads, repeats, opts, RunConfig(num_workers=threads), RunConfig(num_workers=0))


# ---- timing -----------------------------------------------------------------------------------

@dataclass
class Timing:
    best: float               # seconds
    median: float
    samples: list[float] = field(default_factory=list)


def time_interleaved(fns: dict[str, Callable[[], Any]], repeats: int, warmup: int = 1,
                     clock: Callable[[], float] = time.perf_counter) -> dict[str, Timing]:
    """Run the candidates round-robin `repeats` times (after `warmup` untimed rounds)."""
    for _ in range(warmup):
        for f in fns.values():
            f()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = clock()
            f()
            samples[k].append(clock() - t0)
    return {k: Timing(min(s), statistics.median(s), s) for k, s in samples.items()}


def cpu_time_interleaved(fns: dict[str, Callable[[], Any]], repeats: int, warmup: int = 1) -> dict[str, Timing]:
    """Same, on the calling thread's CPU time: only for single-threaded candidates."""
    return time_interleaved(fns, repeats, warmup, clock=time.thread_time)


# ---- roofline ---------------------------------------------------------------------------------

@dataclass
class Roofline:
    threads: int
    array_bytes: int
    bandwidth: dict[str, float]          # stream kernel -> GB/s (read + write bytes), `threads` threads, wall
    bandwidth_1t: dict[str, float]       # the same, 1 thread, thread CPU time
    gflops: dict[str, float] = field(default_factory=dict)     # "fp32" / "bf16" -> torch.matmul GFLOP/s
    gflops_1t: dict[str, float] = field(default_factory=dict)

    @property
    def mem_gbs(self) -> float:
        return max(self.bandwidth.values())

    @property
    def mem_gbs_1t(self) -> float:
        return max(self.bandwidth_1t.values())

    def describe(self) -> str:
        def kv(d: dict[str, float], fmt: str) -> str:
            return ", ".join(f"{k} {v:{fmt}}" for k, v in d.items())

        s = (f"roofline, measured now ({self.array_bytes // MiB} MiB arrays, read+write bytes):\n"
             f"  memory, {self.threads} threads (wall): {self.mem_gbs:.1f} GB/s (best of {kv(self.bandwidth, '.1f')})\n"
             f"  memory, 1 thread (CPU time): {self.mem_gbs_1t:.1f} GB/s (best of {kv(self.bandwidth_1t, '.1f')})")
        if self.gflops:
            s += (f"\n  GEMM peak (torch.matmul 4096): {self.threads} threads {kv(self.gflops, '.0f')} GFLOP/s; "
                  f"1 thread {kv(self.gflops_1t, '.0f')} GFLOP/s")
        return s


class _ChunkPool:
    """`threads` Python threads streaming a NumPy kernel over row chunks taken from a shared counter.

    NumPy drops the GIL inside its loops, so the threads stream in parallel; chunks are handed out
    dynamically, so a thread that loses its time slice does not hold the others back (a static split,
    like OpenMP's, waits for the slowest thread). This keeps the bandwidth estimate honest on a busy
    machine, where torch's multi-threaded stream kernels can lose half their speed."""

    def __init__(self, threads: int, chunk_rows: int) -> None:
        self.threads = threads
        self.chunk_rows = chunk_rows

    def run(self, kernel: Callable[[slice], Any], rows: int) -> Callable[[], None]:
        starts = list(range(0, rows, self.chunk_rows))

        def worker(it) -> None:
            for s in it:
                kernel(slice(s, s + self.chunk_rows))

        def go() -> None:
            it = iter(starts)
            lock = threading.Lock()

            def locked():
                while True:
                    with lock:
                        s = next(it, None)
                    if s is None:
                        return
                    yield s

            ts = [threading.Thread(target=worker, args=(locked(),)) for _ in range(self.threads - 1)]
            for t in ts:
                t.start()
            worker(locked())
            for t in ts:
                t.join()
        return go


def _stream_kernels(threads: int, nbytes: int) -> dict[str, tuple[Callable[[], Any], int]]:
    """name -> (run, bytes moved): torch stream kernels (intra-op threads) and chunked NumPy ones."""
    import torch

    n = nbytes // 4
    a, b, c = (torch.full((n,), 1.0) for _ in range(3))
    rows = n // 4096
    na, nb, nc = (t.numpy().reshape(rows, 4096) for t in (a, b, c))
    pool = _ChunkPool(threads, 128)  # 2 MiB chunks
    return {
        "torch copy": (lambda: b.copy_(a), 2 * nbytes),
        "torch scale": (lambda: torch.mul(a, 3.0, out=b), 2 * nbytes),
        "torch add": (lambda: torch.add(a, b, out=c), 3 * nbytes),
        "torch triad": (lambda: torch.add(a, b, alpha=3.0, out=c), 3 * nbytes),
        "numpy copy": (pool.run(lambda s: np.copyto(nb[s], na[s]), rows), 2 * nbytes),
        "numpy add": (pool.run(lambda s: np.add(na[s], nb[s], out=nc[s]), rows), 3 * nbytes),
    }


def measure_bandwidth(threads: int, nbytes: int = 64 * MiB, repeats: int = 10) -> tuple[dict, dict]:
    """GB/s (bytes read + written) of stream kernels: `threads` threads (wall) and 1 thread (CPU time)."""
    import torch

    kernels = _stream_kernels(threads, nbytes)
    t = time_interleaved({k: f for k, (f, _) in kernels.items()}, repeats)
    wall = {k: nb / t[k].best / 1e9 for k, (_, nb) in kernels.items()}
    one = _stream_kernels(1, nbytes)
    one = {k: v for k, v in one.items() if k in ("torch copy", "torch add", "numpy copy")}
    torch.set_num_threads(1)
    try:
        t1 = cpu_time_interleaved({k: f for k, (f, _) in one.items()}, max(3, repeats // 2))
    finally:
        torch.set_num_threads(threads)
    return wall, {k: nb / t1[k].best / 1e9 for k, (_, nb) in one.items()}


def measure_gemm_peak(threads: int, size: int = 4096, repeats: int = 4) -> tuple[dict, dict]:
    """torch.matmul GFLOP/s at size^3: `threads` threads (wall) and 1 thread (CPU time)."""
    import torch

    wall, one = {}, {}
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a = torch.randn(size, size).to(dt)
        b = torch.randn(size, size).to(dt)
        c = torch.empty(size, size, dtype=dt)
        t = time_interleaved({name: lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)}, repeats)
        wall[name] = 2.0 * size ** 3 / t[name].best / 1e9
        t1 = single_thread_cpu_times({name: lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)}, 2, threads)
        one[name] = 2.0 * size ** 3 / t1[name].best / 1e9
    return wall, one


def measure_roofline(threads: int, nbytes: int = 64 * MiB, gemm: bool = False, repeats: int = 10) -> Roofline:
    wall, one = measure_bandwidth(threads, nbytes, repeats)
    r = Roofline(threads, nbytes, wall, one)
    if gemm:
        r.gflops, r.gflops_1t = measure_gemm_peak(threads)
    return r


# ---- peers ------------------------------------------------------------------------------------

@dataclass
class Peer:
    fn: Callable[[], Any] | None
    note: str = ""


def torch_compile(fn: Callable, args: Sequence[Any], mode: str = "default") -> Peer:
    """`torch.compile(fn)` (inductor), frozen weights, warmed up twice; a Peer with the error on failure."""
    import torch
    import torch._inductor.config as icfg

    icfg.freezing = True
    t0 = time.perf_counter()
    try:
        with torch.no_grad():
            c = torch.compile(fn, mode=None if mode == "default" else mode, fullgraph=True, dynamic=False)
            c(*args)
            c(*args)
    except Exception as e:  # noqa: BLE001 - a peer that cannot compile is reported, not fatal
        return Peer(None, f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}")

    def run() -> Any:
        with torch.no_grad():
            return c(*args)
    return Peer(run, f"compiled in {time.perf_counter() - t0:.1f} s")


# ---- numerics ---------------------------------------------------------------------------------

def as_f64(x: Any) -> np.ndarray:
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).numpy()
    return np.asarray(x).astype(np.float64)


def check_close(what: str, got: Any, ref: Any, atol: float, rtol: float = 0.0) -> float:
    """Max abs error of got vs ref; raises AssertionError (loudly) when |got - ref| > atol + rtol |ref|."""
    g, r = as_f64(got), as_f64(ref)
    if g.shape != r.shape:
        raise AssertionError(f"{what}: shape {g.shape} != reference {r.shape}")
    err = np.abs(g - r)
    bad = ~(err <= atol + rtol * np.abs(r))  # NaN counts as bad
    if bad.any():
        idx = np.unravel_index(int(np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1))), g.shape)
        raise AssertionError(f"{what}: WRONG RESULT: {int(bad.sum())} of {g.size} elements off; worst at {idx}: "
                             f"got {g[idx]!r}, expected {r[idx]!r} (atol {atol}, rtol {rtol})")
    return float(np.nan_to_num(err, nan=np.inf).max())


# ---- results and tables -----------------------------------------------------------------------

@dataclass
class Goal:
    text: str        # "softmax >= 2x best torch (wall, 2 threads)"
    value: str       # "1.34x vs torch eager"
    ok: bool


@dataclass
class View:
    """One way of timing a benchmark: the timings of PyPTO (OURS) and its peers, and the roofline."""

    label: str                         # "wall, 2 threads" / "1 thread, CPU time"
    times: dict[str, Timing]
    roof: float                        # GB/s or GFLOP/s
    roof_name: str

    @property
    def ours(self) -> float:
        return self.times[OURS].best

    def best_peer(self, prefix: str = "") -> tuple[str, float]:
        cands = [(k, t.best) for k, t in self.times.items() if k != OURS and k.startswith(prefix)]
        return min(cands, key=lambda kv: kv[1]) if cands else ("-", float("nan"))


@dataclass
class BenchResult:
    name: str                          # "softmax 4096x4096 fp32"
    unit: str                          # "GB/s" or "GFLOP/s"
    work: float                        # bytes or flops per call
    wall: View
    cpu: View | None = None
    notes: dict[str, str] = field(default_factory=dict)
    goals: list[Goal] = field(default_factory=list)

    def rate(self, seconds: float) -> float:
        return self.work / seconds / 1e9

    def views(self) -> list[View]:
        return [self.wall] + ([self.cpu] if self.cpu is not None else [])

    def pct_roof(self, view: View) -> float:
        return 100.0 * self.rate(view.ours) / view.roof


def print_table(res: BenchResult) -> None:
    print(f"\n{res.name}  ({res.work / 1e9:.3f} G{'B' if res.unit == 'GB/s' else 'FLOP'} per call; "
          f"speedup = peer time / PyPTO time)")
    for v in res.views():
        print(f"  [{v.label}] roofline {v.roof:.1f} {res.unit} = {v.roof_name}")
        print(f"  {'implementation':38s}{'best ms':>10s}{'median ms':>11s}{'speedup':>9s}{res.unit:>10s}"
              f"{'% roof':>8s}  note")
        for k, t in v.times.items():
            sp = "" if k == OURS else f"{t.best / v.ours:.2f}x"
            r = res.rate(t.best)
            print(f"  {k:38s}{t.best * 1e3:10.2f}{t.median * 1e3:11.2f}{sp:>9s}{r:10.1f}"
                  f"{100 * r / v.roof:7.0f}%  {res.notes.get(k, '') if v is res.wall else ''}")
        if v is res.wall:
            for k, n in res.notes.items():
                if k not in v.times:
                    print(f"  {k:38s}{'-':>10s}{'':>11s}{'':>9s}{'':>10s}{'':>8s}  {n}")
    for g in res.goals:
        print(f"  goal: {g.text}: {g.value} -> {'MET' if g.ok else 'MISSED'}")


def single_thread_cpu_times(fns: dict[str, Callable[[], Any]], repeats: int, threads: int) -> dict[str, Timing]:
    """Thread CPU time of single-threaded runs (torch intra-op threads set to 1 meanwhile)."""
    import torch

    torch.set_num_threads(1)
    try:
        return cpu_time_interleaved(fns, repeats)
    finally:
        torch.set_num_threads(threads)


def _peer_fns(candidates: dict[str, Callable[[], Any] | Peer | None], notes: dict[str, str]) -> dict:
    fns: dict[str, Callable[[], Any]] = {}
    for k, c in candidates.items():
        if isinstance(c, Peer):
            if c.note:
                notes[k] = c.note
            if c.fn is not None:
                fns[k] = c.fn
        elif c is not None:
            fns[k] = c
    return fns


def measure(env: Env, name: str, unit: str, work: float, candidates: dict[str, Callable[[], Any] | Peer | None],
            cpu: dict[str, Callable[[], Any]] | None = None, notes: dict[str, str] | None = None,
            gemm_dtype: str = "fp32") -> BenchResult:
    """Time OURS and its peers in the wall view and, unless --no-cpu-time, `cpu` (single-threaded
    candidates) in the CPU-time view; a Peer without a function is listed with its note. The
    roofline of each view is the best of the process's (env.roofline()), of probes interleaved with
    these very runs (a 64 MiB stream copy for GB/s, a 2048^3 torch.matmul for GFLOP/s) and of the
    peers' own rates (no peer sits above 100%)."""
    notes = dict(notes or {})
    roof = env.roofline(gemm=unit == "GFLOP/s")
    fns = _peer_fns(candidates, notes)
    if unit == "GB/s":
        wall_roof, wall_name = roof.mem_gbs, f"best stream kernel, {env.threads} threads"
        probes = _bandwidth_probes(env.threads)
    else:
        wall_roof, wall_name = roof.gflops[gemm_dtype], f"torch.matmul {gemm_dtype}, {env.threads} threads"
        probes = _gemm_probes(gemm_dtype)
    times = time_interleaved({**fns, **{k: f for k, (f, _) in probes.items()}}, env.repeats)
    # the roofline measured again inside the same rounds (noise hits it like the candidates): the best
    # of the start-up measurement and these
    wall_roof = max(wall_roof, *(w / times.pop(k).best / 1e9 for k, (_, w) in probes.items()),
                    *(work / t.best / 1e9 for k, t in times.items() if k != OURS))  # nor below a peer's rate
    res = BenchResult(name, unit, work, View(f"wall, {env.threads} threads", times, wall_roof, wall_name),
                      notes=notes)
    if cpu and not env.opts.no_cpu_time:
        probes = _bandwidth_probes(1) if unit == "GB/s" else {}
        t1 = single_thread_cpu_times({**cpu, **{k: f for k, (f, _) in probes.items()}}, max(3, env.repeats // 2),
                                     env.threads)
        if unit == "GB/s":
            r1 = max(roof.mem_gbs_1t, *(nb / t1.pop(k).best / 1e9 for k, (_, nb) in probes.items()))
            n1 = "best stream kernel, 1 thread"
        else:
            r1, n1 = roof.gflops_1t[gemm_dtype], f"torch.matmul {gemm_dtype} 4096, 1 thread"
        r1 = max(r1, *(work / t.best / 1e9 for k, t in t1.items() if k != OURS))
        res.cpu = View("1 thread, CPU time", t1, r1, n1)
    return res


_PROBES: dict[Any, dict[str, tuple[Callable[[], Any], float]]] = {}


def _gemm_probes(dtype: str, size: int = 2048) -> dict[str, tuple[Callable[[], Any], float]]:
    """A torch.matmul (size^3, all threads) to interleave with a compute-bound benchmark's runs."""
    if dtype not in _PROBES:
        import torch

        dt = torch.float32 if dtype == "fp32" else torch.bfloat16
        a, b = torch.randn(size, size).to(dt), torch.randn(size, size).to(dt)
        c = torch.empty(size, size, dtype=dt)
        _PROBES[dtype] = {f"_probe matmul {dtype}": (lambda: torch.matmul(a, b, out=c), 2.0 * size ** 3)}
    return _PROBES[dtype]


def _bandwidth_probes(threads: int) -> dict[str, tuple[Callable[[], Any], float]]:
    """A torch copy and a chunked NumPy copy (64 MiB) to interleave with a benchmark's runs."""
    if threads not in _PROBES:
        k = _stream_kernels(threads, 64 * MiB)
        _PROBES[threads] = {f"_probe {n}": k[n] for n in ("torch copy", "numpy copy")}
    return _PROBES[threads]


def report(results: Sequence[BenchResult]) -> None:
    """The roofline of this process, then one table per result."""
    if _SHARED_ROOF is not None:
        print(_SHARED_ROOF.describe())
    for r in results:
        print_table(r)


def main_for(run: Callable[[argparse.Namespace], list[BenchResult]], doc: str | None) -> None:
    report(run(parse_args(doc)))


def goal_ratio(res: BenchResult, text: str, threshold: float, prefix: str = "") -> list[Goal]:
    """`best peer (name starting with prefix) time / PyPTO time >= threshold`, in each view."""
    out = []
    for v in res.views():
        name, t = v.best_peer(prefix)
        if t != t:
            continue
        r = t / v.ours
        out.append(Goal(f"{text} [{v.label}]", f"{r:.2f}x vs {name}", r >= threshold))
    return out


def goal_memory(res: BenchResult, pct: float = 80.0) -> list[Goal]:
    return [Goal(f"{res.name}: >= {pct:.0f}% of measured memory bandwidth [{v.label}]",
                 f"{res.pct_roof(v):.0f}% of {v.roof:.1f} GB/s", res.pct_roof(v) >= pct) for v in res.views()]


_COMPILE_LOG: list[tuple[str, float, str]] = []


def compile_program(prog: Any, name: str) -> Any:
    """ir.compile into build_output/bench/<name>; the time (and where it went) goes to compile_log()."""
    from pypto import ir

    t0 = time.perf_counter()
    compiled = ir.compile(prog, output_dir=os.path.join("build_output", "bench", name))
    ms = (time.perf_counter() - t0) * 1e3
    tm = getattr(compiled, "timings", {}) or {}
    if tm.get("cached"):
        how = "served from the compile cache"
    else:
        how = (f"passes {tm.get('passes_s', 0) * 1e3:.0f} ms, codegen {tm.get('codegen_s', 0) * 1e3:.0f} ms, "
               f"native {tm.get('native_s', 0) * 1e3:.0f} ms")
    _COMPILE_LOG.append((name, ms, how))
    return compiled


def compile_log() -> list[tuple[str, float, str]]:
    return list(_COMPILE_LOG)


__all__ = ["MiB", "OURS", "BenchResult", "Env", "Goal", "Peer", "Roofline", "Timing", "View", "add_common_args",
           "check_close", "compile_log", "compile_program", "cpu_time_interleaved", "goal_memory", "goal_ratio",
           "main_for", "measure", "measure_bandwidth", "measure_gemm_peak", "measure_roofline", "parse_args",
           "print_table", "report", "setup", "single_thread_cpu_times", "time_interleaved", "torch_compile"]
