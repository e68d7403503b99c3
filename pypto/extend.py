"""Adding ops to PyPTO from your own module, without editing the package.

A system developer describes a new op once — its NumPy reference and the C++ that computes it on
the CPU — and uses it in `pl` programs like a built-in one, on both backends (`cpu` and `interp`):

    import numpy as np
    from pypto import extend

    extend.elementwise("softplus", reference=lambda x: np.log1p(np.exp(x)),
                       cpp="std::log1p(std::exp(x))", float_only=True)
    extend.reduction("row_sumsq", reference=lambda x: np.sum(x * x, axis=-1, keepdims=True),
                     map="x * x", combine="a + b", init=0.0)

    # then, inside a @pl.program / @pl.function: pl.softplus(t), pl.row_sumsq(t), pl.tensor.softplus(x)

What each call defines, through the same family helpers the built-in ops use (pypto/ops):

- `elementwise(name, ...)`: `block.<name>` (tiles), `tensor.<name>` (tensors, tiled like the
  built-in elementwise ops) and the unified `pl.<name>`; PTO instruction `pto.t<name>`; on the CPU a
  functor that applies `cpp` (a C++ expression of the element `x`, and `y` for binary ops, in the
  compute type: float for FP16/BF16/FP32) lane by lane, and which the fuser chains with its
  neighbours like any elementwise instruction.
- `reduction(name, ...)`: a row (`axis="row"`: [R, C] -> [R, 1], also `tensor.<name>`) or column
  (`axis="col"`: [R, C] -> [1, C]) reduction: acc = combine(acc, map(x)) from `init`, in order.

The reference is called with NumPy arrays (FP16/BF16 data already widened to float32); the
interpreter runs it on each tile's valid region, and the tests compare the two backends with it.
Definitions take part in the compile cache's key, so changing one recompiles what uses it.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from pypto.backend.cpu.lowering import CPU, Fold, Form, Functor, register
from pypto.errors import Error
from pypto.ops import numeric as nm
from pypto.ops.elementwise import binary, unary
from pypto.ops.reduction import col_reduction, row_reduction
from pypto.ops.registry import OPS, OpDef, block_ops, note_extension

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class ExtensionError(Error, ValueError):
    """An op definition that cannot be added (bad name, clash, malformed C++ description)."""


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ExtensionError(f"op name {name!r} must be a lowercase identifier (letters, digits, '_')")
    if f"block.{name}" in OPS or f"tensor.{name}" in OPS:
        raise ExtensionError(f"an op named {name!r} exists already; choose another name")
    instr = "t" + name.replace("_", "")
    if instr in CPU:
        raise ExtensionError(f"op {name!r} would become PTO instruction pto.{instr}, which exists already")
    return instr


def _check_cpp(what: str, text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ExtensionError(f"{what} must be a non-empty C++ expression")
    if any(c in text for c in ";{}\n") or text.count("(") != text.count(")"):
        raise ExtensionError(f"{what} must be one C++ expression (no ';', braces or newlines), got {text!r}")
    return text.strip()


def _widened(ref: Callable, arity: int) -> Callable:
    if arity == 1:
        return lambda x: ref(nm.up(x))
    return lambda a, b: ref(nm.up(a), nm.up(b))


def elementwise(name: str, *, reference: Callable, cpp: str, arity: int = 1, float_only: bool = False,
                int_only: bool = False, commutative: bool = False, doc: str = "") -> OpDef:
    """Define an elementwise op (`arity` 1: f(x); 2: f(x, y) with NumPy broadcasting). Returns the
    block-level op (`block.<name>`)."""
    instr = _check_name(name)
    if arity not in (1, 2):
        raise ExtensionError(f"elementwise op {name!r}: arity must be 1 or 2, got {arity}")
    if not callable(reference):
        raise ExtensionError(f"elementwise op {name!r}: reference must be a function of NumPy arrays")
    expr = _check_cpp(f"elementwise op {name!r}: cpp", cpp)
    functor = "".join(p.capitalize() for p in name.split("_")) + "Ext"
    if arity == 1:
        body = f"return simd::lanewise(x, [](lane_t<V> x) {{ return lane_t<V>({expr}); }});"
        row = Functor(functor, Form.UNARY, body=body)
    else:
        body = f"return simd::lanewise2(x, y, [](lane_t<V> x, lane_t<V> y) {{ return lane_t<V>({expr}); }});"
        row = Functor(functor, Form.BINARY, body=body)
    register(instr, row)
    doc = doc or f"{name} (extension op)"
    if arity == 1:
        unary(name, _widened(reference, 1), instr, tensor=True, float_only=float_only, int_only=int_only, doc=doc)
    else:
        binary(name, _widened(reference, 2), instr, tensor=True, float_only=float_only, int_only=int_only,
               commutative=commutative, doc=doc)
    note_extension(name, f"elementwise/{arity}/{float_only}/{int_only}/{commutative}/{expr}")
    return getattr(block_ops, name)


def reduction(name: str, *, reference: Callable, combine: str, init: float, map: str = "x",  # noqa: A002
              axis: str = "row", doc: str = "") -> OpDef:
    """Define a row (`axis="row"`) or column (`axis="col"`) reduction. `map` is a C++ expression of
    the element `x`, `combine` one of the running value `a` and the mapped element `b`. Returns
    the block-level op."""
    instr = _check_name(name)
    if axis not in ("row", "col"):
        raise ExtensionError(f"reduction {name!r}: axis must be 'row' or 'col', got {axis!r}")
    if not callable(reference):
        raise ExtensionError(f"reduction {name!r}: reference must be a function of a NumPy array")
    row = Fold(axis, _check_cpp(f"reduction {name!r}: map", map), _check_cpp(f"reduction {name!r}: combine", combine),
               float(init))
    register(instr, row)
    doc = doc or f"{name} (extension reduction)"
    ref = _widened(reference, 1)
    if axis == "row":
        row_reduction(name, lambda x, *tmp: ref(x), instr, doc)
    else:
        col_reduction(name, lambda x, *tmp: ref(x), instr, doc)
    note_extension(name, f"reduction/{axis}/{row.map}/{row.combine}/{row.init!r}")
    return getattr(block_ops, name)


__all__ = ["ExtensionError", "elementwise", "reduction"]
