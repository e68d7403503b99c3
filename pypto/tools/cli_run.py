"""`pypto compile | run | bench | show | ir`: the subcommands that take a user's `pl` file or an
output directory (the parsers are in cli.py)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .cli_load import CliError, Progress, compile_spec, parse_assignments

DEFAULT_DIM = 64  # a dynamic dimension's extent when neither --dim nor an --input fixes it


def cmd_compile(args: argparse.Namespace) -> int:
    compiled = compile_spec(args.source, Progress(args.verbose), output_dir=args.output, dump_passes=args.dump_passes,
                            backend_type=args.backend, skip_ptoas=args.skip_native)
    print(f"compiled {compiled.name} -> {compiled.output_dir}")
    for name, path in compiled.pto_files().items():
        print(f"  {name}: {path}")
    _print_report_path(compiled.output_dir)
    return 0


# ---- inputs ------------------------------------------------------------------------------------


def _load_array(name: str, path: str) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        raise CliError(f"--input {name}: no such file: {p}")
    if p.suffix == ".npy":
        try:
            return np.load(p, allow_pickle=False)
        except ValueError as e:
            raise CliError(f"--input {name}: {p} is not a .npy array: {e}") from None
    if p.suffix == ".pt":
        try:
            import torch
        except ImportError:
            raise CliError(f"--input {name}: reading {p} needs torch, which is not installed; save it as .npy") from None
        t = torch.load(p, map_location="cpu")
        if not isinstance(t, torch.Tensor):
            raise CliError(f"--input {name}: {p} holds a {type(t).__name__}, not one tensor")
        return t.detach().numpy()
    raise CliError(f"--input {name}: {p}: expected a .npy or .pt file")


def make_inputs(sig: Any, given: dict[str, str], dims: dict[str, str], scalars: dict[str, str],
                seed: int) -> list[Any]:
    """Arguments for the entry: the given files, random In/InOut tensors, zero Out tensors, scalars
    from --scalar (else 1). Dynamic dimensions come from --dim, a given array, or DEFAULT_DIM."""
    names = {p.name for p in sig.params}
    for opt, table in (("--input", given), ("--scalar", scalars)):
        for n in table:
            if n not in names:
                raise CliError(f"{opt} {n}: the entry {sig.entry} has no parameter {n!r} "
                               f"(its parameters: {', '.join(p.name for p in sig.params)})")
    extent: dict[str, int] = {}
    for n, v in dims.items():
        if not v.isdigit() or int(v) < 1:
            raise CliError(f"--dim {n}={v}: the extent must be a positive integer")
        extent[n] = int(v)
    loaded = {n: _load_array(n, path) for n, path in given.items()}
    for p in sig.params:  # a given array fixes the dynamic dimensions it has
        if p.name in loaded and p.kind == "tensor" and len(p.shape) == loaded[p.name].ndim:
            for d, got in zip(p.shape, loaded[p.name].shape):
                if isinstance(d, str) and d != "?":
                    extent.setdefault(d, int(got))
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for p in sig.params:
        if p.kind == "scalar":
            out.append(_scalar(p, scalars.get(p.name, "1")))
        elif p.name in loaded:
            out.append(loaded[p.name])
        else:
            if "?" in p.shape:
                raise CliError(f"parameter {p.name} has a shape with unknown extents {list(p.shape)}; "
                               f"give it with --input {p.name}=FILE.npy")
            shape = tuple(d if isinstance(d, int) else extent.setdefault(d, DEFAULT_DIM) for d in p.shape)
            out.append(_tensor(p.dtype.to_numpy(), shape, p.dir == "out", rng))
    return out


def _scalar(p: Any, text: str) -> Any:
    try:
        return float(text) if p.dtype.is_float else int(text)
    except ValueError:
        raise CliError(f"--scalar {p.name}={text}: not a {p.dtype.name} value") from None


def _tensor(dt: np.dtype, shape: tuple[int, ...], zero: bool, rng: np.random.Generator) -> np.ndarray:
    if zero:
        return np.zeros(shape, dt)
    if np.issubdtype(dt, np.floating):
        return rng.standard_normal(shape).astype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(dt)
    return rng.integers(0, 8, shape).astype(dt)  # (small, so sums and products stay in range)


# ---- run and bench -----------------------------------------------------------------------------


def _compile_for_run(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    # (the interpreter runs the .pto text: no C++ build for it)
    compiled = compile_spec(args.source, Progress(args.verbose), output_dir=args.output, platform=args.platform,
                            skip_ptoas=args.platform == "interp")
    inputs = make_inputs(compiled.signature, parse_assignments(args.input, "--input"),
                         parse_assignments(args.dim, "--dim"), parse_assignments(args.scalar, "--scalar"), args.seed)
    return compiled, inputs


def _as_tuple(ret: Any) -> tuple:
    if ret is None:
        return ()
    return tuple(ret) if isinstance(ret, (tuple, list)) else (ret,)


def cmd_run(args: argparse.Namespace) -> int:
    from pypto.runtime import RunConfig

    compiled, inputs = _compile_for_run(args)
    out_dir = compiled.output_dir
    trace = out_dir / "trace.json"
    t0 = time.perf_counter()
    ret = compiled(*inputs, config=RunConfig(platform=args.platform, enable_trace=True, trace_path=str(trace)))
    wall = time.perf_counter() - t0
    results = out_dir / "outputs"
    results.mkdir(exist_ok=True)
    written: dict[str, np.ndarray] = {}
    for p, a in zip(compiled.signature.params, inputs):
        if p.kind == "tensor" and p.dir in ("out", "inout"):
            written[p.name] = np.asarray(a)
    for k, r in enumerate(_as_tuple(ret)):
        if not any(r is a for a in written.values()):  # (a result that is an Out parameter is saved once)
            written[f"result{k}"] = np.asarray(getattr(r, "numpy", lambda r=r: r)())
    print(f"ran {compiled.name} on {args.platform} in {wall * 1e3:.2f} ms (wall, incl. argument checks)")
    stats = getattr(compiled.last_run, "stats", None) if args.platform == "cpu" else None
    if stats is not None:
        print(f"  {stats.tasks} tasks, {stats.edges} dependencies, runtime {stats.elapsed_ns / 1e3:.1f} us")
    for name, a in written.items():
        path = results / f"{name}.npy"
        np.save(path, a)
        print(f"  {name}: {a.dtype}{list(a.shape)} sum {float(np.sum(a, dtype=np.float64)):.6g} -> {path}")
    print(f"  trace: {trace}" if trace.is_file() else f"  trace: none (the {args.platform} platform writes none)")
    _print_report_path(out_dir)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from pypto.runtime import RunConfig

    if args.repeat < 1 or args.warmup < 0:
        raise CliError(f"--repeat must be at least 1 and --warmup at least 0, got {args.repeat} and {args.warmup}")
    compiled, inputs = _compile_for_run(args)
    times: list[float] = []
    if args.platform == "cpu":  # the runtime times each run itself (no Python call overhead)
        compiled(*inputs, config=RunConfig(platform="cpu", warmup=args.warmup, repeat=args.repeat))
        times = list(compiled.last_times)
    else:
        cfg = RunConfig(platform=args.platform)
        for i in range(args.warmup + args.repeat):
            t0 = time.perf_counter()
            compiled(*inputs, config=cfg)
            if i >= args.warmup:
                times.append(time.perf_counter() - t0)
    us = [t * 1e6 for t in times]
    print(f"bench {compiled.name} on {args.platform}: {len(us)} runs after {args.warmup} warm-up")
    print(f"  median {statistics.median(us):.2f} us  min {min(us):.2f} us  max {max(us):.2f} us per call")
    return 0


# ---- show and ir -------------------------------------------------------------------------------


def _report_html(out: Path) -> Path | None:
    found = sorted((out / "report").glob("*.html")) if (out / "report").is_dir() else []
    return next((p for p in found if p.stem in ("index", "report")), found[0] if found else None)


def _print_report_path(out: Path) -> None:
    html = _report_html(out)
    print(f"  report: {html}" if html else "  report: none yet (this build writes no HTML report)")


def cmd_show(args: argparse.Namespace) -> int:
    out = Path(args.dir)
    if not out.is_dir():
        raise CliError(f"no such directory: {out}")
    if not (out / "signature.json").is_file() and not (out / "kernels").is_dir():
        raise CliError(f"{out} is not an output directory of ir.compile (no signature.json, no kernels/)")
    print(f"output directory {out}")
    try:
        sig = json.loads((out / "signature.json").read_text())
        params = ", ".join(f"{p['name']}: {p.get('dir', 'scalar')} {p['dtype']}{_dims(p.get('shape'))}" for p in sig["params"])
        print(f"  entry {sig['entry']}({params})")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"  entry: unknown (signature.json unreadable: {type(e).__name__})")
    peaks = _memory_peaks(out / "report" / "memory.json")
    kernels = sorted(p.stem for p in (out / "kernels").glob("*.pto"))
    print(f"  {len(kernels)} kernel(s)")
    for k in kernels:
        print(f"    {k:<28} {peaks.get(k, 'memory: not reported')}")
    for p in sorted((out / "orchestration").glob("*.pto")):
        print(f"  task program: {p}")
    native = sorted((out / "native").glob("*.cpp")) if (out / "native").is_dir() else []
    print(f"  generated C++: {native[0]}" if native else "  generated C++: none (not built for the CPU)")
    traces = sorted(out.glob("*trace*.json"))
    print(f"  trace: {traces[0]}" if traces else "  trace: none (run with tracing: pypto run)")
    _print_report_path(out)
    return 0


def _dims(shape: Any) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]" if shape else ""


def _memory_peaks(path: Path) -> dict[str, str]:
    """Kernel -> 'Vec 4096/196608 B (2.1%), ...' from report/memory.json ({} if absent or unreadable)."""
    try:
        rep = json.loads(path.read_text())
        out = {}
        for k in rep["kernels"]:
            parts = [f"{s['space']} {s['peak_live']}/{s['capacity']} B ({100 * s['peak_live'] / max(s['capacity'], 1):.1f}%)"
                     for s in k["spaces"]]
            out[k["function"]] = "peak " + (", ".join(parts) or "none")
        return out
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def pass_names(strategy: str = "Default") -> list[str]:
    from pypto import passes

    return [getattr(p, "name", type(p).__name__) for p in passes.pipeline(strategy)]


def cmd_ir(args: argparse.Namespace) -> int:
    if args.list and args.source is None:
        print("\n".join(["frontend", *pass_names(args.strategy)]))
        return 0
    if args.source is None:
        raise CliError("the program file is missing: pypto ir FILE.py[:Program] --after PASS")
    if args.after is None and not args.list:
        raise CliError("say which IR: --after PASS (or --list the passes)")
    with tempfile.TemporaryDirectory(prefix="pypto-ir-") as tmp:
        out = Path(args.output) if args.output else Path(tmp) / "out"
        with contextlib.redirect_stdout(io.StringIO()):  # (the pass manager echoes every dump)
            compile_spec(args.source, Progress(args.verbose), output_dir=out, dump_passes=True, skip_ptoas=True,
                         strategy=args.strategy)
        # the dumps, not the strategy's list, name the passes that ran (backends add some, e.g. InsertSync)
        dumps = {p.stem.split("_after_", 1)[-1] if "_after_" in p.stem else "frontend": p
                 for p in sorted((out / "passes_dump").glob("*.py"))}
        if args.list:
            _list_changes(out / "passes_dump", dumps)
            return 0
        wanted = next((n for n in dumps if n.lower() == args.after.lower()), None)
        if wanted is None:
            raise CliError(f"unknown pass {args.after!r}; the passes that ran: {', '.join(dumps)}")
        if not args.diff:
            print(dumps[wanted].read_text(), end="")
        elif wanted == "frontend":
            raise CliError("--diff: the frontend IR is the first one; there is no earlier IR to compare it with")
        elif (d := dumps[wanted].with_suffix(".diff")).exists():
            print(d.read_text(), end="")
        else:  # (no file: the pass left the printed IR as it was)
            print(f"{wanted}: no change to the IR", file=sys.stderr)
    return 0


def _list_changes(dump_dir: Path, dumps: dict[str, Path]) -> None:
    """The passes that ran, each with what it changed (`+A -R` lines, or `no change`)."""
    from pypto.passes.pass_diff import change_label, read_index

    labels = {e.get("file"): change_label(e) for e in read_index(dump_dir) or []}
    width = max(map(len, dumps), default=0)
    for name, path in dumps.items():
        print(f"{name:<{width}}  {labels.get(path.name, '')}".rstrip())


__all__ = ["DEFAULT_DIM", "cmd_bench", "cmd_compile", "cmd_ir", "cmd_run", "cmd_show", "make_inputs", "pass_names"]
