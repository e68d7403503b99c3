"""Fusing runs of elementwise tile instructions into one loop (the CPU assembler's main optimization).

Consecutive elementwise instructions whose destinations cover the same valid region are emitted as
one `pto::vloop` over that region: each element is loaded once, flows through the chain in
registers, and every destination tile is still written (later instructions or other code may read
it), so the result is the same as running the instructions one by one — each intermediate is rounded
through its tile's dtype (`op::Round<T>`) exactly as storing and reloading would. What the fusion
saves is the passes over memory: a chain of k instructions over a tile reads and writes it once
instead of k times (a destination the run itself rewrites later is not stored at all).

A run is broken by anything that could make the loop differ from the instruction sequence: a
different valid region or tile shape, a compute type other than fp32 (f32/f16/bf16 tiles), or a tile
that partially overlaps another one of the run (exact aliasing is fine: it is the same element in the
same iteration), and a broadcast operand overlapping any destination of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.pto.model import Op, PartitionViewT, ScalarT, TileBufT, Value

from .emit_common import cpp_type, elem_bytes
from .lowering import Form, Functor, lowering

_FLOATS = {"f32", "f16", "bf16"}
TRANSPARENT = {"arith.constant", "pto.alloc_tile", "pto.set_flag", "pto.wait_flag", "pto.pipe_barrier",
               "pto.partition_view", "pto.make_tensor_view"}


def short(op: Op) -> str:
    return op.name.split(".", 1)[1]


def _window_ok(v: Value) -> bool:
    t = v.type
    return isinstance(t, PartitionViewT) and 1 <= len(t.shape) <= 2 and t.elem in _FLOATS


def fusable(op: Op) -> bool:
    """Can the instruction join a fused loop? (Its lowering row says so; see lowering.py.)"""
    n = short(op)
    row = lowering(n)
    if row is None or not row.fusable:
        return False
    if n == "tload":  # the loop reads the window itself (the tile is still written)
        ok = len(op.ins) == 1 and _window_ok(op.ins[0]) and not op.attrs.get("transpose")
        return ok and len(op.outs) == 1 and _tile_ok(op.outs[0].type)
    if n == "tstore":  # the loop writes the window itself
        return len(op.ins) == 1 and _tile_ok(op.ins[0].type) and len(op.outs) == 1 and _window_ok(op.outs[0])
    if n == "tmov" and op.attrs.get("transpose"):
        return False
    if len(op.outs) != 1 or not isinstance(op.outs[0].type, TileBufT):
        return False
    if _form(op) is Form.ROW_EXPAND and len(op.ins) > 1 and getattr(op.ins[1].type, "cols", 1) != 1:
        return False  # a packed row carrier (its lanes repeat along the row): its own loop, elementwise.hpp
    tiles = [v.type for v in (*op.ins, op.outs[0]) if isinstance(v.type, TileBufT)]
    return all(_tile_ok(t) for t in tiles)


def _form(op: Op) -> Form | None:
    row = lowering(short(op))
    return row.form if isinstance(row, Functor) else None


def _tile_ok(t) -> bool:
    return isinstance(t, TileBufT) and t.loc in ("vec", "mat", "acc") and t.dtype in _FLOATS


def dst_tile(op: Op) -> Value | None:
    """The tile an instruction of a run writes (a store writes a window, not a tile)."""
    return None if short(op) == "tstore" else op.outs[0]


def key_tile(op: Op) -> Value:
    """The tile whose valid region is the instruction's iteration space."""
    return op.ins[0] if short(op) == "tstore" else op.outs[0]


@dataclass
class Region:
    """A tile's bytes inside the scratch arena (space base + address)."""

    lo: int
    hi: int
    shape: tuple[int, int]


@dataclass
class Group:
    ops: list[Op] = field(default_factory=list)
    hoisted: list[Op] = field(default_factory=list)  # constants, allocations, syncs met inside the run


class Fuser:
    """Decides runs and writes their C++ (used by KernelEmitter)."""

    def __init__(self, emitter):
        self.em = emitter
        self.addr: dict[int, Region] = {}

    # ---- regions -----------------------------------------------------------------------------

    def note_alloc(self, op: Op, base: int, addr_value: int | None) -> None:
        t = op.result.type
        assert isinstance(t, TileBufT)
        if addr_value is None:
            return
        lo = base + addr_value
        self.addr[id(op.result)] = Region(lo, lo + t.rows * t.cols * elem_bytes(t.dtype), (t.rows, t.cols))

    def region(self, v: Value) -> Region | None:
        return self.addr.get(id(v))

    # ---- grouping ----------------------------------------------------------------------------

    def valid_key(self, t: TileBufT, dst: Value) -> tuple:
        return (t.rows, t.cols, t.v_row, t.v_col, self.em.valid_names.get(id(dst)))

    def collect(self, ops: list[Op], start: int) -> tuple[Group, int]:
        """The longest fusable run starting at ops[start] (at least one op)."""
        g = Group([ops[start]])
        first = key_tile(ops[start])
        key = self.valid_key(first.type, first)
        i = start + 1
        pending: list[Op] = []
        while i < len(ops):
            op = ops[i]
            if op.name in TRANSPARENT or op.name.startswith("arith."):  # no tile data: can go before the loop
                if op.name == "pto.alloc_tile":
                    self.em.note_tile(op)
                elif op.name == "arith.constant":
                    self.em.consts[id(op.result)] = op.attrs["value"]
                pending.append(op)
                i += 1
                continue
            if not fusable(op) or not self.compatible(g, op, key):
                break
            g.hoisted += pending
            pending = []
            g.ops.append(op)
            i += 1
        # transparent ops after the last fused op are not part of the run
        return g, i - len(pending)

    def compatible(self, g: Group, op: Op, key: tuple) -> bool:
        kt = key_tile(op)
        if self.valid_key(kt.type, kt) != key:
            return False
        dregs = [self.region(d) for d in (dst_tile(o) for o in g.ops) if d is not None]
        if any(r is None for r in dregs):
            return False
        for src, bc in self.sources(op, kt.type):
            sr = self.region(src)
            if sr is None:
                return False
            for dr in dregs:
                if _overlap(sr, dr) and (bc != "Full" or sr != dr):
                    return False
        dst = dst_tile(op)
        if dst is None:
            return True
        nr = self.region(dst)
        if nr is None:
            return False
        # the new destination must not clobber broadcast sources, nor partially overlap any operand
        if any(_overlap(dr, nr) and dr != nr for dr in dregs):
            return False  # two destinations sharing some bytes: the store order would differ
        for o in g.ops:
            for src, bc in self.sources(o, key_tile(o).type):
                sr = self.region(src)
                if sr is not None and _overlap(sr, nr) and (bc != "Full" or sr != nr):
                    return False
        return True

    def sources(self, op: Op, dt: TileBufT) -> list[tuple[Value, str]]:
        """(tile operand, broadcast kind) for each tile operand of `op`."""
        n = short(op)
        if n == "tload":
            return []
        if n == "tstore":
            return [(op.ins[0], "Full")]
        out = []
        for k, v in enumerate(op.ins):
            t = v.type
            if not isinstance(t, TileBufT):
                continue
            form = _form(op)
            if form is Form.ROW_EXPAND and k == 1 or n == "trowexpand":
                bc = "ColBcast"
            elif form is Form.COL_EXPAND and k == 1 or n == "tcolexpand":
                bc = "RowBcast"
            elif (t.rows, t.cols) == (dt.rows, dt.cols):
                bc = "Full"
            elif t.rows == 1 and t.cols == 1:
                bc = "Splat"
            elif t.cols == 1:
                bc = "ColBcast"
            elif t.rows == 1:
                bc = "RowBcast"
            else:
                bc = "Full"
            out.append((v, bc))
        return out

    # ---- emission ----------------------------------------------------------------------------

    def emit(self, g: Group) -> None:
        em = self.em
        for op in g.hoisted:
            em.op(op)
        if all(short(o) in ("tload", "tstore") for o in g.ops):  # nothing to compute: plain copies are faster
            for op in g.ops:
                em.op(op)
            return
        loads = [o for o in g.ops if short(o) == "tload"]
        stores = [o for o in g.ops if short(o) == "tstore"]
        for o in loads + stores:  # the fused loop touches the windows directly: bounds first
            em.window_check(o)
        rest = [o for o in g.ops if short(o) != "tstore"]
        if stores and rest and self.stores_last(g):
            # a large store streams (TSTORE): compute fused into the tiles, then store; small ones
            # are written from the fused loop
            cond = " || ".join(f"pto::would_stream({em.name(st.outs[0])}, {em.name(st.ins[0])}.vr, "
                               f"{em.name(st.ins[0])}.vc)" for st in stores)
            em.line(f"if ({cond}) {{")
            em.depth += 1
            self.emit(Group(rest))
            for op in stores:
                em.op(op)
            em.depth -= 1
            em.line("} else {")
            em.depth += 1
            self.guarded(g, loads, stores)
            em.depth -= 1
            em.line("}")
        else:
            self.guarded(g, loads, stores)

    def stores_last(self, g: Group) -> bool:
        """Can the run's stores move after it? Yes when no later instruction of the run rewrites
        a stored tile (the store must see the value the tile had at the store)."""
        for k, op in enumerate(g.ops):
            if short(op) != "tstore":
                continue
            r = self.region(op.ins[0])
            for later in g.ops[k + 1:]:
                d = dst_tile(later)
                if d is not None and (r is None or _overlap(self.region(d) or r, r)):
                    return False
        return True

    def guarded(self, g: Group, loads: list[Op], stores: list[Op]) -> None:
        em = self.em
        k0 = key_tile(g.ops[0])
        k0n = em.name(k0)
        guard = [f"glue::fusable_windows({em.name(ld.ins[0])}, {em.name(st.outs[0])}, {k0n}.vr, {k0n}.vc)"
                 for ld in loads for st in stores]
        if guard:  # a load and a store of the same run touching the same bytes: fuse only if same window
            em.line(f"if ({' && '.join(guard)}) {{")
            em.depth += 1
            self.loop(g)
            em.depth -= 1
            em.line("} else {")
            em.depth += 1
            for op in g.ops:
                em.op(op)
            em.depth -= 1
            em.line("}")
        else:
            self.loop(g)

    def loop(self, g: Group) -> None:
        em = self.em
        d0 = key_tile(g.ops[0])
        srcs = [(v, bc) for o in g.ops for v, bc in self.sources(o, key_tile(o).type)]
        windows = any(short(o) in ("tload", "tstore") for o in g.ops)
        flat = all(bc == "Full" for _, bc in srcs) and not windows
        d0n = em.name(d0)
        flat_expr = f"{d0n}.vc == {d0.type.cols}" if flat else "false"  # type: ignore[union-attr]
        em.line(f"// fused: {', '.join(short(o) for o in g.ops)}")
        em.line(f"pto::vloop<float>({d0n}.vr, {d0n}.vc, {flat_expr}, [&](const auto& cur) PTO_INLINE_LAMBDA {{")
        em.depth += 1
        live: list[tuple[Region, str]] = []  # tiles whose current (rounded) value sits in a register
        for k, op in enumerate(g.ops):
            if short(op) == "tstore":
                src = op.ins[0]
                r = self.region(src)
                held = next((name for reg, name in live if reg == r), None)
                em.line(f"glue::gstore({em.name(op.outs[0])}, cur, {held or f'cur.load({em.name(src)})'});")
                continue
            args = []
            for src, bc in self.sources(op, op.outs[0].type):
                r = self.region(src)
                held = next((name for reg, name in live if reg == r), None) if bc == "Full" else None
                if held is not None:
                    args.append(held)
                elif bc == "Full":
                    args.append(f"cur.load({em.name(src)})")
                else:
                    args.append(f"cur.load(pto::{bc}({em.name(src)}))")
            expr = f"glue::gload({em.name(op.ins[0])}, cur)" if short(op) == "tload" else self.functor(op, args)
            dst = op.outs[0]
            dt = dst.type
            assert isinstance(dt, TileBufT)
            v = f"f{k}"
            em.line(f"const auto {v} = {expr};")
            later = [dst_tile(o) for o in g.ops[k + 1:]]
            if not any(d is not None and self.region(d) == self.region(dst) for d in later):
                em.line(f"cur.store({em.name(dst)}, {v});")  # (unless a later op of the run rewrites it)
            if dt.dtype != "f32" and short(op) != "tload":  # a load's value is exact in its dtype already
                em.line(f"const auto r{k} = pto::op::Round<{cpp_type(dt.dtype)}>{{}}({v});")
                v = f"r{k}"
            reg = self.region(dst)
            assert reg is not None
            live = [(r, n) for r, n in live if not _overlap(r, reg)] + [(reg, v)]
        em.depth -= 1
        em.line("});")

    def functor(self, op: Op, args: list[str]) -> str:
        n = short(op)
        em = self.em
        row = lowering(n)
        if isinstance(row, Functor):
            if row.form is Form.SCALAR:
                s = next(v for v in op.ins if isinstance(v.type, ScalarT))
                return f"pto::op::{row.functor}<float>{{pto::scalar_to<float>({em.ref(s)})}}({args[0]})"
            return f"pto::op::{row.functor}{{}}({', '.join(args)})"
        if n in ("trowexpand", "tcolexpand", "tmov"):
            return args[0]
        if n == "texpands":
            return (f"pto::simd::splat<typename std::decay_t<decltype(cur)>::V>(pto::scalar_to<float>("
                    f"{em.ref(op.ins[0])}))")
        raise AssertionError(f"pto.{n} is marked fusable but the fuser has no code for it")


def _overlap(a: Region, b: Region) -> bool:
    return a.lo < b.hi and b.lo < a.hi


__all__ = ["Fuser", "Group", "fusable"]
