"""`pl.FunctionType.Group`: a cube (AIC) and a vector (AIV) function that run at the same time and hand
each other tiles through pipes (pl-head §2.5 (c), §3.8; docs/cross_core.md).

The Group's body calls its two functions (`self.cube(...)`, `self.vector(...)`, in any order) and
returns. `check_groups` validates that at parse time; `lower_groups` (the LowerGroupFunctions pass,
on SSA IR) makes a Group call one task whose blocks run at once (a `sync` spmd grid, as
`pl.spmd(n, sync_start=True)` makes):

- the Group becomes one InCore kernel: block 0 runs the cube function, blocks 1.. the vector
  function (`if get_block_idx() == 0: <cube call> else: <vector call>`); the two functions become
  Opaque and are spliced in by InlineFunctions;
- each call of the Group submits that kernel as a grid of 1 + lanes blocks.

Which function is the cube one is read from its pipe ops (`tpush_to_aiv` / `tpop_from_aiv` run on
the cube; `tpush_to_aic` / `tpop_from_aic` on the vector side). The vector side runs as two lanes
when its function asks for its lane (`pl.tile.get_subblock_idx()`, then lane = block - 1): it is
written per lane, on half tiles. Otherwise it runs once: on the device the second lane of a
lane-uniform function either replays with empty tiles (no-split dual dispatch) or is the
compiler's split, and one run computes the same numbers; its pipes then carry whole tiles.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import expr as E
from .diagnostics import LocatedError
from .dtype import DataType
from .enums import FunctionType, ParamDirection
from .function import Function
from .op import create_op_call
from .span import Span
from .stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
    stmt_list,
)
from .structural import structural_equal
from .task_ops import task_call
from .visitor import IRMutator
from .walk import expr_nodes, stmt_exprs, walk_stmts

CUBE_SIDE = frozenset({"block.tpush_to_aiv", "block.tpop_from_aiv"})  # the pipe ops only the cube runs
VECTOR_SIDE = frozenset({"block.tpush_to_aic", "block.tpop_from_aic"})


class GroupError(LocatedError):
    """A malformed Group (`kind`: "syntax" or "type", how the parser reports it)."""

    def __init__(self, kind: str, message: str, span: Span | None = None):
        self.kind = kind
        super().__init__(message, span)


@dataclass
class _Plan:
    cube: tuple[Stmt, Function]
    vector: tuple[Stmt, Function]
    ret: ReturnStmt | None
    lanes: int


def _ops_of(fn: Function) -> set[str]:
    return {n.op.name for s in walk_stmts(fn) for e in stmt_exprs(s) for n in expr_nodes(e) if isinstance(n, E.Call)}


def _call_of(s: Stmt) -> E.Call | None:
    v = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
    return v if isinstance(v, E.Call) and isinstance(v.op, E.GlobalVar) else None


def _role(fn: Function) -> str | None:
    ops = _ops_of(fn)
    cube, vec = bool(ops & CUBE_SIDE), bool(ops & VECTOR_SIDE)
    if cube and vec:
        raise GroupError("type", f"function {fn.name} uses pipe ops of both the cube side (tpush_to_aiv / "
                         "tpop_from_aiv) and the vector side (tpush_to_aic / tpop_from_aic)", fn.span)
    return "cube" if cube else "vector" if vec else None


def _plan(g: Function, fns: dict[str, Function]) -> _Plan:
    stmts = stmt_list(g.body)
    ret = stmts.pop() if stmts and isinstance(stmts[-1], ReturnStmt) else None
    calls: list[tuple[Stmt, Function]] = []
    for s in stmts:
        c = _call_of(s)
        f = fns.get(c.op.name) if c is not None else None
        if f is None or f.func_type is not FunctionType.InCore:
            raise GroupError("syntax", f"Group function {g.name}: the body calls its AIC and AIV functions "
                             "(`self.cube(...)`, `self.vector(...)`) and returns; nothing else", s.span)
        calls.append((s, f))
    if len(calls) != 2 or calls[0][1] is calls[1][1]:
        raise GroupError("syntax", f"Group function {g.name} calls {len(calls)} function(s): it calls one AIC and "
                         "one AIV function", g.span)
    roles = [_role(f) for _, f in calls]
    if roles[0] is None and roles[1] is None:
        raise GroupError("type", f"Group function {g.name}: neither {calls[0][1].name} nor {calls[1][1].name} uses "
                         "a pipe op, so which is the cube (AIC) function is unknown", g.span)
    if roles[0] == roles[1]:
        raise GroupError("type", f"Group function {g.name}: {calls[0][1].name} and {calls[1][1].name} are both "
                         f"{roles[0]}-side functions (by their pipe ops)", g.span)
    cube, vec = calls if roles[0] == "cube" or roles[1] == "vector" else calls[::-1]
    lanes = 2 if "block.get_subblock_idx" in _ops_of(vec[1]) else 1
    for s, _ in calls:  # a returned value one role defines is the Group's output on the other role's blocks
        if isinstance(s, AssignStmt) and ret is not None and any(v is s.var for v in ret.values):
            _out_param(g, s)
    return _Plan(cube, vec, ret, lanes)


def _out_param(g: Function, s: AssignStmt) -> E.Var:
    outs = [p for p, d in zip(g.params, g.param_directions)
            if d is not ParamDirection.In and structural_equal(p.type, s.var.type)]
    if not outs:
        raise GroupError("type", f"Group function {g.name} returns {s.var.name}, which matches none of its Out / "
                         "InOut parameters", s.span)
    return outs[0]


def check_groups(functions: dict[str, Function]) -> None:
    """Parse-time checks: each Group is well formed and called (raises GroupError)."""
    groups = [f for f in functions.values() if f.func_type is FunctionType.Group]
    if not groups:
        return
    called = {n.op.name for f in functions.values() for s in walk_stmts(f) for e in stmt_exprs(s)
              for n in expr_nodes(e) if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar)}
    for g in groups:
        _plan(g, functions)
        if g.name not in called:
            raise GroupError("syntax", f"Group function {g.name} is never called: a Group runs as one task of the "
                             f"program's Orchestration function (`r = self.{g.name}(...)` in it)", g.span)


def _lane_stmts(s: Stmt | None) -> Stmt | None:
    """`x = get_subblock_idx()` in a vector function of a Group: the lane is the block index - 1 (kept in
    three-address form: the block index gets a variable of its own)."""
    if s is None:
        return None
    if isinstance(s, SeqStmts):
        return SeqStmts(tuple(_lane_stmts(x) for x in s.stmts), span=s.span)
    if isinstance(s, AssignStmt) and isinstance(s.value, E.Call) and isinstance(s.value.op, E.Op) \
            and s.value.op.name == "block.get_subblock_idx":
        sp = s.span
        idx = create_op_call("block.get_block_idx", [], {}, sp)
        blk = E.Var(f"{s.var.name}_block", idx.type, span=sp)
        dt = idx.type.dtype
        return SeqStmts((AssignStmt(blk, idx, span=sp),
                         AssignStmt(s.var, E.Sub(blk, E.ConstInt(1, dt, span=sp), dt, span=sp), span=sp)), span=sp)
    if isinstance(s, IfStmt):
        return replace(s, then_body=_lane_stmts(s.then_body), else_body=_lane_stmts(s.else_body))
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return replace(s, body=_lane_stmts(s.body))
    return s


class _Lane(IRMutator):
    """Any other use of `get_subblock_idx()` (inside an expression): block index - 1 in place."""

    def visit_Call(self, c):
        c = self.generic_visit(c)
        if isinstance(c.op, E.Op) and c.op.name == "block.get_subblock_idx":
            idx = create_op_call("block.get_block_idx", [], {}, c.span)
            dt = idx.type.dtype
            return E.Sub(idx, E.ConstInt(1, dt, span=c.span), dt, span=c.span)
        return c


def _lower(g: Function, fns: dict[str, Function]) -> tuple[Function, list[Function], int]:
    p = _plan(g, fns)
    (cube_s, cube_f), (vec_s, vec_f) = p.cube, p.vector
    new_vec = replace(vec_f, body=_Lane().visit(_lane_stmts(vec_f.body)), func_type=FunctionType.Opaque)
    new_cube = replace(cube_f, func_type=FunctionType.Opaque)
    sp = g.span
    then_b: list[Stmt] = [cube_s]
    else_b: list[Stmt] = [vec_s]
    ret = p.ret
    if ret is not None:
        # (SSA) a returned value one role defines leaves the branch as an if-result; on the other
        # role's blocks it is the Group's output parameter (both name the same buffer)
        t_vals, e_vals, rvars, values = [], [], [], list(ret.values)
        for s, mine, other in ((cube_s, t_vals, e_vals), (vec_s, e_vals, t_vals)):
            if not isinstance(s, AssignStmt):
                continue
            for k, v in enumerate(values):
                if v is s.var:
                    mine.append(s.var)
                    other.append(_out_param(g, s))
                    rv = E.Var(s.var.name, s.var.type, span=s.var.span)
                    rvars.append(rv)
                    values[k] = rv
        if rvars:
            then_b.append(YieldStmt(tuple(t_vals), span=sp))
            else_b.append(YieldStmt(tuple(e_vals), span=sp))
            ret = ReturnStmt(tuple(values), span=ret.span)
    idx = create_op_call("block.get_block_idx", [], {}, sp)
    role = E.Var("group_role", idx.type, span=sp)
    dt = idx.type.dtype
    cond = E.Eq(role, E.ConstInt(0, dt, span=sp), DataType.BOOL, span=sp)
    body: list[Stmt] = [AssignStmt(role, idx, span=sp),
                        IfStmt(cond, seq(then_b, sp), seq(else_b, sp), tuple(rvars) if ret is not None else (),
                               span=sp)]
    if ret is not None:
        body.append(ret)
    return replace(g, body=seq(body, sp), func_type=FunctionType.InCore), [new_cube, new_vec], 1 + p.lanes


def _wrap(s: Stmt | None, blocks: dict[str, int]) -> Stmt | None:
    """Each Group call: one task of `blocks[name]` blocks that run at once."""
    if s is None:
        return None
    if isinstance(s, SeqStmts):
        out: list[Stmt] = []
        for x in s.stmts:
            c = _call_of(x)
            if c is not None and c.op.name in blocks:
                if out and isinstance(out[-1], EvalStmt) and isinstance(out[-1].expr, E.Call) \
                        and out[-1].expr.op.name == "task.begin":
                    raise GroupError("syntax", f"a call of Group function {c.op.name} is its own task; it cannot be "
                                     "the body of pl.spmd / pl.at(deps=...)", x.span)
                out += _task(x, blocks[c.op.name])
            else:
                out.append(_wrap(x, blocks))
        return SeqStmts(tuple(out), span=s.span)
    c = _call_of(s)
    if c is not None and c.op.name in blocks:
        return SeqStmts(tuple(_task(s, blocks[c.op.name])), span=s.span)
    if isinstance(s, IfStmt):
        return replace(s, then_body=_wrap(s.then_body, blocks), else_body=_wrap(s.else_body, blocks))
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return replace(s, body=_wrap(s.body, blocks))
    return s


def _task(s: Stmt, n: int) -> list[Stmt]:
    sp = s.span
    core = E.ConstInt(n, DataType.INDEX, span=sp)
    empty = E.MakeTuple((), span=sp)
    begin = task_call("task.begin", [empty, empty, E.MakeTuple((core,), span=sp), empty], sp, sync=True)
    end = task_call("task.end", span=sp)
    return [EvalStmt(begin, span=sp), s, AssignStmt(E.Var("_tid", end.type, span=sp), end, span=sp)]


def lower_groups(functions: dict[str, Function]) -> dict[str, Function]:
    """Each Group -> one two-role InCore kernel; each call of it -> one task of 1 + lanes blocks."""
    groups = [f for f in functions.values() if f.func_type is FunctionType.Group]
    if not groups:
        return functions
    out = dict(functions)
    blocks: dict[str, int] = {}
    for g in groups:
        new_g, callees, n = _lower(g, functions)
        out[g.name] = new_g
        for f in callees:
            out[f.name] = f
        blocks[g.name] = n
    for name, f in list(out.items()):
        if f.body is not None and name not in blocks:
            out[name] = replace(f, body=_wrap(f.body, blocks))
    return out


__all__ = ["CUBE_SIDE", "VECTOR_SIDE", "GroupError", "check_groups", "lower_groups"]
