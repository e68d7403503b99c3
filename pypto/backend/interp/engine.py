"""The executor shared by kernels and the orchestration: values, `scf` control flow, `arith` / `math`.

An `Executor` runs one function's blocks op by op. Handlers are looked up by op name in
`handlers` (subclasses add the `pto.*` instructions they know); a handler may return a `Signal`
(yield, condition, break, continue, return) that ends the enclosing block. Every failure leaves as
an `InterpError` located at the op and function it happened in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.pto.model import Block, EnumAttr, Func, Op, Value, walk
from pypto.pto.syntax import SCALAR_OPS

from .errors import InterpError
from .scalar_ops import eval_scalar
from .values import make_scalar


class Signal:
    """How a block ended: `kind` in yield / condition / break / continue / return, with values."""

    __slots__ = ("kind", "values")

    def __init__(self, kind: str, values: list | None = None):
        self.kind = kind
        self.values = values or []


def short_op(op: Op) -> str:
    """`pto.tadd ins(%a, %b) outs(%c)`: an op with its operand names, for messages."""
    parts = [op.name]
    if op.operands:
        parts.append(", ".join(f"%{v.name}" for v in op.operands))
    if op.ins:
        parts.append("ins(" + ", ".join(f"%{v.name}" for v in op.ins) + ")")
    if op.outs:
        parts.append("outs(" + ", ".join(f"%{v.name}" for v in op.outs) + ")")
    if len(parts) == 1 and op.attrs:  # attribute-only ops: set_flag, wait_flag, pipe_barrier
        parts.append("{" + ", ".join(f"{k} = {_attr_text(v)}" for k, v in op.attrs.items()) + "}")
    text = " ".join(parts)
    if op.results:
        text = ", ".join(f"%{v.name}" for v in op.results) + " = " + text
    return text


def _attr_text(v) -> str:
    return v.value.split()[-1] if isinstance(v, EnumAttr) else str(v)


class FuncInfo:
    """What an executor needs to know about a function beyond its ops: op indices (depth-first
    order, for messages) and the values of constants (for static arena planning)."""

    def __init__(self, func: Func):
        self.index: dict[int, int] = {}
        self.consts: dict[int, Any] = {}
        for k, op in enumerate(walk(func.body)):
            self.index[id(op)] = k
            if op.name == "arith.constant" and len(op.results) == 1:
                self.consts[id(op.results[0])] = op.attrs.get("value")


class Executor:
    """Runs one function. `env` maps values (by identity) to runtime values."""

    def __init__(self, func: Func, info: FuncInfo):
        self.func = func
        self.info = info
        self.env: dict[Value, Any] = {}
        self.loops: list[tuple[str, int]] = []  # enclosing loops: (induction variable, iteration value)
        self.handlers: dict[str, Callable[[Op], Signal | None]] = {
            "scf.for": self.op_for, "scf.if": self.op_if, "scf.while": self.op_while,
            "scf.yield": lambda op: Signal("yield", self.vals(op.operands)),
            "scf.condition": lambda op: Signal("condition", self.vals(op.operands)),
            "scf.break": lambda op: Signal("break"), "scf.continue": lambda op: Signal("continue"),
            "func.return": lambda op: Signal("return", self.vals(op.operands)),
        }

    # ---- values ----------------------------------------------------------------------------

    def get(self, v: Value) -> Any:
        try:
            return self.env[v]
        except KeyError:
            raise InterpError(f"use of %{v.name}, which has no value here (undefined, or defined in a region "
                              "that did not run)") from None

    def vals(self, vs: list[Value]) -> list:
        return [self.get(v) for v in vs]

    def bind(self, vs: list[Value], xs: list) -> None:
        if len(vs) != len(xs):
            raise InterpError(f"{len(xs)} value(s) for {len(vs)} result(s)")
        for v, x in zip(vs, xs):
            self.env[v] = x

    def where(self, op: Op) -> str:
        """`op #k (text)[ at line:col][, iteration i=3]`."""
        s = f"op #{self.info.index.get(id(op), '?')} `{short_op(op)}`"
        if op.loc is not None:
            s += f" at {op.loc[0]}:{op.loc[1]}"
        if self.loops:
            s += ", iteration " + " ".join(f"{n}={i}" for n, i in self.loops)
        return s

    # ---- execution -------------------------------------------------------------------------

    def run_block(self, block: Block) -> Signal | None:
        for op in block.ops:
            sig = self.run_op(op)
            if sig is not None:
                return sig
        return None

    def run_op(self, op: Op) -> Signal | None:
        handler = self.handlers.get(op.name)
        try:
            if handler is not None:
                return handler(op)
            form = SCALAR_OPS.get(op.name)
            if form is None:
                raise InterpError(f"unknown instruction {op.name}",
                                  hint="the interpreter runs the ops of docs/pto_format.md")
            self.env[op.results[0]] = eval_scalar(op, self.vals(op.operands), form)
            return None
        except InterpError as e:
            raise e.locate(self.func.name, self.where(op)) from e.__cause__
        except (ValueError, TypeError, IndexError, KeyError, ArithmeticError, AttributeError) as e:
            raise InterpError(f"{type(e).__name__}: {e}").locate(self.func.name, self.where(op)) from e

    def region(self, op: Op, k: int) -> Block:
        if len(op.regions) <= k:
            raise InterpError(f"{op.name} needs {k + 1} region(s), has {len(op.regions)}")
        return op.regions[k]

    def op_for(self, op: Op) -> Signal | None:
        if len(op.operands) < 3:
            raise InterpError("scf.for needs lb, ub and step")
        lb, ub, step = (int(x) for x in self.vals(op.operands[:3]))
        carried = self.vals(op.operands[3:])
        body = self.region(op, 0)
        if len(body.args) != 1 + len(carried) or len(op.results) != len(carried):
            raise InterpError(f"scf.for with {len(carried)} iter_args needs {1 + len(carried)} block arguments "
                              f"and {len(carried)} results")
        # Python's range: a negative step counts down, a step of 0 is an error
        if step == 0:
            src = op.attrs.get("pto.src")  # the user's line, recorded by codegen for run-time steps
            at = f" (source {src})" if isinstance(src, str) else ""
            raise InterpError(f"the step of loop %{body.args[0].name}{at} is 0; range() needs a non-zero step")
        iv_type = body.args[0].type
        self.loops.append((body.args[0].name, lb))
        try:
            for i in range(lb, ub, step):
                self.loops[-1] = (body.args[0].name, i)
                self.env[body.args[0]] = _index_like(i, iv_type)
                self.bind(body.args[1:], carried)
                sig = self.run_block(body)
                if sig is None or sig.kind == "continue":
                    if sig is None and carried:
                        raise InterpError("scf.for body with iter_args must end with scf.yield")
                    continue
                if sig.kind == "yield":
                    if len(sig.values) != len(carried):
                        raise InterpError(f"scf.yield gives {len(sig.values)} value(s) for {len(carried)} "
                                          "iter_args")
                    carried = sig.values
                elif sig.kind == "break":
                    break
                else:
                    return sig
        finally:
            self.loops.pop()
        self.bind(op.results, carried)
        return None

    def op_if(self, op: Op) -> Signal | None:
        cond = bool(self.get(op.operands[0]))
        if cond or len(op.regions) > 1:
            sig = self.run_block(self.region(op, 0 if cond else 1))
            if sig is not None and sig.kind != "yield":
                return sig
            vals = sig.values if sig is not None else []
        else:
            vals = []
        if len(vals) != len(op.results):
            raise InterpError(f"scf.if branch yields {len(vals)} value(s) for {len(op.results)} result(s)")
        self.bind(op.results, vals)
        return None

    def op_while(self, op: Op) -> Signal | None:
        before, after = self.region(op, 0), self.region(op, 1)
        carried = self.vals(op.operands)
        n = 0
        self.loops.append(("while", 0))
        try:
            while True:
                self.loops[-1] = ("while", n)
                self.bind(before.args, carried)
                sig = self.run_block(before)
                if sig is None or sig.kind != "condition" or not sig.values:
                    if sig is not None and sig.kind == "return":
                        return sig
                    raise InterpError("the before region of scf.while must end with scf.condition")
                cond, fwd = sig.values[0], sig.values[1:]
                if not bool(cond):
                    carried = fwd
                    break
                self.bind(after.args, fwd)
                sig = self.run_block(after)
                if sig is None or sig.kind == "continue":
                    if sig is None and len(fwd) != len(carried):
                        raise InterpError("the do region of scf.while must end with scf.yield")
                    carried = fwd
                elif sig.kind == "yield":
                    carried = sig.values
                elif sig.kind == "break":
                    carried = fwd
                    break
                else:
                    return sig
                n += 1
        finally:
            self.loops.pop()
        self.bind(op.results, carried)
        return None


def _index_like(i: int, t) -> Any:
    name = getattr(t, "name", "index")
    return np.int64(i) if name == "index" else make_scalar(i, name)


__all__ = ["Executor", "FuncInfo", "Signal", "short_op"]
