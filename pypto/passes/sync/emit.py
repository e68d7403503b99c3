"""From a plan to statements: event ids for the flags, then the sync calls placed around the
kernel's statements.

Event ids: each flag is live from its set to its wait (a carried one from the set before L to its
wait, and from its set to the wait after L), measured in the pre-order positions of the body; ids
0..7 are allocated per (set pipe, wait pipe) greedily in order of first position and reused once a
flag's wait has passed. A flag that finds all eight ids busy becomes `bar_all()` at its waits (and
pruning runs again over every sync: that barrier may order what other flags did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pypto.ir.enums import PipeType
from pypto.ir.expr import Call
from pypto.ir.function import Function
from pypto.ir.op import create_op_call
from pypto.ir.stmt import EvalStmt, IfStmt, Stmt
from pypto.ir.visitor import rebuild
from pypto.ir.walk import body_stmts, make_body, make_else
from pypto.ops.registry import system_ops

from .model import Path
from .plan import _BAR, _SET, _WAIT, _Plan, _Sync

if TYPE_CHECKING:
    from ..insert_sync import _Kernel

_BARRIER_OP = {PipeType.V: system_ops.bar_v, PipeType.M: system_ops.bar_m, PipeType.ALL: system_ops.bar_all}


@dataclass(frozen=True)
class InsertedSync:
    """One synchronization InsertSync emitted: a flag (`set_pipe` set) with all its set and wait
    statements (including the balancing ones around a loop), or a barrier (`set_pipe` None)."""

    set_pipe: PipeType | None
    wait_pipe: PipeType
    event_id: int | None
    stmts: tuple[Stmt, ...]



# ---------------------------------------------------------------------------------------------
# event ids


def _intervals(k: _Kernel, s: _Sync) -> list[tuple[int, int]]:
    wait = k.pre[s.wait_at]
    if s.set_at is None:
        return [(wait, wait)]
    if s.loop is None:
        return [(k.post[s.set_at], wait)]
    return [(k.pre[s.loop], wait), (k.post[s.set_at], k.post[s.loop])]


def _assign_events(k: _Kernel, plan: _Plan, num_events: int) -> bool:
    """Give each flag one of `num_events` event ids; one that finds none free becomes `bar_all` (then
    True, and `plan` holds the new syncs)."""
    items = []
    for s in plan.syncs:
        if s.sp >= 0:
            mine = _intervals(k, s)
            items.append((mine[0][0], s.idx, s, mine))  # (the first interval starts first)
    items.sort(key=lambda t: (t[0], t[1]))
    busy: dict[tuple[int, int], list[list[tuple[int, int]]]] = {}
    full = []
    for start, _, s, mine in items:
        ids = busy.get((s.sp, s.wp))
        if ids is None:
            ids = busy[(s.sp, s.wp)] = [[] for _ in range(num_events)]
        s.event_id = None
        for e, used in enumerate(ids):
            if used:  # flags are taken by first position: what ended before this one starts is free
                used[:] = [u for u in used if u[1] >= start]
            if not used or not any(a <= d and c <= b for a, b in mine for c, d in used):
                used += mine
                s.event_id = e
                break
        else:
            full.append(s)
    if not full:
        return False
    syncs = [s for s in plan.syncs if s.sp < 0 or s.event_id is not None]
    for s in full:  # all ids busy: a full barrier where it waited
        syncs.append(_Sync(s.idx, -1, -1, None, PipeType.ALL, s.wait_at, triggers=s.triggers))
        if s.loop is not None:
            syncs.append(_Sync(s.idx, -1, -1, None, PipeType.ALL, s.loop, at_post=True, triggers=s.triggers))
    plan.__init__(k, syncs)  # type: ignore[misc]
    return True


# ---------------------------------------------------------------------------------------------
# emission


_NAMES = {_SET: system_ops.sync_src, _WAIT: system_ops.sync_dst}
_CALLS: dict[tuple, Call] = {}


def _template(kind: int, s: _Sync) -> Call:
    """A call of the op a sync statement makes (its span to be replaced)."""
    if kind == _BAR:
        key: tuple = (_BARRIER_OP[s.wait_pipe],)
    else:
        key = (_NAMES[kind], s.set_pipe, s.wait_pipe, s.event_id)
    tmpl = _CALLS.get(key)
    if tmpl is None:
        kw = {} if kind == _BAR else {"set_pipe": s.set_pipe, "wait_pipe": s.wait_pipe, "event_id": s.event_id}
        tmpl = _CALLS[key] = create_op_call(key[0], [], kw)
    return tmpl


def _emit(k: _Kernel, plan: _Plan, report: bool = True) -> tuple[Function, list[InsertedSync]]:
    made: dict[int, list[Stmt]] = {s.idx: [] for s in plan.syncs} if report else {}  # sync idx -> statements
    pre: dict[Path, list[Stmt]] = {}
    post: dict[Path, list[Stmt]] = {}
    templates: dict[tuple, Call] = {}
    stmts, at = k.stmts, plan.at
    before_stmt = {pos: p for p, pos in k.pre.items()}  # position -> the statement it is right before
    after_stmt = {pos: p for p, pos in k.post.items()}  # ... or right after
    for pos in sorted(at):
        p = before_stmt.get(pos)
        after = p is None
        if after:
            p = after_stmt[pos]
        span = stmts[p].span
        out = []
        for op in at[pos]:
            s, kind = op.sync, op.kind
            idx = s.idx
            key = (kind, s.sp, s.wp, s.event_id)
            tmpl = templates.get(key)
            if tmpl is None:
                tmpl = templates[key] = _template(kind, s)
            stmt = EvalStmt(Call(tmpl.op, (), tmpl.kwargs, tmpl.type, span=span), span=span)
            if report:
                made[idx].append(stmt)
            out.append(stmt)
        (post if after else pre)[p] = out
    dirty = set()  # the compound statements with a sync inside
    for p in (*pre, *post):
        for j in range(1, len(p), 2):
            dirty.add(p[:j])

    def block(stmts: list[Stmt], prefix: Path) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            p = prefix + (i,)
            got = pre.get(p)
            if got:
                out += got
            out.append(rebuild_stmt(s, p) if p in dirty else s)
            got = post.get(p)
            if got:
                out += got
        return out

    def rebuild_stmt(s: Stmt, p: Path) -> Stmt:
        if isinstance(s, IfStmt):
            bodies = [("then", "then_body", s.then_body), ("else", "else_body", s.else_body)]
        else:
            bodies = [("body", "body", s.body)]  # type: ignore[attr-defined]
        changes = {}
        for key, field_name, body in bodies:
            old = body_stmts(body)
            new = block(old, p + (key,))
            if len(new) != len(old) or any(x is not y for x, y in zip(new, old)):
                changes[field_name] = make_else(new) if key == "else" else make_body(new)
        return rebuild(s, changes) if changes else s  # type: ignore[return-value]

    body = make_body(block(k.body, ()), span=getattr(k.fn.body, "span", None))
    fn = rebuild(k.fn, {"body": body})
    if not report:
        return fn, []  # type: ignore[return-value]
    first = {s.idx: s for s in sorted(plan.syncs, key=lambda s: s.at_post, reverse=True)}  # a flag's barriers: one
    done = [InsertedSync(s.set_pipe, s.wait_pipe, s.event_id, tuple(made[i])) for i, s in sorted(first.items())]
    return fn, done  # type: ignore[return-value]


__all__ = ["InsertedSync"]
