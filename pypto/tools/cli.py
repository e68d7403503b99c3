"""`pypto` command line: look at what the compiler and runtime produced.

    pypto compile prog.py [-o DIR] [--dump-passes] [--backend PTO]   compile a pl source file
    pypto pto FILE.pto                                             check a .pto file (parse + verify), reprint it
    pypto memmap DIR_OR_memory.json                                 the memory map of each kernel, as text
    pypto trace trace.json [--peak-gbps G] [--json]                 swimlane summary of a run's trace
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pypto.errors import InvalidValue


def _compile(args: argparse.Namespace) -> int:
    import pypto.language as pl
    from pypto import ir

    prog = pl.loads(args.source)
    out = ir.compile(prog, output_dir=args.output, dump_passes=args.dump_passes, backend_type=args.backend,
                     skip_ptoas=args.skip_native)
    print(f"compiled {getattr(prog, 'name', '?')} -> {out}")
    for name, path in out.pto_files().items():
        print(f"  {name}: {path}")
    return 0


def _pto(args: argparse.Namespace) -> int:
    from pypto.pto import parse_module, print_module

    text = Path(args.file).read_text()
    mod = parse_module(text, filename=args.file)
    again = print_module(mod)
    if not args.quiet:
        print(again, end="")
    status = "canonical" if again == text else "valid (not in canonical print form)"
    print(f"// {args.file}: {len(mod.funcs)} function(s), {status}", file=sys.stderr)
    return 0


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="pypto", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile a pl source file (as python_print writes them)")
    c.add_argument("source")
    c.add_argument("-o", "--output", default=None)
    c.add_argument("--dump-passes", action="store_true")
    c.add_argument("--backend", default="PTO")
    c.add_argument("--skip-native", action="store_true", help="stop at the .pto files")
    c.set_defaults(fn=_compile)
    p = sub.add_parser("pto", help="parse and verify a .pto file; print it canonically")
    p.add_argument("file")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=_pto)
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
    args = ap.parse_args(argv)
    try:
        return args.fn(args)
    except Exception as e:  # a CLI prints the error, not a traceback
        print(f"pypto {args.cmd}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
