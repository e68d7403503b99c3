"""InCore kernel (after memory planning) -> one PTO module.

Tiles are buffers: every tile variable becomes a `pto.alloc_tile` at its MemRef's address (variables
sharing a buffer share the address). Loop-carried and if-merged tiles therefore need no SSA plumbing;
only scalars travel through `scf` iter_args / results. Tensor parameters are base pointers viewed
through `pto.make_tensor_view` with runtime strides (and runtime extents for dynamic dims).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, ParamDirection
from pypto.ir.function import Function
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
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.pto.model import (
    INDEX,
    Block,
    EnumAttr,
    Func,
    Module,
    Op,
    PtrT,
    TensorViewT,
    TileBufT,
    Value,
)

from .names import Namer
from .scalars import PTO_DTYPE, ScalarEmitter, loop_header, pto_scalar

_LOC = {MemorySpace.Vec: "vec", MemorySpace.Mat: "mat", MemorySpace.Left: "left", MemorySpace.Right: "right",
        MemorySpace.Acc: "acc", MemorySpace.Bias: "bias"}


@dataclass
class KernelInfo:
    name: str
    param_dirs: list[str]
    return_params: list[int]  # for each returned tensor: the index of the parameter it is written into
    uses_spaces: set[str] = field(default_factory=set)
    uses_barrier: bool = False  # waits at pl.system.syncall: an spmd of it runs its blocks at once


def tile_buf(t: TileType, span=None) -> TileBufT:
    shape = t.static_shape()
    if shape is None:
        raise CompileError("tile shapes must be static", span)
    rows = 1
    for d in shape[:-1]:
        rows *= d
    cols = shape[-1] if shape else 1
    valid = t.valid_shape
    vr, vc = _valid_2d(t, valid, span)
    tv = t.tile_view
    loc = _LOC[t.space]
    return TileBufT(loc, PTO_DTYPE[t.dtype], rows, cols, vr, vc,
                    blayout=tv.blayout.name if tv else "row_major", slayout=tv.slayout.name if tv else "none_box",
                    fractal=(tv.fractal if tv else (1024 if t.space is MemorySpace.Acc else 512)),
                    pad=(tv.pad.value if tv else 0))


def _valid_2d(t: TileType, valid, span) -> tuple[int | None, int | None]:
    shape = t.static_shape() or ()
    if len(shape) <= 1:
        v = valid[0] if valid else None
        return 1, (v.value if isinstance(v, E.ConstInt) else None) if v is not None else (shape[0] if shape else 1)
    for i in range(1, len(shape) - 1):
        d = valid[i]
        if not (isinstance(d, E.ConstInt) and d.value == shape[i]):
            raise CompileError("a tile of rank > 2 may have a partial valid region only in its first and last "
                               "dimensions", span)
    r0 = valid[0]
    inner = 1
    for d in shape[1:-1]:
        inner *= d
    vr = r0.value * inner if isinstance(r0, E.ConstInt) else None
    vc = valid[-1].value if isinstance(valid[-1], E.ConstInt) else None
    return vr, vc


class KernelCodegen:
    def __init__(self, fn: Function, arch: str = "cpu"):
        self.fn = fn
        self.arch = arch
        self.names = Namer()
        self.head = Block()  # constants, views, static tile allocations
        self.body = Block()
        self.blocks: list[Block] = [self.body]
        self.values: dict[E.Var, Value] = {}
        self.views: dict[E.Var, Value] = {}  # tensor var -> its tensor view
        self.view_rank: dict[int, int] = {}
        self.param_of: dict[E.Var, int] = {}  # tensor var -> parameter index it aliases
        self.runtime: dict[tuple[int, str, int], Value] = {}  # (param, dim|stride, axis) -> index arg
        self.tiles: dict[E.Var, Value] = {}
        self.dyn: dict[E.DynVar, Value] = {}
        from .task_codegen import uses_barrier

        self.info = KernelInfo(fn.name, [], [], uses_barrier=uses_barrier(fn))
        self.sc = ScalarEmitter(self.lookup_scalar, self.names.fresh, lambda: self.head, lambda: self.blocks[-1])

    # ---- lookup ------------------------------------------------------------------------------

    def lookup_scalar(self, v: E.Var) -> Value:
        if isinstance(v, E.DynVar):
            got = self.dyn.get(v)
            if got is None:
                raise CompileError(f"dynamic dimension '{v.name}' is not bound by any tensor parameter of kernel "
                                   f"{self.fn.name}", v.span)
            return got
        got = self.values.get(v)
        if got is None:
            raise CompileError(f"kernel {self.fn.name}: scalar '{v.name}' has no value here", v.span)
        return got

    def emit(self, op: Op) -> None:
        self.blocks[-1].ops.append(op)

    # ---- function ----------------------------------------------------------------------------

    def generate(self) -> tuple[Module, KernelInfo]:
        fn = self.fn
        args: list[Value] = []
        trailing: list[tuple[str, Value]] = []
        for i, (p, d) in enumerate(zip(fn.params, fn.param_directions)):
            t = p.type
            if isinstance(t, TensorType):
                a = Value(self.names.fresh(p.name), PtrT(PTO_DTYPE[t.dtype]))
                args.append(a)
                self.param_of[p] = i
                self.info.param_dirs.append({ParamDirection.In: "in", ParamDirection.Out: "out",
                                             ParamDirection.InOut: "inout"}[d])
                for ax, dim in enumerate(t.shape):
                    if not isinstance(dim, E.ConstInt):
                        v = Value(self.names.fresh(f"{a.name}_d{ax}"), INDEX)
                        trailing.append((f"{a.name}.dim.{ax}", v))
                        self.runtime[(i, "dim", ax)] = v
                        if isinstance(dim, E.DynVar) and dim not in self.dyn:
                            self.dyn[dim] = v
                for ax in range(t.rank - 1):
                    v = Value(self.names.fresh(f"{a.name}_s{ax}"), INDEX)
                    trailing.append((f"{a.name}.stride.{ax}", v))
                    self.runtime[(i, "stride", ax)] = v
            elif isinstance(t, ScalarType):
                a = Value(self.names.fresh(p.name), pto_scalar(t.dtype))
                args.append(a)
                self.values[p] = a
                self.info.param_dirs.append("scalar")
            else:
                raise CompileError(f"kernel {fn.name}: parameter '{p.name}' must be a tensor or a scalar "
                                   f"(tile parameters are not allowed)", p.span)
        for i, p in enumerate(fn.params):
            if isinstance(p.type, TensorType):
                self.views[p] = self.make_view(i, p, args[i])
        self.block(fn.body)
        self.emit(Op("func.return"))
        head_ops = self.head.ops
        body = Block(ops=head_ops + self.body.ops)
        spaces = self.info.uses_spaces
        kind = "vector" if spaces <= {"vec"} else ("cube" if not spaces & {"vec"} else "mixed")
        attrs = {
            "pto.kind": EnumAttr("pto.kind", "kernel"),
            "pto.kernel_kind": EnumAttr("pto.kernel_kind", kind),
            "pto.param_dirs": list(self.info.param_dirs),
            "pto.runtime_args": [name for name, _ in trailing],
        }
        func = Func(fn.name, args + [v for _, v in trailing], body, [], attrs)
        return Module([func], {"pto.target_arch": self.arch}), self.info

    def make_view(self, i: int, p: E.Var, ptr: Value) -> Value:
        t = p.type
        assert isinstance(t, TensorType)
        shape = []
        for ax, d in enumerate(t.shape):
            shape.append(self.sc.index(d.value) if isinstance(d, E.ConstInt) else self.runtime[(i, "dim", ax)])
        strides = [self.runtime[(i, "stride", ax)] for ax in range(t.rank - 1)] + [self.sc.index(1)]
        v = Value(self.names.fresh(f"{ptr.name}_view"), TensorViewT(t.rank, PTO_DTYPE[t.dtype]))
        self.head.ops.append(Op("pto.make_tensor_view", [v], [ptr, *shape, *strides],
                                attrs={"layout": EnumAttr("pto.layout", t.layout.name.lower())}))
        return v

    # ---- tiles -------------------------------------------------------------------------------

    def tile(self, v: E.Var, defining: bool = False) -> Value:
        got = self.tiles.get(v)
        if got is not None:
            return got
        t = v.type
        if not isinstance(t, TileType):
            raise CompileError(f"'{v.name}' is not a tile", v.span)
        val = self.alloc_tile(v, t)
        self.tiles[v] = val
        return val

    def alloc_tile(self, v: E.Var, t: TileType) -> Value:
        """A `pto.alloc_tile` of type `t` at the buffer of tile variable `v` (`t` may view the same
        bytes with another shape: see `tile_ops._axis_reduce`)."""
        if t.memref is None or t.memref.addr < 0:
            raise CompileError(f"kernel {self.fn.name}: tile '{v.name}' has no allocated buffer "
                               "(memory planning did not run)", v.span)
        buf = tile_buf(t, v.span)
        self.info.uses_spaces.add(buf.loc)
        addr = self.sc.index(t.memref.addr)
        val = Value(self.names.fresh(v.name), buf)
        operands = [addr]
        if buf.v_row is None or buf.v_col is None:
            vr, vc = self.valid_values(t)
            if buf.v_row is None:
                operands.append(vr)
            if buf.v_col is None:
                operands.append(vc)
            self.emit(Op("pto.alloc_tile", [val], operands))
        else:
            self.head.ops.append(Op("pto.alloc_tile", [val], operands))
        return val

    def valid_values(self, t: TileType) -> tuple[Value, Value]:
        valid = t.valid_shape
        shape = t.static_shape() or ()
        if len(shape) <= 1:
            return self.sc.index(1), self.sc.expr(valid[0], DataType.INDEX)
        inner = 1
        for d in shape[1:-1]:
            inner *= d
        r = self.sc.expr(valid[0], DataType.INDEX)
        if inner != 1:
            r2 = self.sc.new(DataType.INDEX, "vr")
            self.emit(Op("arith.muli", [r2], [r, self.sc.index(inner)]))
            r = r2
        return r, self.sc.expr(valid[-1], DataType.INDEX)

    # ---- statements --------------------------------------------------------------------------

    def block(self, s: Stmt | None) -> None:
        for x in stmt_list(s):
            self.stmt(x)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            self.block(s)
        elif isinstance(s, AssignStmt):
            self.assign(s)
        elif isinstance(s, EvalStmt):
            if not isinstance(s.expr, E.Call):
                return
            self.call(s.expr, None)
        elif isinstance(s, ForStmt):
            self.for_stmt(s)
        elif isinstance(s, IfStmt):
            self.if_stmt(s)
        elif isinstance(s, WhileStmt):
            self.while_stmt(s)
        elif isinstance(s, ScopeStmt):
            self.block(s.body)
        elif isinstance(s, ReturnStmt):
            for v in s.values:
                if isinstance(v, E.Call):  # `return pl.store(...)`: the store's result is the parameter
                    tmp = E.Var("ret", v.type, span=v.span)
                    self.call(v, tmp)
                    v = tmp
                self.info.return_params.append(self.param_index(v))
        elif isinstance(s, YieldStmt):
            raise CompileError("pl.yield_ outside a loop or if", s.span)
        else:
            raise CompileError(f"kernel {self.fn.name}: cannot generate code for {type(s).__name__}", s.span)

    def param_index(self, e: E.Expr) -> int:
        if isinstance(e, E.Var) and e in self.param_of:
            return self.param_of[e]
        raise CompileError(f"kernel {self.fn.name} returns a value that is not one of its Out/InOut tensor "
                           "parameters", e.span, hint="kernels write results into their Out parameters with pl.store")

    def alias_tensor(self, var: E.Var, src: E.Expr) -> None:
        if not isinstance(src, E.Var) or src not in self.views:
            raise CompileError(f"kernel {self.fn.name}: tensor '{var.name}' does not come from a parameter", var.span)
        self.views[var] = self.views[src]
        if src in self.param_of:
            self.param_of[var] = self.param_of[src]

    def assign(self, s: AssignStmt) -> None:
        v, val = s.var, s.value
        t = v.type
        if isinstance(v, E.MemRef):
            return  # buffers are addresses on alloc_tile
        if isinstance(val, E.Call) and isinstance(val.op, E.Op):
            self.call(val, v)
            return
        if isinstance(val, E.Call) and isinstance(val.op, E.GlobalVar):
            self.function_call(val)
        if isinstance(t, ScalarType):
            self.values[v] = self.sc.expr(val, t.dtype)
            return
        if isinstance(t, TensorType):
            self.alias_tensor(v, val)
            return
        if isinstance(t, TileType) and isinstance(val, E.Var):
            self.copy_tile(v, val, s)
            return
        raise CompileError(f"kernel {self.fn.name}: cannot generate code for this assignment", s.span)

    def copy_tile(self, dst: E.Var, src: E.Var, s: Stmt) -> None:
        dt, st = dst.type, src.type
        if isinstance(dt, TileType) and isinstance(st, TileType) and dt.memref is st.memref:
            self.tile(dst)
            return
        self.emit(Op("pto.tmov", ins=[self.tile(src)], outs=[self.tile(dst, True)]))

    # ---- op calls ----------------------------------------------------------------------------

    def call(self, c: E.Call, result: E.Var | None) -> None:
        if isinstance(c.op, E.GlobalVar):
            self.function_call(c)
        _emit_op(self, c, result)

    def function_call(self, c: E.Call) -> None:
        assert isinstance(c.op, E.GlobalVar)
        what = "itself" if c.op.name == self.fn.name else f"function {c.op.name}"
        raise CompileError(f"kernel {self.fn.name} calls {what}: a kernel runs as one task and cannot call "
                           "kernels (or itself)", c.span,
                           hint="call kernels from the orchestration function; share code between kernels "
                                "with @pl.inline helpers")

    # ---- control flow ------------------------------------------------------------------------

    def _carried(self, iter_args, inits) -> tuple[list[int], list[Value]]:
        idx, vals = [], []
        for k, (ia, init) in enumerate(zip(iter_args, inits)):
            t = ia.type
            if isinstance(t, ScalarType):
                idx.append(k)
                vals.append(self.sc.expr(init, t.dtype))
            elif isinstance(t, TensorType):
                self.alias_tensor(ia, init)
            elif isinstance(t, TileType):
                self.share_tile(ia, init)
        return idx, vals

    def share_tile(self, var: E.Var, other: E.Expr) -> None:
        vt = var.type
        if not (isinstance(other, E.Var) and isinstance(other.type, TileType) and isinstance(vt, TileType)):
            raise CompileError(f"loop-carried tile '{var.name}' has no tile value", var.span)
        if vt.memref is not other.type.memref:
            raise CompileError(f"kernel {self.fn.name}: loop-carried tile '{var.name}' does not share its buffer "
                               f"with '{other.name}' (memory planning should have made them share)", var.span)
        self.tile(var)

    def for_stmt(self, s: ForStmt) -> None:
        (lb, ub, st), attrs = loop_header(self.sc, s)
        idx, inits = self._carried(s.iter_args, [a.init_value for a in s.iter_args])
        iv = Value(self.names.fresh(s.loop_var.name), INDEX)
        body = Block(args=[iv])
        self.values[s.loop_var] = iv
        for k in idx:
            a = s.iter_args[k]
            bv = Value(self.names.fresh(a.name), pto_scalar(a.type.dtype))
            body.args.append(bv)
            self.values[a] = bv
        self.blocks.append(body)
        yielded = self.body_with_yield(s.body, s.iter_args, idx)
        self.blocks.pop()
        results = self.bind_results(s.return_vars, s.iter_args, idx)
        body.ops.append(Op("scf.yield", operands=yielded))
        self.emit(Op("scf.for", results, [lb, ub, st, *inits], attrs=attrs, regions=[body]))

    def body_with_yield(self, body: Stmt, carriers, idx: list[int]) -> list[Value]:
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
        for x in (stmts[:-1] if y is not None else stmts):
            self.stmt(x)
        if y is None:
            return []
        out = []
        for k, (c, v) in enumerate(zip(carriers, y.values)):
            t = c.type
            if k in idx:
                out.append(self.sc.expr(v, t.dtype))
            elif isinstance(t, TileType):
                if not (isinstance(v, E.Var) and isinstance(v.type, TileType) and v.type.memref is t.memref):
                    if isinstance(v, E.Var) and isinstance(v.type, TileType):
                        self.emit(Op("pto.tmov", ins=[self.tile(v)], outs=[self.tile(c)]))
                    else:
                        raise CompileError("yielded tile is not a tile variable", y.span)
            elif isinstance(t, TensorType):
                pass  # tensors are written in place; the carried handle is the same parameter
        return out

    def bind_results(self, rets, carriers, idx: list[int]) -> list[Value]:
        results = []
        for k, (r, c) in enumerate(zip(rets, carriers)):
            t = r.type
            if k in idx:
                v = Value(self.names.fresh(r.name), pto_scalar(t.dtype))
                self.values[r] = v
                results.append(v)
            elif isinstance(t, TensorType):
                self.alias_tensor(r, c)
            elif isinstance(t, TileType):
                self.share_tile(r, c)
        return results

    def if_stmt(self, s: IfStmt) -> None:
        cond = self.sc.expr(s.condition, DataType.BOOL)
        idx = [k for k, r in enumerate(s.return_vars) if isinstance(r.type, ScalarType)]
        for r in s.return_vars:  # tiles leaving the if are allocated before it (used after both branches)
            if isinstance(r.type, TileType):
                self.tile(r)
        regions = []
        branch_vals = []
        for body in (s.then_body, s.else_body):
            b = Block()
            self.blocks.append(b)
            vals = self.branch(body, s.return_vars, idx) if body is not None else []
            self.blocks.pop()
            b.ops.append(Op("scf.yield", operands=vals))
            regions.append(b)
            branch_vals.append(vals)
        results = []
        for k in idx:
            r = s.return_vars[k]
            v = Value(self.names.fresh(r.name), pto_scalar(r.type.dtype))
            self.values[r] = v
            results.append(v)
        for k, r in enumerate(s.return_vars):
            if isinstance(r.type, TensorType):
                self.join_tensor(s, k, r)
        if s.else_body is None and not idx:
            regions = regions[:1]
        self.emit(Op("scf.if", results, [cond], regions=regions))

    def join_tensor(self, s: IfStmt, k: int, r: E.Var) -> None:
        """A tensor leaving an if is fine when both branches yield the same parameter window (each
        branch stored into it: `out = pl.store(t, offs, dst)`); choosing between windows is not."""
        views = []
        for body in (s.then_body, s.else_body):
            stmts = stmt_list(body) if body is not None else []
            y = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
            v = y.values[k] if y is not None and k < len(y.values) else None
            views.append(self.views.get(v) if isinstance(v, E.Var) else None)
        if views[0] is None or any(w is not views[0] for w in views):
            raise CompileError("an if inside a kernel cannot choose between tensors", s.span,
                               hint="store into the same output in both branches")
        self.alias_tensor(r, stmt_list(s.then_body)[-1].values[k])

    def branch(self, body: Stmt, rets, idx: list[int]) -> list[Value]:
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
        for x in (stmts[:-1] if y is not None else stmts):
            self.stmt(x)
        if y is None:
            return []
        out = []
        for k, (r, v) in enumerate(zip(rets, y.values)):
            if k in idx:
                out.append(self.sc.expr(v, r.type.dtype))
            elif isinstance(r.type, TileType):
                if isinstance(v, E.Var) and isinstance(v.type, TileType) and v.type.memref is not r.type.memref:
                    self.emit(Op("pto.tmov", ins=[self.tile(v)], outs=[self.tile(r)]))
        return out

    def while_stmt(self, s: WhileStmt) -> None:
        idx, inits = self._carried(s.iter_args, [a.init_value for a in s.iter_args])
        before = Block()
        after = Block()
        for k in idx:
            a = s.iter_args[k]
            bv = Value(self.names.fresh(a.name), pto_scalar(a.type.dtype))
            before.args.append(bv)
        for k, bv in zip(idx, before.args):
            self.values[s.iter_args[k]] = bv
        self.blocks.append(before)
        cond = self.sc.expr(s.condition, DataType.BOOL)
        self.blocks.pop()
        before.ops.append(Op("scf.condition", operands=[cond, *before.args]))
        for k in idx:
            a = s.iter_args[k]
            av = Value(self.names.fresh(a.name), pto_scalar(a.type.dtype))
            after.args.append(av)
            self.values[a] = av
        self.blocks.append(after)
        yielded = self.body_with_yield(s.body, s.iter_args, idx)
        self.blocks.pop()
        after.ops.append(Op("scf.yield", operands=yielded))
        results = self.bind_results(s.return_vars, s.iter_args, idx)
        self.emit(Op("scf.while", results, inits, regions=[before, after]))


def generate_kernel(fn: Function, arch: str = "cpu") -> tuple[Module, KernelInfo]:
    return KernelCodegen(fn, arch).generate()


from .tile_ops import emit_op as _emit_op  # noqa: E402  (tile_ops imports this module's types)

__all__ = ["KernelCodegen", "KernelInfo", "generate_kernel", "tile_buf"]
