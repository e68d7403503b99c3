"""The memory report: where every tile of every kernel lives, written after AllocateMemoryAddr.

`memory_report(program, target)` returns a JSON-serializable dict; AllocateMemoryAddr stores it in
`ctx.reports["memory"]` and, when `ctx.output_dir` is set, writes it to `report/memory.json`. A
memory-map view plots it: statement indices across, addresses up.

Schema (version 1)::

    {
      "version": 1,
      "target": "Ascend910B",            # Target.name
      "alignment": 32,                   # Target.alloc_alignment: every addr is a multiple of it
      "kernels": [                       # InCore functions, in program order (sorted by name)
        {
          "function": "kernel_name",
          "source": "file.py:12",        # where the function is defined ("" if unknown)
          "statements": [                # the body in pre-order, alloc statements left out;
            {"index": 0,                 #   lifetimes below are indices into this list
             "kind": "assign",           #   assign | eval | yield | return | for | while | if | break | continue
             "text": "t = block.load(a, ...)",   # one line, shortened to 120 characters
             "line": 12}                 #   source line, 0 if unknown
          ],
          "spaces": [                    # on-chip spaces the kernel uses, in MemorySpace order
            {
              "space": "Vec",
              "capacity": 196608,        # Target.capacity(space), bytes per core
              "used": 32768,             # end of the last buffer (what the layout needs)
              "peak_live": 32768,        # most bytes of buffers live at one statement
              "peak_at": 3,              # first statement index where peak_live is reached (-1: none)
              "fits": true,              # used <= capacity
              "buffers": [               # by id
                {
                  "id": 0, "name": "mem_vec_0",
                  "addr": 0, "size": 16384, "end": 16384,      # [addr, end) in bytes
                  "lifetime": {"start": 0, "end": 5,           # first/last statement index
                               "intervals": [[0, 2], [4, 5]]}, # merged lifetimes of its tiles
                  "tiles": [             # tile variables mapped to this buffer, by definition
                    {"name": "t", "shape": [64, 64], "dtype": "FP32", "bytes": 16384,
                     "lifetime": [0, 2],                       # [defined at, last used at]
                     "source": "file.py:13", "line": 13}
                  ]
                }
              ]
            }
          ]
        }
      ]
    }

A tile's lifetime runs from its definition (an iter_arg: its loop's header; a return var: the last
statement inside its loop or if) to its last use, extended to the last statement of any loop that
uses it without defining it (tile_liveness.linear_lifetimes).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import MemRef, Var
from pypto.ir.function import Function, Program
from pypto.ir.printer import expr_str
from pypto.ir.span import Span
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    stmt_list,
)
from pypto.ir.types import TileType
from pypto.ir.variables import is_alloc
from pypto.target import Target

from .tile_liveness import LinearLifetimes, linear_lifetimes

REPORT_VERSION = 1


def memory_report(program: Program, target: Target) -> dict[str, Any]:
    """The report for every kernel of a program (see the module docstring for the schema)."""
    kernels = [kernel_memory(f, target) for f in program.functions if f.func_type is FunctionType.InCore]
    return {"version": REPORT_VERSION, "target": target.name, "alignment": target.alloc_alignment,
            "kernels": kernels}


def write_memory_report(report: dict[str, Any], output_dir: str | Path) -> Path:
    """Write `report/memory.json` under `output_dir` atomically; returns its path."""
    from pypto.support.files import atomic_write, make_dirs

    path = make_dirs(Path(output_dir) / "report") / "memory.json"
    atomic_write(path, json.dumps(report, indent=1) + "\n")
    return path


def source_of(span: Span | None) -> tuple[str, int]:
    """("file.py:12", 12) for a known span, else ("", 0). The file is given by its base name."""
    if span is None or not span.is_known:
        return "", 0
    return f"{_basename(span.filename)}:{span.begin_line}", span.begin_line


@functools.lru_cache(maxsize=256)
def _basename(filename: str) -> str:
    return os.path.basename(filename)


def kernel_memory(fn: Function, target: Target) -> dict[str, Any]:
    """One kernel's entry of the report."""
    lt = linear_lifetimes(fn)
    memrefs = [s.var for s in stmt_list(fn.body) if is_alloc(s)]
    tiles: dict[MemRef, list[Var]] = {m: [] for m in memrefs}
    for v in lt.order:
        m = v.type.memref
        if m is not None:
            tiles.setdefault(m, []).append(v)
    spaces = []
    for space in MemorySpace:
        refs = sorted((m for m in tiles if m.memory_space is space and space is not MemorySpace.DDR),
                      key=lambda m: m.id)
        if refs:
            spaces.append(space_memory(space, refs, tiles, lt, target))
    return {"function": fn.name, "source": source_of(fn.span)[0],
            "statements": [_stmt_entry(i, s) for i, s in enumerate(lt.stmts)], "spaces": spaces}


def tile_bytes(v: Var, target: Target) -> int:
    t = v.type
    assert isinstance(t, TileType)
    shape = t.static_shape() or ()
    return target.tile_bytes(t.space, shape, t.dtype)


def tile_entry(v: Var, lt: LinearLifetimes, target: Target) -> dict[str, Any]:
    t = v.type
    assert isinstance(t, TileType)
    src, line = source_of(v.span if v.span.is_known else getattr(lt.def_stmt.get(v), "span", None))
    return {"name": v.name, "shape": list(t.static_shape() or ()), "dtype": t.dtype.name,
            "bytes": tile_bytes(v, target), "lifetime": list(lt.interval(v)), "source": src, "line": line}


def _merge(intervals: list[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def space_memory(space: MemorySpace, refs: list[MemRef], tiles: dict[MemRef, list[Var]], lt: LinearLifetimes,
                 target: Target) -> dict[str, Any]:
    buffers = []
    live = [0] * len(lt.stmts)
    for m in refs:
        ivs = _merge([lt.interval(v) for v in tiles[m]])
        for a, b in ivs:
            for i in range(a, min(b, len(live) - 1) + 1):
                live[i] += m.size
        buffers.append({
            "id": m.id, "name": m.name, "addr": m.addr, "size": m.size, "end": m.addr + m.size,
            "lifetime": {"start": ivs[0][0] if ivs else -1, "end": ivs[-1][1] if ivs else -1, "intervals": ivs},
            "tiles": [tile_entry(v, lt, target) for v in tiles[m]],
        })
    used = max((m.addr + m.size for m in refs), default=0) if all(m.addr >= 0 for m in refs) \
        else sum(m.size for m in refs)
    peak = max(live, default=0)
    cap = target.capacity(space) if target.has_space(space) else 0
    return {"space": space.name, "capacity": cap, "used": used, "peak_live": peak,
            "peak_at": live.index(peak) if peak > 0 else -1, "fits": used <= cap, "buffers": buffers}


def largest_live_tiles(space_entry: dict[str, Any], limit: int = 5) -> list[dict[str, Any]]:
    """The biggest tiles live at a space's peak statement, largest first (ties: first defined)."""
    at = space_entry["peak_at"]
    live = [t for b in space_entry["buffers"] for t in b["tiles"] if t["lifetime"][0] <= at <= t["lifetime"][1]]
    return sorted(live, key=lambda t: -t["bytes"])[:limit]


def _stmt_entry(i: int, s: Stmt) -> dict[str, Any]:
    kind, text = _describe(s)
    if len(text) > 120:
        text = text[:117] + "..."
    span = s.span  # the line only (source_of would also format "file:line")
    return {"index": i, "kind": kind, "text": text, "line": span.begin_line if span is not None and span.is_known else 0}


def _describe(s: Stmt) -> tuple[str, str]:
    if isinstance(s, AssignStmt):
        return "assign", f"{s.var.name} = {expr_str(s.value)}"
    if isinstance(s, EvalStmt):
        return "eval", expr_str(s.expr)
    if isinstance(s, YieldStmt):
        return "yield", "yield " + ", ".join(expr_str(v) for v in s.values)
    if isinstance(s, ReturnStmt):
        return "return", "return " + ", ".join(expr_str(v) for v in s.values)
    if isinstance(s, ForStmt):
        carried = ", ".join(a.name for a in s.iter_args)
        head = f"for {s.loop_var.name} in range({expr_str(s.start)}, {expr_str(s.stop)}, {expr_str(s.step)})"
        return "for", head + (f" carrying ({carried})" if carried else "")
    if isinstance(s, WhileStmt):
        return "while", f"while {expr_str(s.condition)}"
    if isinstance(s, IfStmt):
        return "if", f"if {expr_str(s.condition)}"
    if isinstance(s, BreakStmt):
        return "break", "break"
    if isinstance(s, ContinueStmt):
        return "continue", "continue"
    return type(s).__name__.lower(), type(s).__name__


__all__ = ["REPORT_VERSION", "kernel_memory", "largest_live_tiles", "memory_report", "source_of", "tile_entry",
           "write_memory_report"]
