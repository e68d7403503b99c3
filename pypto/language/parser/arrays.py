"""`pl.array`: small fixed-extent arrays of integers, BOOLs or task ids (pl-head §3.1, §2.4), and the
`pl.prefetch` no-ops.

    tids = pl.array.create(n, pl.TASK_ID)     n: a Python int > 0; elements start at 0 (task ids: "no task")
    tids[i] = tid                             in place (pl.array.update_element(tids, i, tid) returns a new array)
    x = tids[i]                               pl.array.get_element(tids, i)
    deps=[tids]                               every element is a dependency ("no task" ones are skipped)

An array never reaches the IR: the parser replaces it by its `n` elements, each an ordinary scalar
variable (scalar replacement of an aggregate). A write at a run-time index `i` reassigns every
element `k` to `i == k ? v : e_k`, a read selects among the elements the same way (an index out
of range reads element 0 and writes nothing), so loops carry arrays like any reassigned scalars
(ConvertToSSA makes the elements loop-carried) and `init_values=` / `pl.yield_` / loop and if
results take arrays in place of their elements. An array cannot be a function argument or result
(the device keeps it on the core's stack; upstream refuses it too).

`pl.TASK_ID` is `pl.INT64` here, so `pl.array.create(n, pl.TASK_ID)` is recognised by how the
dtype is written (`pl.TASK_ID` / `TASK_ID` / `pl.TaskId`): its elements start as "no task" (-1).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from pypto.ir import expr as E
from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstBool, ConstInt, Expr, IterArg, Var
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import ScalarType, TensorType

from ..errors import ParserSyntaxError, ParserTypeError
from .context import Binding
from .values import is_number, to_expr

MAX_EXTENT = 4096  # elements are scalar variables: a bound keeps a typo from making a million of them


@dataclass(frozen=True)
class ArrayRef:
    """An array bound to a name: its elements live in the scopes under `<name>#<k>`."""

    name: str
    dtype: DataType
    extent: int
    task_ids: bool = False


@dataclass(frozen=True)
class ArrayTemp:
    """An array value not (yet) bound to a name: `pl.array.create(...)`, `update_element(...)`."""

    elems: tuple[Expr, ...]
    dtype: DataType
    task_ids: bool = False

    @property
    def extent(self) -> int:
        return len(self.elems)


ARRAY_TYPES = (ArrayRef, ArrayTemp)


@dataclass(frozen=True)
class Slot:
    """How one user-level value of a loop's init_values / a yield maps onto flat IR values."""

    extent: int | None = None  # None: one IR value; else an array of `extent` elements
    dtype: DataType | None = None
    task_ids: bool = False


class PrefetchHandle:
    """A `pl.prefetch` context / event / session: the CPU has no L2 to warm, so these carry nothing."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<pl.prefetch {self.kind}>"


def _key(name: str, k: int) -> str:
    return f"{name}#{k}"


class ArrayParser:
    """Mixin of the function parser (needs eval, emit, span, scopes, strict_ssa, call_args)."""

    # ---- values ----------------------------------------------------------------------------------

    def array_elems(self, a: ArrayRef | ArrayTemp) -> list[Expr]:
        if isinstance(a, ArrayTemp):
            return list(a.elems)
        out = []
        for k in range(a.extent):
            b = self.scopes.lookup(_key(a.name, k))
            assert b is not None, f"array {a.name} lost element {k}"
            out.append(b.value)
        return out

    def _elem_value(self, a: ArrayRef | ArrayTemp, v: Any, sp: Span) -> Expr:
        if isinstance(v, ARRAY_TYPES):
            raise ParserTypeError("an array element is a scalar, not an array", sp)
        if v is None and a.task_ids:
            return ConstInt(-1, a.dtype, span=sp)  # "no task"
        e = to_expr(v, sp, "array element", a.dtype)
        t = e.type
        if not isinstance(t, ScalarType) or t.dtype.is_float or (t.dtype.is_bool != a.dtype.is_bool):
            kind = "a BOOL" if a.dtype.is_bool else "an integer"
            raise ParserTypeError(f"a pl.array of {a.dtype.name} holds {kind} scalar, got {self.describe(e)}", sp)
        return e if t.dtype is a.dtype else E.Cast(e, a.dtype, span=sp)

    def _index(self, a: ArrayRef | ArrayTemp, i: Any, sp: Span) -> int | Expr:
        if isinstance(i, bool) or isinstance(i, (tuple, list, slice)):
            raise ParserTypeError("a pl.array takes one integer index", sp)
        if is_number(i):
            if not isinstance(i, int) or not 0 <= i < a.extent:
                raise ParserTypeError(f"array index {i!r} is out of range for an array of {a.extent} elements", sp)
            return i
        if isinstance(i, ConstInt):
            return self._index(a, i.value, sp)
        if isinstance(i, Expr) and isinstance(i.type, ScalarType) and i.type.dtype.is_int:
            return i
        raise ParserTypeError(f"an array index must be an integer, got {self.describe(i)}", sp)

    @staticmethod
    def _select(c: Expr, a: Expr, b: Expr, dt: DataType, sp: Span) -> Expr:
        """c ? a : b without control flow: b ^ ((a ^ b) & -c) for integers (exact, no overflow)."""
        if dt.is_bool:
            return E.Or(E.And(c, a, DataType.BOOL, span=sp), E.And(E.Not(c, DataType.BOOL, span=sp), b,
                                                                     DataType.BOOL, span=sp), DataType.BOOL, span=sp)
        mask = E.Neg(E.Cast(c, dt, span=sp), dt, span=sp)
        return E.BitXor(b, E.BitAnd(E.BitXor(a, b, dt, span=sp), mask, dt, span=sp), dt, span=sp)

    def array_get(self, a: ArrayRef | ArrayTemp, i: Any, sp: Span) -> Expr:
        elems = self.array_elems(a)
        k = self._index(a, i, sp)
        if isinstance(k, int):
            return elems[k]
        out = elems[0]
        for j in range(1, len(elems)):
            out = self._select(E.Eq(k, ConstInt(j, k.type.dtype, span=sp), DataType.BOOL, span=sp), elems[j], out,
                               a.dtype, sp)
        return out

    def _updated(self, a: ArrayRef | ArrayTemp, i: Any, v: Any, sp: Span) -> list[Expr]:
        elems = self.array_elems(a)
        k = self._index(a, i, sp)
        val = self._elem_value(a, v, sp)
        if isinstance(k, int):
            elems[k] = val
            return elems
        return [self._select(E.Eq(k, ConstInt(j, k.type.dtype, span=sp), DataType.BOOL, span=sp), val, e, a.dtype, sp)
                for j, e in enumerate(elems)]

    # ---- binding ---------------------------------------------------------------------------------

    def _bind_elem(self, key: str, var_name: str, value: Expr, sp: Span) -> Var:
        """Assign element `key` (non-SSA: reuse its Var when it is a plain one of the same type)."""
        b = self.scopes.lookup(key)
        t = value.type
        if b is not None and type(b.value) is Var and isinstance(t, ScalarType) and b.value.type.dtype is t.dtype:
            v = b.value
        else:
            v = Var(var_name, t, span=sp)
            self.scopes.define(key, Binding(v, sp))
        self.emit(AssignStmt(v, value, span=sp))
        return v

    def assign_array(self, name: str, a: ArrayRef | ArrayTemp, sp: Span) -> None:
        """`name = <array>`: the elements are copied into `name`'s element variables."""
        b = self.scopes.lookup(name)
        if b is not None:
            old = b.value
            if not isinstance(old, ArrayRef):
                raise ParserTypeError(f"'{name}' holds {self.describe(old)}; it cannot become a pl.array", sp,
                                      hint="use a different name")
            if (old.extent, old.dtype) != (a.extent, a.dtype):
                raise ParserTypeError(f"'{name}' is an array of {old.extent} {old.dtype.name}; it cannot become one of "
                                      f"{a.extent} {a.dtype.name}", sp, hint="use a different name")
            if self.strict_ssa:
                from ..errors import SSAViolationError

                raise SSAViolationError(f"variable '{name}' is assigned more than once (strict_ssa=True)", sp,
                                        previous_span=b.span)
            ref = old
        else:
            ref = ArrayRef(name, a.dtype, a.extent, a.task_ids)
            self.scopes.define(name, Binding(ref, sp))
        elems = self.array_elems(a)  # (before any element is reassigned: `a = a` style copies)
        for k, e in enumerate(elems):
            self._bind_elem(_key(name, k), f"{name}_{k}", e, sp)

    def array_store(self, a: ArrayRef | ArrayTemp, i: Any, v: Any, sp: Span) -> None:
        """`name[i] = v` in place."""
        if not isinstance(a, ArrayRef):
            raise ParserSyntaxError("only an array bound to a name can be assigned into", sp)
        for k, e in enumerate(self._updated(a, i, v, sp)):
            self._bind_elem(_key(a.name, k), f"{a.name}_{k}", e, sp)

    # ---- flattening at loop / yield boundaries ---------------------------------------------------

    def flatten_values(self, values: list[Any] | tuple, sp: Span, what: str,
                       likes: list | None = None) -> tuple[list[Expr], list[Slot]]:
        flat: list[Expr] = []
        layout: list[Slot] = []
        for n, v in enumerate(values):
            if isinstance(v, ARRAY_TYPES):
                flat += self.array_elems(v)
                layout.append(Slot(v.extent, v.dtype, v.task_ids))
            else:
                like = likes[n] if likes is not None and n < len(likes) else None
                flat.append(v if isinstance(v, Expr) else to_expr(v, sp, what, like))
                layout.append(Slot())
        return flat, layout

    def bind_iter_slots(self, nodes: list[ast.expr], inits: list[Expr], layout: list[Slot]) -> list[IterArg]:
        """The loop-carried names of a loop: one IterArg per flat value; an array slot binds its name to an
        array of IterArgs."""
        out: list[IterArg] = []
        pos = 0
        for n, slot in zip(nodes, layout):
            if not isinstance(n, ast.Name):
                raise ParserSyntaxError("loop-carried names must be plain names", self.span(n))
            if self.strict_ssa:
                self._check_new_name(n.id, self.span(n))
            if slot.extent is None:
                a = IterArg(n.id, inits[pos].type, inits[pos], span=self.span(n))
                self.scopes.define(n.id, Binding(a, a.span))
                out.append(a)
                pos += 1
                continue
            ref = ArrayRef(n.id, slot.dtype, slot.extent, slot.task_ids)  # type: ignore[arg-type]
            self.scopes.define(n.id, Binding(ref, self.span(n)))
            for k in range(slot.extent):
                a = IterArg(f"{n.id}_{k}", inits[pos].type, inits[pos], span=self.span(n))
                self.scopes.define(_key(n.id, k), Binding(a, a.span))
                out.append(a)
                pos += 1
        return out

    def bind_result_slots(self, names: list[str], spans: list[Span], types: list, layout: list[Slot]) -> list[Var]:
        """The result names of a loop / yielding if, one Var per flat value (arrays regrouped)."""
        out: list[Var] = []
        pos = 0
        for n, s, slot in zip(names, spans, layout):
            b = self.scopes.lookup(n)
            if b is not None and not b.python and self.strict_ssa:
                from ..errors import SSAViolationError

                raise SSAViolationError(f"variable '{n}' is assigned more than once (strict_ssa=True)", s,
                                        previous_span=b.span)
            if slot.extent is None:
                v = Var(n, types[pos], span=s)
                self.scopes.define(n, Binding(v, s))
                out.append(v)
                pos += 1
                continue
            self.scopes.define(n, Binding(ArrayRef(n, slot.dtype, slot.extent, slot.task_ids), s))  # type: ignore[arg-type]
            for k in range(slot.extent):
                v = Var(f"{n}_{k}", types[pos], span=s)
                self.scopes.define(_key(n, k), Binding(v, s))
                out.append(v)
                pos += 1
        return out

    def deps_entries(self, deps: list | tuple) -> list[Any]:
        """`deps=[tid, tids, None]`: an array stands for all its elements."""
        out: list[Any] = []
        for d in deps:
            out += self.array_elems(d) if isinstance(d, ARRAY_TYPES) else [d]
        return out

    # ---- pl.array.* / pl.prefetch.* calls ----------------------------------------------------------

    def array_helper_call(self, name: str, node: ast.Call) -> Any:
        sp = self.span(node)
        args, kwargs, nodes = self.call_args(node)
        op = name.split(".", 1)[1]
        params = {"create": ("extent", "dtype"), "get_element": ("array", "index"),
                  "update_element": ("array", "index", "value")}[op]
        if len(args) > len(params) or set(kwargs) - set(params):
            raise ParserSyntaxError(f"pl.array.{op} takes ({', '.join(params)})", sp)
        vals = dict(zip(params, args))
        for k, v in kwargs.items():
            if k in vals:
                raise ParserSyntaxError(f"pl.array.{op} got '{k}' twice", sp)
            vals[k] = v
        missing = [p for p in params if p not in vals]
        if missing:
            raise ParserSyntaxError(f"pl.array.{op} needs {', '.join(missing)}", sp)
        if op == "create":
            return self._array_create(vals["extent"], vals["dtype"], node, sp)
        a = vals["array"]
        if not isinstance(a, ARRAY_TYPES):
            raise ParserTypeError(f"pl.array.{op} takes a pl.array, got {self.describe(a)}", sp)
        if op == "get_element":
            return self.array_get(a, vals["index"], sp)
        return ArrayTemp(tuple(self._updated(a, vals["index"], vals["value"], sp)), a.dtype, a.task_ids)

    def _array_create(self, extent: Any, dtype: Any, node: ast.Call, sp: Span) -> ArrayTemp:
        if isinstance(extent, bool) or not isinstance(extent, int):
            raise ParserTypeError(f"pl.array.create: the extent must be a Python int (a compile-time constant), got "
                                  f"{self.describe(extent)}", sp)
        if not 0 < extent <= MAX_EXTENT:
            raise ParserTypeError(f"pl.array.create: the extent must be in 1..{MAX_EXTENT}, got {extent}", sp)
        if not isinstance(dtype, DataType) or dtype.is_float or not (dtype.is_int or dtype.is_bool):
            raise ParserTypeError(f"pl.array.create: the dtype must be an integer type, pl.BOOL or pl.TASK_ID, got "
                                  f"{dtype!r}", sp)
        dnode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "dtype"), None)
        spelled = dnode.attr if isinstance(dnode, ast.Attribute) else dnode.id if isinstance(dnode, ast.Name) else ""
        task_ids = spelled in ("TASK_ID", "TaskId") and dtype is DataType.INT64
        init = ConstBool(False, span=sp) if dtype.is_bool else ConstInt(-1 if task_ids else 0, dtype, span=sp)
        return ArrayTemp((init,) * extent, dtype, task_ids)

    def prefetch_helper_call(self, name: str, node: ast.Call) -> Any:
        """GM->L2 prefetch is a device cache hint: checked, then nothing (`wait` is true at once)."""
        sp = self.span(node)
        args, kwargs, _ = self.call_args(node)
        op = name.split(".", 1)[1]
        want = {"make_context": (), "async_prefetch": ("tensor", "context"), "session": ("context",),
                "wait": ("event", "session")}[op]
        if kwargs or len(args) != len(want):
            raise ParserSyntaxError(f"pl.prefetch.{op} takes ({', '.join(want)}) positionally", sp)
        kinds = {"context": "context", "event": "event", "session": "session"}
        for w, a in zip(want, args):
            if w == "tensor":
                if not (isinstance(a, Expr) and isinstance(a.type, TensorType)):
                    raise ParserTypeError(f"pl.prefetch.async_prefetch prefetches a tensor, got {self.describe(a)}", sp)
            elif not (isinstance(a, PrefetchHandle) and a.kind == kinds[w]):
                raise ParserTypeError(f"pl.prefetch.{op}: the {w} argument must be a prefetch {kinds[w]}, got "
                                      f"{self.describe(a)}", sp)
        if op == "wait":
            return ConstBool(True, span=sp)
        return PrefetchHandle({"make_context": "context", "async_prefetch": "event", "session": "session"}[op])


__all__ = ["ARRAY_TYPES", "ArrayParser", "ArrayRef", "ArrayTemp", "PrefetchHandle", "Slot"]
