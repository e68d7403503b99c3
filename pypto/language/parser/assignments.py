"""Assignment statements: plain, tuple-unpacking, subscript (`t[i, j] = v`, slice assembly),
annotated (including `pl.MemRefType` buffer declarations) and augmented; and how a name is bound —
to a Python value (a compile-time constant) or to a Var, reusing the visible Var for a reassignment
of the same type (the parser stays non-SSA; ConvertToSSA renames later).
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.expr import Call, Cast, Expr, IterArg, MemRef, TupleGetItem, Var, make_memref
from pypto.ir.node import replace
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt
from pypto.ir.structural import structural_equal
from pypto.ir.types import MemRefType, ScalarType, TileType, TupleType, Type
from pypto.ops.registry import block_ops, lookup_dsl, tensor_ops

from ..annotations import TileAnn
from ..dsl import DslHelper, DslOp
from ..errors import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedFeatureError,
)
from .context import Binding
from .expressions import ExprParser
from .values import check_compatible, is_number, to_expr


class AssignmentParser(ExprParser):
    """Mixin: assignment statements. Needs, besides what ExprParser needs, `self.counts` /
    `self.nested` (how often and where each name is assigned), `self.loop_depth`, `self.strict_ssa`,
    and `yield_stmt` / `_yield_targets` (ControlFlowParser) for `r = pl.yield_(...)`."""

    def _is_helper(self, node: ast.expr, name: str) -> bool:
        if not isinstance(node, ast.Call):
            return False
        try:
            callee = self.peek_callee(node)
        except ParserError:
            return False
        return isinstance(callee, DslHelper) and callee.name == name

    def st_Assign(self, node: ast.Assign, is_last: bool = False) -> None:
        if len(node.targets) != 1:
            raise UnsupportedFeatureError("chained assignment (a = b = ...) is not supported", self.span(node))
        tgt = node.targets[0]
        if self._is_helper(node.value, "yield_"):
            names, spans = self._yield_targets(tgt)
            self.yield_stmt(node.value, names, spans, None, is_last)
            return
        if isinstance(tgt, ast.Name):
            self.assign_name(tgt.id, self.eval(node.value), None, self.span(tgt), node)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            self.assign_tuple(tgt, node.value, node)
        elif isinstance(tgt, ast.Subscript):
            self.assign_subscript(tgt, node.value, node)
        else:
            raise ParserSyntaxError("can only assign to names, tuples of names and subscripts", self.span(tgt))

    def st_AnnAssign(self, node: ast.AnnAssign, is_last: bool = False) -> None:
        if not isinstance(node.target, ast.Name):
            raise ParserSyntaxError("annotated assignment needs a plain name on the left", self.span(node.target))
        if node.value is None:
            raise ParserSyntaxError(f"'{node.target.id}' is declared without a value", self.span(node),
                                    hint="kernels have no uninitialised variables: assign a value")
        ann = self.eval_annotation(node.annotation)
        if ann in (int, float, bool, str):  # a Python-level constant with a Python annotation
            t = None
        else:
            t = self.to_type(ann, node.annotation)
        if self._is_helper(node.value, "yield_"):
            self.yield_stmt(node.value, [node.target.id], [self.span(node.target)], t, is_last)
            return
        if isinstance(t, MemRefType):
            self.memref_def(node)
            return
        self.annotated_type = t  # (a pl.tpop_* takes its tile type from the annotation: parser/pipes.py)
        try:
            value = self.eval(node.value)
        finally:
            self.annotated_type = None
        if isinstance(ann, TileAnn) and ann.memory_space is None and ann.memref is None \
                and isinstance(t, TileType) and isinstance(getattr(value, "type", None), TileType):
            # `pl.Tile[[M, N], dt]` names no memory space: the value's space fills the gap
            t = replace(t, memory_space=value.type.memory_space)
        self.assign_name(node.target.id, value, t, self.span(node.target), node)

    def st_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise UnsupportedFeatureError("augmented assignment only to plain names", self.span(node))
        expr = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        ast.copy_location(expr, node)
        expr.left = ast.copy_location(expr.left, node.target)
        self.assign_name(node.target.id, self.eval(expr), None, self.span(node.target), node)

    def memref_def(self, node: ast.AnnAssign) -> None:
        sp = self.span(node)
        call = node.value
        ok = isinstance(call, ast.Call)
        callee = self.eval(call.func) if ok else None
        if not (isinstance(callee, DslOp) and callee.entry is block_ops.alloc):
            raise ParserTypeError("a pl.MemRefType variable must be assigned pl.block.alloc(space, addr, size, id)",
                                  sp)
        args, kwargs, _ = self.call_args(call)
        names = ["memory_space", "addr", "size", "id"]
        vals = dict(zip(names, args))
        vals.update(kwargs)
        if "memory_space" not in vals:
            raise ParserTypeError("pl.block.alloc needs a memory space", sp)
        m = make_memref(vals["memory_space"], int(vals.get("addr", -1)), int(vals.get("size", 0)),
                        int(vals.get("id", 0)), name=node.target.id, span=self.span(node.target))
        self.scopes.define(node.target.id, Binding(m, m.span))
        self.emit(AssignStmt(m, self._alloc_call(m, sp), span=sp))

    def _alloc_call(self, m: MemRef, sp: Span) -> Expr:
        from pypto.ir.op import create_op_call

        return create_op_call(block_ops.alloc, [], {"memory_space": m.memory_space, "addr": m.addr, "size": m.size,
                                                  "id": m.id}, sp)

    def _python_ok(self, name: str) -> bool:
        return self.counts.get(name, 0) <= 1 and name not in self.nested and self.loop_depth == 0

    def assign_name(self, name: str, value: Any, ann: Type | None, sp: Span, node: ast.AST) -> Var | None:
        from .arrays import ARRAY_TYPES

        if isinstance(value, ARRAY_TYPES):
            if ann is not None:
                raise ParserTypeError(f"'{name}' is a pl.array: it takes no annotation", sp)
            self.assign_array(name, value, sp)  # type: ignore[attr-defined]
            return None
        if value is None and isinstance(getattr(node, "value", None), ast.Constant) and not self._python_ok(name):
            # `prev_tid = None` reassigned later (a task id carried through a loop): "no producer yet"
            from pypto.ir.task_ops import task_call

            value = task_call("task.invalid", span=sp)
        if value is None:
            raise ParserTypeError("this expression produces no value", self.span(node))
        if not isinstance(value, Expr):
            if ann is None and (not is_number(value) or self._python_ok(name)):
                self.bind_python(name, value, sp)
                return None
            if ann is not None and not isinstance(ann, ScalarType) and not is_number(value):
                raise ParserTypeError(f"cannot assign {type(value).__name__} to a {ann}", sp)
            like = ann.dtype if isinstance(ann, ScalarType) else None
            value = to_expr(value, sp, f"value of '{name}'", like)
        t = value.type
        if isinstance(t, TupleType) and not t.types and _writes_element(value):
            # today's `x = pl.write(x, idx, v)` (the write returns its destination): the write is
            # the statement, and the name stays (or becomes) the written tensor / tile
            self.emit(EvalStmt(value, span=self.span(node)))
            dst = value.args[0]
            b = self.scopes.lookup(name)
            if b is not None and b.value is dst:
                if ann is not None:
                    check_compatible(ann, dst.type, sp, f"'{name}'")
                return dst
            value, t = dst, dst.type
        if isinstance(t, TupleType) and not t.types:
            raise ParserTypeError("this operation produces no value to assign", self.span(node))
        if ann is not None:
            if isinstance(ann, ScalarType) and isinstance(t, ScalarType) and ann.dtype is not t.dtype:
                value = Cast(value, ann.dtype, span=value.span)
                t = ann
            else:
                check_compatible(ann, t, sp, f"'{name}'")
                if isinstance(ann, TileType) and isinstance(t, TileType) and ann.memref is not None:
                    t = replace(t, memref=ann.memref)  # the buffer is not inferable: it comes from the text
        var = self.bind_var(name, t, sp)
        self.emit(AssignStmt(var, value, span=self.span(node)))
        return var

    def bind_python(self, name: str, value: Any, sp: Span) -> None:
        b = self.scopes.lookup(name)
        if b is not None and not b.python:
            raise ParserTypeError(f"'{name}' holds a pl value; it cannot be rebound to the Python value {value!r}",
                                  sp, hint="use pl.const(...) or a scalar expression")
        self.scopes.define(name, Binding(value, sp, python=True))

    def bind_var(self, name: str, t: Type, sp: Span) -> Var:
        """The Var an assignment to `name` writes: the visible one (non-SSA reassignment) or a new one."""
        b = self.scopes.lookup(name)
        if b is not None and not b.python and isinstance(b.value, Var):
            prev: Var = b.value
            if self.strict_ssa:
                raise SSAViolationError(f"variable '{name}' is assigned more than once (strict_ssa=True)", sp,
                                        hint=f"use a new name, e.g. '{name}_1'", previous_span=b.span)
            if type(prev) is Var and structural_equal(prev.type, t, enable_auto_mapping=False):
                return prev
            owner = self.scopes.owner(name)
            if owner is not self.scopes.stack[-1] and not isinstance(prev, IterArg):
                from pypto.ir.printer import type_str

                raise ParserTypeError(f"'{name}' changes type from {type_str(prev.type)} to {type_str(t)} inside a "
                                      "nested block", sp, hint="use a different name for the new value")
        elif b is not None and b.python:
            raise ParserTypeError(f"'{name}' was bound to the Python value {b.value!r}; it cannot become a pl value "
                                  "here", sp, hint="use a different name")
        v = Var(name, t, span=sp)
        self.scopes.define(name, Binding(v, sp))
        return v

    def assign_tuple(self, tgt: ast.Tuple | ast.List, value_node: ast.expr, node: ast.Assign) -> None:
        names = []
        for e in tgt.elts:
            if not isinstance(e, ast.Name):
                raise ParserSyntaxError("tuple assignment targets must be plain names", self.span(e))
            names.append(e)
        val = self.eval(value_node)
        sp = self.span(node)
        if isinstance(val, Expr):
            t = val.type
            if not isinstance(t, TupleType):
                raise ParserTypeError(f"cannot unpack a single value into {len(names)} names", sp)
            if len(t.types) != len(names):
                raise ParserTypeError(f"cannot unpack {len(t.types)} values into {len(names)} names", sp)
            tmp = Var("_".join(n.id for n in names) + "_tuple", t, span=sp)
            self.emit(AssignStmt(tmp, val, span=sp))
            for i, n in enumerate(names):
                self.assign_name(n.id, TupleGetItem(tmp, i, span=sp), None, self.span(n), node)
            return
        if not isinstance(val, (tuple, list)) or len(val) != len(names):
            raise ParserTypeError(f"cannot unpack this value into {len(names)} names", sp)
        for n, v in zip(names, val):
            self.assign_name(n.id, v, None, self.span(n), node)

    def assign_subscript(self, tgt: ast.Subscript, value_node: ast.expr, node: ast.Assign) -> None:
        base = self.eval(tgt.value)
        sp = self.span(node)
        from .arrays import ARRAY_TYPES

        if isinstance(base, ARRAY_TYPES):
            self.array_store(base, self.eval(tgt.slice), self.eval(value_node), sp)  # type: ignore[attr-defined]
            return
        if not self._is_shaped(base):
            raise UnsupportedFeatureError("only tensors and tiles can be assigned into by subscript", sp)
        items = tgt.slice.elts if isinstance(tgt.slice, ast.Tuple) else [tgt.slice]
        vals = [self.eval(i) for i in items]
        value = self.eval(value_node)
        if all(not isinstance(v, slice) for v in vals):
            call = self.call_entry("pl.write", lookup_dsl("pl", "write"), [base, vals, value], {}, sp, None)
            self.emit(EvalStmt(call, span=sp))
            return
        offs = []
        for v in vals:
            if not isinstance(v, slice) or v.step not in (None, 1):
                raise UnsupportedFeatureError("slice assignment needs plain slices on every axis", sp)
            offs.append(0 if v.start is None else v.start)
        offs += [0] * (base.type.rank - len(offs))
        call = self.call_entry("pl.assemble", lookup_dsl("pl", "assemble"), [base, value, offs], {}, sp, None)
        if isinstance(tgt.value, ast.Name):
            self.assign_name(tgt.value.id, call, None, self.span(tgt.value), node)
        else:
            self.emit(EvalStmt(call, span=sp))


__all__ = ["AssignmentParser"]


def _writes_element(value: Expr) -> bool:
    return isinstance(value, Call) and value.op in (tensor_ops.write, block_ops.write)
