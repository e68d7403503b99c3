"""From a call's arguments to a parsed `ir.Program`: the entry's metas, its dependencies
specialised as the parser reaches their calls, and the program `_jit_<name>`.

Dependencies (`@pl.jit.incore/.inline/.opaque` functions the body calls) are specialised lazily:
when the parser reaches `dep(x, y)` it asks the `JITFunction` (`__pl_specialise__`) for a function
matching the IR types of `x` and `y` at that call site. So a dependency sees exactly what its caller
passes (a slice `src[0:128]`, a tile-sized view, a dynamic dim), without a separate shape walker.
Within one specialisation each distinct signature of a dependency is parsed once (`Session`); a
second signature gets a suffixed name (`kern_1`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pypto.errors import InvalidType
from pypto.ir.collector import paused_collector as paused
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, TensorLayout
from pypto.ir.expr import ConstInt, DynVar, Expr
from pypto.ir.function import Program
from pypto.ir.types import ScalarType, TensorType

from .meta import RUNTIME, TensorMeta, scalar_dtype, signature_meta, tensor_meta

if TYPE_CHECKING:
    from .function import JITFunction

_FUNC_TYPES = {"orchestration": FunctionType.Orchestration, "host": FunctionType.Orchestration,
               "incore": FunctionType.InCore, "opaque": FunctionType.Opaque, "inline": FunctionType.Opaque}  # (inline: spliced, never parsed alone)


@dataclass
class Session:
    """The dependencies specialised while one entry is parsed."""

    done: dict[tuple, Any] = field(default_factory=dict)  # (id(jit fn), signature key) -> Function / InlineFunction
    names: dict[str, int] = field(default_factory=dict)

    def fresh_name(self, base: str) -> str:
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"


_SESSION: contextvars.ContextVar[Session | None] = contextvars.ContextVar("pl_jit_session", default=None)


@contextlib.contextmanager
def session() -> Iterator[Session]:
    s = Session()
    tok = _SESSION.set(s)
    try:
        yield s
    finally:
        _SESSION.reset(tok)


@dataclass(frozen=True)
class EntryCall:
    """A call of an entry, classified: the metas and literals the program is specialised on."""

    metas: dict[str, TensorMeta]
    scalars: dict[str, tuple[Any, DataType]]  # literal pl scalars: value, dtype
    runtime_scalars: tuple[str, ...]  # signature mode: pl.RUNTIME scalars (real parameters)
    consts: dict[str, Any]  # parameters without a pl annotation

    def key(self) -> tuple:
        return (tuple((n, m.key()) for n, m in self.metas.items()),
                tuple((n, type(v).__name__, v, dt.name) for n, (v, dt) in self.scalars.items()),
                self.runtime_scalars,
                tuple((n, type(v).__name__, _const_key(v)) for n, v in self.consts.items()))


def _const_key(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def classify(jf: JITFunction, bound: dict[str, Any], *, signature_mode: bool) -> EntryCall:
    """Classify the bound arguments of an entry call (or a signature-mode compile)."""
    specs = jf.param_specs()
    dyn = jf.declared_dynamic()
    metas: dict[str, TensorMeta] = {}
    scalars: dict[str, tuple[Any, DataType]] = {}
    runtime: list[str] = []
    consts: dict[str, Any] = {}
    for name, spec in specs.items():
        v = bound.get(name, _MISSING)
        if spec.kind == "tensor":
            if signature_mode:
                metas[name] = signature_meta(spec, dyn.get(name, {}), jf.__name__)
            else:
                if v is _MISSING:
                    raise InvalidType(f"{jf.__name__}() missing tensor argument '{name}'")
                metas[name] = tensor_meta(spec, v, dyn.get(name, {}), jf.__name__)
        elif spec.kind == "scalar":
            if v is _MISSING:
                raise InvalidType(f"{jf.__name__}() missing scalar argument '{name}'"
                                + (" (signature-mode compile: give every scalar by keyword or default; "
                                   "pl.RUNTIME keeps it a runtime parameter)" if signature_mode else ""))
            if v is RUNTIME:
                if not signature_mode:
                    raise InvalidType(f"{jf.__name__}(): '{name}' is pl.RUNTIME; pl.RUNTIME only marks scalars of a "
                                    "signature-mode kernel.compile(...) — pass a value")
                runtime.append(name)
                continue
            v = _scalar_value(v, name, jf.__name__)
            scalars[name] = (v, scalar_dtype(spec, v))
        else:
            if v is RUNTIME:
                raise InvalidType(f"{jf.__name__}(): '{name}' has no pl scalar annotation, so it is a compile-time "
                                "value; pl.RUNTIME needs pl.Scalar[...] or a pl dtype annotation")
            consts[name] = None if v is _MISSING else v
    return EntryCall(metas, scalars, tuple(runtime), consts)


_MISSING = object()


def _scalar_value(v: Any, name: str, fn: str) -> Any:
    if isinstance(v, (bool, int, float)):
        return v
    item = getattr(v, "item", None)  # a 0-d NumPy / torch value
    if callable(item) and getattr(v, "ndim", 1) == 0:
        return item()
    raise InvalidType(f"{fn}(): scalar parameter '{name}' got {type(v).__name__} {v!r}; pass an int, float or bool")


def build_program(jf: JITFunction, call: EntryCall) -> Program:
    """Parse the specialised entry (and, through the parser, its dependencies) into `_jit_<name>`."""
    from ..language.decorators import _parse_function_node, function_deps

    src, node, env = jf.parsed_source()
    specs = jf.param_specs()
    scalars = dict(call.scalars)
    new, env2, _ = _specialise(jf, node, env, specs, call.metas, scalars, call.consts, None)
    with session(), paused():
        entry = _parse_function_node(new, src, env2, _FUNC_TYPES[jf.kind], False)
        fns = (entry, *function_deps(entry))
    return Program(f"_jit_{jf.__name__}", fns, span=entry.span)


def _specialise(jf: JITFunction, node: Any, env: Any, specs: Any, metas: Any, scalars: Any, consts: Any,
                name: str | None, keep_annotations: bool = True) -> Any:
    from .rewrite import specialise_node

    return specialise_node(node, env, specs, metas, scalars, consts, name=name, keep_annotations=keep_annotations)


# ---- dependencies, specialised at their call sites ---------------------------------------------


def specialise_dep(jf: JITFunction, args: list[Any], kwargs: dict[str, Any], where: Any) -> tuple[Any, list[Any]]:
    """The parser's hook for a call of a dependency: (Function or InlineFunction, its arguments)."""
    from ..language.decorators import InlineFunction, _parse_function_node
    from ..language.errors import ParserTypeError

    if jf.kind in ("orchestration", "host"):
        raise ParserTypeError(f"'{jf.__name__}' is a @pl.jit entry; a kernel calls @pl.jit.incore, .inline or "
                              ".opaque functions", where)
    if jf.kind == "extern":
        jf.refuse_extern(where)
    try:
        bound = jf.bind_python(args, kwargs)
    except TypeError as e:
        raise ParserTypeError(f"call of {jf.__name__}(): {e}", where) from None
    specs = jf.param_specs()
    dyn = jf.declared_dynamic()
    metas: dict[str, TensorMeta] = {}
    scalars: dict[str, tuple[Any, DataType]] = {}
    consts: dict[str, Any] = {}
    runtime: dict[str, DataType] = {}
    for name, spec in specs.items():
        v = bound.get(name, _MISSING)
        what = f"argument '{name}' of {jf.__name__}()"
        if spec.kind == "tensor":
            t = v.type if isinstance(v, Expr) else None
            if not isinstance(t, TensorType):
                raise ParserTypeError(f"{what} must be a tensor, got {_describe(v)}", where)
            metas[name] = _meta_of_type(t, spec, dyn.get(name, {}), what, where)
        elif spec.kind == "scalar":
            if isinstance(v, Expr) and isinstance(v.type, ScalarType):
                runtime[name] = v.type.dtype
            elif isinstance(v, (bool, int, float)):
                scalars[name] = (v, scalar_dtype(spec, v))
            else:
                raise ParserTypeError(f"{what} must be a scalar, got {_describe(v)}", where)
        else:
            consts[name] = None if v is _MISSING else v
    key = (tuple((n, m.key()) for n, m in metas.items()),
           tuple((n, type(v).__name__, v) for n, (v, _) in scalars.items()), tuple(runtime.items()),
           tuple((n, _const_key(v)) for n, v in consts.items()))
    sess = _SESSION.get()
    ctx = session() if sess is None else contextlib.nullcontext(sess)
    with ctx as s:
        assert s is not None
        memo_key = (id(jf), key)
        target = s.done.get(memo_key)
        if target is None:
            src, node, env = jf.parsed_source()
            spec_for_parse = dict(specs)
            for n, dt in runtime.items():  # a runtime scalar argument: the parameter takes its dtype
                if spec_for_parse[n].dtype is None:
                    from dataclasses import replace

                    spec_for_parse[n] = replace(spec_for_parse[n], dtype=dt)
            if jf.kind == "inline":
                new, env2, _ = _specialise(jf, node, env, spec_for_parse, metas, scalars, consts, None,
                                           keep_annotations=False)
                target = InlineFunction(None, node=new, src=src, env=env2)
            else:
                new, env2, _ = _specialise(jf, node, env, spec_for_parse, metas, scalars, consts,
                                           s.fresh_name(jf.__name__))
                target = _parse_function_node(new, src, env2, _FUNC_TYPES[jf.kind], False)
            s.done[memo_key] = target
    ordered = [bound[n] for n, spec in specs.items() if spec.kind != "const"]
    return target, ordered


def _describe(v: Any) -> str:
    if isinstance(v, Expr):
        from pypto.ir.printer import type_str

        return type_str(v.type)
    return type(v).__name__


def _meta_of_type(t: TensorType, spec: Any, dyn: dict[int, DynVar], what: str, where: Any) -> TensorMeta:
    from ..language.errors import ParserTypeError

    if spec.dtype is not None and spec.dtype is not t.dtype:
        raise ParserTypeError(f"{what} is annotated {spec.dtype.name} but the caller passes {t.dtype.name}", where)
    if spec.dims is not None and len(spec.dims) != len(t.shape):
        raise ParserTypeError(f"{what} is annotated with rank {len(spec.dims)} but the caller passes rank "
                              f"{len(t.shape)}", where)
    shape: list[Any] = []
    for i, d in enumerate(t.shape):
        if isinstance(d, ConstInt):
            declared = spec.dims[i] if spec.dims is not None else None
            shape.append(declared if isinstance(declared, DynVar) else d.value)
        else:
            shape.append(d)
    for i, dv in dyn.items():
        if i < len(shape) and not isinstance(shape[i], Expr):
            shape[i] = dv
    extents = tuple(d if isinstance(d, int) else 0 for d in shape)
    layout = spec.layout or (t.layout if isinstance(t.layout, TensorLayout) else TensorLayout.ND)
    return TensorMeta(tuple(shape), t.dtype, layout, extents)


__all__ = ["EntryCall", "build_program", "classify", "session", "specialise_dep"]
