"""ConvertTensorToBlockOps: tensor-level code inside InCore kernels becomes tile code.

Pre:  SplitIncoreOrch (OutlineIncoreScopes): kernels are InCore functions, called from
      Orchestration functions; SSA.
Post (IncoreBlockOps), per kernel:
  - a tensor read by compute is loaded with `block.load` (Vec; Mat, possibly transposed, for
    matmul operands): a parameter as a whole, a `tensor.view` of a parameter as the window at
    the view's offset (its valid_shape becoming the load's valid_shapes); a view of a local
    value is a `block.view`. Loads sit right after the definition of what they load, once per
    memory space;
  - each tensor op becomes its tile form (`OpDef.tile_form`); `[M, 1]` / `[1, N]` broadcasts of
    add/sub/mul/div become row_expand_* / col_expand_*; row reductions get a scratch tile;
    `tensor.matmul` moves its operands Mat -> Left/Right and computes in Acc (`matmul_acc` on an
    Acc accumulator), moving to Vec only when a vector op reads the result and casting when
    `out_dtype` asks for it; `tensor.create` is `block.full(0)` (`block.create_tile` when it is
    completely overwritten first); `tensor.assemble` into a parameter is a `block.store` at the
    offset (into a local, a `block.assemble`); `tensor.read` / `tensor.write` are `block.read` /
    `block.write` (of a parameter: through a one-element tile loaded / stored at the index);
  - every returned tensor that is not a store into an Out/InOut parameter gets a new Out
    parameter (appended) and a `block.store` into it; a stored parameter becomes Out (written
    only) or InOut (read too); kernels return the stored tensors;
  - row-local kernels with dynamic or large row counts are tiled over rows (see tiling.py);
  - every tile has its memory space set; kernels already written with `block.*` ops are kept.
At each call site the new outputs are made with `tensor.create` right before the call and passed
last (a dynamic dimension is the caller's own expression of it, taken from the matching argument's
type — the dynamic dimension the caller binds — so that the printed program parses back); the
call's results alias them.
Errors: whole-tensor tiles of a dynamic shape, a dynamic last dimension in a row-local kernel, a
tensor op with no tile form, a kernel returning a scalar.
"""

from __future__ import annotations

from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, IterArg, MakeTuple, Op, Var
from pypto.ir.function import Function, Program
from pypto.ir.op import OpError, create_op_call
from pypto.ir.span import Span
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
    stmt_list,
)
from pypto.ir.structural import structural_equal
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import IRMutator, IRVisitor, rebuild
from pypto.ir.walk import make_body, make_else
from pypto.ops.registry import Level, OpDef, block_ops
from pypto.ops.traits import ShapeClass

from .base import IRProperty, Pass, PassContext, PassError
from .full_reductions import lower_full_reductions
from .outline_utils import bind_value_calls, block_of, flatten_items, is_kernel, rewrite_kernel_calls
from .tiling import DYNAMIC_HINT, TileVal, Window, add_index, build_tiled_body, lower, plan_tiling, zeros

Vec, Mat = MemorySpace.Vec, MemorySpace.Mat
_CUBE_IN = (MemorySpace.Left, MemorySpace.Right)
# block ops that take a kernel parameter tensor: the positions of their tensor operands
_TENSOR_OPERAND = {"block.load": (0,), "block.store": (2,), "block.mgather": (0,), "block.mscatter": (2,)}


class ConvertTensorToBlockOps(Pass):
    """Lower tensor ops inside kernels to tile ops and fix the call sites (module docstring)."""

    name = "ConvertTensorToBlockOps"
    requires = frozenset({IRProperty.SplitIncoreOrch})
    produces = frozenset({IRProperty.IncoreBlockOps})
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        capacity = ctx.target.capacity(Vec)
        caps = {sp: ctx.target.capacity(sp) for sp in (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                                                       MemorySpace.Acc)}
        fns: dict[str, Function] = {}
        new_outs: dict[str, list[Var]] = {}
        for f in program.functions:
            if not is_kernel(f) or f.body is None:
                fns[f.name] = f
                continue
            # a returned / yielded call becomes a statement first (`return pl.store(...)` is common)
            g = f
            body = bind_value_calls(f.body, lambda c: True)
            if body is not f.body:
                g = Function(f.name, f.params, f.param_directions, f.return_types, body, f.func_type, span=f.span)
            conv = KernelConverter(g, direct_cube_loads=ctx.target.can_move(MemorySpace.DDR, MemorySpace.Left))
            plan = plan_tiling(g, capacity, caps)
            items, outs = build_tiled_body(conv, g, plan) if plan is not None else conv.whole_body()
            new = conv.function(items, outs)
            fns[f.name] = f if not outs and structural_equal(new, g) else new  # tile code is kept as written
            fns[f.name] = lower_full_reductions(fns[f.name])
            if outs:
                new_outs[f.name] = outs
        out = [rewrite_kernel_calls(f, fns, new_outs) if not is_kernel(f) else f for f in fns.values()]
        if all(a is b for a, b in zip(out, program.functions)):
            return program
        return program.with_functions(out)


class _Remap(IRMutator):
    """Uses of converted tensor variables become their tile (or DDR tensor) in the new body."""

    def __init__(self, conv: KernelConverter) -> None:
        super().__init__()
        self.conv = conv

    def visit_Var(self, var: Var) -> Expr:
        v = self.conv.env.get(var)
        if v is None:
            return self.var_map.get(var, var)
        if isinstance(v, TileVal):
            return v.var
        if not v.full:
            raise PassError(f"{var.name} is a view of a kernel parameter; it cannot be used here as a whole tensor",
                            var.span, hint="load the view with pl.load(...) first")
        return v.tensor


def _yields_region(op: object) -> bool:
    """Does the op's kernel-level result stay a region of a DDR tensor (a Window), not a tile? Views
    and reshapes of a tensor, and the ops that write into one and return it (store, assemble)."""
    return isinstance(op, OpDef) and op.shape_class in (ShapeClass.WINDOW, ShapeClass.LAYOUT) and (
        op.traits.alias or op.result_reuses is not None)


def _computed_yields(s: ForStmt | WhileStmt) -> set[int]:
    """Indices of iter_args the loop body yields a computed value for (defined in the body by an op
    that makes a tile): a tensor init of those is carried as a tile."""
    body = stmt_list(s.body)
    if not body or not isinstance(body[-1], YieldStmt):
        return set()
    defs = {st.var: st.value for st in body if isinstance(st, AssignStmt)}
    out = set()
    for k, e in enumerate(body[-1].values):
        d = defs.get(e) if isinstance(e, Var) else None
        if isinstance(d, Call) and isinstance(d.type, TensorType) and not _yields_region(d.op):
            out.add(k)
    return out


class KernelConverter:
    """Converts one kernel; `items` is the statement list being built (entries may be slots)."""

    def __init__(self, fn: Function, direct_cube_loads: bool = False) -> None:
        self.fn = fn
        self.direct_cube_loads = direct_cube_loads  # the target loads DDR straight into Left / Right
        self.env: dict[Var, Window | TileVal] = {}
        self.items: list = []
        self.read: set[Var] = set()
        self.written: set[Var] = set()
        self.outs: list[Var] = []
        self.remap = _Remap(self)
        self.uses = _operand_uses(fn.body)
        self._stored: set[int] = set()  # carried tensors (by their carry record) that receive stores

    # ---- building blocks ----------------------------------------------------------------------

    def op(self, name: str | Op, args: list, kwargs: dict, span: Span) -> Call:
        args = [MakeTuple(tuple(ConstInt(d) if isinstance(d, int) else d for d in a)) if isinstance(a, (list, tuple))
                else a for a in args]
        try:
            return create_op_call(name, args, kwargs, span)
        except OpError as e:
            raise PassError(f"cannot lower to {getattr(name, 'name', name)}: {e.message}", span, hint=e.hint) from None

    def let(self, name: str, value: Expr, span: Span) -> Var:
        v = Var(name, value.type, span=span)
        self.items.append(AssignStmt(v, value, span=span))
        return v

    def tile(self, name: str, value: Call, span: Span) -> TileVal:
        v = self.let(name, value, span)
        slot: list = []
        self.items.append(slot)
        return TileVal(v, slot)

    def bind(self, var: Var, value: Window | TileVal) -> None:
        self.env[var] = value

    def value(self, e: Expr) -> Window | TileVal | None:
        return self.env.get(e) if isinstance(e, Var) else None

    def out_param(self, e: Expr, i: int) -> Var:
        name = f"{e.name}_out" if isinstance(e, Var) else f"out_{i}"
        p = Var(name, self.fn.return_types[i], span=self.fn.span)
        self.outs.append(p)
        return p

    # ---- materializing tiles ----------------------------------------------------------------

    def as_tile(self, e: Expr | Window | TileVal, space: MemorySpace = Vec, transpose: bool = False,
                span: Span | None = None) -> Var:
        """`e` as a tile in `space` (transposed on request). Loads and moves are made once, in the
        slot after the value's definition. Left/Right tiles of DDR data pass through Mat unless the
        target loads them directly (the CPU does; Ascend goes through L1), Acc tiles through Vec."""
        v = e if isinstance(e, (Window, TileVal)) else self.value(e)
        span = span or getattr(e, "span", None) or self.fn.span
        if v is None:
            raise PassError(f"{getattr(e, 'name', e)!r} is not a tensor value of kernel {self.fn.name}", span)
        if isinstance(v, TileVal) and v.var.type.space is space and not transpose:
            return v.var
        key = (space, transpose)
        got = v.cache.get(key)
        if got is not None:
            return got
        saved, self.items = self.items, v.slot
        try:
            if isinstance(v, TileVal):
                t = self.let(f"{v.var.name}_{space.name.lower()}",
                             self.op(block_ops.move, [v.var], {"target_memory": space, "transpose": transpose}, span), span)
            elif space in (Vec, Mat) or (self.direct_cube_loads and space in _CUBE_IN):
                t = self.load(v, space, transpose, e, span)
            else:
                base = self.as_tile(v, Mat if space in (MemorySpace.Left, MemorySpace.Right) else Vec, transpose, span)
                self.items = v.slot
                t = self.let(f"{base.name}_{space.name.lower()}",
                             self.op(block_ops.move, [base], {"target_memory": space}, span), span)
        finally:
            self.items = saved
        v.cache[key] = t
        return t

    def load(self, w: Window, space: MemorySpace, transpose: bool, e, span: Span) -> Var:
        shape = []
        for d in w.shape:
            if not isinstance(d, ConstInt):
                raise PassError(f"kernel {self.fn.name} needs {getattr(e, 'name', None) or 'a tensor'} (shape "
                                f"[{', '.join(_dim_text(x) for x in w.shape)}]) as one tile, but tile shapes must be "
                                "static", span, hint=DYNAMIC_HINT)
            shape.append(d)
        if w.root is not None:
            self.read.add(w.root)
        base = e.name if isinstance(e, Var) else getattr(w.tensor, "name", "t")
        name = base + ("_tile" if space is Vec else f"_{space.name.lower()}")
        valid = w.valid if w.valid is not None else tuple(shape)
        return self.let(name, self.op(block_ops.load, [w.tensor, w.offsets, tuple(shape), valid],
                                      {"target_memory": space, "transpose": transpose}, span), span)

    def tile_for_store(self, e: Expr, s: Stmt) -> Var:
        v = self.value(e)
        if isinstance(v, TileVal):
            return v.var  # Vec or Acc tiles store directly
        if v is None:
            raise PassError(f"kernel {self.fn.name} returns a non-tensor value; kernels hand back tensors only",
                            s.span, hint="store scalars into a tensor, or compute them in the orchestration")
        return self.as_tile(e, Vec, span=s.span)

    # ---- the function -----------------------------------------------------------------------

    def whole_body(self) -> tuple[list, list[Var]]:
        """A kernel with whole-tensor tiles: parameters load at the entry, results store at the end."""
        for p in self.fn.params:
            if isinstance(p.type, TensorType):
                slot: list = []
                self.items.append(slot)
                self.bind(p, Window(p, p, zeros(p.type.rank), p.type.shape, None, slot))
        body = stmt_list(self.fn.body)
        ret = body[-1] if body and isinstance(body[-1], ReturnStmt) else None
        self.convert_stmts(body[:-1] if ret is not None else body)
        if ret is None:
            return self.items, self.outs
        values = []
        for i, e in enumerate(ret.values):
            v = self.value(e)
            if isinstance(v, Window) and v.full and (v.alias or self._declared_output(v.root)):
                values.append(v.tensor)
                continue
            tile = self.tile_for_store(e, ret)
            out = self.out_param(e, i)
            values.append(self.let(f"{out.name.removesuffix('_out')}_store",
                                   self.op(block_ops.store, [tile, zeros(out.type.rank), out], {}, ret.span), ret.span))
        self.items.append(ReturnStmt(tuple(values), span=ret.span))
        return self.items, self.outs

    def _declared_output(self, p: Var | None) -> bool:
        if p is None or p not in self.fn.params:
            return False
        return self.fn.param_directions[self.fn.params.index(p)] is not ParamDirection.In

    def function(self, items: list, outs: list[Var]) -> Function:
        fn = self.fn
        dirs = []
        for p, d in zip(fn.params, fn.param_directions):
            if p in self.written:
                d = ParamDirection.InOut if (p in self.read or d is ParamDirection.InOut) else ParamDirection.Out
            dirs.append(d)
        return Function(fn.name, (*fn.params, *outs), (*dirs, *(ParamDirection.Out for _ in outs)), fn.return_types,
                        block_of(items, fn.body.span if fn.body is not None else fn.span), FunctionType.InCore,
                        span=fn.span)

    # ---- statements -------------------------------------------------------------------------

    def convert_stmts(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            self.convert_stmts(list(s.stmts))
        elif isinstance(s, ScopeStmt):
            self.convert_stmts(stmt_list(s.body))
        elif isinstance(s, AssignStmt):
            self.assign(s)
        elif isinstance(s, EvalStmt):
            self.evaluate(s)
        elif isinstance(s, ForStmt):
            self.loop(s)
        elif isinstance(s, WhileStmt):
            self.loop(s)
        elif isinstance(s, IfStmt):
            self.branch(s)
        elif isinstance(s, ReturnStmt):
            raise PassError(f"kernel {self.fn.name} returns from inside a loop or branch", s.span,
                            hint="return once, at the end of the kernel")
        else:
            self.items.append(self.remap.visit(s))

    def assign(self, s: AssignStmt) -> None:
        val = s.value
        if isinstance(val, Call) and isinstance(val.op, OpDef) and val.op.level is Level.TENSOR:
            res = lower(self, val, s)
            if isinstance(res, (Window, TileVal)):
                self.bind(s.var, res)
            else:
                self.items.append(AssignStmt(s.var, res, span=s.span))
        elif isinstance(val, Call) and isinstance(val.op, OpDef):
            self.block_op(s.var, val, s)
        elif isinstance(val, Var) and val in self.env:
            self.bind(s.var, self.env[val])
        else:
            new = self.remap.visit(val)
            self.items.append(s if new is val else AssignStmt(s.var, new, span=s.span))

    def evaluate(self, s: EvalStmt) -> None:
        e = s.expr
        if isinstance(e, Call) and isinstance(e.op, OpDef) and e.op.level is Level.TENSOR:
            res = lower(self, e, s)
            if isinstance(res, Expr):
                self.items.append(EvalStmt(res, span=s.span))
        elif isinstance(e, Call) and isinstance(e.op, OpDef):
            self.block_op(None, e, s)
        else:
            new = self.remap.visit(e)
            self.items.append(s if new is e else EvalStmt(new, span=s.span))

    def block_op(self, var: Var | None, c: Call, s: Stmt) -> None:
        """User-written tile code: operands follow the converted values; stores mark outputs."""
        op = c.op
        args = list(c.args)
        writes = op in (block_ops.store, block_ops.mscatter)
        if op is block_ops.load and isinstance(self.value(args[0]), TileVal):
            # a tensor computed by tensor ops is already a tile: take the window of it
            t = self.as_tile(args[0], Vec, span=s.span)
            call = self.op(block_ops.view, [t, self.remap.visit(args[2]), self.remap.visit(args[1]),
                                          *(self.remap.visit(a) for a in args[3:])], {}, s.span)
        else:
            for i in _TENSOR_OPERAND.get(op.name, ()):
                w = self.value(args[i])
                if isinstance(w, Window):
                    (self.written if writes else self.read).add(w.root)
                    if op in (block_ops.mgather, block_ops.mscatter) and not w.full:
                        raise PassError(f"{op.name} addresses a whole kernel parameter by index: pass the "
                                           "tensor itself, not a slice of it", s.span)
                    if not w.full:  # a view of a parameter: offsets relative to the parameter
                        offs = self.remap.visit(args[1])
                        args[1] = MakeTuple(tuple(add_index(a, b) for a, b in zip(w.offsets, offs.elements)))
                    args[i] = w.tensor
            new_args = tuple(self.remap.visit(a) for a in args)
            if all(a is b for a, b in zip(new_args, c.args)):
                call = c
            else:
                call = self.op(op, list(new_args), dict(c.kwargs), s.span)
        if var is None:
            self.items.append(s if call is c else EvalStmt(call, span=s.span))
            if writes:
                self.written.add(self._root(c.args[2]))
            return
        nv = var if structural_equal(var.type, call.type) else Var(var.name, call.type, span=var.span)
        self.items.append(s if (call is c and nv is var) else AssignStmt(nv, call, span=s.span))
        slot: list = []
        self.items.append(slot)
        if isinstance(nv.type, TileType):
            self.bind(var, TileVal(nv, slot))
        elif isinstance(nv.type, TensorType):
            root = self._root(c.args[2]) if op in (block_ops.store, block_ops.mscatter) else None
            self.bind(var, Window(nv, root, zeros(nv.type.rank), nv.type.shape, None, slot, alias=True))

    def _root(self, e: Expr) -> Var | None:
        v = self.value(e)
        return v.root if isinstance(v, Window) else None

    # ---- control flow -----------------------------------------------------------------------

    def carried(self, init: Expr, ia: IterArg, span: Span, computed: bool = False) -> tuple[Expr, object]:
        """(the converted init value, how the iter_arg is carried: 'tensor' root, a tile space, None).
        `computed`: the loop yields a computed value for it, so a tensor init is loaded as a tile."""
        v = self.value(init)
        if v is None:
            return self.remap.visit(init), None
        if isinstance(v, Window) and v.full and not computed:
            return v.tensor, ("tensor", v)
        t = self.as_tile(init, v.var.type.space if isinstance(v, TileVal) else Vec, span=span)
        return t, ("tile", t.type.space)

    def _bind_carried(self, old: Var, new: Var, how, slot: list, written: bool = False) -> None:
        if how is None:
            return
        if how[0] == "tensor":
            w = how[1]
            self.bind(old, Window(new, w.root, zeros(new.type.rank), new.type.shape, None, slot,
                                  alias=w.alias or written))
        else:
            self.bind(old, TileVal(new, slot))

    def _yield_value(self, e: Expr, how, target_type, span: Span) -> Expr:
        if how is None:
            return self.remap.visit(e)
        if how[0] == "tensor":
            v = self.value(e)
            if not (isinstance(v, Window) and v.full):
                raise PassError("a loop-carried tensor of a kernel must stay a parameter (or a store into one)", span,
                                hint="carry a tile instead: start the loop from a local tensor")
            if v.alias:
                self._stored.add(id(how))
            return v.tensor
        return self.as_tile(e, target_type.space, span=span)

    def loop(self, s: ForStmt | WhileStmt) -> None:
        hows, new_ias = [], []
        computed = _computed_yields(s)
        for k, ia in enumerate(s.iter_args):
            init, how = self.carried(ia.init_value, ia, s.span, k in computed)
            t = init.type if how is not None else ia.type
            new_ias.append(ia if (how is None and init is ia.init_value) else IterArg(ia.name, t, init, span=ia.span))
            hows.append(how)
        saved = self.items
        self.items = []
        slot: list = []
        self.items.append(slot)
        for ia, nia, how in zip(s.iter_args, new_ias, hows):
            self._bind_carried(ia, nia, how, slot)
        for ia, nia, how in zip(s.iter_args, new_ias, hows):
            if nia is not ia and how is None:
                self.remap.var_map[ia] = nia
        body = stmt_list(s.body)
        tail = body[-1] if body and isinstance(body[-1], YieldStmt) else None
        self.convert_stmts(body[:-1] if tail is not None else body)
        if tail is not None:
            vals = [self._yield_value(e, h, nia.type, tail.span) for e, h, nia in zip(tail.values, hows, new_ias)]
            self.items.append(YieldStmt(tuple(vals), span=tail.span))
        new_body = block_of(self.items, s.body.span)
        self.items = saved
        rvs = [rv if how is None else Var(rv.name, nia.type, span=rv.span)
               for rv, nia, how in zip(s.return_vars, new_ias, hows)]
        fields = {"iter_args": tuple(new_ias), "body": new_body, "return_vars": tuple(rvs)}
        if isinstance(s, ForStmt):
            fields.update(start=self.remap.visit(s.start), stop=self.remap.visit(s.stop), step=self.remap.visit(s.step))
        else:
            fields.update(condition=self.remap.visit(s.condition))
        self.items.append(rebuild(s, fields))
        after: list = []
        self.items.append(after)
        for rv, nrv, how in zip(s.return_vars, rvs, hows):
            self._bind_carried(rv, nrv, how, after, id(how) in self._stored)

    def branch(self, s: IfStmt) -> None:
        cond = self.remap.visit(s.condition)
        saved = self.items
        arms = []
        for body in (s.then_body, s.else_body):
            self.items = []
            stmts = stmt_list(body)
            tail = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
            self.convert_stmts(stmts[:-1] if tail is not None else stmts)
            arms.append((self.items, tail))
        self.items = saved
        hows, rvs = [], []
        for i in range(len(s.return_vars)):
            vals = [self.value(tail.values[i]) if tail is not None else None for _, tail in arms]
            if any(isinstance(v, TileVal) for v in vals) or any(isinstance(v, Window) and not v.full for v in vals):
                space = next((v.var.type.space for v in vals if isinstance(v, TileVal)), Vec)
                hows.append(("tile", space))
            elif any(isinstance(v, Window) for v in vals):
                hows.append(("tensor", next(v for v in vals if isinstance(v, Window))))
            else:
                hows.append(None)
        new_arms = []
        for items, tail in arms:
            if tail is not None:
                self.items = items
                vals = []
                for e, how in zip(tail.values, hows):
                    if how is not None and how[0] == "tile":
                        vals.append(self.as_tile(e, how[1], span=tail.span))
                    else:
                        vals.append(self._yield_value(e, how, None, tail.span))
                items.append(YieldStmt(tuple(vals), span=tail.span))
            new_arms.append(flatten_items(items))
        self.items = saved
        then_body, else_body = make_body(new_arms[0], s.then_body.span), make_else(new_arms[1])
        for rv, how, v0 in zip(s.return_vars, hows, self._first_yields([then_body, else_body], len(s.return_vars))):
            rvs.append(rv if how is None else Var(rv.name, v0.type, span=rv.span))
        self.items.append(IfStmt(cond, then_body, else_body, tuple(rvs), span=s.span))
        after: list = []
        self.items.append(after)
        for rv, nrv, how in zip(s.return_vars, rvs, hows):
            self._bind_carried(rv, nrv, how, after, id(how) in self._stored)

    @staticmethod
    def _first_yields(arms: list, n: int) -> list[Expr]:
        for a in arms:
            stmts = stmt_list(a) if a is not None else []
            if stmts and isinstance(stmts[-1], YieldStmt):
                return list(stmts[-1].values)
        return [None] * n  # type: ignore[list-item]


class _OperandUses(IRVisitor):
    def __init__(self) -> None:
        self.uses: dict[Var, list[tuple[Call | None, int]]] = {}

    def visit_Call(self, c: Call) -> None:
        for i, a in enumerate(c.args):
            if isinstance(a, Var):
                self.uses.setdefault(a, []).append((c, i))
            else:
                self.visit(a)

    def visit_Var(self, v: Var) -> None:
        self.uses.setdefault(v, []).append((None, -1))


def _operand_uses(body: Stmt | None) -> dict[Var, list[tuple[Call | None, int]]]:
    """Each variable's uses: (call, operand index) for call operands, (None, -1) for any other use."""
    v = _OperandUses()
    if body is not None:
        v.visit(body)
    return v.uses


def _dim_text(d: Expr) -> str:
    from pypto.ir.printer import expr_str

    return expr_str(d)


__all__ = ["ConvertTensorToBlockOps", "KernelConverter"]
