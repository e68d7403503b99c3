"""Throughput of the PTO text printer and parser (`pypto.pto`).

Backends re-parse every `.pto` a compile writes, inside a compile-time budget of ~60 ms for a whole
12-kernel program, so parsing must take a few ms per thousand lines. This prints, for a program
of ~1,000 lines made of the golden kernels (tests/pto/golden) renamed into one module:

- tokenize / parse (with and without the verifier) / print / verify / equivalence, in ms and in
  thousands of lines per second;
- ratios against peers measured in the same run: `json.loads` / `json.dumps` of the same module as
  a JSON document (a C-implemented floor for reading / writing the same structure), and the
  tokenizer alone (the parser's own floor).

Run: `.venv/bin/python benchmarks/bench_pto_text.py [--lines N] [--repeat R]`. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pypto.pto import Module, equivalent, module_issues, parse_module, print_module  # noqa: E402
from pypto.pto.printer import print_attr, print_type  # noqa: E402
from pypto.pto.syntax import TOKEN  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "pto" / "golden"


def program_text(min_lines: int) -> str:
    """Golden kernels, renamed apart, repeated into one module of at least `min_lines` lines."""
    bodies = []
    for path in sorted(GOLDEN.glob("*.pto")):
        if path.stem == "attrs":
            continue
        text = path.read_text()
        bodies.append(text[text.index("\n") + 1: text.rindex("}")])
    parts, n = [], 0
    while sum(p.count("\n") for p in parts) < min_lines:
        for body in bodies:
            parts.append(re.sub(r"func\.func @(\w+)", rf"func.func @\g<1>_{n}", body))
            n += 1
    return print_module(parse_module("module attributes {pto.target = \"cpu\"} {\n" + "\n".join(parts) + "}\n"))


def as_json(m: Module) -> str:
    def block(b):
        return {"args": [[v.name, print_type(v.type)] for v in b.args], "ops": [op(o) for o in b.ops]}

    def op(o):
        return {"name": o.name, "results": [[v.name, print_type(v.type)] for v in o.results],
                "operands": [v.name for v in o.operands], "ins": [v.name for v in o.ins],
                "outs": [v.name for v in o.outs], "attrs": {k: print_attr(v) for k, v in o.attrs.items()},
                "regions": [block(r) for r in o.regions]}

    return json.dumps({"attrs": {k: print_attr(v) for k, v in m.attrs.items()},
                       "funcs": [{"name": f.name, "args": [[a.name, print_type(a.type)] for a in f.args],
                                  "attrs": {k: print_attr(v) for k, v in f.attrs.items()}, "body": block(f.body)}
                                 for f in m.funcs]})


def best_ms(fn, repeat: int) -> float:
    number = 5
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    text = program_text(args.lines)
    module = parse_module(text)
    doc = as_json(module)
    lines = text.count("\n")
    ops = sum(1 for f in module.funcs for _ in _walk(f.body))
    print(f"program: {lines} lines, {len(text)} chars, {len(module.funcs)} functions, {ops} ops, "
          f"{sum(len(TOKEN.findall(x)) for x in text.split(chr(10)))} tokens")

    findall = TOKEN.findall
    rows = [
        ("tokenize", lambda: [findall(x) for x in text.split("\n")]),
        ("parse", lambda: parse_module(text)),
        ("parse, no verify", lambda: parse_module(text, verify=False)),
        ("print", lambda: print_module(module)),
        ("verify", lambda: module_issues(module)),
        ("equivalent", lambda: equivalent(module, module)),
        ("peer: json.loads", lambda: json.loads(doc)),
        ("peer: json.dumps", lambda: as_json(module)),
    ]
    times = {name: best_ms(fn, args.repeat) for name, fn in rows}
    for name, ms in times.items():
        print(f"  {name:18s} {ms:8.2f} ms   {lines / ms:8.1f} klines/s")
    print("ratios:")
    print(f"  parse / json.loads     {times['parse'] / times['peer: json.loads']:6.1f}x")
    print(f"  print / json.dumps     {times['print'] / times['peer: json.dumps']:6.1f}x")
    print(f"  parse / tokenize       {times['parse'] / times['tokenize']:6.1f}x")
    print(f"  ms per 1,000 lines: parse {times['parse'] * 1000 / lines:.2f}, print {times['print'] * 1000 / lines:.2f}")


def _walk(block):
    for op in block.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)


if __name__ == "__main__":
    main()
