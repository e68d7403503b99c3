"""Which resources of kernel instructions overlap (`Buffer.overlaps`, `TensorRegion.overlaps`),
found without comparing every pair: buffers grouped by MemRef and swept by address, tensor windows
grouped by tensor and swept along dimension 0. InsertSync's conflict sets are built on these.
"""

from __future__ import annotations

from pypto.ir.expr import MemRef

from .pipes import Buffer, TensorRegion


def buffer_pairs(items: list[tuple[int, Buffer]]) -> list[tuple[int, int]]:
    """The pairs of distinct buffers (by MemRef) that overlap (`Buffer.overlaps`): same memory space
    and id, or assigned addresses whose byte ranges intersect."""
    out = []
    spaces: dict[object, dict[int, list[int]]] = {}
    placed: dict[object, list[tuple[int, int, Buffer]]] = {}
    for r, buf in items:
        m = buf.memref
        if not isinstance(m, MemRef):
            continue  # a tile without a MemRef is its own buffer
        spaces.setdefault(m.memory_space, {}).setdefault(m.id, []).append(r)
        if m.addr >= 0:
            placed.setdefault(m.memory_space, []).append((m.addr, r, buf))
    for ids in spaces.values():
        for rs in ids.values():
            out += [(a, b) for x, a in enumerate(rs) for b in rs[x + 1:]]
    for ranges in placed.values():  # by address: a sweep
        ranges.sort(key=lambda t: t[0])
        for x, (lo, a, buf) in enumerate(ranges):
            hi = lo + buf.memref.size
            for lo2, b, other in ranges[x + 1:]:
                if lo2 > hi:
                    break
                if buf.overlaps(other):
                    out.append((a, b))
    return list(dict.fromkeys((a, b) if a < b else (b, a) for a, b in out))


def region_pairs(items: list[tuple[int, TensorRegion]]) -> list[tuple[int, int]]:
    """The pairs of distinct tensor regions that overlap (`TensorRegion.overlaps`)."""
    out = []
    wild = [a for a, r in items if r.tensor is None]
    groups: dict[int, list[tuple[int, TensorRegion]]] = {}
    for a, r in items:
        if r.tensor is not None:
            groups.setdefault(id(r.tensor), []).append((a, r))
    for a in wild:  # a region of an unknown tensor overlaps every region
        out += [(a, b) for b, _ in items if b != a]
    for group in groups.values():
        if len(group) <= 48:
            for x, (a, ra) in enumerate(group):
                out += [(a, b) for b, rb in group[x + 1:] if ra.overlaps(rb)]
            continue
        # many windows of one tensor: the whole-tensor ones (and windows of different ranks) against
        # all, windows of one rank by a sweep over dimension 0
        by_rank: dict[int, list[tuple[int, TensorRegion]]] = {}
        for a, r in group:
            by_rank.setdefault(len(r.window) if r.window else 0, []).append((a, r))
        ranks = sorted(by_rank)
        for x, rank in enumerate(ranks):
            for other in ranks[x + 1:]:
                out += [(a, b) for a, _ in by_rank[rank] for b, _ in by_rank[other]]
        for rank, lst in by_rank.items():
            if rank == 0:
                out += [(a, b) for x, (a, _) in enumerate(lst) for b, _ in lst[x + 1:]]
                continue
            lst.sort(key=lambda t: t[1].window[0][0])
            active: list[tuple[int, TensorRegion]] = []
            for b, rb in lst:
                lo = rb.window[0][0]
                active = [(a, ra) for a, ra in active if ra.window[0][1] > lo]
                out += [(a, b) for a, ra in active if ra.overlaps(rb)]
                active.append((b, rb))
    return list(dict.fromkeys((a, b) if a < b else (b, a) for a, b in out))


__all__ = ["buffer_pairs", "region_pairs"]
