"""Tile expansion by `set_vec_tile_shapes` (the Tile graph of reference §2.1, for the common case):
a region write `out[rows, :] = f(x[rows, :], ...)` whose value is a chain of row-local ops becomes one
kernel (`pl.incore` scope) that loops over tiles of the set shape's row count, re-emitting the chain
on each tile (views of the inputs narrowed to the tile's rows, [1, N] operands as they are) and
storing each tile into its rows of the region. Without a tile shape, or where the chain is not
row-local, the pipeline chooses the tiling (passes/tiling.py).

    pypto.set_vec_tile_shapes(1, 4096)
    for i in pypto.loop(0, n // 64):
        y[i * 64:(i + 1) * 64, :] = pypto.layer_norm(x[i * 64:(i + 1) * 64, :], gamma, beta)
    # -> per task: for r in range(0, 64, 1): the layer norm of row r, stored into row r
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import ScopeKind
from pypto.ir.expr import Add, Call, ConstInt, Expr, IterArg, MakeTuple, Var, const_value, scalar_type
from pypto.ir.op import create_op_call
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, ForStmt, ScopeStmt, YieldStmt, seq
from pypto.ir.types import TensorType
from pypto.ir.variables import used_vars
from pypto.ops.registry import tensor_ops as T


def _static(dims: tuple[Expr, ...]) -> list[int] | None:
    out = [const_value(d) for d in dims]
    return None if any(not isinstance(d, int) or isinstance(d, bool) for d in out) else out


def note_region_write(tr: Any, region: Var, value: Var, done: Var, span: Span) -> None:
    """Remember the write `done = assemble(region, value, zeros)` for expansion when its block closes
    (then every use of the values it needs is known)."""
    if tr.vec_tile_shapes is not None:
        tr.blocks[-1].pending.append((region, value, done, tuple(tr.vec_tile_shapes), span))


def expand_block(tr: Any, block: Any, keep: set[Var]) -> None:
    """Expand the block's remembered region writes (see the module docstring) in place."""
    for region, value, done, tiles, span in block.pending:
        _expand(tr, block.stmts, region, value, done, tiles, span, keep)
    block.pending = []


def _expand(tr: Any, block: list, region: Var, value: Var, done: Var, tiles: tuple[int, ...], span: Span,
            keep: set[Var]) -> bool:
    vt = value.type
    if not isinstance(vt, TensorType) or len(tiles) != vt.rank or vt.rank < 2:
        return False
    shape = _static(vt.shape)
    if shape is None or tiles[-1] != shape[-1]:
        return False  # (the last dim stays whole: row reductions run along it)
    dims = [d for d in range(vt.rank - 1) if tiles[d] < shape[d]]  # the tiled dims
    if not dims or any(shape[d] % tiles[d] or tiles[d] > shape[d] for d in range(vt.rank - 1)):
        return False
    defs = {s.var: k for k, s in enumerate(block) if isinstance(s, AssignStmt)}
    at = defs.get(done)
    if at is None:
        return False
    chain = _chain(value, block, defs, shape)
    if chain is None:
        return False
    chain_vars = {block[k].var for k in chain}
    if chain_vars & keep:
        return False
    for k, s in enumerate(block):  # the chain's values must not be needed elsewhere: they move into the kernel
        if k not in chain and k != at and chain_vars & set(used_vars(s)):
            return False

    idx = {d: Var(tr.fresh("r" if d == 0 else f"r{d}"), scalar_type(DataType.INDEX), span=span) for d in dims}
    mapping: dict[Var, Expr] = {}
    body: list = []

    def narrowed(src: Expr, src_shape: tuple[Expr, ...], offs: list[Expr]) -> Any:
        """A view of `src` for this tile: along each tiled dim where `src` spans the whole value,
        `tiles[d]` at offset + the tile index; elsewhere (size 1: a broadcast) as it is."""
        shp, off = list(src_shape), list(offs)
        for d, i in idx.items():
            if const_value(src_shape[d]) == shape[d]:
                shp[d] = ConstInt(tiles[d])
                off[d] = i if const_value(off[d]) == 0 else Add(off[d], i, DataType.INDEX)
        return create_op_call(T.view, [src, MakeTuple(tuple(shp)), MakeTuple(tuple(off))], {}, span=span)

    def tile_of(v: Var) -> Expr:
        if v in mapping:
            return mapping[v]
        t = v.type
        if isinstance(t, TensorType) and t.rank == vt.rank and any(const_value(t.shape[d]) == shape[d] for d in idx):
            view = narrowed(v, t.shape, [ConstInt(0)] * t.rank)
            nv = Var(tr.fresh(f"{v.name}_tile"), view.type, span=span)
            body.append(AssignStmt(nv, view, span=span))
            mapping[v] = nv
            return nv
        return v

    for k in sorted(chain):
        s = block[k]
        c: Call = s.value
        if c.op is T.view:  # a view of an input: narrowed to the tile directly
            new = narrowed(c.args[0], c.type.shape, list(c.args[2].elements))
        else:
            new = create_op_call(c.op, [tile_of(a) if isinstance(a, Var) else a for a in c.args], dict(c.kwargs),
                                 span=s.span)
        nv = Var(tr.fresh(s.var.name), new.type, span=s.span)
        body.append(AssignStmt(nv, new, span=s.span))
        mapping[s.var] = nv
    offsets = MakeTuple(tuple(idx.get(d, ConstInt(0)) for d in range(vt.rank)))
    order = sorted(idx)

    def nest(level: int, entering: Expr) -> tuple[ForStmt, Var]:
        """The loop over tiled dim `order[level]` (and those inside it), carrying the region."""
        acc = IterArg(tr.fresh(f"{region.name}_acc"), region.type, entering, span=span)
        if level == len(order) - 1:
            put = create_op_call(T.assemble, [acc, mapping[value], offsets], {}, span=span)
            stored = Var(tr.fresh(region.name), put.type, span=span)
            inner = body + [AssignStmt(stored, put, span=span), YieldStmt((stored,), span=span)]
        else:
            sub, sub_ret = nest(level + 1, acc)
            inner = [sub, YieldStmt((sub_ret,), span=span)]
        ret = done if level == 0 else Var(tr.fresh(region.name), region.type, span=span)
        d = order[level]
        return ForStmt(loop_var=idx[d], start=ConstInt(0), stop=ConstInt(shape[d]), step=ConstInt(tiles[d]),
                       iter_args=(acc,), body=seq(inner, span=span), return_vars=(ret,), span=span), ret

    loop, _ = nest(0, region)
    block[at] = ScopeStmt(ScopeKind.InCore, loop, span=span)  # (the write's result is the loop nest's)
    for k in sorted(chain, reverse=True):
        del block[k]
    return True


def _chain(value: Var, block: list, defs: dict[Var, int], shape: list[int]) -> set[int] | None:
    """Indices of the statements of this block that compute `value` (all row-local ops, or views of
    inputs shaped like it; other views are inputs), or None when one is not."""
    from pypto.passes.tiling import row_local

    out: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        k = defs.get(v)
        if k is None or k in out:
            continue  # defined before this block (an input), or seen
        c = block[k].value
        if not isinstance(c, Call):
            return None
        if c.op is T.view:
            if [const_value(d) for d in c.type.shape] != shape:
                continue  # (a [1, N] row, ...: an input of the kernel as it is)
            if len(c.args) != 3 or c.args[0] in defs:
                return None  # (a view with a valid shape, or of a value made here: left to the pipeline)
            out.add(k)
            continue
        if not row_local(c.op):
            return None
        out.add(k)
        todo += [a for a in c.args if isinstance(a, Var)]
    return out


__all__ = ["expand_block", "note_region_write"]
