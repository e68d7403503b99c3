"""`pypto` command line: compile and run a `pl` program, and look at what the compiler and runtime produced.

    pypto compile FILE.py[:Program] [-o DIR]          compile; print the output directory (docs/cli.md)
    pypto run FILE.py[:Program] [--platform cpu|interp] [--input NAME=x.npy] [--dim M=64] [--seed N]
                                                      run with tracing on generated or given inputs
    pypto bench FILE.py[:Program] [--repeat N]        warm runs: median / min time per call
    pypto show DIR                                    summary of an output directory
    pypto ir FILE.py[:Program] --after PASS [--diff] | --list
                                                      the IR after one pass, or what it changed
    pypto pto FILE.pto [--target interp|cpu]          check a .pto file; with --target, run its kernel
    pypto memmap DIR_OR_memory.json                   the memory map of each kernel, as text
    pypto trace trace.json [--peak-gbps G] [--json]   check a run's trace; swimlane summary (docs/swimlane.md)

Errors in what the user gave (no such file, no program, unknown pass, bad .pto) print one line and
exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pypto.errors import InvalidValue


def _bar(lo: int, hi: int, total: int, width: int) -> str:
    if total <= 0:
        return ""
    a = int(lo * width / total)
    b = max(a + 1, int(hi * width / total))
    return " " * a + "#" * (b - a)


def _memmap(args: argparse.Namespace) -> int:
    p = Path(args.path)
    if p.is_dir():
        p = p / "report" / "memory.json"
    rep = json.loads(p.read_text())
    width = args.width
    if width < 1:
        raise InvalidValue(f"--width must be at least 1, got {width}")
    try:
        return _print_memmap(rep, width)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise InvalidValue(f"{p} is not a memory report written by ir.compile (report/memory.json): "
                         f"{type(e).__name__} {e}") from None


def _print_memmap(rep: dict, width: int) -> int:
    for k in rep["kernels"]:
        print(f"kernel {k['function']}  ({k.get('source', '')})")
        for sp in k["spaces"]:
            cap = sp["capacity"]
            print(f"  {sp['space']:<6} used {sp['used']:>9} / {cap} bytes ({100 * sp['used'] / max(cap, 1):.1f}%), "
                  f"peak live {sp['peak_live']}")
            for b in sp["buffers"]:
                names = ", ".join(t["name"] for t in b["tiles"][:4]) + (" ..." if len(b["tiles"]) > 4 else "")
                span = f"[{b['addr']:>7}, {b['addr'] + b['size']:>7})"
                print(f"    {b['name']:<14} {span} |{_bar(b['addr'], b['addr'] + b['size'], cap, width):<{width}}| "
                      f"{names}")
    return 0


def _trace(args: argparse.Namespace) -> int:
    from pypto.runtime.trace import Trace
    from pypto.runtime.trace_check import load_chrome_trace
    from pypto.runtime.trace_summary import format_summary, summarize

    data = load_chrome_trace(args.trace)
    work = json.loads(Path(args.work).read_text()) if args.work else None
    s = summarize(Trace.from_chrome(data), work=work, peak_gbps=args.peak_gbps, peak_gflops=args.peak_gflops)
    if not s["tasks"]:
        print("no task events in the trace")
        return 1
    print(json.dumps(s, indent=1) if args.json else format_summary(s))
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="FILE.py[:Program]: the @pl.program (or @pl.function) to run")
    p.add_argument("-o", "--output", default=None, help="output directory (default: as ir.compile)")
    p.add_argument("--platform", choices=("cpu", "interp"), default="cpu")
    p.add_argument("--input", action="append", metavar="NAME=FILE", help="an argument from a .npy or .pt file")
    p.add_argument("--dim", action="append", metavar="NAME=N", help="a dynamic dimension's extent (default 64)")
    p.add_argument("--scalar", action="append", metavar="NAME=V", help="a scalar argument (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per compile stage on stderr")


def _parser() -> argparse.ArgumentParser:
    from . import cli_pto, cli_run

    ap = argparse.ArgumentParser(prog="pypto", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile a pl program file to an output directory")
    c.add_argument("source", help="FILE.py[:Program], or a pl source file as ir.python_print writes it")
    c.add_argument("-o", "--output", default=None)
    c.add_argument("--dump-passes", action="store_true", help="the IR after each pass in passes_dump/")
    c.add_argument("--backend", default="PTO")
    c.add_argument("--skip-native", action="store_true", help="stop at the .pto files")
    c.add_argument("-v", "--verbose", action="store_true", help="a line per compile stage on stderr")
    c.set_defaults(fn=cli_run.cmd_compile)
    r = sub.add_parser("run", help="compile and run with tracing; outputs as .npy in the output directory")
    _add_run_options(r)
    r.set_defaults(fn=cli_run.cmd_run)
    b = sub.add_parser("bench", help="compile, then time warm runs (median / min per call)")
    _add_run_options(b)
    b.add_argument("--warmup", type=int, default=2)
    b.add_argument("--repeat", type=int, default=10)
    b.set_defaults(fn=cli_run.cmd_bench)
    s = sub.add_parser("show", help="summary of an output directory: kernels, memory peaks, trace, report")
    s.add_argument("dir")
    s.set_defaults(fn=cli_run.cmd_show)
    i = sub.add_parser("ir", help="the IR after a pass (pl source), or --list the passes")
    i.add_argument("source", nargs="?", help="FILE.py[:Program]")
    i.add_argument("--after", metavar="PASS", help="a pass name (see --list), or 'frontend'")
    i.add_argument("--list", action="store_true",
                   help="list the passes of the strategy; with a file, the passes that ran and their +/- lines")
    i.add_argument("--diff", action="store_true", help="with --after: the unified diff from the previous pass's IR")
    i.add_argument("--strategy", default="Default")
    i.add_argument("-o", "--output", default=None, help="keep the compile's output directory here")
    i.add_argument("-v", "--verbose", action="store_true")
    i.set_defaults(fn=cli_run.cmd_ir)
    p = sub.add_parser("pto", help="parse and verify a .pto file (print it canonically), or run its kernel")
    p.add_argument("file")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--target", choices=("interp", "cpu"), default=None, help="run the kernel on this backend")
    p.add_argument("--shape", action="append", metavar="NAME=RxC", help="a tensor argument's extents")
    p.add_argument("--scalar", action="append", metavar="NAME=V", help="a scalar argument (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-hazards", action="store_true", help="interp: skip the pipe hazard check")
    p.add_argument("-o", "--output", default=None, help="write the outputs as DIR/NAME.npy")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(fn=cli_pto.cmd_pto)
    m = sub.add_parser("memmap", help="text memory map from report/memory.json")
    m.add_argument("path")
    m.add_argument("--width", type=int, default=48)
    m.set_defaults(fn=_memmap)
    t = sub.add_parser("trace", help="summary of a Chrome trace written by a run")
    t.add_argument("trace")
    t.add_argument("--peak-gbps", type=float, default=None, help="the machine's measured memory bandwidth")
    t.add_argument("--peak-gflops", type=float, default=None, help="the machine's measured compute peak")
    t.add_argument("--work", default=None, help='JSON: kernel -> {"bytes": .., "flops": ..} per task')
    t.add_argument("--json", action="store_true", help="print the summary as JSON")
    t.set_defaults(fn=_trace)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except KeyboardInterrupt:
        print(f"pypto {args.cmd}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # (`pypto ir ... | head`: the reader left; nothing to report)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # a CLI prints the error, not a traceback
        print(f"pypto {args.cmd}: {_one_line(e)}", file=sys.stderr)
        return 2


def _one_line(e: Exception) -> str:
    """The error as pypto renders it; an OS error by its file name."""
    if isinstance(e, OSError) and getattr(e, "filename", None):
        return f"{e.strerror}: {e.filename}"
    return str(e) or type(e).__name__


if __name__ == "__main__":
    sys.exit(main())
