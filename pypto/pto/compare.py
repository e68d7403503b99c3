"""Structural equivalence of PTO modules, for tests (`parse_module(print_module(m))` vs `m`).

Two modules are equivalent when they have the same functions in the same order (names, argument
and result types, attributes) whose bodies have the same ops in the same order: same names, same
attributes, same operand / ins / outs / result / region shapes, same types, and operands that
refer to values defined at the same position. Value names, `Op.loc` and the body block's own
`args` of a function (its arguments are `Func.args`) play no part. Attribute dictionaries compare
as dictionaries (order ignored); lists equal tuples; floats compare by value with NaN equal to NaN;
an `arith.constant` value compares after conversion to its result type (`0` equals `0.0` for f32).
"""

from __future__ import annotations

import math
import numbers

from .model import Block, Func, Module, Op, ScalarT, Value
from .syntax import FLOAT_BITS


class _Diff(Exception):
    pass


def _attr_eq(x: object, y: object) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x == y
    if isinstance(x, (list, tuple)):
        return isinstance(y, (list, tuple)) and len(x) == len(y) and all(map(_attr_eq, x, y))
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_attr_eq(x[k], y[k]) for k in x)
    if isinstance(x, numbers.Integral):
        return isinstance(y, numbers.Integral) and int(x) == int(y)
    if isinstance(x, numbers.Real):
        if not isinstance(y, numbers.Real) or isinstance(y, numbers.Integral):
            return False
        fx, fy = float(x), float(y)
        return fx == fy or (math.isnan(fx) and math.isnan(fy))
    return type(x) is type(y) and x == y


def _const(op: Op) -> object:
    v = op.attrs.get("value")
    t = op.results[0].type if len(op.results) == 1 else None
    if isinstance(t, ScalarT) and isinstance(v, numbers.Real):
        if t.name in FLOAT_BITS:
            return float(v)
        return bool(v) if t.name == "i1" else int(v)
    return v


class _Cmp:
    def __init__(self) -> None:
        self.ab: dict[int, Value] = {}
        self.ba: dict[int, Value] = {}

    def bind(self, x: Value, y: Value, where: str) -> None:
        if x.type != y.type:
            raise _Diff(f"{where}: type {x.type} vs {y.type}")
        if id(x) in self.ab or id(y) in self.ba:
            if self.ab.get(id(x)) is not y:
                raise _Diff(f"{where}: %{x.name} / %{y.name} defined twice or at different positions")
        self.ab[id(x)] = y
        self.ba[id(y)] = x

    def defs(self, xs: list[Value], ys: list[Value], where: str) -> None:
        if len(xs) != len(ys):
            raise _Diff(f"{where}: {len(xs)} vs {len(ys)} values")
        for j, (x, y) in enumerate(zip(xs, ys)):
            self.bind(x, y, f"{where}[{j}]")

    def uses(self, xs: list[Value], ys: list[Value], where: str) -> None:
        if len(xs) != len(ys):
            raise _Diff(f"{where}: {len(xs)} vs {len(ys)} values")
        for j, (x, y) in enumerate(zip(xs, ys)):
            m = self.ab.get(id(x))
            if m is None and id(y) not in self.ba:  # a free value (an invalid module): match it here
                self.bind(x, y, f"{where}[{j}]")
            elif m is not y:
                raise _Diff(f"{where}[{j}]: %{x.name} and %{y.name} refer to values defined at different places")

    def attrs(self, a: dict, b: dict, where: str) -> None:
        if a.keys() != b.keys():
            raise _Diff(f"{where}: attribute names {sorted(a)} vs {sorted(b)}")
        for k in a:
            if not _attr_eq(a[k], b[k]):
                raise _Diff(f"{where}: attribute {k!r} = {a[k]!r} vs {b[k]!r}")

    def module(self, a: Module, b: Module) -> None:
        self.attrs(a.attrs, b.attrs, "module")
        if len(a.funcs) != len(b.funcs):
            raise _Diff(f"module: {len(a.funcs)} vs {len(b.funcs)} functions")
        for fa, fb in zip(a.funcs, b.funcs):
            self.func(fa, fb)

    def func(self, a: Func, b: Func) -> None:
        where = f"@{a.name}"
        if a.name != b.name:
            raise _Diff(f"function @{a.name} vs @{b.name}")
        if list(a.results) != list(b.results):
            raise _Diff(f"{where}: result types {a.results} vs {b.results}")
        self.attrs(a.attrs, b.attrs, where)
        self.defs(a.args, b.args, f"{where} args")
        self.block(a.body, b.body, where, args=False)

    def block(self, a: Block, b: Block, where: str, args: bool = True) -> None:
        if args:
            self.defs(a.args, b.args, f"{where} block args")
        if len(a.ops) != len(b.ops):
            raise _Diff(f"{where}: {len(a.ops)} vs {len(b.ops)} ops")
        for j, (x, y) in enumerate(zip(a.ops, b.ops)):
            self.op(x, y, f"{where} op {j} ({x.name})")

    def op(self, a: Op, b: Op, where: str) -> None:
        if a.name != b.name:
            raise _Diff(f"{where}: {a.name} vs {b.name}")
        if a.name == "arith.constant":
            rest_a = {k: v for k, v in a.attrs.items() if k != "value"}
            rest_b = {k: v for k, v in b.attrs.items() if k != "value"}
            self.attrs(rest_a, rest_b, where)
            if not _attr_eq(_const(a), _const(b)) or ("value" in a.attrs) != ("value" in b.attrs):
                raise _Diff(f"{where}: value {a.attrs.get('value')!r} vs {b.attrs.get('value')!r}")
        else:
            self.attrs(a.attrs, b.attrs, where)
        self.uses(a.operands, b.operands, f"{where} operands")
        self.uses(a.ins, b.ins, f"{where} ins")
        self.uses(a.outs, b.outs, f"{where} outs")
        if len(a.regions) != len(b.regions):
            raise _Diff(f"{where}: {len(a.regions)} vs {len(b.regions)} regions")
        for j, (ra, rb) in enumerate(zip(a.regions, b.regions)):
            self.block(ra, rb, f"{where} region {j}")
        self.defs(a.results, b.results, f"{where} results")


def first_difference(a: Module, b: Module) -> str | None:
    """Where `a` and `b` first differ (a readable path), or None when they are equivalent."""
    try:
        _Cmp().module(a, b)
    except _Diff as e:
        return str(e)
    return None


def equivalent(a: Module, b: Module) -> bool:
    """True when the modules are structurally equal with values matched by position."""
    return first_difference(a, b) is None


def assert_equivalent(a: Module, b: Module) -> None:
    d = first_difference(a, b)
    if d is not None:
        raise AssertionError(f"PTO modules differ: {d}")


__all__ = ["assert_equivalent", "equivalent", "first_difference"]
