"""Pipes and memory accesses of kernel instructions, per docs/sync_model.md.

This is the instruction model InsertSync analyses; the interpreter's hazard checker and codegen
may reuse it:

- `pipe_of(call)`: the hardware pipe that runs an op — the registry's `OpDef.pipe`, refined for
  `block.store` (FIX when the tile is in Acc, else MTE3) and `block.move` (FIX from Acc, V for
  Vec -> Vec, MTE1 otherwise, e.g. Mat -> Left/Right). Ops that emit no instruction (allocs, tile
  creation) have no pipe.
- `accesses(stmt)` / `instruction(stmt)`: the resources the statement's instruction reads and
  writes (with its pipe). Resources are on-chip *buffers* (`Buffer`: a tile's MemRef; whole
  buffer) and DDR *tensor regions* (`TensorRegion`: the kernel parameter a tensor value stands for,
  from `tensor_roots(fn)`, plus the constant window a load/store touches when its offsets are
  constants). Two instructions conflict when a resource of one overlaps a resource of the other
  and at least one of the two accesses writes.
- `bind_instructions(fn)`: one instruction per statement — calls returned, yielded, used as loop
  init values or inside tuples are first bound to temporaries.

Conservative rules (the analysis may over-synchronize, never under-synchronize):
- two buffers overlap when they are the same MemRef object, have the same (space, id), or have
  assigned addresses in the same space whose byte ranges intersect;
- two regions of one tensor overlap unless both windows are constant and disjoint; a tensor value
  whose parameter cannot be determined (an if merging different tensors) overlaps every tensor;
  distinct tensor parameters are assumed not to alias;
- a tile operand is read; an operand named `tmp` (reduction/xor scratch) is read and written; the
  result tile's buffer is written. A `block.reshape`/`block.view` whose result lives in its input's
  buffer, a plain tile copy `y = x`, `block.alloc`, `block.create_tile`, sync ops and scalar
  statements are not instructions; `block.get_block_idx` is an S instruction touching no memory.
  Tiles without a MemRef (before memory planning) are their own buffer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pypto.ir.enums import MemorySpace, PipeType
from pypto.ir.expr import Call, ConstInt, Expr, IterArg, MakeTuple, MemRef, Op, TupleGetItem, Var
from pypto.ir.function import Function
from pypto.ir.names import NameGen
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
    YieldStmt,
    seq,
)
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import IRMutator, rebuild
from pypto.ir.walk import body_stmts, split_yield
from pypto.ops.registry import Level, OpDef, block_ops, system_ops
from pypto.ops.traits import ShapeClass

# pipes that run instructions (ALL is only a barrier target)
PIPES: tuple[PipeType, ...] = (PipeType.MTE1, PipeType.MTE2, PipeType.MTE3, PipeType.M, PipeType.V,
                               PipeType.S, PipeType.FIX)


def _shape(op: object) -> ShapeClass | None:
    return op.shape_class if isinstance(op, OpDef) else None


def pipe_of(call: Call) -> PipeType | None:
    """The pipe that executes `call` (None: the op emits no instruction).

    For the sync ops themselves: a set runs on its set pipe, a wait on its wait pipe, a barrier on
    its pipe (ALL for `bar_all`)."""
    if not isinstance(call.op, Op):
        return None
    op = call.op
    if op is block_ops.store or op is block_ops.tpush_to_aiv or op is block_ops.tpush_to_aic:
        # (a cross-core push writes the pipe's ring in GM, as a store does: docs/cross_core.md)
        return PipeType.FIX if _space(call.args[0]) is MemorySpace.Acc else PipeType.MTE3
    if op is block_ops.move:
        src, dst = _space(call.args[0]), call.kwarg("target_memory")
        if src is MemorySpace.Acc:
            return PipeType.FIX
        if src is MemorySpace.Vec and dst is MemorySpace.Vec:
            return PipeType.V
        return PipeType.MTE1
    if op is system_ops.sync_src:
        return call.kwarg("set_pipe")
    if op is system_ops.sync_dst:
        return call.kwarg("wait_pipe")
    if _shape(op) is ShapeClass.ALLOC:  # (declares a buffer: no instruction)
        return None
    return getattr(call.op, "pipe", None)


def _is_block_alias(op: object) -> bool:
    """A view or reshape of a tile: no instruction when it got its operand's buffer."""
    return isinstance(op, OpDef) and op.level is Level.BLOCK and op.traits.alias


def is_sync_call(call: Call) -> bool:
    return _shape(call.op) is ShapeClass.SYNC


def _space(e: Expr) -> MemorySpace | None:
    t = getattr(e, "type", None)
    return t.space if isinstance(t, TileType) else None


# ---------------------------------------------------------------------------------------------
# resources


@dataclass(frozen=True, eq=False)
class Buffer:
    """An on-chip buffer: a tile's MemRef (or, without one, the tile variable itself)."""

    memref: MemRef | Var

    def overlaps(self, other: object) -> bool:
        if not isinstance(other, Buffer):
            return False
        a, b = self.memref, other.memref
        if a is b:
            return True
        if not (isinstance(a, MemRef) and isinstance(b, MemRef)) or a.memory_space is not b.memory_space:
            return False
        if a.id == b.id:
            return True
        return a.addr >= 0 and b.addr >= 0 and a.addr < b.addr + b.size and b.addr < a.addr + a.size

    def __repr__(self) -> str:
        return f"Buffer({self.memref.name})"


@dataclass(frozen=True, eq=False)
class TensorRegion:
    """A DDR window: `tensor` is the kernel parameter (None: unknown, overlaps every tensor);
    `window` is a half-open [lo, hi) per dimension, or None for the whole tensor / unknown."""

    tensor: Var | None
    window: tuple[tuple[int, int], ...] | None = None

    def overlaps(self, other: object) -> bool:
        if not isinstance(other, TensorRegion):
            return False
        if self.tensor is None or other.tensor is None:
            return True
        if self.tensor is not other.tensor:
            return False
        if self.window is None or other.window is None or len(self.window) != len(other.window):
            return True
        return all(a0 < b1 and b0 < a1 for (a0, a1), (b0, b1) in zip(self.window, other.window))

    def __repr__(self) -> str:
        name = self.tensor.name if self.tensor is not None else "?"
        return f"TensorRegion({name}, {self.window})"


Resource = Buffer | TensorRegion


def _any_overlap(xs: tuple[Resource, ...], ys: tuple[Resource, ...]) -> bool:
    return any(x.overlaps(y) for x in xs for y in ys)


@dataclass(frozen=True, eq=False)
class Instruction:
    """One instruction: its pipe and the resources it reads and writes."""

    pipe: PipeType
    reads: tuple[Resource, ...]
    writes: tuple[Resource, ...]

    def conflicts_with(self, other: Instruction) -> bool:
        """RAW, WAR or WAW on an overlapping resource."""
        return (_any_overlap(self.writes, other.reads) or _any_overlap(self.reads, other.writes)
                or _any_overlap(self.writes, other.writes))


# ---------------------------------------------------------------------------------------------
# statements -> instructions


def stmt_call(s: Stmt) -> Call | None:
    """The op call a statement evaluates (`x = op(...)` or `op(...)`), else None."""
    e = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
    return e if isinstance(e, Call) and isinstance(e.op, Op) else None


def instruction(s: Stmt, roots: Mapping[Var, Var | None] | None = None) -> Instruction | None:
    """The instruction a statement issues, or None (control flow, scalar code, allocs, aliases,
    sync ops). `roots` maps tensor values to their kernel parameter (see `tensor_roots`)."""
    call = stmt_call(s)
    if call is None or _shape(call.op) is ShapeClass.SYNC:
        return None
    return call_instruction(s, call, roots)


def call_instruction(s: Stmt, call: Call, roots: Mapping[Var, Var | None] | None = None) -> Instruction | None:
    """`instruction(s, roots)` for a statement whose op call (`stmt_call(s)`, not a sync op) is known."""
    pipe = pipe_of(call)
    if pipe is None:
        return None
    result = s.var if isinstance(s, AssignStmt) else None
    if _is_block_alias(call.op) and result is not None and _same_buffer(result, call.args[0]):
        return None
    roots = roots or {}
    reads: list[Resource] = []
    writes: list[Resource] = []
    scratch = _scratch(call.op)
    for i, a in enumerate(call.args):
        if not isinstance(a, Var):
            continue
        buf = _buffer(a)
        if buf is not None:
            reads.append(buf)
            if i == scratch:
                writes.append(buf)
    if call.op is block_ops.load:
        reads.append(_region(call.args[0], call.args[1], _const_dims(call.args[2]), roots))
    elif call.op is block_ops.store:
        extents = _const_dims(call.args[3]) if len(call.args) > 3 else _tile_dims(call.args[0], call.args[2])
        writes.append(_region(call.args[2], call.args[1], extents, roots))
    elif call.op is block_ops.write:
        writes.append(_buffer(call.args[0]))  # type: ignore[arg-type]
    if result is not None:
        buf = _buffer(result)
        if buf is not None:
            writes.append(buf)
    return Instruction(pipe, tuple(reads), tuple(writes))


_SCRATCH: dict[str, int] = {}


def _scratch(op: Op) -> int:
    """The position of the op's operand named `tmp` (read and written), -1 if none."""
    got = _SCRATCH.get(op.name)
    if got is None:
        params = getattr(op, "operands", ())
        got = _SCRATCH[op.name] = next((i for i, p in enumerate(params) if p.name == "tmp"), -1)
    return got


def accesses(s: Stmt, roots: Mapping[Var, Var | None] | None = None) -> tuple[tuple[Resource, ...],
                                                                              tuple[Resource, ...]]:
    """(reads, writes) of the statement's instruction; both empty when it issues none."""
    ins = instruction(s, roots)
    return ((), ()) if ins is None else (ins.reads, ins.writes)


def _buffer(e: Expr) -> Buffer | None:
    if not isinstance(e, Var):
        return None
    t = e.type
    if not isinstance(t, TileType):
        return None
    return Buffer(t.memref if t.memref is not None else e)


def _same_buffer(a: Expr, b: Expr) -> bool:
    x, y = _buffer(a), _buffer(b)
    return x is not None and y is not None and x.overlaps(y)


def _const_dims(e: Expr) -> tuple[int, ...] | None:
    if not isinstance(e, MakeTuple):
        return None
    out = []
    for x in e.elements:
        if not isinstance(x, ConstInt):
            return None
        out.append(x.value)
    return tuple(out)


def _tile_dims(tile: Expr, tensor: Expr) -> tuple[int, ...] | None:
    t, out = getattr(tile, "type", None), getattr(tensor, "type", None)
    if not isinstance(t, TileType) or not isinstance(out, TensorType) or t.rank != out.rank:
        return None
    return t.static_shape()


def _region(tensor: Expr, offsets: Expr, extents: tuple[int, ...] | None,
            roots: Mapping[Var, Var | None]) -> TensorRegion:
    root = roots.get(tensor, tensor) if isinstance(tensor, Var) else None
    offs = _const_dims(offsets)
    window = None
    if offs is not None and extents is not None and len(offs) == len(extents):
        window = tuple([(o, o + n) for o, n in zip(offs, extents)])
    return TensorRegion(root, window)


def is_instruction_call(e: Expr) -> bool:
    """A call that issues an instruction (sync ops excluded)."""
    return isinstance(e, Call) and not is_sync_call(e) and pipe_of(e) is not None


class _BindCalls(IRMutator):
    def __init__(self, names: NameGen) -> None:
        super().__init__()
        self.names = names

    def visit_Op(self, op: Op) -> Op:
        return op

    def visit_SeqStmts(self, s: SeqStmts) -> Stmt:
        out = [self.visit(x) for x in s.stmts]
        return s if all(a is b for a, b in zip(out, s.stmts)) else seq(out, span=s.span)

    def lift(self, e: Expr, pre: list[Stmt], top: bool) -> Expr:
        if isinstance(e, Call):
            if top or not is_instruction_call(e):
                return e
            v = Var(self.names.fresh(e.op.name.rsplit(".", 1)[-1], "tmp"), e.type, span=e.span)
            pre.append(AssignStmt(v, e, span=e.span))
            return v
        if isinstance(e, MakeTuple):
            elems = tuple(self.lift(x, pre, False) for x in e.elements)
            return e if all(a is b for a, b in zip(elems, e.elements)) else rebuild(e, {"elements": elems})
        if isinstance(e, TupleGetItem):
            t = self.lift(e.tuple, pre, False)
            return e if t is e.tuple else rebuild(e, {"tuple": t})
        return e

    def _with(self, pre: list[Stmt], s: Stmt) -> Stmt:
        return seq([*pre, s], span=s.span) if pre else s

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        pre: list[Stmt] = []
        value = self.lift(self.visit(s.value), pre, True)
        var = self.mutate_def(s.var)
        return self._with(pre, s if value is s.value and var is s.var else rebuild(s, {"value": value, "var": var}))

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        pre: list[Stmt] = []
        e = self.lift(self.visit(s.expr), pre, True)
        return self._with(pre, s if e is s.expr else rebuild(s, {"expr": e}))

    def _values(self, s: YieldStmt | ReturnStmt) -> Stmt:
        pre: list[Stmt] = []
        vals = tuple(self.lift(self.visit(v), pre, False) for v in s.values)
        return self._with(pre, s if all(a is b for a, b in zip(vals, s.values)) else rebuild(s, {"values": vals}))

    visit_YieldStmt = _values
    visit_ReturnStmt = _values

    def _loop(self, s: ForStmt | WhileStmt) -> Stmt:
        pre: list[Stmt] = []
        for a in s.iter_args:
            init = self.lift(self.visit(a.init_value), pre, False)
            if init is not a.init_value:
                self.var_map[a] = IterArg(a.name, a.type, init, span=a.span)
        return self._with(pre, self.generic_visit(s))

    visit_ForStmt = _loop
    visit_WhileStmt = _loop


def bind_instructions(fn: Function) -> Function:
    """`fn` with every instruction call the whole value of an assignment or evaluation statement, so
    that each statement issues at most one instruction: calls returned, yielded, passed as a loop's
    init value or inside a tuple are first assigned to a fresh `<op>__tmp_v<k>` variable.

    (`fn` itself when there is nothing to bind. Only a loop init value needs the general rewrite,
    which substitutes the new iter_arg in the body; the other cases rewrite just the statements
    concerned, naming the temporaries apart from the variables the function defines.)"""
    scan = _BindScan([p.name for p in fn.params])
    scan.block(fn.body)
    if scan.loop_init:
        return _BindCalls(NameGen.for_node(fn)).visit(fn)
    if not scan.needed:
        return fn
    body = _BindStmts(NameGen(scan.names), scan.lifts).body(fn.body)
    return fn if body is fn.body else rebuild(fn, {"body": body})


def _lifts(e: Expr, top: bool) -> bool:
    """Whether `_BindCalls.lift` would bind something in `e`."""
    if isinstance(e, Call):
        return not top and is_instruction_call(e)
    if isinstance(e, MakeTuple):
        return any(_lifts(x, False) for x in e.elements)
    if isinstance(e, TupleGetItem):
        return _lifts(e.tuple, False)
    return False


class _BindScan:
    """What `bind_instructions` has to do (`lifts`: the statements to rewrite, and the compound
    statements holding one, by id), and the names the function defines."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.lifts: set[int] = set()
        self.loop_init = False

    @property
    def needed(self) -> bool:
        return bool(self.lifts)

    def block(self, body: Stmt | None) -> bool:
        names, lifts, found = self.names, self.lifts, False
        for s in body_stmts(body):
            if isinstance(s, AssignStmt):
                names.append(s.var.name)
                lift = _lifts(s.value, True)
            elif isinstance(s, EvalStmt):
                lift = _lifts(s.expr, True)
            elif isinstance(s, (YieldStmt, ReturnStmt)):
                lift = any(_lifts(v, False) for v in s.values)
            elif isinstance(s, (ForStmt, WhileStmt)):
                if isinstance(s, ForStmt):
                    names.append(s.loop_var.name)
                for a in s.iter_args:
                    names.append(a.name)
                    if _lifts(a.init_value, False):
                        self.loop_init = True
                names.extend(v.name for v in s.return_vars)
                lift = self.block(s.body)
            elif isinstance(s, IfStmt):
                names.extend(v.name for v in s.return_vars)
                lift = self.block(s.then_body) | self.block(s.else_body)
            elif isinstance(s, ScopeStmt):
                lift = self.block(s.body)
            else:
                lift = False
            if lift:
                lifts.add(id(s))
                found = True
        return found


class _BindStmts(_BindCalls):
    """`_BindCalls` for functions whose loop init values need nothing: the statements `lifts` names
    (and the bodies holding them) only."""

    def __init__(self, names: NameGen, lifts: set[int]) -> None:
        super().__init__(names)
        self.lifts = lifts

    def body(self, body: Stmt | None) -> Stmt | None:
        if body is None:
            return None
        if isinstance(body, SeqStmts):
            lifts = self.lifts
            out = [self.stmt(x) if id(x) in lifts or isinstance(x, SeqStmts) else x for x in body.stmts]
            return body if all(a is b for a, b in zip(out, body.stmts)) else seq(out, span=body.span)
        return self.stmt(body) if id(body) in self.lifts else body

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, AssignStmt):
            pre: list[Stmt] = []
            value = self.lift(s.value, pre, True)
            return self._with(pre, s if value is s.value else rebuild(s, {"value": value}))
        if isinstance(s, EvalStmt):
            pre = []
            e = self.lift(s.expr, pre, True)
            return self._with(pre, s if e is s.expr else rebuild(s, {"expr": e}))
        if isinstance(s, (YieldStmt, ReturnStmt)):
            pre = []
            vals = tuple(self.lift(v, pre, False) for v in s.values)
            return self._with(pre, s if all(a is b for a, b in zip(vals, s.values)) else rebuild(s, {"values": vals}))
        if isinstance(s, IfStmt):
            t, e = self.body(s.then_body), self.body(s.else_body)
            return s if t is s.then_body and e is s.else_body else rebuild(s, {"then_body": t, "else_body": e})
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            b = self.body(s.body)
            return s if b is s.body else rebuild(s, {"body": b})
        if isinstance(s, SeqStmts):
            return self.body(s)  # type: ignore[return-value]
        return s


# ---------------------------------------------------------------------------------------------
# which parameter a tensor value stands for


def tensor_roots(fn: Function) -> dict[Var, Var | None]:
    """Map every tensor value of a kernel to the parameter it is (a store returns its output
    tensor; a loop-carried tensor is its init value's parameter when every iteration yields that
    parameter back; an if merging two different tensors maps to None, unknown)."""
    roots: dict[Var, Var | None] = {p: p for p in fn.params if isinstance(p.type, TensorType)}
    _roots_block(fn.body, roots)
    return roots


def _root(e: Expr, roots: Mapping[Var, Var | None]) -> Var | None:
    return roots.get(e, e) if isinstance(e, Var) else None


def _is_tensor(v: Var) -> bool:
    return isinstance(v.type, TensorType)


def _roots_block(body: Stmt | None, roots: dict[Var, Var | None]) -> None:
    for s in body_stmts(body):
        if isinstance(s, AssignStmt) and _is_tensor(s.var):
            v = s.value
            k = getattr(v.op, "result_reuses", None) if isinstance(v, Call) else None
            if isinstance(v, Var):
                roots[s.var] = _root(v, roots)
            elif isinstance(v, Call) and k is not None and k < len(v.args):
                roots[s.var] = _root(v.args[k], roots)
        elif isinstance(s, (ForStmt, WhileStmt)):
            slots = [i for i, ia in enumerate(s.iter_args) if _is_tensor(ia)]
            for i in slots:
                roots[s.iter_args[i]] = _root(s.iter_args[i].init_value, roots)
            for _ in range(2):  # a second round when a yield brings back another tensor (-> unknown)
                _roots_block(s.body, roots)
                y = split_yield(s.body)[1]
                changed = False
                for i in slots:
                    ia = s.iter_args[i]
                    if y is not None and i < len(y.values) and _root(y.values[i], roots) is not roots[ia] \
                            and roots[ia] is not None:
                        roots[ia] = None
                        changed = True
                if not changed:
                    break
            for i in slots:
                if i < len(s.return_vars):
                    roots[s.return_vars[i]] = roots[s.iter_args[i]]
        elif isinstance(s, IfStmt):
            _roots_block(s.then_body, roots)
            _roots_block(s.else_body, roots)
            ys = [split_yield(b)[1] for b in (s.then_body, s.else_body)]
            for i, rv in enumerate(s.return_vars):
                if _is_tensor(rv):
                    got = [_root(y.values[i], roots) for y in ys if y is not None and i < len(y.values)]
                    roots[rv] = got[0] if got and all(g is got[0] for g in got) else None
        elif isinstance(s, ScopeStmt):
            _roots_block(s.body, roots)


__all__ = ["PIPES", "Buffer", "Instruction", "Resource", "TensorRegion", "accesses", "bind_instructions",
           "call_instruction", "instruction", "is_instruction_call", "is_sync_call", "pipe_of", "stmt_call", "tensor_roots"]
