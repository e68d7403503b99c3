"""The op registry: one `OpDef` per IR operator, plus unified `pl.*` dispatch entries.

An `OpDef` is the single definition of an operator: its IR name and aliases, its Python-level
signature (which parameters are IR operands and which are compile-time attributes), its type
rule, its NumPy reference semantics, the PTO instruction it becomes and the pipe that runs it.
The parser, verifier, passes, codegen and the interpreter all read these objects.

Signature kinds (`Param.kind`) say how a Python value written in a `pl` program becomes IR:

operands (IR args)                 attributes (IR kwargs)
  "tensor"  a Tensor value           "dtype"    a DataType
  "tile"    a Tile value             "memspace" a MemorySpace
  "value"   a Tensor or a Tile       "bool" / "int" / "float" / "str"
  "scalar"  a Scalar or a number     "number"   int or float
  "shape"   a list of ints/scalars   "pipe"     a PipeType
  "index"   one int/scalar           "cmp"      CmpType, int or name ("lt")
  "tuple"   any tuple expression     "castmode" CastMode, int or name ("round")
  "any"     any expression           "padvalue" PadValue, int or name ("zero")
                                     "layout"   TensorLayout
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import InvalidType, InvalidValue
from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType, MemorySpace, PadValue, PipeType, TensorLayout
from pypto.ir.expr import Expr, Op
from pypto.ir.op import OpError, register_op
from pypto.ir.types import Type

from .traits import ShapeClass, Traits

OPERAND_KINDS = frozenset({"tensor", "tile", "value", "scalar", "shape", "index", "tuple", "any"})
ATTR_KINDS = frozenset({"dtype", "memspace", "bool", "int", "float", "str", "number", "pipe", "cmp",
                        "castmode", "padvalue", "layout"})


class Level(enum.Enum):
    TENSOR = "tensor"
    BLOCK = "block"
    SYSTEM = "system"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Any = REQUIRED
    optional: bool = False  # an operand that may be omitted (then absent from IR args)
    nullable: bool = False  # an attribute that also takes None (besides its default)

    def __post_init__(self):
        if self.kind not in OPERAND_KINDS and self.kind not in ATTR_KINDS:
            raise InvalidValue(f"unknown parameter kind {self.kind!r}")

    @property
    def is_attr(self) -> bool:
        return self.kind in ATTR_KINDS


def arg(name: str, kind: str = "value", default: Any = REQUIRED, optional: bool = False) -> Param:
    return Param(name, kind, default, optional)


def attr(name: str, kind: str, default: Any = REQUIRED, nullable: bool = False) -> Param:
    if kind not in ATTR_KINDS:
        raise InvalidValue(f"{kind!r} is not an attribute kind")
    return Param(name, kind, default, nullable=nullable)


InferFn = Callable[[tuple[Expr, ...], dict[str, Any]], Type]


@dataclass(frozen=True, slots=True, eq=False)
class OpDef(Op):
    """One IR operator. Identity object: Calls refer to it directly."""

    level: Level = Level.BLOCK
    params: tuple[Param, ...] = ()
    infer: InferFn | None = None
    reference: Callable[..., Any] | None = None
    pto: str | None = None
    pipe: PipeType | None = None
    aliases: tuple[str, ...] = ()
    family: str = ""
    doc: str = ""
    # Python-call binder override: (args, kwargs) -> (operand values, attr values) by param name
    binder: Callable[..., Any] | None = None
    # index of the operand whose buffer the result reuses (store -> output tensor, matmul_acc -> acc)
    result_reuses: int | None = None
    # for tensor ops: the block op it becomes inside a kernel
    tile_form: OpDef | None = None
    # shape class and traits (pypto/ops/traits.py)
    traits: Traits = Traits(ShapeClass.ELEMENTWISE)
    # for row/column expand ops: the elementwise op they apply with the broadcast vector
    broadcasts: OpDef | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def shape_class(self) -> ShapeClass:
        return self.traits.shape

    @property
    def operands(self) -> tuple[Param, ...]:
        return _signature(self).operands

    @property
    def attrs(self) -> tuple[Param, ...]:
        return _signature(self).attrs

    @property
    def param_names(self) -> frozenset[str]:
        return _signature(self).param_names

    def normalize_kwargs(self, kw: dict[str, Any]) -> dict[str, Any]:
        """Fill attribute defaults, coerce attribute values, reject unknown attributes."""
        out: dict[str, Any] = {}
        sig = _signature(self)
        for k in kw:
            if k not in sig.attr_names:
                raise OpError(f"{self.name} has no attribute {k!r}",
                              hint=f"attributes: {', '.join(sig.attr_names) or 'none'}")
        for p in sig.attrs:
            if p.name in kw:
                out[p.name] = coerce_attr(self.name, p, kw[p.name])
            elif p.default is not REQUIRED:
                out[p.name] = p.default
            else:
                raise OpError(f"{self.name} needs attribute {p.name!r}")
        return out

    def infer_type(self, args: tuple[Expr, ...], kwargs: dict[str, Any]) -> Type:
        sig = _signature(self)
        if not (sig.min_operands <= len(args) <= len(sig.operands)):
            raise OpError(f"{self.name} takes {_arity(sig.operands)} operands, got {len(args)}")
        if self.infer is None:
            raise OpError(f"{self.name} has no type rule")
        if self.pipe is PipeType.V or self.name == "block.store":
            _no_packed_operands(self.name, args)
        return self.infer(args, kwargs)

    def __repr__(self) -> str:
        return f"OpDef({self.name})"


def _no_packed_operands(name: str, args: tuple[Expr, ...]) -> None:
    """A Right tile holds the packed panel layout the cube unit reads: vector instructions and
    stores would read it as rows and get the elements in the wrong places."""
    for a in args:
        t = getattr(a, "type", None)
        if getattr(t, "memory_space", None) is MemorySpace.Right:
            raise OpError(f"{name}: operand is a Right tile (the packed layout of a matmul operand); vector "
                          f"instructions and stores read Vec tiles",
                          hint="load the data into a Vec tile (target_memory=pl.Mem.Vec) for this")


@dataclass(frozen=True)
class _Signature:
    """What calls of an op need from its parameter list, computed once per op."""

    operands: tuple[Param, ...]
    attrs: tuple[Param, ...]
    attr_names: tuple[str, ...]
    param_names: frozenset[str]
    min_operands: int  # operands that are neither optional nor defaulted


_SIGNATURES: dict[OpDef, _Signature] = {}


def _signature(op: OpDef) -> _Signature:
    sig = _SIGNATURES.get(op)
    if sig is None:
        operands = tuple(p for p in op.params if not p.is_attr)
        attrs = tuple(p for p in op.params if p.is_attr)
        sig = _Signature(operands, attrs, tuple(p.name for p in attrs), frozenset(p.name for p in op.params),
                         sum(1 for p in operands if not p.optional and p.default is REQUIRED))
        _SIGNATURES[op] = sig
    return sig


def _arity(ops: tuple[Param, ...]) -> str:
    lo = sum(1 for p in ops if not p.optional and p.default is REQUIRED)
    return str(lo) if lo == len(ops) else f"{lo} to {len(ops)}"


_ENUM_KINDS: dict[str, type[enum.Enum]] = {
    "memspace": MemorySpace, "pipe": PipeType, "cmp": CmpType, "castmode": CastMode,
    "padvalue": PadValue, "layout": TensorLayout,
}


def coerce_attr(opname: str, p: Param, v: Any) -> Any:
    """Check and normalize one attribute value (enums given as ints or names become members)."""
    k = p.kind
    if v is None and (p.default is None or p.nullable):
        return None
    if k == "dtype":
        if isinstance(v, DataType):
            return v
        if isinstance(v, str):
            try:
                return DataType.from_text(v)
            except ValueError:
                pass
    elif k in _ENUM_KINDS:
        cls = _ENUM_KINDS[k]
        if isinstance(v, cls):
            return v
        if isinstance(v, int) and not isinstance(v, bool):
            try:
                return cls(v)
            except ValueError:
                pass
        if isinstance(v, str):
            try:
                return cls.parse(v)  # type: ignore[attr-defined]
            except ValueError:
                pass
    elif k == "bool":
        if isinstance(v, bool):
            return v
    elif k == "int":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    elif k == "float":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    elif k == "number":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    elif k == "str":
        if isinstance(v, str):
            return v
    raise OpError(f"{opname}: attribute {p.name!r} expects {k}, got {v!r}")


# ---------------------------------------------------------------------------------------------
# the tables

OPS: dict[str, OpDef] = {}  # canonical IR name -> OpDef


@dataclass(frozen=True)
class Dispatch:
    """A unified `pl.<name>` entry: picks an op by the first operand (Tensor or Tile) and, for
    arithmetic, by whether the right operand is a scalar."""

    name: str
    tensor: OpDef | None = None
    tile: OpDef | None = None
    tensor_scalar: OpDef | None = None
    tile_scalar: OpDef | None = None
    scalar: str | None = None  # a pure-scalar form (e.g. pl.cast on a Scalar), handled by the parser
    doc: str = ""

    def choose(self, first_kind: str, rhs_is_scalar: bool) -> OpDef | str | None:
        if first_kind == "tensor":
            return (self.tensor_scalar if rhs_is_scalar and self.tensor_scalar else self.tensor)
        if first_kind == "tile":
            return (self.tile_scalar if rhs_is_scalar and self.tile_scalar else self.tile)
        if first_kind == "scalar":
            return self.scalar
        return None


@dataclass(frozen=True)
class Router:
    """A `pl` spelling whose call forms map to different ops (pl-head's keyword forms: `pl.gather(x,
    dim=-1, index=i)` vs `pl.gather(x, mask_pattern=1)`). `route(args, kwargs, build)` returns the
    result; `build(entry, args, kwargs)` binds one op or dispatch entry the usual way."""

    name: str
    route: Callable[..., Any]
    doc: str = ""


class OpNamespace:
    """The ops of one level by short name, as attributes: `block_ops.add`, `tensor_ops.row_sum`.
    How code outside the registry refers to an op (an object, not a name built from strings)."""

    def __init__(self, level: Level):
        self._level = level
        self._ops: dict[str, OpDef] = {}

    def _add(self, short: str, op: OpDef) -> None:
        self._ops[short] = op

    def __getattr__(self, short: str) -> OpDef:
        try:
            return self.__dict__["_ops"][short]
        except KeyError:
            raise AttributeError(f"no {self.__dict__.get('_level', Level.BLOCK).value} op named {short!r}") from None

    def __iter__(self):
        return iter(self._ops.values())

    def __contains__(self, op: object) -> bool:
        return op in self._ops.values()


tensor_ops = OpNamespace(Level.TENSOR)
block_ops = OpNamespace(Level.BLOCK)
system_ops = OpNamespace(Level.SYSTEM)
_BY_LEVEL = {Level.TENSOR: tensor_ops, Level.BLOCK: block_ops, Level.SYSTEM: system_ops}


# DSL namespaces: "pl", "pl.tensor", "pl.block" (alias "pl.tile"), "pl.system" -> name -> entry
NAMESPACES: dict[str, dict[str, OpDef | Dispatch | Router]] = {"pl": {}, "pl.tensor": {}, "pl.block": {},
                                                     "pl.system": {}}


def define(name: str, params: list[Param] | tuple[Param, ...], infer: InferFn, *, traits: Traits, reference=None,
           pto: str | None = None, pipe: PipeType | None = None, aliases: tuple[str, ...] = (),
           family: str = "", doc: str = "", binder=None, result_reuses: int | None = None,
           tile_form: OpDef | None = None, broadcasts: OpDef | None = None, dsl: tuple[str, ...] | None = None,
           **extra: Any) -> OpDef:
    """Register an operator `name` ("tensor.add", "block.adds", ...).

    `traits` says what the compiler needs to know about it (pypto/ops/traits.py). `dsl` lists the
    `pl` spellings it is reachable as (default: its own namespace, e.g. "pl.block.add"; block ops
    are also reachable as "pl.tile.<name>"). The op is also `block_ops.<short>` /
    `tensor_ops.<short>` / `system_ops.<short>` for code that refers to it.
    """
    if not isinstance(traits, Traits):
        raise InvalidType(f"op {name}: traits must be a pypto.ops.traits.Traits, got {traits!r}")
    for rel, what in ((tile_form, "tile_form"), (broadcasts, "broadcasts")):
        if rel is not None and not isinstance(rel, OpDef):
            raise InvalidType(f"op {name}: {what} must be the OpDef itself, got {rel!r}")
    ns, short = name.split(".", 1)
    level = {"tensor": Level.TENSOR, "block": Level.BLOCK, "system": Level.SYSTEM}[ns]
    if ns == "block" and f"tile.{short}" not in aliases:
        aliases = (*aliases, f"tile.{short}")  # the later public name of the tile level
    op = OpDef(name, level=level, params=tuple(params), infer=infer, reference=reference, pto=pto,
               pipe=pipe, aliases=tuple(aliases), family=family or short, doc=doc, binder=binder,
               result_reuses=result_reuses, tile_form=tile_form, traits=traits, broadcasts=broadcasts,
               extra=dict(extra))
    if name in OPS:
        raise InvalidValue(f"op {name} defined twice")
    OPS[name] = op
    _BY_LEVEL[level]._add(short, op)
    register_op(op, op.aliases)
    for spelling in (dsl if dsl is not None else (f"pl.{name}",)):
        add_dsl_name(spelling, op)
    return op


def add_dsl_name(spelling: str, entry: OpDef | Dispatch | Router) -> None:
    ns, _, short = spelling.rpartition(".")
    if ns == "pl.tile":
        ns = "pl.block"
    table = NAMESPACES.setdefault(ns, {})
    prev = table.get(short)
    if prev is not None and prev is not entry:
        raise InvalidValue(f"{spelling} bound twice")
    table[short] = entry


def unified(name: str, *, tensor: OpDef | None = None, tile: OpDef | None = None,
            tensor_scalar: OpDef | None = None, tile_scalar: OpDef | None = None, scalar: str | None = None,
            doc: str = "") -> Dispatch:
    d = Dispatch(name, tensor, tile, tensor_scalar, tile_scalar, scalar, doc)
    add_dsl_name(f"pl.{name}", d)
    return d


_EXTENSIONS: dict[str, str] = {}  # ops defined outside the package (pypto.extend): name -> description


def note_extension(name: str, description: str) -> None:
    """Record an op defined by `pypto.extend` (its description joins the compile cache's key)."""
    _EXTENSIONS[name] = description


def extension_fingerprint() -> str:
    """The descriptions of every extension op defined in this process, in a stable order."""
    return "\n".join(f"{k}={v}" for k, v in sorted(_EXTENSIONS.items()))


def get_def(name: str) -> OpDef:
    from pypto.ir.op import get_op

    op = get_op(name)
    if not isinstance(op, OpDef):
        raise OpError(f"{name} is not a registry op")
    return op


def lookup_dsl(namespace: str, name: str) -> OpDef | Dispatch | None:
    if namespace == "pl.tile":
        namespace = "pl.block"
    return NAMESPACES.get(namespace, {}).get(name)


def ops_by_pto() -> dict[str, OpDef]:
    """PTO instruction name -> the block/system op that emits it."""
    out: dict[str, OpDef] = {}
    for op in OPS.values():
        if op.pto and op.level is not Level.TENSOR:
            out.setdefault(op.pto, op)
    return out


__all__ = [
    "ATTR_KINDS", "Dispatch", "Level", "NAMESPACES", "OPERAND_KINDS", "OPS", "OpDef", "OpError", "OpNamespace",
    "Param", "REQUIRED", "Router", "add_dsl_name", "arg", "attr", "block_ops", "coerce_attr", "define", "get_def",
    "lookup_dsl", "ops_by_pto", "system_ops", "tensor_ops", "unified",
]
