"""Per-task overhead of the task runtime: empty kernels, end to end.

Each measurement submits N tasks of the built-in `noop` kernel from native code (one
`run_graph` call: submission, dependency tracking, scheduling, execution, completion) and waits
for all of them; the time per task is wall time / N, best of several runs. Shapes:

    independent-1   task i: inout x[i]                      (no dependencies)
    independent-2   task i: in w (shared), out y[i]          (a shared read; no dependencies)
    chain-1         task i: inout x[0]                       (each task waits for the previous)
    chain-2         task i: in w (shared), inout x[0]        (a chain plus a long reader list)

Peers, measured in the same run: the serial runtime (0 workers: the orchestrating thread runs each
task at submission) and Python-driven submission (one ctypes call per task, `Runtime.session`).

End to end through the compiler: a `pl` program whose orchestration loop submits N tasks of a
near-empty kernel (a [1, 16] tile loaded and stored), called like any compiled program
(`compiled(x, y)`: argument marshalling, the native task program, the runtime); time per task =
wall time / N. `measure()` returns the headline numbers (benchmarks/run_all.py uses it).

    python benchmarks/bench_runtime.py [--tasks 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pypto.config import config
from pypto.runtime import Runtime, builtin_kernel
from pypto.runtime.abi import ARG_DTYPE, MAX_DIMS, TASK_DESC_DTYPE, ArgKind
from pypto.runtime.graph import PackedGraph

ELEMS = 8  # float64 elements per task region


def _tensor_rows(kind: ArgKind, base: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """ARG_DTYPE records of the 1-D views base[o:o+ELEMS] (vectorised pack_args)."""
    rows = np.zeros(len(offsets), dtype=ARG_DTYPE)
    rows["kind"] = int(kind)
    rows["data"] = base.ctypes.data + offsets * base.itemsize
    rows["dtype_bytes"] = base.itemsize
    rows["ndim"] = 1
    shape = np.zeros(MAX_DIMS, dtype=np.int64)
    shape[0] = ELEMS
    strides = np.zeros(MAX_DIMS, dtype=np.int64)
    strides[0] = 1
    rows["shape"] = shape
    rows["strides"] = strides
    rows["root"] = base.ctypes.data
    rows["root_nbytes"] = base.nbytes
    return rows


def build(pattern: str, n: int) -> PackedGraph:
    x = np.zeros(n * ELEMS)
    w = np.zeros(ELEMS)
    idx = np.arange(n, dtype=np.int64)
    zero = np.zeros(n, dtype=np.int64)
    if pattern == "independent-1":
        cols = [_tensor_rows(ArgKind.INOUT, x, idx * ELEMS)]
    elif pattern == "independent-2":
        cols = [_tensor_rows(ArgKind.IN, w, zero), _tensor_rows(ArgKind.OUT, x, idx * ELEMS)]
    elif pattern == "chain-1":
        cols = [_tensor_rows(ArgKind.INOUT, x, zero)]
    elif pattern == "chain-2":
        cols = [_tensor_rows(ArgKind.IN, w, zero), _tensor_rows(ArgKind.INOUT, x, zero)]
    else:
        raise ValueError(pattern)
    nargs = len(cols)
    args = np.stack(cols, axis=1).reshape(-1)
    deps = np.zeros(1, dtype=np.int64)
    descs = np.zeros(n, dtype=TASK_DESC_DTYPE)
    k = builtin_kernel("noop")
    descs["fn"] = k.fn
    descs["kernel_id"] = k.kernel_id
    descs["nargs"] = nargs
    descs["args"] = args.ctypes.data + idx * nargs * ARG_DTYPE.itemsize
    descs["deps"] = deps.ctypes.data
    return PackedGraph(descs, args, deps, [x, w], {k.kernel_id: "noop"})


def best_us_per_task(rt: Runtime, g: PackedGraph, repeat: int, trace: bool = False) -> float:
    rt.run_graph(g, trace=trace)  # warm: task slots, queues, access structures
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        rt.run_graph(g, trace=trace)
        best = min(best, time.perf_counter() - t)
    return best / len(g) * 1e6


def native_us_per_task(rt: Runtime, g: PackedGraph, repeat: int, trace: bool) -> float:
    """Best native run time (begin to end of the run, from the runtime's own stats)."""
    return min(rt.run_graph(g, trace=trace).stats.elapsed_ns for _ in range(repeat + 1)) / len(g) / 1e3


def python_driven_us_per_task(rt: Runtime, n: int) -> float:
    x = np.zeros(n * ELEMS)
    views = [x[i * ELEMS:(i + 1) * ELEMS] for i in range(n)]
    t = time.perf_counter()
    with rt.session() as s:
        for v in views:
            s.submit("noop", v, kinds=["inout"])
    return (time.perf_counter() - t) / n * 1e6


def make_tiny_program(n: int):
    """Orchestration: n tasks; kernel: copy one [1, 16] fp32 tile (64 bytes) of x into y."""
    import pypto.language as pl

    @pl.program
    class ManyTinyTasks:
        @pl.function(type=pl.FunctionType.InCore)
        def tiny(self, a: pl.Tensor[[1, 16], pl.FP32],
                 b: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
            return pl.store(pl.load(a, [0, 0], [1, 16]), [0, 0], b)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[n, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]) -> pl.Tensor[[n, 16], pl.FP32]:
            for i in pl.range(0, n):
                self.tiny(pl.view(x, [1, 16], [i, 0]), pl.view(y, [1, 16], [i, 0]))
            return y

    return ManyTinyTasks


def compiled_us_per_task(n: int, repeat: int, workers: int) -> float:
    """Best wall time per task of the compiled `pl` program above (one call = n tasks)."""
    from pypto import ir
    from pypto.runtime import RunConfig

    compiled = ir.compile(make_tiny_program(n), output_dir=f"build_output/bench/tiny_tasks_{n}")
    x = np.arange(n * 16, dtype=np.float32).reshape(n, 16)
    y = np.zeros_like(x)
    cfg = RunConfig(num_workers=workers)
    compiled(x, y, config=cfg)
    if not np.array_equal(x, y):
        raise AssertionError("tiny-task program: WRONG RESULT (y != x)")
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        compiled(x, y, config=cfg)
        best = min(best, time.perf_counter() - t)
    return best / n * 1e6


def measure(tasks: int = 100_000, repeat: int = 5) -> dict:
    """Headline numbers: us per empty task (native graph, `cores` fifo workers) and per compiled-`pl` task."""
    cores = config.num_workers
    out: dict = {"workers": cores}
    rt = Runtime(num_workers=cores)
    try:
        for p in ("independent-1", "chain-1"):
            out[p] = best_us_per_task(rt, build(p, tasks), repeat)
    finally:
        rt.close()
    out["compiled pl, serial"] = compiled_us_per_task(min(tasks, 20_000), repeat, 0)
    out["compiled pl"] = compiled_us_per_task(min(tasks, 20_000), repeat, cores)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    n = opts.tasks
    cores = config.num_workers
    worker_counts = sorted({1, cores})
    patterns = ["independent-1", "independent-2", "chain-1", "chain-2"]
    graphs = {p: build(p, n) for p in patterns}

    print(f"task runtime overhead: {n} empty tasks per run, best of {opts.repeat}, {cores} cores")
    serial = Runtime(num_workers=0)
    base = {p: best_us_per_task(serial, g, opts.repeat) for p, g in graphs.items()}
    header = f"{'configuration':24s}" + "".join(f"{p:>22s}" for p in patterns)
    print(header)
    print(f"{'serial (0 workers)':24s}" + "".join(f"{base[p]:>13.3f} us/task" for p in patterns))
    for workers in worker_counts:
        for mode in ("fifo", "locality"):
            rt = Runtime(num_workers=workers, mode=mode)
            cells = []
            for p in patterns:
                us = best_us_per_task(rt, graphs[p], opts.repeat)
                cells.append(f"{us:>7.3f} us ({us / base[p]:4.1f}x)")
            print(f"{f'{workers} workers, {mode}':24s}" + "".join(f"{c:>22s}" for c in cells))
            rt.close()

    rt = Runtime(num_workers=cores)
    off = native_us_per_task(rt, graphs["independent-2"], opts.repeat, trace=False)
    on = native_us_per_task(rt, graphs["independent-2"], opts.repeat, trace=True)
    print(f"tracing, independent-2, {cores} workers (native time, without reading the trace back): "
          f"off {off:.3f} us/task, on {on:.3f} us/task ({on / off:.2f}x)")
    m = min(n, 20_000)
    py = python_driven_us_per_task(rt, m)
    native = best_us_per_task(rt, build("independent-1", m), opts.repeat)
    print(f"peer: Python-driven submission (one ctypes call per task), independent-1, {cores} workers: "
          f"{py:.3f} us/task vs native {native:.3f} us/task ({py / native:.1f}x)")
    rt.close()
    m = min(n, 20_000)
    ser = compiled_us_per_task(m, opts.repeat, 0)
    par = compiled_us_per_task(m, opts.repeat, cores)
    print(f"compiled pl program ({m} tasks of a [1, 16] tile copy, called as compiled(x, y)): "
          f"{par:.3f} us/task with {cores} workers, {ser:.3f} us/task serial (goal < 2 us)")


if __name__ == "__main__":
    main()
