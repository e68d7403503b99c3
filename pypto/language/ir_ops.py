"""`pypto.ir.op.tensor` / `.block` / `.tile` / `.system`: the older public IR-builder API, where
a program is built with `IRBuilder` and each operation is made by a function of its level's
namespace: `ib.let("t", ir.op.tensor.create([64, 128], DataType.FP32))`,
`ir.op.block.add(a, b)`.

Each function takes the arguments the `pl.<ns>.<op>` spelling takes (positional or keyword;
lists for shapes and offsets, numbers for scalars, IR expressions for values) and returns the
typed `Call`, built exactly as the parser builds that spelling (`OpCaller`), so the types and
errors are the language's. An error points at the caller's line."""

from __future__ import annotations

import sys
from typing import Any

from pypto.ir.builder import frame_span
from pypto.ops.registry import lookup_dsl

from .parser.calls import OpCaller

_NAMESPACES = {"tensor": "pl.tensor", "block": "pl.block", "tile": "pl.block", "system": "pl.system"}


class IROpNamespace:
    """The op-making functions of one level, as attributes."""

    def __init__(self, short: str) -> None:
        self._short = short
        self._dsl = _NAMESPACES[short]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        entry = lookup_dsl(self._dsl, name)
        if entry is None:
            raise AttributeError(f"pypto.ir.op.{self._short} has no op {name!r} (see pl.{self._short}.* in "
                                 "docs/pl_ops.md)")
        spelling = f"{self._dsl}.{name}"

        def make(*args: Any, **kwargs: Any) -> Any:
            return OpCaller().call_op(spelling, entry, list(args), dict(kwargs), frame_span(sys._getframe(1)))

        make.__name__ = make.__qualname__ = name
        make.__doc__ = f"The IR call of {spelling} (see pypto.language.ir_ops)."
        return make

    def __repr__(self) -> str:
        return f"<pypto.ir.op.{self._short}>"


def namespace(short: str) -> IROpNamespace | None:
    return IROpNamespace(short) if short in _NAMESPACES else None
