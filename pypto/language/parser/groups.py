"""`@pl.function(type=pl.FunctionType.Group)`: a cube (AIC) and a vector (AIV) function that run at the
same time and hand each other tiles through pipes (pl-head §2.5 (c), §3.8).

The Group's body calls its two functions (`self.cube(...)`, `self.vector(...)`, in any order) and
returns. After parsing, the program is rewritten so that a Group call is one task whose blocks run at
once (a `sync` spmd grid, as `pl.spmd(n, sync_start=True)` makes):

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

from dataclasses import replace

from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.function import Function
from pypto.ir.op import create_op_call
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    seq,
    stmt_list,
)
from pypto.ir.structural import structural_equal
from pypto.ir.task_ops import task_call
from pypto.ir.visitor import IRMutator
from pypto.ir.walk import expr_nodes, stmt_exprs, walk_stmts
from pypto.ops.cross_core import CUBE_SIDE, VECTOR_SIDE
from pypto.ops.registry import block_ops

from ..errors import ParserSyntaxError, ParserTypeError


def _ops_of(fn: Function) -> set:
    return {n.op for s in walk_stmts(fn) for e in stmt_exprs(s) for n in expr_nodes(e) if isinstance(n, E.Call)}


def _call_of(s: Stmt) -> E.Call | None:
    v = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
    return v if isinstance(v, E.Call) and isinstance(v.op, E.GlobalVar) else None


class _Lane(IRMutator):
    """`get_subblock_idx()` in a vector function of a Group: the lane is the block index - 1."""

    def visit_Call(self, c):
        c = self.generic_visit(c)
        if c.op is block_ops.get_subblock_idx:
            idx = create_op_call(block_ops.get_block_idx, [], {}, c.span)
            dt = idx.type.dtype
            return E.Sub(idx, E.ConstInt(1, dt, span=c.span), dt, span=c.span)
        return c


def _role(fn: Function) -> str | None:
    ops = _ops_of(fn)
    cube, vec = bool(ops & CUBE_SIDE), bool(ops & VECTOR_SIDE)
    if cube and vec:
        raise ParserTypeError(f"function {fn.name} uses pipe ops of both the cube side (tpush_to_aiv / "
                              "tpop_from_aiv) and the vector side (tpush_to_aic / tpop_from_aic)", fn.span)
    return "cube" if cube else "vector" if vec else None


def _lower(g: Function, fns: dict[str, Function]) -> tuple[Function, list[Function], int]:
    stmts = stmt_list(g.body)
    ret = stmts.pop() if stmts and isinstance(stmts[-1], ReturnStmt) else None
    calls: list[tuple[Stmt, Function]] = []
    for s in stmts:
        c = _call_of(s)
        f = fns.get(c.op.name) if c is not None else None
        if f is None or f.func_type is not FunctionType.InCore:
            raise ParserSyntaxError(f"Group function {g.name}: the body calls its AIC and AIV functions "
                                    "(`self.cube(...)`, `self.vector(...)`) and returns; nothing else", s.span)
        calls.append((s, f))
    if len(calls) != 2 or calls[0][1] is calls[1][1]:
        raise ParserSyntaxError(f"Group function {g.name} calls {len(calls)} function(s): it calls one AIC and one "
                                "AIV function", g.span)
    roles = [_role(f) for _, f in calls]
    if roles[0] is None and roles[1] is None:
        raise ParserTypeError(f"Group function {g.name}: neither {calls[0][1].name} nor {calls[1][1].name} uses a "
                              "pipe op, so which is the cube (AIC) function is unknown", g.span)
    if roles[0] == roles[1]:
        raise ParserTypeError(f"Group function {g.name}: {calls[0][1].name} and {calls[1][1].name} are both "
                              f"{roles[0]}-side functions (by their pipe ops)", g.span)
    if None in roles:
        known = roles[0] or roles[1]
        roles = [r or ("vector" if known == "cube" else "cube") for r in roles]
    (cube_s, cube_f), (vec_s, vec_f) = calls if roles[0] == "cube" else calls[::-1]
    lanes = 2 if block_ops.get_subblock_idx in _ops_of(vec_f) else 1
    new_vec = replace(vec_f, body=_Lane().visit(vec_f.body), func_type=FunctionType.Opaque)
    new_cube = replace(cube_f, func_type=FunctionType.Opaque)
    then_b, else_b = [cube_s], [vec_s]
    # a returned value one role defines is, on the other role's blocks, the Group's output parameter
    # itself (both name the same buffer)
    for s, other in ((cube_s, else_b), (vec_s, then_b)):
        if isinstance(s, AssignStmt) and ret is not None and any(v is s.var for v in ret.values):
            outs = [p for p, d in zip(g.params, g.param_directions)
                    if d is not ParamDirection.In and structural_equal(p.type, s.var.type)]
            if not outs:
                raise ParserTypeError(f"Group function {g.name} returns {s.var.name}, which matches none of its "
                                      "Out / InOut parameters", s.span)
            other.append(AssignStmt(s.var, outs[0], span=s.span))
    sp = g.span
    role = E.Var("group_role", block_ops.get_block_idx.infer((), {}), span=sp)
    dt = role.type.dtype
    body = [AssignStmt(role, create_op_call(block_ops.get_block_idx, [], {}, sp), span=sp),
            IfStmt(E.Eq(role, E.ConstInt(0, dt, span=sp), DataType.BOOL, span=sp), seq(then_b, sp), seq(else_b, sp),
                   span=sp)]
    if ret is not None:
        body.append(ret)
    return replace(g, body=seq(body, sp), func_type=FunctionType.InCore), [new_cube, new_vec], 1 + lanes


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
                    raise ParserSyntaxError(f"a call of Group function {c.op.name} is its own task; it cannot be "
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
            body = _wrap(f.body, blocks)
            if body is not f.body:
                out[name] = replace(f, body=body)
    called = {n.op.name for f in out.values() for s in walk_stmts(f) for e in stmt_exprs(s) for n in expr_nodes(e)
              if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar)}
    for g in groups:
        if g.name not in called:
            raise ParserSyntaxError(f"Group function {g.name} is never called: a Group runs as one task of the "
                                    f"program's Orchestration function (`r = self.{g.name}(...)` in it)", g.span)
    return out


__all__ = ["lower_groups"]
