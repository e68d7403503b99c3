"""Orchestration function -> the task program (a PTO module with one orchestration function).

Each kernel call becomes `pto.submit` with its tensor arguments (direction from the kernel's
parameters) and scalars; loops, branches, scalar reads of tensors and tensor creation are kept.
Dependencies are not written: the runtime derives them from the regions tasks touch.
"""

from __future__ import annotations

from pypto.errors import InvalidType
from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.dtype import DataType
from pypto.ir.enums import ParamDirection
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
from pypto.ir.types import ScalarType, TensorType, TupleType, Type
from pypto.ops.registry import tensor_ops
from pypto.pto.model import INDEX, Block, EnumAttr, Func, Module, Op, Sym, TensorT, Value

from .kernel import KernelInfo
from .names import Namer
from .scalars import PTO_DTYPE, ScalarEmitter, loop_header, pto_scalar
from .task_codegen import TaskState


def tensor_t(t: TensorType) -> TensorT:
    return TensorT(tuple(d.value if isinstance(d, E.ConstInt) else None for d in t.shape), PTO_DTYPE[t.dtype])


def value_type(t: Type):
    if isinstance(t, TensorType):
        return tensor_t(t)
    if isinstance(t, ScalarType):
        return pto_scalar(t.dtype)
    raise InvalidType(type(t).__name__)


class OrchestrationCodegen:
    def __init__(self, fn: Function, kernels: dict[str, KernelInfo], arch: str = "cpu"):
        self.fn = fn
        self._use_counts = None
        self.kernels = kernels
        self.arch = arch
        self.names = Namer()
        self.head = Block()
        self.body = Block()
        self.blocks = [self.body]
        self.values: dict[E.Var, Value] = {}
        self.tuples: dict[E.Var, list[Value]] = {}
        self.dyn: dict[E.DynVar, Value] = {}
        self.sc = ScalarEmitter(self.lookup, self.names.fresh, lambda: self.head, lambda: self.blocks[-1])
        self.tasks = TaskState(self)

    def _used(self, var: E.Var) -> bool:
        """Is `var` read anywhere in the function? (An unused kernel result needs no typed view: its
        buffer may be a window clipped by a valid shape, which a reshape could not take.)"""
        if self._use_counts is None:
            from pypto.ir.variables import used_vars

            self._use_counts = set(used_vars(self.fn.body))
        return var in self._use_counts

    def lookup(self, v: E.Var) -> Value:
        if isinstance(v, E.DynVar):
            got = self.dyn.get(v)
            if got is None:
                raise CompileError(f"dynamic dimension '{v.name}' is not bound by any tensor parameter", v.span)
            return got
        got = self.values.get(v)
        if got is None:
            raise CompileError(f"'{v.name}' has no value in the orchestration", v.span)
        return got

    def emit(self, op: Op) -> None:
        self.blocks[-1].ops.append(op)

    def generate(self) -> Module:
        fn = self.fn
        args = []
        dirs = []
        for p, d in zip(fn.params, fn.param_directions):
            t = p.type
            if isinstance(t, (TensorType, ScalarType)):
                v = Value(self.names.fresh(p.name), value_type(t))
            else:
                raise CompileError(f"orchestration parameter '{p.name}' must be a tensor or a scalar", p.span)
            args.append(v)
            self.values[p] = v
            dirs.append("scalar" if isinstance(t, ScalarType) else
                        {ParamDirection.In: "in", ParamDirection.Out: "out", ParamDirection.InOut: "inout"}[d])
        for p, v in zip(fn.params, args):
            t = p.type
            if isinstance(t, TensorType):
                for ax, dim in enumerate(t.shape):
                    if isinstance(dim, E.DynVar) and dim not in self.dyn:
                        r = Value(self.names.fresh(dim.name), INDEX)
                        self.head.ops.append(Op("pto.tensor_dim", [r], [v], attrs={"axis": ax}))
                        self.dyn[dim] = r
        self.block(fn.body)
        if not fn.return_types and not (self.body.ops and self.body.ops[-1].name == "func.return"):
            self.emit(Op("func.return"))  # a body without `return` (a @pl.jit entry returning nothing)
        results = [value_type(t) for t in fn.return_types]
        body = Block(ops=self.head.ops + self.body.ops)
        attrs = {"pto.kind": EnumAttr("pto.kind", "orchestration"), "pto.param_dirs": dirs}
        return Module([Func(fn.name, args, body, results, attrs)], {"pto.target_arch": self.arch})

    # ---- statements --------------------------------------------------------------------------

    def block(self, s: Stmt | None) -> None:
        for x in stmt_list(s):
            self.stmt(x)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            self.block(s)
        elif isinstance(s, AssignStmt):
            self.assign(s.var, s.value, s)
        elif isinstance(s, EvalStmt):
            if isinstance(s.expr, E.Call):
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
            vals = []
            for v in s.values:
                if isinstance(v.type, ScalarType):
                    raise CompileError("the entry function returns a scalar; a compiled program returns tensors",
                                       v.span if v.span.is_known else s.span,
                                       hint="write the value into an output tensor (pl.tensor.write(out, [0], v) "
                                            "on a pl.Out[pl.Tensor[[1], ...]] parameter) and return that")
                if isinstance(v, E.Call):  # `return self.k(...)` without a temporary
                    tmp = E.Var("ret", v.type, span=v.span)
                    self.call(v, tmp)
                    v = tmp
                vals.append(self.value(v))
            self.emit(Op("func.return", operands=vals))
        else:
            raise CompileError(f"cannot generate orchestration code for {type(s).__name__}", s.span)

    def value(self, e: E.Expr) -> Value:
        if isinstance(e, E.Var) and isinstance(e.type, TensorType):
            return self.lookup(e)
        if isinstance(e, E.TupleGetItem) and isinstance(e.tuple, E.Var) and e.tuple in self.tuples:
            return self.tuples[e.tuple][e.index]  # `return t[0]`, `self.k(t[1])`
        t = e.type
        if isinstance(t, ScalarType):
            return self.sc.expr(e)
        raise CompileError(f"unsupported value in the orchestration: {type(e).__name__}", e.span)

    def assign(self, var: E.Var, val: E.Expr, s: Stmt) -> None:
        t = var.type
        if isinstance(val, E.Call):
            self.call(val, var)
            return
        if isinstance(val, E.TupleGetItem):
            tv = val.tuple
            if isinstance(tv, E.Var) and tv in self.tuples:
                self.values[var] = self.tuples[tv][val.index]
                return
            raise CompileError("tuple access of a non-tuple value", s.span)
        if isinstance(t, TensorType):
            self.values[var] = self.lookup(val)  # type: ignore[arg-type]
            return
        if isinstance(t, ScalarType):
            self.values[var] = self.sc.expr(val, t.dtype)
            return
        raise CompileError(f"cannot generate orchestration code for '{var.name}'", s.span)

    def dims(self, e: E.Expr) -> list[Value]:
        assert isinstance(e, E.MakeTuple)
        return [self.sc.expr(d, DataType.INDEX) for d in e.elements]

    def call(self, c: E.Call, result: E.Var | None) -> None:
        if isinstance(c.op, E.GlobalVar):
            self.submit(c, result)
            return
        if c.op.name.startswith("task."):
            self.tasks.call(c, result)
            return
        op = c.op
        rt = result.type if result is not None else None
        if op is tensor_ops.create:
            assert isinstance(rt, TensorType) and result is not None
            v = Value(self.names.fresh(result.name), tensor_t(rt))
            init = c.kwarg("init_value")
            self.emit(Op("pto.alloc_tensor", [v], self.dims(c.args[0]),
                         attrs={"init": float(init)} if init not in (None, 0) else {}))
            if c.kwarg("manual_dep"):
                self.tasks.untracked.add(id(v))
            self.values[result] = v
        elif op is tensor_ops.view:
            assert isinstance(rt, TensorType) and result is not None
            src = self.lookup(c.args[0])  # type: ignore[arg-type]
            valid = c.args[3] if len(c.args) > 3 and isinstance(c.args[3], E.MakeTuple) else None
            if valid is None:
                v = Value(self.names.fresh(result.name), tensor_t(rt))
                self.emit(Op("pto.tensor_slice", [v], [src, *self.dims(c.args[2]), *self.dims(c.args[1])]))
                self.tasks.derived(src, v)
            else:
                # a window with a valid region: the task sees only the valid part (it must not read past
                # the tensor); a kernel declaring the full window accepts it (`valid` marks the slice)
                tt = tensor_t(rt)
                shape = tuple(d if isinstance(e, E.ConstInt) and e.value == d else None
                              for d, e in zip(tt.shape, valid.elements))
                v = Value(self.names.fresh(result.name), TensorT(shape, tt.elem))
                self.emit(Op("pto.tensor_slice", [v], [src, *self.dims(c.args[2]), *self.dims(valid)],
                             attrs={"valid": True}))
                self.tasks.derived(src, v)
            self.values[result] = v
        elif op is tensor_ops.reshape:
            assert isinstance(rt, TensorType) and result is not None
            src = self.lookup(c.args[0])  # type: ignore[arg-type]
            v = Value(self.names.fresh(result.name), tensor_t(rt))
            self.emit(Op("pto.tensor_reshape", [v], [src, *self.dims(c.args[1])]))
            self.tasks.derived(src, v)
            self.values[result] = v
        elif op is tensor_ops.read:
            assert result is not None and isinstance(rt, ScalarType)
            v = Value(self.names.fresh(result.name), pto_scalar(rt.dtype))
            self.emit(Op("pto.tensor_read", [v], [self.lookup(c.args[0]), *self.dims(c.args[1])]))  # type: ignore
            self.values[result] = v
        elif op is tensor_ops.write:
            t = c.args[0].type
            assert isinstance(t, TensorType)
            val = self.sc.expr(c.args[2], t.dtype)
            self.emit(Op("pto.tensor_write", operands=[val, self.lookup(c.args[0]), *self.dims(c.args[1])]))  # type: ignore
        elif op is tensor_ops.dim:
            assert result is not None
            t = c.args[0].type
            assert isinstance(t, TensorType)
            ax = c.kwarg("axis") % t.rank
            d = t.shape[ax]
            if isinstance(d, E.ConstInt):
                self.values[result] = self.sc.index(d.value)
            else:
                v = Value(self.names.fresh(result.name), INDEX)
                self.emit(Op("pto.tensor_dim", [v], [self.lookup(c.args[0])], attrs={"axis": ax}))  # type: ignore
                self.values[result] = v
        else:
            raise CompileError(f"{op.name} cannot run in the orchestration; it belongs in a kernel", c.span,
                               hint="compute on tensors inside a pl.incore() scope or an InCore function")

    def submit(self, c: E.Call, result: E.Var | None) -> None:
        name = c.op.name
        info = self.kernels.get(name)
        if info is None:
            raise CompileError(f"the orchestration calls '{name}', which is not a kernel", c.span,
                               hint="only InCore functions can be called from the orchestration")
        vals = []
        for a in c.args:
            vals.append(self.value(a))
        nargs = len(vals)
        attrs = {"callee": Sym(name), "dirs": list(info.param_dirs)}
        tid = self.tasks.submit(vals, attrs, info.uses_barrier)
        self.emit(Op("pto.submit", tid, operands=vals, attrs=attrs))
        vals = vals[:nargs]
        if result is None:
            return
        outs = [vals[i] for i in info.return_params]
        rt = result.type
        rts = list(rt.types) if isinstance(rt, TupleType) else [rt]
        for k, (v, t) in enumerate(zip(outs, rts)):
            # the kernel's result type may be more static than the buffer passed in (a [16, n] buffer
            # into a [16, 128] parameter): the result is the same buffer, viewed with the result's type
            if isinstance(t, TensorType) and v.type != tensor_t(t) and self._used(result):
                cast = Value(self.names.fresh(f"{name}_out"), tensor_t(t))
                self.emit(Op("pto.tensor_reshape", [cast], [v, *[self.sc.expr(d, DataType.INDEX) for d in t.shape]]))
                outs[k] = cast
        if isinstance(rt, TupleType):
            self.tuples[result] = outs
        elif outs:
            self.values[result] = outs[0]
        elif not (isinstance(rt, TupleType) and not rt.types):
            raise CompileError(f"kernel {name} returns nothing usable here", c.span)

    # ---- control flow ------------------------------------------------------------------------

    def for_stmt(self, s: ForStmt) -> None:
        (lb, ub, st), attrs = loop_header(self.sc, s)
        inits = [self.value(a.init_value) for a in s.iter_args]
        iv = Value(self.names.fresh(s.loop_var.name), INDEX)
        body = Block(args=[iv])
        self.values[s.loop_var] = iv
        for a, init in zip(s.iter_args, inits):
            bv = Value(self.names.fresh(a.name), value_type(a.type))
            body.args.append(bv)
            self.values[a] = bv
            self.tasks.derived(init, bv)  # a loop-carried untracked tensor stays untracked
        self.blocks.append(body)
        ys = self.body_yield(s.body)
        self.blocks.pop()
        body.ops.append(Op("scf.yield", operands=ys))
        results = self.results(s.return_vars)
        for init, r in zip(inits, results):
            self.tasks.derived(init, r)
        self.emit(Op("scf.for", results, [lb, ub, st, *inits], attrs=attrs, regions=[body]))

    def body_yield(self, body: Stmt | None) -> list[Value]:
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
        for x in (stmts[:-1] if y is not None else stmts):
            self.stmt(x)
        return [self.value(v) for v in y.values] if y is not None else []

    def results(self, rets) -> list[Value]:
        out = []
        for r in rets:
            v = Value(self.names.fresh(r.name), value_type(r.type))
            self.values[r] = v
            out.append(v)
        return out

    def if_stmt(self, s: IfStmt) -> None:
        cond = self.sc.expr(s.condition, DataType.BOOL)
        regions = []
        for body in (s.then_body, s.else_body):
            b = Block()
            self.blocks.append(b)
            ys = self.body_yield(body)
            self.blocks.pop()
            b.ops.append(Op("scf.yield", operands=ys))
            regions.append(b)
        if s.else_body is None and not s.return_vars:
            regions = regions[:1]
        self.emit(Op("scf.if", self.results(s.return_vars), [cond], regions=regions))

    def while_stmt(self, s: WhileStmt) -> None:
        inits = [self.value(a.init_value) for a in s.iter_args]
        before, after = Block(), Block()
        for a in s.iter_args:
            bv = Value(self.names.fresh(a.name), value_type(a.type))
            before.args.append(bv)
            self.values[a] = bv
        self.blocks.append(before)
        cond = self.sc.expr(s.condition, DataType.BOOL)
        self.blocks.pop()
        before.ops.append(Op("scf.condition", operands=[cond, *before.args]))
        for a in s.iter_args:
            av = Value(self.names.fresh(a.name), value_type(a.type))
            after.args.append(av)
            self.values[a] = av
        self.blocks.append(after)
        ys = self.body_yield(s.body)
        self.blocks.pop()
        after.ops.append(Op("scf.yield", operands=ys))
        self.emit(Op("scf.while", self.results(s.return_vars), inits, regions=[before, after]))


def generate_orchestration(fn: Function, kernels: dict[str, KernelInfo], arch: str = "cpu") -> Module:
    return OrchestrationCodegen(fn, kernels, arch).generate()


__all__ = ["OrchestrationCodegen", "generate_orchestration", "tensor_t"]
