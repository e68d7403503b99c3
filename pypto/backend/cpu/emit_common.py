"""C++ emission shared by kernels and the task program: values, scalars (`arith`, `math`) and
structured control flow (`scf`)."""

from __future__ import annotations

import math
import re

from pypto.errors import Error
from pypto.pto.model import Block, Func, Op, ScalarT, Value

from ..elements import ELEMENTS

CPP_SCALAR = {
    "index": "int64_t", "i1": "bool", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
    "ui8": "uint8_t", "ui16": "uint16_t", "ui32": "uint32_t", "ui64": "uint64_t", "f16": "pto::half",
    "bf16": "pto::bf16", "f32": "float",
}
ELEM_BYTES = {n: ELEMENTS[n].itemsize for n in CPP_SCALAR}  # bytes as stored: the planner's sizes
_LOW_FLOAT = {"f16", "bf16"}


class AssemblyError(Error, ValueError):
    """A PTO construct the CPU backend cannot translate (names the function and the op)."""


def cpp_type(name: str, where: str = "") -> str:
    t = CPP_SCALAR.get(name)
    if t is None:
        raise AssemblyError(f"{where}: element type {name} is not supported by the CPU backend "
                            "(supported: " + ", ".join(CPP_SCALAR) + ")")
    return t


def elem_bytes(name: str, where: str = "") -> int:
    """Bytes per element of a supported element type (an AssemblyError names any other)."""
    cpp_type(name, where)
    return ELEM_BYTES[name]


def is_float(name: str) -> bool:
    return name.startswith("f") or name == "bf16"


def is_unsigned(name: str) -> bool:
    return name.startswith("ui")


_BINOP = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.andi": "&", "arith.ori": "|",
          "arith.xori": "^", "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
_CALL2 = {"arith.divsi": "glue::divsi", "arith.divui": "glue::divsi", "arith.remsi": "glue::remsi",
          "arith.remui": "glue::remsi", "arith.floordivsi": "glue::floordivsi", "arith.shli": "glue::shl",
          "arith.shrsi": "glue::shr", "arith.shrui": "glue::shru", "arith.minimumf": "glue::fmin_nan",
          "arith.maximumf": "glue::fmax_nan", "arith.remf": "std::fmod", "math.powf": "std::pow",
          "math.ipowi": "glue::ipow"}
_MINMAX = {"arith.minsi": "<", "arith.minui": "<", "arith.maxsi": ">", "arith.maxui": ">"}
_CMP = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<", "ule": "<=",
        "ugt": ">", "uge": ">=", "oeq": "==", "one": "!=", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=",
        "une": "!="}
_CASTS = {"arith.index_cast", "arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf", "arith.extsi",
          "arith.extui", "arith.trunci", "arith.fptosi", "arith.fptoui", "arith.bitcast"}
_IDENT = re.compile(r"[^A-Za-z0-9_]")


class FuncEmitter:
    """Writes one function's body. Subclasses handle the `pto.*` ops."""

    def __init__(self, func: Func):
        self.func = func
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.consts: dict[int, int | float | bool] = {}

    # ---- output ------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def where(self, op: Op | None = None) -> str:
        return f"function {self.func.name}" + (f", op {op.name}" if op is not None else "")

    # ---- values ------------------------------------------------------------------------------

    def name(self, v: Value) -> str:
        got = self.names.get(id(v))
        if got is None:
            base = "v_" + _IDENT.sub("_", v.name)
            got = base
            k = 1
            while got in self.used:
                got = f"{base}_{k}"
                k += 1
            self.used.add(got)
            self.names[id(v)] = got
        return got

    def alias(self, v: Value, cpp_name: str) -> None:
        self.names[id(v)] = cpp_name

    def ctype(self, v: Value) -> str:
        t = v.type
        if not isinstance(t, ScalarT):
            raise AssemblyError(f"{self.where()}: %{v.name} is not a scalar")
        return cpp_type(t.name, self.where())

    def ref(self, v: Value) -> str:
        """A C++ expression for a scalar value, computed in its compute type (floats for f16/bf16)."""
        n = self.name(v)
        if isinstance(v.type, ScalarT) and v.type.name in _LOW_FLOAT:
            return f"float({n})"
        return n

    def const_of(self, v: Value) -> int | float | bool | None:
        return self.consts.get(id(v))

    def define(self, v: Value, expr: str) -> None:
        self.line(f"const {self.ctype(v)} {self.name(v)} = {self.wrap(v, expr)};")

    def wrap(self, v: Value, expr: str) -> str:
        return f"{self.ctype(v)}({expr})"

    # ---- blocks ------------------------------------------------------------------------------

    def block(self, b: Block) -> None:
        self.run_ops(b.ops)

    def run_ops(self, ops: list[Op]) -> None:
        for op in ops:
            self.op(op)

    def op(self, op: Op) -> None:
        n = op.name
        if n.startswith("arith.") or n.startswith("math."):
            self.scalar_op(op)
        elif n == "scf.for":
            self.scf_for(op)
        elif n == "scf.if":
            self.scf_if(op)
        elif n == "scf.while":
            self.scf_while(op)
        elif n == "scf.break":
            self.line("break;")
        elif n == "scf.continue":
            self.line("continue;")
        elif n in ("scf.yield", "scf.condition"):
            raise AssemblyError(f"{self.where(op)}: misplaced terminator")
        elif n == "func.return":
            self.ret(op)
        else:
            self.pto_op(op)

    def pto_op(self, op: Op) -> None:  # pragma: no cover - overridden
        raise AssemblyError(f"{self.where(op)}: unknown operation")

    def ret(self, op: Op) -> None:  # pragma: no cover - overridden
        self.line("return;")

    # ---- scalars -----------------------------------------------------------------------------

    def scalar_op(self, op: Op) -> None:
        n = op.name
        if n == "arith.constant":
            r = op.result
            val = op.attrs["value"]
            self.consts[id(r)] = val
            self.define(r, _literal(val, r.type.name))  # type: ignore[union-attr]
            return
        r = op.result
        a = [self.ref(x) for x in op.operands]
        if n in _BINOP:
            self.define(r, f"{a[0]} {_BINOP[n]} {a[1]}")
        elif n in ("arith.remf", "math.powf"):
            self.define(r, f"{_CALL2[n]}({a[0]}, {a[1]})")
        elif n in _CALL2:
            ct = self.compute_type(r)
            self.define(r, f"{_CALL2[n]}<{ct}>({ct}({a[0]}), {ct}({a[1]}))")
        elif n in _MINMAX:
            self.define(r, f"(({a[0]}) {_MINMAX[n]} ({a[1]}) ? ({a[0]}) : ({a[1]}))")
        elif n in ("arith.cmpi", "arith.cmpf"):
            pred = op.attrs["predicate"]
            x, y = a
            if pred.startswith("u") and pred != "une":
                ot = op.operands[0].type.name  # type: ignore[union-attr]
                bits = ELEM_BYTES.get(ot, 8) * 8
                x, y = f"uint{bits}_t({x})", f"uint{bits}_t({y})"
            self.define(r, f"({x}) {_CMP[pred]} ({y})")
        elif n == "arith.select":
            self.define(r, f"({a[0]}) ? ({a[1]}) : ({a[2]})")
        elif n == "arith.negf":
            self.define(r, f"-({a[0]})")
        elif n in _CASTS:
            self.cast(op, a[0])
        elif n in ("math.absf",):
            self.define(r, f"std::fabs({a[0]})")
        elif n == "math.absi":
            self.define(r, f"glue::iabs<{self.ctype(r)}>({a[0]})")
        elif n == "math.floor":
            self.define(r, f"std::floor({a[0]})")
        else:
            raise AssemblyError(f"{self.where(op)}: unsupported scalar operation")

    def compute_type(self, v: Value) -> str:
        t = v.type.name  # type: ignore[union-attr]
        return "float" if t in _LOW_FLOAT else cpp_type(t)

    def cast(self, op: Op, a: str) -> None:
        r = op.result
        src = op.operands[0].type.name  # type: ignore[union-attr]
        dst = r.type.name  # type: ignore[union-attr]
        if op.name in ("arith.fptosi", "arith.fptoui"):
            self.define(r, f"glue::fptoi<{cpp_type(dst)}>({a})")
        elif dst == "i1":
            self.define(r, f"({a}) != 0")
        else:
            del src
            self.define(r, a)

    # ---- control flow ------------------------------------------------------------------------

    def declare(self, v: Value, init: str | None = None) -> str:
        n = self.name(v)
        t = self.value_ctype(v)
        self.line(f"{t} {n}{' = ' + init if init is not None else '{}'};")
        return n

    def value_ctype(self, v: Value) -> str:
        return self.ctype(v)

    def assign_all(self, targets: list[str], values: list[str], types: list[str]) -> None:
        if not targets:
            return
        if len(targets) == 1:
            self.line(f"{targets[0]} = {values[0]};")
            return
        self.line("{")
        tmps = []
        for i, (v, t) in enumerate(zip(values, types)):
            self.line(f"  {t} tmp_{i} = {v};")
            tmps.append(f"tmp_{i}")
        for t, v in zip(targets, tmps):
            self.line(f"  {t} = {v};")
        self.line("}")

    def carried_value(self, v: Value) -> str:
        return self.name(v)

    def scf_for(self, op: Op) -> None:
        """Python's range(lb, ub, step): the trip count is computed once, without overflow, and a
        counter runs over it (`i += step` could wrap past ub and never end). A run-time step of 0
        fails the run, as range() raises."""
        lb, ub, st, *inits = op.operands
        body = op.regions[0]
        iv, *bargs = body.args
        state = [self.declare(r, self.carried_value(i)) for r, i in zip(op.results, inits)] if op.results else []
        for b, s in zip(bargs, state):
            self.alias(b, s)
        ivn = self.name(iv)
        step = self.const_of(st)
        lbn, ubn, stn = self.name(lb), self.name(ub), self.name(st)
        if step == 0:
            raise AssemblyError(f"{self.where(op)}: {zero_step_message(op)}")
        if step is None:
            self.line(f"if ({stn} == 0) {{ {self.fail_run(zero_step_message(op))} }}")
        n, k = f"n_{ivn}", f"k_{ivn}"
        self.line(f"const uint64_t {n} = glue::trip_count(int64_t({lbn}), int64_t({ubn}), int64_t({stn}));")
        self.line(f"for (uint64_t {k} = 0; {k} < {n}; ++{k}) {{")
        self.depth += 1
        self.line(f"const int64_t {ivn} = glue::iv_at(int64_t({lbn}), {k}, int64_t({stn}));")
        self.region_with_yield(body, state, [self.value_ctype(r) for r in op.results])
        self.depth -= 1
        self.line("}")

    def fail_run(self, message: str) -> str:  # pragma: no cover - overridden
        """C++ statements that end the function with a run-time error `message` (no trailing newline)."""
        raise AssemblyError(f"{self.where()}: {message}")

    def region_with_yield(self, body: Block, targets: list[str], types: list[str]) -> None:
        ops = body.ops
        term = ops[-1] if ops and ops[-1].name == "scf.yield" else None
        self.run_ops(ops[:-1] if term is not None else ops)
        if term is not None:
            self.assign_all(targets, [self.carried_value(v) for v in term.operands], types)

    def scf_if(self, op: Op) -> None:
        cond = op.operands[0]
        res = [self.declare(r) for r in op.results]
        types = [self.value_ctype(r) for r in op.results]
        self.line(f"if ({self.name(cond)}) {{")
        self.depth += 1
        self.region_with_yield(op.regions[0], res, types)
        self.depth -= 1
        if len(op.regions) > 1 and op.regions[1].ops:
            self.line("} else {")
            self.depth += 1
            self.region_with_yield(op.regions[1], res, types)
            self.depth -= 1
        self.line("}")

    def scf_while(self, op: Op) -> None:
        before, after = op.regions
        types = [self.value_ctype(v) for v in before.args]
        state = []
        for b, init in zip(before.args, op.operands):
            state.append(self.declare(b, self.carried_value(init)))
        res = [self.declare(r) for r in op.results]
        self.line("while (true) {")
        self.depth += 1
        ops = before.ops
        term = ops[-1]
        if term.name != "scf.condition":
            raise AssemblyError(f"{self.where(op)}: the before region must end with scf.condition")
        self.run_ops(ops[:-1])
        cond, *fwd = term.operands
        self.line(f"if (!({self.name(cond)})) {{")
        self.depth += 1
        self.assign_all(res, [self.carried_value(v) for v in fwd], types)
        self.line("break;")
        self.depth -= 1
        self.line("}")
        for a, f in zip(after.args, fwd):
            self.line(f"{self.value_ctype(a)} {self.name(a)} = {self.carried_value(f)};")
        self.region_with_yield(after, state, types)
        self.depth -= 1
        self.line("}")


def zero_step_message(op: Op) -> str:
    """What a loop whose step is 0 at run time reports: its induction variable, where it is in the
    PTO and, when codegen recorded it (`pto.src`), the user's line."""
    iv = op.regions[0].args[0].name if op.regions and op.regions[0].args else "?"
    where = [f"PTO line {op.loc[0]}:{op.loc[1]}"] if op.loc is not None else []
    src = op.attrs.get("pto.src")
    if isinstance(src, str):
        where.append(f"source {src}")
    at = f" ({', '.join(where)})" if where else ""
    return f"the step of loop %{iv}{at} is 0; range() needs a non-zero step"


def _literal(val: int | float | bool, ty: str) -> str:
    if isinstance(val, bool) or ty == "i1":
        return "true" if val else "false"
    if is_float(ty):
        v = float(val)
        if math.isnan(v):
            return "std::numeric_limits<float>::quiet_NaN()"
        if math.isinf(v):
            return ("" if v > 0 else "-") + "std::numeric_limits<float>::infinity()"
        return repr(v) + "f" if ty != "f64" else repr(v)
    v = int(val)
    if v == -(1 << 63):
        return "INT64_MIN"
    return f"{v}LL" if abs(v) > 2**31 - 1 else str(v)


__all__ = ["CPP_SCALAR", "ELEM_BYTES", "AssemblyError", "FuncEmitter", "cpp_type", "elem_bytes", "is_float",
           "zero_step_message"]
