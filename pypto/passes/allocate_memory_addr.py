"""AllocateMemoryAddr: every buffer gets its address; capacities are checked; memory report.

Pre (HasMemRefs): kernels whose buffers are already shared as far as lifetimes allow (MemoryReuse)
and whose buffer identity later passes rely on (InsertSync runs before this pass).

Post (AllocatedMemoryAddr), for each kernel and each on-chip memory space:
- its buffers are laid out one after another from address 0 in MemRef-id order, each address
  rounded up to `target.alloc_alignment`; distinct buffers never overlap;
- every alloc statement and every type that mentions a MemRef refers to the updated MemRef object
  (variables, iter_args, return vars, call result types);
- the buffers fit: when a space's end address exceeds `target.capacity(space)`, a `PassError`
  names the kernel, the space, the bytes needed and available, the target and the largest tiles
  live at the peak, and points at the source line of the first tile whose buffer crosses the
  capacity.

The memory report (memory_report.py) is put in `ctx.reports["memory"]` and, when `ctx.output_dir`
is set, written to `report/memory.json` — also when a kernel does not fit, so the map shows why.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import MemRef, Var, make_memref
from pypto.ir.function import Function, Program
from pypto.ir.span import Span
from pypto.ir.stmt import seq, stmt_list
from pypto.ir.variables import is_alloc
from pypto.target import Target

from .analysis.memory_report import largest_live_tiles, memory_report, write_memory_report
from .analysis.tile_liveness import linear_lifetimes
from .base import IRProperty, Pass, PassContext, PassError
from .memrefs import MemRefRewriter, alloc_stmt


def align_up(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment if alignment > 1 else n


class AllocateMemoryAddr(Pass):
    name = "AllocateMemoryAddr"
    requires = frozenset({IRProperty.HasMemRefs})
    produces = frozenset({IRProperty.AllocatedMemoryAddr})

    def run(self, program: Program, ctx: PassContext) -> Program:
        fns = [allocate(f, ctx.target) if f.func_type is FunctionType.InCore else f for f in program.functions]
        out = program if all(a is b for a, b in zip(fns, program.functions)) else program.with_functions(fns)
        report = memory_report(out, ctx.target)
        ctx.reports["memory"] = report
        if ctx.output_dir is not None:
            write_memory_report(report, ctx.output_dir)
        for fn, entry in zip([f for f in out.functions if f.func_type is FunctionType.InCore], report["kernels"]):
            check_capacity(fn, entry, ctx.target)
        return out


def layout(memrefs: list[MemRef], alignment: int) -> dict[MemRef, int]:
    """Address of each on-chip buffer: per space, in id order, from 0, aligned."""
    addr: dict[MemRef, int] = {}
    end: dict[MemorySpace, int] = {}
    for m in sorted(memrefs, key=lambda m: (m.memory_space.value, m.id)):
        if m.memory_space is MemorySpace.DDR:
            continue
        a = align_up(end.get(m.memory_space, 0), alignment)
        addr[m] = a
        end[m.memory_space] = a + m.size
    return addr


def allocate(fn: Function, target: Target) -> Function:
    """The kernel with addresses assigned and every MemRef reference updated."""
    allocs = [s for s in stmt_list(fn.body) if is_alloc(s)]
    memrefs = [s.var for s in allocs]
    addr = layout(memrefs, target.alloc_alignment)  # type: ignore[arg-type]
    rw = MemRefRewriter()
    for m, a in addr.items():
        if m.addr != a:
            rw.var_map[m] = make_memref(m.memory_space, a, m.size, m.id, name=m.name, span=m.span)
    if not rw.var_map:
        return fn
    out = rw.visit(fn)
    body = [alloc_stmt(rw.var_map.get(s.var, s.var), s.span) if is_alloc(s) else s  # type: ignore[arg-type]
            for s in stmt_list(out.body)]
    return dataclasses.replace(out, body=seq(body, span=fn.body.span))


def check_capacity(fn: Function, entry: dict[str, Any], target: Target) -> None:
    """Raise a located PassError for the first space of the kernel that does not fit."""
    for sp in entry["spaces"]:
        if sp["fits"]:
            continue
        space = MemorySpace[sp["space"]]
        cap = sp["capacity"]
        crossing = next((b for b in sp["buffers"] if b["end"] > cap), sp["buffers"][0])
        span = _span_of(fn, _tile_var(fn, crossing))
        if not target.has_space(space):
            raise PassError(f"kernel '{fn.name}' puts tiles in {space.name} memory, which target {target.name} "
                            "does not have", span,
                            hint=f"use one of {', '.join(m.space.name for m in target.memory)}")
        peak = entry["statements"][sp["peak_at"]] if sp["peak_at"] >= 0 else None
        at = f"line {peak['line']}, " if peak is not None and peak["line"] else ""
        lines = [f"largest tiles live where the kernel needs the most {space.name} memory ({at}"
                 f"{sp['peak_live']} bytes live):"]
        for t in largest_live_tiles(sp):
            lines.append(f"{_NOTE_INDENT}{t['name']}: {t['shape']} {t['dtype']}, {t['bytes']} bytes, "
                         f"defined at {t['source'] or 'an unknown line'}")
        where = f" ({crossing['tiles'][0]['name']})" if crossing["tiles"] else ""
        raise PassError(
            f"kernel '{fn.name}' needs {sp['used']} bytes of {space.name} memory but target {target.name} has "
            f"{cap} bytes ({_kib(cap)}); buffer {crossing['name']}{where} at [{crossing['addr']}, {crossing['end']}) "
            "crosses the capacity",
            span, note="\n".join(lines),
            hint="use smaller tiles, or loop over blocks of the data (load, compute and store one block per "
                 "iteration) so that fewer bytes are live at once")


_NOTE_INDENT = " " * 11  # continuation lines line up under "   = note: "


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n / 1024:.1f} KiB"


def _tile_var(fn: Function, buffer: dict[str, Any]) -> Var | None:
    if not buffer["tiles"]:
        return None
    lt = linear_lifetimes(fn)
    for v in lt.order:
        m = v.type.memref
        if m is not None and m.id == buffer["id"] and m.name == buffer["name"]:
            return v
    return None


def _span_of(fn: Function, v: Var | None) -> Span:
    if v is not None and v.span.is_known:
        return v.span
    return fn.span


__all__ = ["AllocateMemoryAddr", "align_up", "allocate", "check_capacity", "layout"]
