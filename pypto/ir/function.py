"""Functions and programs."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import InvalidType, InvalidValue, NotFound

from .enums import FunctionType, ParamDirection
from .expr import GlobalVar, Var
from .node import Node, defines, ignored, span_field
from .span import Span
from .stmt import Stmt
from .types import Type


@dataclass(frozen=True, slots=True, eq=False)
class Function(Node):
    name: str
    params: tuple[Var, ...] = defines()
    param_directions: tuple[ParamDirection, ...] = ()
    return_types: tuple[Type, ...] = ()
    body: Stmt = None  # type: ignore[assignment]
    func_type: FunctionType = FunctionType.Opaque
    span: Span = span_field()

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        dirs = tuple(self.param_directions) or tuple(ParamDirection.In for _ in self.params)
        if len(dirs) != len(self.params):
            raise InvalidValue(f"function {self.name}: {len(self.params)} params but {len(dirs)} directions")
        object.__setattr__(self, "param_directions", dirs)
        object.__setattr__(self, "return_types", tuple(self.return_types))

    def __repr__(self) -> str:
        return f"Function({self.name})"


class FunctionTable(tuple):
    """`Program.functions`: a tuple of functions (sorted by name) that also reads as the public
    project's map from GlobalVar to Function (`values()`, `keys()`, `items()`, `table[name]`).
    IR walkers treat it as any tuple."""

    __slots__ = ()

    def values(self) -> tuple[Function, ...]:
        return tuple(self)

    def keys(self) -> tuple[GlobalVar, ...]:
        return tuple(GlobalVar(f.name) for f in self)

    def items(self) -> tuple[tuple[GlobalVar, Function], ...]:
        return tuple((GlobalVar(f.name), f) for f in self)

    def get(self, key: str | GlobalVar, default: Function | None = None) -> Function | None:
        name = key.name if isinstance(key, GlobalVar) else key
        return next((f for f in self if f.name == name), default)

    def __getitem__(self, key):  # an index or slice as a tuple; a name or GlobalVar as a map
        if isinstance(key, (str, GlobalVar)):
            got = self.get(key)
            if got is None:
                raise NotFound(f"no function named {getattr(key, 'name', key)!r} in this program")
            return got
        return tuple.__getitem__(self, key)

    def __contains__(self, key) -> bool:
        if isinstance(key, (str, GlobalVar)):
            return self.get(key) is not None
        return tuple.__contains__(self, key)


@dataclass(frozen=True, slots=True, eq=False)
class Program(Node):
    """A set of functions, kept sorted by name so that every walk over them is deterministic."""

    name: str = ignored()
    functions: tuple[Function, ...] = ()
    span: Span = span_field()

    def __post_init__(self):
        for f in self.functions:
            if not isinstance(f, Function):
                raise InvalidType(f"program {self.name}: expected Function objects, got {type(f).__name__}")
        fns = tuple(sorted(self.functions, key=lambda f: f.name))
        names = [f.name for f in fns]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InvalidValue(f"program {self.name}: duplicate function names {sorted(dup)}")
        object.__setattr__(self, "functions", FunctionTable(fns))

    def get_function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def get_global_var(self, name: str) -> GlobalVar | None:
        return GlobalVar(name) if self.get_function(name) is not None else None

    @property
    def function_names(self) -> list[str]:
        return [f.name for f in self.functions]

    def with_functions(self, functions) -> Program:
        return Program(self.name, tuple(functions), span=self.span)

    def __repr__(self) -> str:
        return f"Program({self.name}: {', '.join(self.function_names)})"


__all__ = ["Function", "FunctionTable", "Program"]
