"""Tiling: the Tensor graph -> Tile graph step of ConvertTensorToBlockOps.

Two parts: `lower`, the rule that turns one tensor op of a kernel into tile ops (the op's
`tile_form` plus the special cases: views, creation, scalar access, assemble, matmul, row
reductions, broadcasts), and the row tiling of row-local kernels.

A kernel whose tensor ops are all *row-local* — elementwise, tile x scalar, unary, cast, row
reductions and row broadcasts on the last axis, column broadcasts of a [1, N] operand, expands,
and `matmul(x, W)` with W a static parameter (loaded whole in every block) — over rank-2 tensors that share their leading dimension R (or have a leading 1) computes each row
on its own. When R is dynamic, or the tiles of the whole tensors would not fit the target's Vec
memory with 2x headroom, it runs as a loop over blocks of `rb` rows:

    rows = tensor.dim(x, 0)                         # or the constant R
    for r0, (y_acc, ...) in range(0, rows, rb, init_values=(y_out, ...)):
        valid_rows = min(rb, rows - r0)             # only when the last block can be partial
        x_tile = block.load(x, [r0, 0], [rb, C], [valid_rows, C])
        ...                                         # the kernel's ops on [rb, C] tiles
        y_store = block.store(y_tile, [r0, 0], y_acc)
        y_res = yield_(y_store, ...)
    return y_res, ...

`rb` is the largest power of two (at most R) such that every tile of one block fits in half of
`ctx.target.capacity(Vec)`. [1, N] operands are loaded whole in each block. The last dimension
must be static. Kernels that are not row-local keep whole-tensor tiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Add, Call, ConstInt, Expr, IterArg, MakeTuple, Min, Sub, Var, scalar_type
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, ReturnStmt, Stmt, YieldStmt, seq, stmt_list
from pypto.ir.structural import structural_equal
from pypto.ir.types import ScalarType, TensorType
from pypto.ops.registry import Level, OpDef, block_ops, tensor_ops
from pypto.ops.traits import ShapeClass
from pypto.ops.typing import dim_eq

from .base import PassError
from .outline_utils import flatten_items, use_counts
from .tiling_batch import batch_matmul, expand_clone

Vec, Mat, Left, Right, Acc = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc
DYNAMIC_HINT = ("tensor-level kernels are tiled automatically only when every op is row-local (elementwise, row "
                "reductions, broadcasts) and the last dimension is static; write this kernel with explicit "
                "pl.load tiles of a static shape (valid_shapes=[...] covers a dynamic extent)")


# ---------------------------------------------------------------------------------------------
# values of a kernel under conversion


@dataclass(eq=False)
class Window:
    """A region of a DDR tensor, not (yet) loaded: a parameter, a view of one, a store result."""

    tensor: Expr  # the DDR tensor in the new body
    root: Var | None  # the parameter it belongs to
    offsets: tuple[Expr, ...]
    shape: tuple[Expr, ...]
    valid: tuple[Expr, ...] | None
    slot: list  # loads go here, right after the definition, so they dominate every use
    alias: bool = False  # holds stores (the tensor is an output this kernel writes)
    cache: dict = field(default_factory=dict)

    @property
    def full(self) -> bool:
        t = self.tensor.type
        return (all(isinstance(o, ConstInt) and o.value == 0 for o in self.offsets) and self.valid is None
                and len(self.shape) == len(t.shape) and all(structural_equal(a, b) for a, b in zip(self.shape, t.shape)))


@dataclass(eq=False)
class TileVal:
    """A value held in a tile; moves to other memory spaces go into `slot` (after its definition)."""

    var: Var
    slot: list
    cache: dict = field(default_factory=dict)


def zeros(n: int) -> tuple[Expr, ...]:
    return tuple(ConstInt(0) for _ in range(n))


def add_index(a: Expr, b: Expr) -> Expr:
    if isinstance(a, ConstInt) and a.value == 0:
        return b
    if isinstance(b, ConstInt) and b.value == 0:
        return a
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return ConstInt(a.value + b.value)
    return Add(a, b, DataType.INDEX)

# ---------------------------------------------------------------------------------------------
# one tensor op -> tile ops (`conv` is the ConvertTensorToBlockOps kernel converter)

def lower(conv, c: Call, s: Stmt):
    """The converted value of the tensor op `c` (statement `s`): a TileVal or Window bound to the
    statement's variable, or an expression (a scalar, or the call of an effect) to emit. By the
    op: a rule of its own (SPECIAL), else by its shape class, else its tile form."""
    name = c.op_name
    hint = s.var.name if isinstance(s, AssignStmt) else name.split(".")[1]
    special = SPECIAL.get(c.op)
    if special is not None:
        return special(conv, c, s, hint)
    shape = getattr(c.op, "shape_class", None)
    if shape is ShapeClass.ROW_REDUCE:
        return _reduce(conv, c, s, hint)
    if shape is ShapeClass.ELEMENTWISE and _two_tensors(c.op):
        return _binary(conv, c, s, hint)
    form = c.op.tile_form
    if form is None:
        raise PassError(f"{name} cannot run inside a kernel (it has no tile form)", s.span,
                        hint="compute it in the orchestration, outside pl.incore()")
    args = []
    for p, a in zip(c.op.operands, c.args):
        if p.kind in ("tensor", "value"):
            args.append(conv.as_tile(a, Vec, span=s.span))
        else:
            if p.kind == "shape":
                _static(conv, a, s)
            args.append(conv.remap.visit(a))
    return conv.tile(hint, conv.op(form, args, dict(c.kwargs), s.span), s.span)


def _static(conv, shape: Expr, s: Stmt) -> tuple[int, ...]:
    dims = shape.elements if isinstance(shape, MakeTuple) else ()
    if not all(isinstance(d, ConstInt) for d in dims):
        raise PassError(f"kernel {conv.fn.name} makes a tile of a dynamic shape here; tile shapes must be static",
                        s.span, hint=DYNAMIC_HINT)
    return tuple(d.value for d in dims)


def _two_tensors(op) -> bool:
    return [p.kind for p in op.operands] == ["tensor", "tensor"]


def _binary(conv, c: Call, s: Stmt, hint: str):
    """A binary elementwise tensor op. A [R, 1] / [1, C] operand against an [R, C] one becomes the
    op's row / column expand form where it has one (the broadcast operand goes right, which a
    commutative op allows)."""
    a = conv.as_tile(c.args[0], Vec, span=s.span)
    b = conv.as_tile(c.args[1], Vec, span=s.span)
    sa, sb = a.type.static_shape(), b.type.static_shape()
    op = c.op.tile_form
    row, col = expand_form(op, ShapeClass.ROW_EXPAND), expand_form(op, ShapeClass.COL_EXPAND)
    if sa != sb and len(sa) == 2 and len(sb) == 2 and (row or col):
        if c.op.traits.commutative and (sa[1] == 1 or sa[0] == 1) and sb[0] != 1 and sb[1] != 1:
            a, b, sa, sb = b, a, sb, sa  # the broadcast operand goes right
        if row and sb[1] == 1 and sa[1] != 1 and sb[0] == sa[0]:
            op = row
        elif col and sb[0] == 1 and sa[0] != 1 and sb[1] == sa[1]:
            op = col
    kw = dict(c.kwargs) if op is c.op.tile_form else {}  # (attributes, e.g. a compare's cmp_type, kept)
    return conv.tile(hint, conv.op(op, [a, b], kw, s.span), s.span)


def expand_form(op, shape: ShapeClass):
    """The block op that applies `op` with a broadcast row (ROW_EXPAND) or column (COL_EXPAND)
    vector, or None."""
    return next((e for e in block_ops if e.broadcasts is op and e.shape_class is shape), None)


def _reduce(conv, c: Call, s: Stmt, hint: str):
    x = conv.as_tile(c.args[0], Vec, span=s.span)
    shape = x.type.static_shape()
    op = c.op.tile_form
    if len(shape) == 1:  # a vector reduces as one row
        x = conv.let(f"{x.name}_row", conv.op(block_ops.reshape, [x, (1, shape[0])], {}, s.span), s.span)
        shape = (1, shape[0])
    tmp = conv.let(f"{hint}_tmp", conv.op(block_ops.create_tile, [shape], {"dtype": x.type.dtype,
                                                                       "target_memory": Vec}, s.span), s.span)
    out = conv.tile(hint, conv.op(op, [x, tmp], {}, s.span), s.span)
    if len(c.type.shape) == 1:
        return conv.tile(hint, conv.op(block_ops.reshape, [out.var, (1,)], {}, s.span), s.span)
    return out


def _matmul(conv, c: Call, s: Stmt, hint: str):
    kw = dict(c.kwargs)
    acc_form = c.op is tensor_ops.matmul_acc
    lhs, rhs = c.args[1:] if acc_form else c.args[:2]
    if max(lhs.type.rank, rhs.type.rank) > 2:  # rank > 2: batched over the leading dims
        return batch_matmul(conv, c, s, hint, acc_form)
    a = conv.as_tile(lhs, Left, bool(kw.get("a_trans")), s.span)
    b = conv.as_tile(rhs, Right, bool(kw.get("b_trans")), s.span)
    if acc_form:
        acc = conv.as_tile(c.args[0], Acc, span=s.span)
        want = DataType.FP32 if a.type.dtype.is_float else DataType.INT32  # the Acc tile's dtype
        if acc.type.dtype is not want:  # an accumulator tensor of the operand dtype: widen it first
            v = conv.as_tile(c.args[0], Vec, span=s.span)
            wide = conv.tile(f"{hint}_acc_in", conv.op(block_ops.cast, [v], {"target_type": want}, s.span), s.span)
            acc = conv.as_tile(wide, Acc, span=s.span)
        call = conv.op(block_ops.matmul_acc, [acc, a, b], {}, s.span)
    else:
        call = conv.op(block_ops.matmul, [a, b], {}, s.span)
    out = conv.tile(hint if call.type.dtype is c.type.dtype else f"{hint}_acc", call, s.span)
    if out.var.type.dtype is not c.type.dtype:  # out_dtype: cast on the vector unit
        v = conv.as_tile(out, Vec, span=s.span)
        return conv.tile(hint, conv.op(block_ops.cast, [v], {"target_type": c.type.dtype}, s.span), s.span)
    return out


def _view(conv, c: Call, s: Stmt, hint: str):
    src = conv.value(c.args[0])
    shape = conv.remap.visit(c.args[1]).elements
    offs = conv.remap.visit(c.args[2]).elements
    valid = conv.remap.visit(c.args[3]).elements if len(c.args) > 3 else None
    if isinstance(src, Window):
        slot: list = []
        conv.items.append(slot)
        return Window(src.tensor, src.root, tuple(add_index(a, b) for a, b in zip(src.offsets, offs)), shape,
                      valid, slot)
    _static(conv, c.args[1], s)
    t = conv.as_tile(c.args[0], Vec, span=s.span)
    return conv.tile(hint, conv.op(block_ops.view, [t, shape, offs, *([valid] if valid else [])], {}, s.span), s.span)


def _set_validshape(conv, c: Call, s: Stmt, hint: str):
    """A window of the whole tensor with the new valid shape (a DDR window: the load's valid_shapes)."""
    src = conv.value(c.args[0])
    valid = tuple(conv.remap.visit(a) for a in c.args[1:3])
    if isinstance(src, Window):
        slot: list = []
        conv.items.append(slot)
        return Window(src.tensor, src.root, src.offsets, src.shape, valid, slot)
    t = conv.as_tile(c.args[0], Vec, span=s.span)
    return conv.tile(hint, conv.op(block_ops.set_validshape, [t, *valid], {}, s.span), s.span)


def _create(conv, c: Call, s: Stmt, hint: str):
    shape = _static(conv, conv.remap.visit(c.args[0]), s)
    dt = c.type.dtype
    if _overwritten(conv, s, shape):
        call = conv.op(block_ops.create_tile, [shape], {"dtype": dt, "target_memory": Vec}, s.span)
    else:  # created tensors read as zeros
        call = conv.op(block_ops.full, [shape], {"dtype": dt, "value": 0.0 if dt.is_float else 0}, s.span)
    return conv.tile(hint, call, s.span)


def _overwritten(conv, s: Stmt, shape: tuple[int, ...]) -> bool:
    """Every use of the created tensor writes it completely (an assemble of its own shape at 0)."""
    uses = conv.uses.get(s.var, []) if isinstance(s, AssignStmt) else []
    for call, i in uses:
        if call is None or call.op is not tensor_ops.assemble or i != 0:
            return False
        src = call.args[1].type
        offs = call.args[2].elements if isinstance(call.args[2], MakeTuple) else (None,)
        if src.static_shape() != shape or not all(isinstance(o, ConstInt) and o.value == 0 for o in offs):
            return False
    return bool(uses)


def _dim(conv, c: Call, s: Stmt, hint: str):
    x = c.args[0]
    t = x.type
    axis = c.kwarg("axis") % t.rank
    d = t.shape[axis]
    if isinstance(d, ConstInt):
        return d
    v = conv.value(x)
    if isinstance(v, Window) and v.full:
        return conv.op(tensor_ops.dim, [v.tensor], {"axis": axis}, s.span)
    for p in conv.fn.params:
        if isinstance(p.type, TensorType):
            for k, pd in enumerate(p.type.shape):
                if structural_equal(pd, d):
                    return conv.op(tensor_ops.dim, [p], {"axis": k}, s.span)
    return conv.remap.visit(d)


def _read(conv, c: Call, s: Stmt, hint: str):
    v = conv.value(c.args[0])
    idx = conv.remap.visit(c.args[1]).elements
    if isinstance(v, TileVal):
        return conv.op(block_ops.read, [conv.as_tile(v, Vec, span=s.span), idx], {}, s.span)
    ones = tuple(1 for _ in idx)
    offs = tuple(add_index(a, b) for a, b in zip(v.offsets, idx))
    cell = conv.let(f"{hint}_cell", conv.op(block_ops.load, [v.tensor, offs, ones, ones],
                                            {"target_memory": Vec, "transpose": False}, s.span), s.span)
    conv.read.add(v.root)
    return conv.op(block_ops.read, [cell, zeros(len(idx))], {}, s.span)


def _write(conv, c: Call, s: Stmt, hint: str):
    v = conv.value(c.args[0])
    idx = conv.remap.visit(c.args[1]).elements
    value = conv.remap.visit(c.args[2])
    if isinstance(v, TileVal):
        return conv.op(block_ops.write, [conv.as_tile(v, Vec, span=s.span), idx, value], {}, s.span)
    ones = tuple(1 for _ in idx)
    cell = conv.let(f"{hint}_cell", conv.op(block_ops.create_tile, [ones], {"dtype": c.args[0].type.dtype,
                                                                        "target_memory": Vec}, s.span), s.span)
    conv.items.append(EvalStmt(conv.op(block_ops.write, [cell, zeros(len(idx)), value], {}, s.span), span=s.span))
    conv.written.add(v.root)
    v.alias = True  # the tensor now holds a store of this kernel
    offs = tuple(add_index(a, b) for a, b in zip(v.offsets, idx))
    return conv.op(block_ops.store, [cell, offs, v.tensor], {}, s.span)


def _assemble(conv, c: Call, s: Stmt, hint: str):
    tgt = conv.value(c.args[0])
    off = conv.remap.visit(c.args[2]).elements
    if isinstance(tgt, Window):
        src = conv.tile_for_store(c.args[1], s)
        offs = tuple(add_index(a, b) for a, b in zip(tgt.offsets, off))
        st = conv.let(hint, conv.op(block_ops.store, [src, offs, tgt.tensor], {}, s.span), s.span)
        conv.written.add(tgt.root)
        slot: list = []
        conv.items.append(slot)
        return Window(st, tgt.root, tgt.offsets, tgt.shape, tgt.valid, slot, alias=True)
    t = conv.as_tile(tgt, Vec, span=s.span)
    src = conv.as_tile(c.args[1], Vec, span=s.span)
    return conv.tile(hint, conv.op(block_ops.assemble, [t, src, off], {}, s.span), s.span)


def _expand_clone(conv, c: Call, s: Stmt, hint: str):
    """The broadcast copy, written into the target when it is a DDR window (the public API's
    expand_clone fills its target: `y = pl.expand_clone(x, y)` into an Out parameter)."""
    t = expand_clone(conv, c, s, hint)
    tgt = conv.value(c.args[1])
    if not isinstance(tgt, Window):
        return t
    st = conv.let(hint, conv.op(block_ops.store, [t.var, tuple(tgt.offsets), tgt.tensor], {}, s.span), s.span)
    conv.written.add(tgt.root)
    slot: list = []
    conv.items.append(slot)
    return Window(st, tgt.root, tgt.offsets, tgt.shape, tgt.valid, slot, alias=True)


# the tensor ops with a tiling rule of their own (the rest go by shape class, or become their tile form)
SPECIAL = {
    tensor_ops.view: _view, tensor_ops.create: _create, tensor_ops.dim: _dim, tensor_ops.read: _read,
    tensor_ops.write: _write, tensor_ops.assemble: _assemble, tensor_ops.matmul: _matmul,
    tensor_ops.matmul_acc: _matmul, tensor_ops.expand_clone: _expand_clone,
    tensor_ops.set_validshape: _set_validshape, tensor_ops.create_l1: _create,
}
from .tiling_gather import lower_paged_gather  # noqa: E402  (it reads Window from here)

SPECIAL[tensor_ops.paged_gather] = lower_paged_gather


# ---------------------------------------------------------------------------------------------
# row tiling

def row_local(op) -> bool:
    """A tensor op whose result rows depend only on the same rows of its operands (the op's trait)."""
    return isinstance(op, OpDef) and op.level is Level.TENSOR and op.traits.row_local


def overwrites_whole(c: Expr) -> bool:
    """`assemble(target, src, zeros)` with src shaped like target: every row of the target is the
    same row of src, so the write is row-local (a row-tiled kernel stores each block into it)."""
    if not (isinstance(c, Call) and c.op is tensor_ops.assemble):
        return False
    tgt, src, offs = c.args
    if not (isinstance(tgt.type, TensorType) and isinstance(src.type, TensorType)):
        return False
    if tgt.type.rank != src.type.rank or not all(dim_eq(a, b) is True for a, b in zip(tgt.type.shape, src.type.shape)):
        return False
    return isinstance(offs, MakeTuple) and all(isinstance(o, ConstInt) and o.value == 0 for o in offs.elements)


@dataclass(frozen=True)
class TilePlan:
    """How a row-local kernel is tiled: R rows in blocks of `rb`."""

    rows: Expr  # R, the shared leading dimension
    rows_param: Var | None  # a tensor parameter whose dimension 0 is R (read with tensor.dim when dynamic)
    rb: int
    ragged: bool  # the last block may be partial (dynamic R, or R not a multiple of rb)
    whole: frozenset[Var] = frozenset()  # parameters loaded whole in every block (matmul weights)

    @property
    def static_rows(self) -> int | None:
        return self.rows.value if isinstance(self.rows, ConstInt) else None


def _is_one(d: Expr) -> bool:
    return isinstance(d, ConstInt) and d.value == 1


def _pow2_floor(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n >= 1 else 0


def _row_local_matmul(c: Call, fn: Function) -> bool:
    """`matmul(rows, W)`: row i of the result needs row i of the left operand and all of W, a static
    rank-2 parameter loaded whole in every block (no transposes, no accumulator input)."""
    if c.op is not tensor_ops.matmul or any(c.kwarg(k) for k in ("a_trans", "b_trans")):
        return False
    w = c.args[1]
    return (isinstance(w, Var) and w in fn.params and isinstance(w.type, TensorType) and w.type.rank == 2
            and all(isinstance(d, ConstInt) for d in w.type.shape))


def plan_tiling(fn: Function, capacity: int, caps: dict[MemorySpace, int] | None = None) -> TilePlan | None:
    """The tiling of a row-local kernel that needs it; None for whole-tensor tiles. `caps` are the
    target's capacities of the cube spaces (for `matmul(rows, W)`; without them matmul is not tiled)."""
    body = stmt_list(fn.body)
    if not body or not isinstance(body[-1], ReturnStmt):
        return None
    values: list[Var] = []  # tensor values the kernel computes
    reduced: list[Var] = []  # inputs of row reductions (each needs a scratch tile)
    matmuls: list[Call] = []
    for s in body[:-1]:
        if not isinstance(s, AssignStmt):
            return None
        v = s.value
        if isinstance(v, Call):
            if v.op is tensor_ops.dim and isinstance(s.var.type, ScalarType):
                continue
            if caps is not None and _row_local_matmul(v, fn) and isinstance(s.var.type, TensorType):
                matmuls.append(v)
                values.append(s.var)
                continue
            if not (row_local(v.op) or overwrites_whole(v)) or not isinstance(s.var.type, TensorType):
                return None
            values.append(s.var)
            if v.op.shape_class is ShapeClass.ROW_REDUCE:
                reduced.append(v.args[0])
        elif not isinstance(s.var.type, ScalarType):
            return None
    used = use_counts(fn.body)
    weights = {m.args[1] for m in matmuls}
    if any(sum(1 for m in matmuls if m.args[1] is w) != used[w] for w in weights):
        return None  # a weight also used row by row: not a row-parallel kernel
    params = [p for p in fn.params if isinstance(p.type, TensorType) and used[p] and p not in weights]
    tensors = params + values
    if not values or any(t.type.rank != 2 for t in tensors):
        return None
    rows: Expr | None = None
    for t in tensors:
        lead = t.type.shape[0]
        if _is_one(lead):
            continue
        if rows is None:
            rows = lead
        elif dim_eq(rows, lead) is not True:
            return None  # mixed leading dimensions: not a row-parallel kernel
    if rows is None:
        return None
    for t in tensors:
        if not isinstance(t.type.shape[1], ConstInt):
            raise PassError(f"the last dimension of {t.name} ({t.type.shape[1]!r}) is dynamic; a tensor-level kernel "
                            f"is tiled over its rows, so its last dimension must be static",
                            t.span if t.span.is_known else fn.span,
                            hint="give the last dimension a fixed size, or write the kernel with explicit pl.load "
                                 "tiles (valid_shapes=[...] covers a dynamic extent)")
    per_row, fixed = 0, 0
    for t in tensors + reduced:
        nbytes = t.type.shape[1].value * t.type.dtype.itemsize
        if _is_one(t.type.shape[0]):
            fixed += nbytes
        else:
            per_row += nbytes
    budget = capacity // 2
    static = rows.value if isinstance(rows, ConstInt) else None
    # the cube spaces: per matmul a [rows, K] Left tile (through Mat), a whole [K, N] Right tile
    # (through Mat) and a [rows, N] Acc tile; each space's own budget bounds the rows of a block
    cube: dict[MemorySpace, list[int]] = {}  # space -> [bytes per row, fixed bytes]
    for m in matmuls:
        k, n = (d.value for d in m.args[1].type.shape)
        eb = m.args[1].type.dtype.itemsize
        for sp, pr, fx in ((Mat, k * eb, k * n * eb), (Left, k * eb, 0), (Right, 0, k * n * eb), (Acc, n * 4, 0)):
            cube.setdefault(sp, [0, 0])
            cube[sp][0] += pr
            cube[sp][1] += fx
    limits = []
    for sp, (pr, fx) in cube.items():
        cap = (caps or {}).get(sp, 0) // 2
        if fx > cap:
            return None  # the weight does not fit its space whole: keep whole tiles (the capacity error explains)
        if pr:
            limits.append((cap - fx) // pr)
    if static is not None and static * per_row + fixed <= budget and all(static <= lim for lim in limits):
        return None  # fits as whole-tensor tiles
    rb = _pow2_floor((budget - fixed) // per_row) if per_row else 0
    for lim in limits:
        rb = min(rb, _pow2_floor(lim))
    if static is not None:
        rb = min(rb, _pow2_floor(static))
    if rb < 1:
        raise PassError(f"kernel {fn.name}: one row of its tiles needs {per_row + fixed} bytes, more than half of "
                        f"the Vec memory ({capacity} bytes)", fn.span,
                        hint="split the columns in the orchestration (pl.view) or write the kernel with explicit tiles")
    rows_param = next((p for p in params if dim_eq(p.type.shape[0], rows) is True), None)
    ragged = static is None or static % rb != 0
    return TilePlan(rows, rows_param, rb, ragged, frozenset(weights))


def build_tiled_body(conv, fn: Function, plan: TilePlan) -> tuple[list, list[Var]]:
    """The body of a tiled kernel (as converter items) and its new Out parameters.

    `conv` is the ConvertTensorToBlockOps kernel converter: it converts the statements of one row
    block given the windows of the parameters."""
    outer: list = []
    conv.items = outer
    body = stmt_list(fn.body)
    ret = body[-1]
    if plan.static_rows is not None:
        rows: Expr = plan.rows
    elif plan.rows_param is not None:
        rows = conv.let("rows", conv.op(tensor_ops.dim, [plan.rows_param], {"axis": 0}, fn.span), fn.span)
    else:
        rows = plan.rows
    outs = [conv.out_param(v, i) for i, v in enumerate(ret.values)]
    names = [o.name.removesuffix("_out") for o in outs]
    accs = [IterArg(f"{n}_acc", o.type, o, span=o.span) for n, o in zip(names, outs)]
    r0 = Var("r0", scalar_type(DataType.INDEX), span=fn.span)
    inner: list = []
    conv.items = inner
    valid = None
    if plan.ragged:
        valid = Var("valid_rows", scalar_type(DataType.INDEX), span=fn.span)
        inner.append(AssignStmt(valid, Min(ConstInt(plan.rb), Sub(rows, r0, DataType.INDEX), DataType.INDEX),
                                span=fn.span))
    zero = ConstInt(0)
    for p in fn.params:
        if not isinstance(p.type, TensorType):
            continue
        cols = p.type.shape[1]
        slot: list = []
        if p in plan.whole or (p.type.rank == 2 and _is_one(p.type.shape[0])):
            outer.append(slot)  # the same in every block (a weight, a [1, N] row): loaded once, before the loop
        else:
            inner.append(slot)
        if p in plan.whole:  # a matmul weight: loaded whole, used by every block
            conv.bind(p, Window(p, p, (zero, zero), p.type.shape, None, slot))
        elif p.type.rank == 2 and _is_one(p.type.shape[0]):
            conv.bind(p, Window(p, p, (zero, zero), (ConstInt(1), cols), None, slot))
        elif p.type.rank == 2:
            vshape = (valid, cols) if valid is not None else None
            conv.bind(p, Window(p, p, (r0, zero), (ConstInt(plan.rb), cols), vshape, slot))
        else:
            conv.bind(p, Window(p, p, tuple(zero for _ in p.type.shape), p.type.shape, None, slot))
    conv.convert_stmts(body[:-1])
    stores = []
    for e, acc, n in zip(ret.values, accs, names):
        tile = conv.tile_for_store(e, ret)
        offs = MakeTuple((zero if _is_one(e.type.shape[0]) else r0, zero))  # [1, N] results: the same row each time
        stores.append(conv.let(f"{n}_store", conv.op(block_ops.store, [tile, offs, acc], {}, ret.span), ret.span))
    inner.append(YieldStmt(tuple(stores), span=ret.span))
    results = [Var(f"{n}_res", a.type, span=a.span) for n, a in zip(names, accs)]
    loop = ForStmt(r0, ConstInt(0), rows, ConstInt(plan.rb), tuple(accs), seq(flatten_items(inner), fn.span),
                   tuple(results), span=fn.span)
    conv.items = outer
    outer.append(loop)
    outer.append(ReturnStmt(tuple(results), span=ret.span))
    return outer, outs


__all__ = ["DYNAMIC_HINT", "SPECIAL", "expand_form", "overwrites_whole", "row_local", "TilePlan", "TileVal", "Window", "add_index", "build_tiled_body", "lower",
           "plan_tiling", "zeros"]
