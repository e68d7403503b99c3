"""The table of registered operators, by IR name.

The IR core stays generic: it knows an operator only as an `Op` object with a name and a
`infer_type` method. `pypto.ops` defines the operators and registers them here when it is
imported (importing `pypto` does that).
"""

from __future__ import annotations

from typing import Any

from pypto.errors import Error, InvalidValue

from .expr import Call, Expr, Op
from .span import UNKNOWN_SPAN, Span
from .types import Type

_OPS: dict[str, Op] = {}


class OpError(Error):
    """An operator was used with arguments it does not accept (wrong types, shapes, attributes)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


def register_op(op: Op, aliases: tuple[str, ...] = ()) -> Op:
    for name in (op.name, *aliases):
        prev = _OPS.get(name)
        if prev is not None and prev is not op:
            raise InvalidValue(f"operator name {name!r} registered twice")
        _OPS[name] = op
    return op


def is_op_registered(name: str) -> bool:
    return name in _OPS


def get_op(name: str) -> Op:
    op = _OPS.get(name)
    if op is None:
        raise OpError(f"unknown operator {name!r}")
    return op


def registered_op_names() -> list[str]:
    """Canonical names of all registered operators (aliases excluded), sorted."""
    return sorted({op.name for op in _OPS.values()})


def infer_call_type(op: Op, args: tuple[Expr, ...], kwargs: dict[str, Any]) -> Type:
    infer = getattr(op, "infer_type", None)
    if infer is None:
        raise OpError(f"operator {op.name} has no type rule")
    return infer(args, kwargs)


def create_op_call(op: str | Op, args, kwargs: dict[str, Any] | None = None, span: Span = UNKNOWN_SPAN) -> Call:
    """A Call of a registered operator with its result type inferred (raises OpError)."""
    o = get_op(op) if isinstance(op, str) else op
    args = tuple(args)
    kw = dict(kwargs or {})
    norm = getattr(o, "normalize_kwargs", None)
    if norm is not None:
        kw = norm(kw)
    t = infer_call_type(o, args, kw)
    return Call(o, args, tuple(kw.items()), t, span=span)


__all__ = ["OpError", "create_op_call", "get_op", "infer_call_type", "is_op_registered", "register_op",
           "registered_op_names"]


def __getattr__(name: str) -> Any:
    """`pypto.ir.op.tensor` / `.block` / `.tile` / `.system`: the op-making functions of the older
    IR-builder API (pypto/language/ir_ops.py; string-keyed: the language sits above the IR)."""
    import importlib

    if name in ("tensor", "block", "tile", "system"):
        return importlib.import_module("pypto.language.ir_ops").namespace(name)
    raise AttributeError(f"module 'pypto.ir.op' has no attribute {name!r}")
