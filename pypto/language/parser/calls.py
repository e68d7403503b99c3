"""Binding a `pl.*` call to a registry op: dispatch, argument binding, value conversion."""

from __future__ import annotations

import difflib
from typing import Any

from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.expr import Expr, MakeTuple
from pypto.ir.op import OpError, create_op_call
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ops.registry import REQUIRED, Dispatch, OpDef, Param, Router

from ..errors import ParserTypeError
from .compat_calls import _Adapted, adapt
from .values import const_for, is_number, python_value, scalar_binop, scalar_dtype, to_expr

_SCALAR_EXPRS = {"abs": E.Abs, "max": E.Max, "min": E.Min, "xor": E.Xor, "cast": E.Cast}


def value_kind(v: Any) -> str:
    if isinstance(v, Expr):
        t = v.type
        if isinstance(t, TensorType):
            return "tensor"
        if isinstance(t, TileType):
            return "tile"
        if isinstance(t, ScalarType):
            return "scalar"
        return "other"
    if is_number(v):
        return "scalar"
    return "python"


class OpCaller:
    def call_op(self, spelling: str, entry: OpDef | Dispatch | Router, args: list[Any], kwargs: dict[str, Any],
                sp: Span) -> Any:
        try:  # the generations' changed call forms (compat_calls.py, docs/compat.md)
            entry, args, kwargs = adapt(self, spelling, entry, args, kwargs, sp)
        except _Adapted as done:
            return done.value
        if isinstance(entry, Router):  # a spelling with several call forms (pypto/ops/gather_scatter.py)
            return entry.route(args, kwargs, lambda e, a, k: self.call_op(spelling, e, list(a), dict(k), sp))
        if isinstance(entry, Dispatch):
            return self.dispatch(spelling, entry, args, kwargs, sp)
        return self.build_op(entry, args, kwargs, sp)

    def dispatch(self, spelling: str, d: Dispatch, args: list[Any], kwargs: dict[str, Any], sp: Span) -> Any:
        first = args[0] if args else next(iter(kwargs.values()), None)
        kind = value_kind(first)
        second = args[1] if len(args) > 1 else kwargs.get("rhs")
        rhs_scalar = second is not None and value_kind(second) == "scalar"
        chosen = d.choose(kind, rhs_scalar)
        if chosen is None and kind == "scalar" and d.name in _SCALAR_EXPRS:
            chosen = f"scalar.{d.name}"
        if chosen is None:
            forms = [k for k, v in (("Tensor", d.tensor), ("Tile", d.tile)) if v]
            got = {"tensor": "a Tensor", "tile": "a Tile", "scalar": "a scalar"}.get(kind, "a non-pl value")
            raise ParserTypeError(f"{spelling} does not accept {got} as its first operand",
                                  sp, hint=f"it takes a {' or a '.join(forms) or 'different value'}")
        if isinstance(chosen, str):  # a scalar expression form ("scalar.cast", ...), not a registry op
            return self.scalar_form(chosen, list(args) + list(kwargs.values()), sp)
        return self.build_op(chosen, args, kwargs, sp)

    def scalar_form(self, name: str, args: list[Any], sp: Span) -> Expr:
        short = name.split(".", 1)[1]
        if short == "cast":
            if len(args) < 2 or not isinstance(args[1], DataType):
                raise ParserTypeError("pl.cast(x, dtype) needs a dtype", sp)
            v = to_expr(args[0], sp)
            if not isinstance(v.type, ScalarType):
                raise ParserTypeError("pl.cast on a non-scalar value", sp)
            return E.Cast(v, args[1], span=sp)
        if short == "abs":
            v = to_expr(args[0], sp)
            return E.Abs(v, scalar_dtype(v), span=sp)
        if len(args) != 2:
            raise ParserTypeError(f"pl.{short} on scalars takes two operands", sp)
        for a in args:
            if isinstance(a, Expr) and not isinstance(a.type, ScalarType):
                raise ParserTypeError(f"pl.{short}: cannot mix a scalar with a tensor or tile", sp)
        return scalar_binop(_SCALAR_EXPRS[short], args[0], args[1], sp)

    # ---- binding -----------------------------------------------------------------------------

    def bind(self, op: OpDef, args: list[Any], kwargs: dict[str, Any], sp: Span) -> dict[str, Any]:
        short = op.name.split(".", 1)[1]
        if op.binder is not None:
            try:
                return op.binder(args, kwargs)
            except OpError as e:
                raise ParserTypeError(e.message, sp, hint=e.hint) from None
        params = op.params
        if len(args) > len(params):
            raise ParserTypeError(f"{short} takes at most {len(params)} arguments, got {len(args)}", sp,
                                  hint="signature: " + _sig(op))
        out = {p.name: a for p, a in zip(params, args)}
        names = op.param_names
        kwargs = {_kw_alias(op, short, k): v for k, v in kwargs.items()}
        for k, v in kwargs.items():
            if k not in names:
                close = difflib.get_close_matches(k, {p.name for p in params}, n=1)
                raise ParserTypeError(f"{short} has no parameter '{k}'", sp,
                                      hint=f"did you mean '{close[0]}'?" if close else "signature: " + _sig(op))
            if k in out:
                raise ParserTypeError(f"{short} got parameter '{k}' twice", sp)
            out[k] = v
        return out

    def build_op(self, op: OpDef, args: list[Any], kwargs: dict[str, Any], sp: Span) -> Expr:
        bound = self.bind(op, args, kwargs, sp)
        known = op.param_names
        for k in bound:
            if k not in known:
                raise ParserTypeError(f"{op.name.split('.', 1)[1]} has no parameter '{k}'", sp,
                                      hint="signature: " + _sig(op))
        operands: list[Expr] = []
        like = None
        missing_optional = False
        for p in op.operands:
            if p.name in bound:
                if missing_optional:
                    raise ParserTypeError(f"{op.name}: '{p.name}' given but an earlier optional operand is "
                                          "missing", sp)
                e = self.convert_operand(op, p, bound[p.name], sp, like)
                if like is None and isinstance(e.type, (TensorType, TileType)):
                    like = e.type.dtype
                operands.append(e)
            elif p.optional:
                missing_optional = True
            elif p.default is not REQUIRED:
                operands.append(self.convert_operand(op, p, p.default, sp, like))
            else:
                raise ParserTypeError(f"{op.name.split('.', 1)[1]} is missing argument '{p.name}'", sp,
                                      hint="signature: " + _sig(op))
        attrs = {p.name: self.convert_attr(op, p, bound[p.name], sp) for p in op.attrs if p.name in bound}
        try:
            return create_op_call(op, operands, attrs, sp)
        except OpError as e:
            raise ParserTypeError(e.message, sp, hint=e.hint) from None

    def convert_operand(self, op: OpDef, p: Param, v: Any, sp: Span, like: DataType | None) -> Expr:
        what = f"{op.name.split('.', 1)[1]}: argument '{p.name}'"
        k = p.kind
        if k in ("shape",):
            return self.shape_tuple(v, sp, what)
        if k == "scalar":
            if is_number(v):
                return const_for(v, like)
            if isinstance(v, Expr) and isinstance(v.type, ScalarType):
                return v
            raise ParserTypeError(f"{what} must be a scalar or a number, got {self.describe(v)}", sp)
        if k == "index":
            if is_number(v):
                return const_for(v)
            if isinstance(v, Expr) and isinstance(v.type, ScalarType):
                return v
            raise ParserTypeError(f"{what} must be an integer, got {self.describe(v)}", sp)
        if isinstance(v, Expr):
            return v
        if isinstance(v, (list, tuple)) and k in ("tuple", "any"):
            return self.shape_tuple(v, sp, what)
        if is_number(v) and k == "any":
            return const_for(v, like)
        want = {"tensor": "a Tensor", "tile": "a Tile", "value": "a Tensor or Tile"}.get(k, "a pl value")
        raise ParserTypeError(f"{what} must be {want}, got {self.describe(v)}", sp)

    def shape_tuple(self, v: Any, sp: Span, what: str) -> Expr:
        if isinstance(v, MakeTuple):
            return v
        if not isinstance(v, (list, tuple)):
            if not ((isinstance(v, Expr) and isinstance(v.type, ScalarType)) or is_number(v)):
                raise ParserTypeError(f"{what} must be a list of integers, got {self.describe(v)}", sp)
            v = [v]
        elems = []
        for x in v:
            if is_number(x) and not isinstance(x, bool) and float(x).is_integer() and not isinstance(x, float) \
                    and not (-(1 << 63) <= int(x) < (1 << 63)):
                raise ParserTypeError(f"{what}: {x} does not fit in an index (64-bit)", sp)
            if type(x) is int:  # the common case: a literal dimension
                elems.append(E.ConstInt(x, DataType.INDEX))
                continue
            if isinstance(x, (bool, float)) or (is_number(x) and not float(x).is_integer()):
                raise ParserTypeError(f"{what} must contain integers, got {x!r}", sp)
            if is_number(x):
                elems.append(E.ConstInt(int(x), DataType.INDEX))
            elif isinstance(x, Expr) and isinstance(x.type, ScalarType) and (x.type.dtype.is_int):
                elems.append(x)
            else:
                raise ParserTypeError(f"{what} must contain integers or integer scalars, got {self.describe(x)}", sp)
        return MakeTuple(tuple(elems), span=sp)

    def convert_attr(self, op: OpDef, p: Param, v: Any, sp: Span) -> Any:
        v = python_value(v)
        if isinstance(v, Expr):
            raise ParserTypeError(f"{op.name.split('.', 1)[1]}: '{p.name}' must be a compile-time constant", sp,
                                  hint="attributes (dtypes, memory spaces, modes, axes) cannot be run-time values")
        if isinstance(v, list):
            v = tuple(v)
        return v

    def describe(self, v: Any) -> str:  # overridden by ExprParser
        return type(v).__name__


def _sig(op: OpDef) -> str:
    parts = []
    for p in op.params:
        s = p.name
        if p.default is not REQUIRED:
            s += f"={p.default!r}"
        elif p.optional:
            s += "=None"
        parts.append(s)
    return f"{op.name}({', '.join(parts)})"


# Keyword names of the public reference (§1.1) for parameters that have another name here:
# (op family, keyword) -> our parameter name, or its position.
_KW_ALIASES: dict[tuple[str, str], str | int] = {
    ("row_max", "tmp_tile"): "tmp", ("row_sum", "tmp_tile"): "tmp", ("row_min", "tmp_tile"): "tmp",
    ("expands", "scalar"): "value", ("fillpad", "value"): "input",
    ("read", "offset"): "indices", ("read", "src"): 0,
    ("write", "offset"): "indices", ("write", "dst"): 0,
}


def _kw_alias(op: OpDef, short: str, k: str) -> str:
    family = short.rsplit(".", 1)[-1]
    target = _KW_ALIASES.get((family, k))
    if target is None or k in op.param_names:
        return k
    if isinstance(target, int):
        return op.params[target].name if target < len(op.params) else k
    return target if target in op.param_names else k
