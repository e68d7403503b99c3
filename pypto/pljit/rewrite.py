"""Specialising a jit function's source for one call: a rewritten copy of its AST.

The rewrite works on the function's own AST (read from its file), so every node keeps the line
and column it had there: the parser's errors point at the user's source, which is the source map.
New nodes copy the location of the node they replace. Values the rewrite decides (the annotation
of each parameter, a scalar's literal, the extents read from `x.shape`) are not printed as text
but handed to the parser through an overlay of the function's Python environment, under names
the user cannot write (`__pl_jit_*`), so a value is never re-parsed and never shadows a user name.

    x: pl.Tensor / pl.Out[pl.Tensor]       annotation -> the meta's pl.Tensor[[...], dtype(, layout)]
    n: pl.INDEX (a literal at this call)   its uses in the body -> the literal (the parameter stays)
    n (no pl annotation: a Python value)   the parameter is dropped; its uses read the value
    M, N = x.shape / K = x.shape[1]        dropped; M, N, K read the extents (static dims only)
    x.bind_dynamic(0, M)                   dropped (already in the meta)
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from pypto.errors import InvalidSyntax, InvalidType
from pypto.ir.expr import DynVar, Expr

from ..language.annotations import DirectionAnn, ScalarAnn, TensorAnn
from ..language.parser.context import PyEnv
from .meta import ParamSpec, TensorMeta


def assigned_names(fn: ast.FunctionDef) -> dict[str, int]:
    """How often each name is assigned anywhere in the function body."""
    counts: dict[str, int] = {}

    def target(t: ast.AST) -> None:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                counts[n.id] = counts.get(n.id, 0) + 1

    for st in fn.body:
        for n in ast.walk(st):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    target(t)
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.For)):
                target(n.target)
            elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                target(n.optional_vars)
    return counts


def bind_dynamic_calls(fn: ast.FunctionDef) -> list[tuple[ast.Call, str, ast.expr, ast.expr]]:
    """Every `x.bind_dynamic(dim, M)` statement: (call, x, dim node, var node)."""
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call):
            c = n.value
            f = c.func
            if isinstance(f, ast.Attribute) and f.attr == "bind_dynamic" and isinstance(f.value, ast.Name):
                if len(c.args) != 2 or c.keywords:
                    raise InvalidSyntax("bind_dynamic takes two arguments: x.bind_dynamic(dim, M)")
                out.append((c, f.value.id, c.args[0], c.args[1]))
    return out


def called_names(fn: ast.FunctionDef) -> list[str]:
    """Bare-name calls `f(...)` in the body (not `obj.f(...)`), first occurrence order."""
    seen: dict[str, None] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            seen.setdefault(n.func.id, None)
    return list(seen)


def call_sites(fn: ast.FunctionDef, callee: str) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == callee]


def _name(node: ast.AST, ident: str) -> ast.Name:
    return ast.copy_location(ast.Name(id=ident, ctx=ast.Load()), node)


class _Literals(ast.NodeTransformer):
    """Loads of the given names -> overlay names."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return _name(node, self.names[node.id])
        return node


def _shape_read(value: ast.expr, tensors: dict[str, TensorMeta]) -> tuple[str, int | None] | None:
    """`x.shape` -> (x, None); `x.shape[i]` -> (x, i); else None."""
    if isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name):
        return (value.value.id, None) if value.value.id in tensors else None
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
            and isinstance(value.slice.value, int) and not isinstance(value.slice.value, bool):
        got = _shape_read(value.value, tensors)
        if got is not None and got[1] is None:
            return got[0], value.slice.value
    return None


class _Body:
    """Drops bind_dynamic statements and hoists static shape reads into the overlay."""

    def __init__(self, tensors: dict[str, TensorMeta], counts: dict[str, int], overlay: dict[str, Any]):
        self.tensors = tensors
        self.counts = counts
        self.overlay = overlay

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if self._drop(s):
                continue
            for fld in ("body", "orelse", "finalbody"):
                sub = getattr(s, fld, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    setattr(s, fld, self.block(sub) or [ast.copy_location(ast.Pass(), s)])
            out.append(s)
        return out

    def _drop(self, s: ast.stmt) -> bool:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            if isinstance(f, ast.Attribute) and f.attr == "bind_dynamic":
                return True
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
            return False
        got = _shape_read(s.value, self.tensors)
        if got is None or self.counts.get(got[0], 0):
            return False  # (a tensor parameter that is reassigned may change shape: leave it to the parser)
        meta = self.tensors[got[0]]
        tgt = s.targets[0]
        if got[1] is None:
            if not isinstance(tgt, (ast.Tuple, ast.List)) or len(tgt.elts) != len(meta.shape):
                return False
            names, dims = tgt.elts, list(meta.shape)
        else:
            i = got[1]
            if not -len(meta.shape) <= i < len(meta.shape):
                return False  # (the parser reports the bad index)
            names, dims = [tgt], [meta.shape[i]]
        if any(not isinstance(n, ast.Name) or self.counts.get(n.id, 0) != 1 for n in names):
            return False
        if any(isinstance(d, Expr) for d in dims):
            return False  # a dynamic extent stays a runtime value: the parser reads it from the type
        for n, d in zip(names, dims):
            self.overlay[n.id] = d  # type: ignore[union-attr]
        return True


def specialise_node(node: ast.FunctionDef, env: PyEnv, specs: dict[str, ParamSpec], metas: dict[str, TensorMeta],
                    scalars: dict[str, Any], consts: dict[str, Any], *, name: str | None = None,
                    keep_annotations: bool = True) -> tuple[ast.FunctionDef, PyEnv, list[str]]:
    """The rewritten copy of `node` for one specialisation, its environment, and the names of the
    parameters it keeps (in order: what the compiled program takes).

    `scalars`: pl-scalar parameters specialised to a literal (absent: a runtime scalar);
    `consts`: parameters without a pl annotation (dropped from the signature)."""
    node = copy.deepcopy(node)
    node.decorator_list = []
    node.returns = None  # (the parser infers the results)
    if name is not None:
        node.name = name
    overlay: dict[str, Any] = {}
    a = node.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    a.posonlyargs, a.kwonlyargs, a.kw_defaults, a.defaults = [], [], [], []
    kept: list[ast.arg] = []
    literal_names: dict[str, str] = {}
    for p in params:
        spec = specs[p.arg]
        if spec.kind == "const":
            overlay[p.arg] = consts[p.arg]
            continue
        if spec.kind == "tensor":
            meta = metas[p.arg]
            ann: Any = TensorAnn(meta.shape, meta.dtype, meta.layout)
            if spec.direction.name != "In":
                ann = DirectionAnn(spec.direction, ann)
        else:
            ann = ScalarAnn(scalars[p.arg][1] if p.arg in scalars else spec.dtype)
            if p.arg in scalars:
                literal_names[p.arg] = f"__pl_jit_val_{p.arg}"
                overlay[literal_names[p.arg]] = scalars[p.arg][0]
        if keep_annotations:
            overlay[f"__pl_jit_ann_{p.arg}"] = ann
            p.annotation = _name(p.annotation or p, f"__pl_jit_ann_{p.arg}")
        else:
            p.annotation = None
        kept.append(p)
    a.args = kept
    counts = assigned_names(node)
    literal_names = {k: v for k, v in literal_names.items() if not counts.get(k)}  # (reassigned: keep the name)
    body = _Body(metas, counts, overlay).block(node.body)
    node.body = body or [ast.copy_location(ast.Pass(), node)]
    if literal_names:
        node.body = [_Literals(literal_names).visit(s) for s in node.body]
    return node, env.child(overlay), [p.arg for p in kept]


def dyn_dims_of(node: ast.FunctionDef, env: PyEnv, py_eval: Any) -> dict[str, dict[int, DynVar]]:
    """`x.bind_dynamic(dim, M)` statements: param -> {dim: DynVar}."""
    out: dict[str, dict[int, DynVar]] = {}
    for _call, x, dim_node, var_node in bind_dynamic_calls(node):
        dim = py_eval(dim_node)
        var = py_eval(var_node)
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise InvalidType(f"{x}.bind_dynamic: the dimension must be an int, got {dim!r}")
        if not isinstance(var, DynVar):
            raise InvalidType(f"{x}.bind_dynamic: the second argument must be a pl.dynamic(...) variable, got {var!r}")
        out.setdefault(x, {})[dim] = var
    return out


__all__ = ["assigned_names", "bind_dynamic_calls", "call_sites", "called_names", "dyn_dims_of", "specialise_node"]
