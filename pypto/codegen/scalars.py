"""Scalar expressions -> `arith` / `math` operations, shared by kernel and orchestration codegen."""

from __future__ import annotations

import os
from collections.abc import Callable

from pypto.ir import expr as E
from pypto.ir.diagnostics import CompileError
from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind
from pypto.ir.stmt import ForStmt
from pypto.ir.types import ScalarType
from pypto.pto.model import Block, Op, ScalarT, Value

PTO_DTYPE: dict[DataType, str] = {
    DataType.BOOL: "i1", DataType.INT4: "i4", DataType.INT8: "i8", DataType.INT16: "i16", DataType.INT32: "i32",
    DataType.INT64: "i64", DataType.INDEX: "index", DataType.UINT4: "ui4", DataType.UINT8: "ui8",
    DataType.UINT16: "ui16", DataType.UINT32: "ui32", DataType.UINT64: "ui64", DataType.FP4: "f4",
    DataType.FP8E4M3FN: "f8e4m3", DataType.FP8E5M2: "f8e5m2", DataType.FP16: "f16", DataType.FP32: "f32",
    DataType.BF16: "bf16", DataType.HF4: "hf4", DataType.HF8: "hf8",
}


def loop_header(sc: ScalarEmitter, s: ForStmt) -> tuple[list[Value], dict[str, str]]:
    """The bounds (lb, ub, step) and attributes of the `scf.for` a ForStmt becomes. A step that is
    the constant 0 here (a variable assigned 0, say) is a compile error at the loop; where a
    run-time step comes from (`file.py:line`) is recorded, so the run-time check can name the loop."""
    bounds = [sc.expr(e, DataType.INDEX) for e in (s.start, s.stop, s.step)]
    step = sc.const_of(bounds[2])
    if step == 0:
        raise CompileError("loop step cannot be zero", s.span, hint="range() needs a non-zero step")
    attrs = {"pto.loop_kind": "parallel"} if s.kind is ForKind.Parallel else {}
    if step is None and s.span.is_known:
        attrs["pto.src"] = f"{os.path.basename(s.span.filename)}:{s.span.begin_line}"
    return bounds, attrs


def pto_scalar(dt: DataType) -> ScalarT:
    return ScalarT(PTO_DTYPE[dt])


def _kind(dt: DataType) -> str:
    if dt.is_float:
        return "f"
    if dt.is_unsigned:
        return "u"
    return "i"  # signed ints, index, bool


_INT_OPS = {E.Add: "addi", E.Sub: "subi", E.Mul: "muli", E.BitAnd: "andi", E.BitOr: "ori", E.BitXor: "xori",
            E.BitShiftLeft: "shli", E.And: "andi", E.Or: "ori", E.Xor: "xori"}
_FLOAT_OPS = {E.Add: "addf", E.Sub: "subf", E.Mul: "mulf", E.FloatDiv: "divf", E.Min: "minimumf",
              E.Max: "maximumf"}
_CMP_I = {E.Eq: "eq", E.Ne: "ne", E.Lt: "slt", E.Le: "sle", E.Gt: "sgt", E.Ge: "sge"}
_CMP_U = {E.Eq: "eq", E.Ne: "ne", E.Lt: "ult", E.Le: "ule", E.Gt: "ugt", E.Ge: "uge"}
_CMP_F = {E.Eq: "oeq", E.Ne: "one", E.Lt: "olt", E.Le: "ole", E.Gt: "ogt", E.Ge: "oge"}


class ScalarEmitter:
    """Emits arith ops into the current block; values of variables come from `lookup`."""

    def __init__(self, lookup: Callable[[E.Var], Value], fresh: Callable[[str], str],
                 const_block: Callable[[], Block], current: Callable[[], Block]):
        self.lookup = lookup
        self.fresh = fresh
        self.const_block = const_block
        self.current = current
        self.consts: dict[tuple, Value] = {}
        self.const_values: dict[int, int | float | bool] = {}  # id(constant Value) -> its value

    # ---- constants ---------------------------------------------------------------------------

    def const(self, value: int | float | bool, dt: DataType) -> Value:
        key = (type(value) if not isinstance(value, bool) else bool, value, dt)
        v = self.consts.get(key)
        if v is None:
            t = pto_scalar(dt)
            if dt is DataType.INDEX:
                hint = f"c{value}" if value >= 0 else f"c_neg{-value}"
            else:
                hint = "cst"
            v = Value(self.fresh(hint), t)
            if dt is DataType.BOOL:
                value = bool(value)
            elif dt.is_float:
                value = float(value)
            else:
                value = int(value)
            self.const_block().ops.append(Op("arith.constant", [v], attrs={"value": value}))
            self.consts[key] = v
            self.const_values[id(v)] = value
        return v

    def const_of(self, v: Value) -> int | float | bool | None:
        """The value of `v` when it is a constant this emitter made."""
        return self.const_values.get(id(v))

    def index(self, value: int) -> Value:
        return self.const(int(value), DataType.INDEX)

    # ---- expressions -------------------------------------------------------------------------

    def emit(self, op: Op) -> None:
        self.current().ops.append(op)

    def new(self, dt: DataType, hint: str = "t") -> Value:
        return Value(self.fresh(hint), pto_scalar(dt))

    def expr(self, e: E.Expr, want: DataType | None = None) -> Value:
        v = self._expr(e)
        if want is not None:
            v = self.convert(v, _dtype_of(e), want)
        return v

    def _expr(self, e: E.Expr) -> Value:
        if isinstance(e, E.ConstInt):
            return self.const(e.value, e.dtype)
        if isinstance(e, E.ConstFloat):
            return self.const(e.value, e.dtype)
        if isinstance(e, E.ConstBool):
            return self.const(e.value, DataType.BOOL)
        if isinstance(e, E.Var):
            return self.lookup(e)
        if isinstance(e, E.BinaryExpr):
            return self.binary(e)
        if isinstance(e, E.UnaryExpr):
            return self.unary(e)
        raise CompileError(f"cannot generate code for the scalar expression {type(e).__name__}", e.span)

    def convert(self, v: Value, src: DataType, dst: DataType) -> Value:
        """Cast a scalar value between dtypes (no-op when equal)."""
        if src is dst or PTO_DTYPE[src] == PTO_DTYPE[dst]:
            return v
        ks, kd = _kind(src), _kind(dst)
        r = self.new(dst, "cv")
        if src is DataType.BOOL and dst is not DataType.BOOL:
            one = self.const(1 if not dst.is_float else 1.0, dst)
            zero = self.const(0 if not dst.is_float else 0.0, dst)
            self.emit(Op("arith.select", [r], [v, one, zero]))
            return r
        if dst is DataType.BOOL:
            zero = self.const(0 if not src.is_float else 0.0, src)
            pred, name = ("une", "arith.cmpf") if src.is_float else ("ne", "arith.cmpi")
            self.emit(Op(name, [r], [v, zero], attrs={"predicate": pred}))
            return r
        if ks == "f" and kd == "f":
            name = "arith.extf" if dst.bits > src.bits else "arith.truncf"
        elif ks == "f":
            name = "arith.fptoui" if kd == "u" else "arith.fptosi"
        elif kd == "f":
            name = "arith.uitofp" if ks == "u" else "arith.sitofp"
        elif DataType.INDEX in (src, dst):
            name = "arith.index_cast"
        elif dst.bits > src.bits:
            name = "arith.extui" if ks == "u" else "arith.extsi"
        else:
            name = "arith.trunci"
        self.emit(Op(name, [r], [v]))
        return r

    def binary(self, e: E.BinaryExpr) -> Value:
        lt, rt = _dtype_of(e.lhs), _dtype_of(e.rhs)
        cls = type(e)
        if cls in E.COMPARISONS:
            from pypto.ir.dtype import promote

            ct = promote(lt, rt)
            a, b = self.expr(e.lhs, ct), self.expr(e.rhs, ct)
            r = self.new(DataType.BOOL, "cmp")
            k = _kind(ct)
            pred = (_CMP_F if k == "f" else _CMP_U if k == "u" else _CMP_I)[cls]
            self.emit(Op("arith.cmpf" if k == "f" else "arith.cmpi", [r], [a, b], attrs={"predicate": pred}))
            return r
        dt = e.dtype
        if cls is E.FloatDiv and not dt.is_float:
            dt = DataType.FP32
        a, b = self.expr(e.lhs, dt), self.expr(e.rhs, dt)
        k = _kind(dt)
        r = self.new(dt)
        if k == "f":
            if cls is E.Pow:
                self.emit(Op("math.powf", [r], [a, b]))
                return r
            if cls is E.FloorDiv:
                q = self.new(dt)
                self.emit(Op("arith.divf", [q], [a, b]))
                self.emit(Op("math.floor", [r], [q]))
                return r
            if cls is E.FloorMod:
                self.emit(Op("arith.remf", [r], [a, b]))
                return r
            name = _FLOAT_OPS.get(cls)
            if name is None:
                raise CompileError(f"operator {cls.__name__} is not defined on floating-point scalars", e.span)
            self.emit(Op(f"arith.{name}", [r], [a, b]))
            return r
        u = k == "u"
        if cls in _INT_OPS:
            self.emit(Op(f"arith.{_INT_OPS[cls]}", [r], [a, b]))
        elif cls is E.FloorDiv:
            self.emit(Op("arith.divui" if u else "arith.floordivsi", [r], [a, b]))
        elif cls is E.FloorMod:
            return self.floor_mod(a, b, dt, u)
        elif cls is E.FloatDiv:
            raise AssertionError("unreachable")
        elif cls is E.Min:
            self.emit(Op("arith.minui" if u else "arith.minsi", [r], [a, b]))
        elif cls is E.Max:
            self.emit(Op("arith.maxui" if u else "arith.maxsi", [r], [a, b]))
        elif cls is E.BitShiftRight:
            self.emit(Op("arith.shrui" if u else "arith.shrsi", [r], [a, b]))
        elif cls is E.Pow:
            self.emit(Op("math.ipowi", [r], [a, b]))
        else:
            raise CompileError(f"operator {cls.__name__} is not defined on integer scalars", e.span)
        return r

    def floor_mod(self, a: Value, b: Value, dt: DataType, unsigned: bool) -> Value:
        """Python's % (sign of the divisor) from remsi: r = a rem b; r + b if r != 0 and sign(r) != sign(b)."""
        rem = self.new(dt)
        if unsigned:
            self.emit(Op("arith.remui", [rem], [a, b]))
            return rem
        self.emit(Op("arith.remsi", [rem], [a, b]))
        zero = self.const(0, dt)
        nz = self.new(DataType.BOOL)
        self.emit(Op("arith.cmpi", [nz], [rem, zero], attrs={"predicate": "ne"}))
        rneg = self.new(DataType.BOOL)
        self.emit(Op("arith.cmpi", [rneg], [rem, zero], attrs={"predicate": "slt"}))
        bneg = self.new(DataType.BOOL)
        self.emit(Op("arith.cmpi", [bneg], [b, zero], attrs={"predicate": "slt"}))
        diff = self.new(DataType.BOOL)
        self.emit(Op("arith.xori", [diff], [rneg, bneg]))
        fix = self.new(DataType.BOOL)
        self.emit(Op("arith.andi", [fix], [nz, diff]))
        plus = self.new(dt)
        self.emit(Op("arith.addi", [plus], [rem, b]))
        r = self.new(dt)
        self.emit(Op("arith.select", [r], [fix, plus, rem]))
        return r

    def unary(self, e: E.UnaryExpr) -> Value:
        dt = e.dtype
        if isinstance(e, E.Cast):
            return self.convert(self._expr(e.operand), _dtype_of(e.operand), dt)
        a = self.expr(e.operand, dt if not isinstance(e, E.Not) else DataType.BOOL)
        r = self.new(dt)
        k = _kind(dt)
        if isinstance(e, E.Neg):
            if k == "f":
                self.emit(Op("arith.negf", [r], [a]))
            else:
                self.emit(Op("arith.subi", [r], [self.const(0, dt), a]))
        elif isinstance(e, E.Not):
            self.emit(Op("arith.xori", [r], [a, self.const(True, DataType.BOOL)]))
        elif isinstance(e, E.BitNot):
            self.emit(Op("arith.xori", [r], [a, self.const(-1 if k == "i" else (1 << dt.bits) - 1, dt)]))
        elif isinstance(e, E.Abs):
            self.emit(Op("math.absf" if k == "f" else "math.absi", [r], [a]))
        else:
            raise CompileError(f"cannot generate code for {type(e).__name__}", e.span)
        return r


def _dtype_of(e: E.Expr) -> DataType:
    t = e.type
    if not isinstance(t, ScalarType):
        raise CompileError(f"expected a scalar expression, got {type(t).__name__}", e.span)
    return t.dtype


__all__ = ["PTO_DTYPE", "ScalarEmitter", "pto_scalar"]
