"""IRBuilder: build IR imperatively with `with` blocks, the way the DSL reads.

    ib = IRBuilder()
    with ib.function("f") as f:
        x = f.param("x", TensorType([64], DataType.FP32))
        f.return_type(TensorType([64], DataType.FP32))
        with ib.for_loop("i", 0, 4) as loop:
            acc = loop.iter_arg("acc", x)
            y = ib.let("y", ib.call("tensor.add", [acc, x]))
            ib.yield_(y)
        ib.return_(loop.output())
    fn = f.get_result()

Invariants the builder keeps (violations raise `BuilderError` at the offending call):
- statements are emitted only inside a function (or a construct inside one);
- constructs are closed innermost first;
- a loop with iter_args ends its body with a yield of exactly that many values, an if with
  return_vars ends both branches with such a yield, and nothing yields values where no results
  are expected;
- every node gets the span (file:line:col) of the builder call that made it, taken from the
  caller's frame.
Python ints, floats and bools given as expressions become ConstInt(INDEX), ConstFloat(FP32) and
ConstBool; lists and tuples become MakeTuple.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from pypto.errors import Error

from .dtype import DataType
from .enums import ForKind, FunctionType, LoopOrigin, ParamDirection, ScopeKind
from .expr import (
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    GlobalVar,
    IterArg,
    MakeTuple,
    Op,
    Var,
    scalar_type,
)
from .function import Function, Program
from .span import UNKNOWN_SPAN, Span
from .stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    seq,
)
from .types import TupleType, Type


class BuilderError(Error):
    """The builder was used out of order (emitting outside a function, closing the wrong block,
    yielding the wrong number of values, ...)."""


@functools.lru_cache(maxsize=512)
def _positions(code: Any) -> tuple:
    try:
        return tuple(code.co_positions())
    except AttributeError:  # Python < 3.11: no column information
        return ()


def caller_span() -> Span:
    """The span of the first frame outside this module (the user's builder call)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return frame_span(f)


def frame_span(f: Any) -> Span:
    """The span (line and columns) of the instruction a frame is executing."""
    if f is None:
        return UNKNOWN_SPAN
    pos = _positions(f.f_code)
    k = f.f_lasti // 2
    if k < len(pos) and pos[k][0] is not None:
        line, end_line, col, end_col = pos[k]
        return Span(f.f_code.co_filename, line, col or 0, -1 if end_line is None else end_line,
                    -1 if end_col is None else end_col)
    return Span(f.f_code.co_filename, f.f_lineno, 0)


def as_expr(v: Any, span: Span = UNKNOWN_SPAN) -> Expr:
    """An IR expression for a Python value (see the module docstring for the conversions)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return ConstBool(v, span=span)
    if isinstance(v, int):
        return ConstInt(v, DataType.INDEX, span=span)
    if isinstance(v, float):
        return ConstFloat(v, DataType.FP32, span=span)
    if isinstance(v, (list, tuple)):
        return MakeTuple(tuple(as_expr(x, span) for x in v), span=span)
    raise BuilderError(f"cannot use a {type(v).__name__} ({v!r}) as an IR expression")


# ---------------------------------------------------------------------------------------------
# constructs: each open one owns a frame collecting its statements


class _Frame:
    """The statements collected so far for an open construct (`owner`)."""

    def __init__(self, owner: _Construct) -> None:
        self.owner = owner
        self.stmts: list[Stmt] = []


class _Construct:
    """Base of the objects returned by `ib.function`, `ib.for_loop`, ...: a context manager that
    opens a frame on enter and builds its node on a clean exit (`get_result()` returns it)."""

    what = "block"

    def __init__(self, ib: IRBuilder, span: Span) -> None:
        self._ib = ib
        self.span = span
        self._frame: _Frame | None = None
        self._result: Any = None

    def __enter__(self):
        if self._frame is not None:
            raise BuilderError(f"this {self.what} was already entered")
        self._frame = _Frame(self)
        self._ib._frames.append(self._frame)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:  # unwind quietly: the user's exception is the one to see
            self._ib._unwind_to(self._frame)
            return False
        self._ib._pop(self._frame, self)
        self._result = self._build(self._frame.stmts)
        if isinstance(self._result, Stmt):
            self._ib._target(type(self._result).__name__).stmts.append(self._result)
        return False

    @property
    def is_open(self) -> bool:
        return self._frame is not None and self._result is None

    def _build(self, stmts: list[Stmt]) -> Any:
        raise NotImplementedError

    def get_result(self) -> Any:
        if self._result is None:
            raise BuilderError(f"{self.what}: get_result() before its with block ended")
        return self._result


class ProgramBuilder(_Construct):
    what = "program"

    def __init__(self, ib: IRBuilder, name: str, span: Span) -> None:
        super().__init__(ib, span)
        self.name = name
        self.functions: list[Function] = []

    def add_function(self, fn: Function) -> Function:
        if not any(f is fn for f in self.functions):  # (a function built inside the program is already here)
            self.functions.append(fn)
        return fn

    def declare_function(self, name: str) -> GlobalVar:
        """The GlobalVar a call of function `name` uses, before that function is built."""
        return GlobalVar(name)

    def _build(self, stmts: list[Stmt]) -> Program:
        try:
            return Program(self.name, tuple(self.functions), span=self.span)
        except ValueError as e:
            raise BuilderError(str(e)) from None


class FunctionBuilder(_Construct):
    what = "function"

    def __init__(self, ib: IRBuilder, name: str, func_type: FunctionType, span: Span) -> None:
        super().__init__(ib, span)
        self.name = name
        self.func_type = func_type
        self.params: list[Var] = []
        self.directions: list[ParamDirection] = []
        self.return_types: list[Type] = []
        self._program: ProgramBuilder | None = None

    def __enter__(self):
        owner = self._ib._frames[-1].owner if self._ib._frames else None
        if owner is not None and not isinstance(owner, ProgramBuilder):
            raise BuilderError(f"function {self.name} opened inside a {owner.what}; functions nest only "
                               f"in a program")
        self._program = owner
        return super().__enter__()

    def param(self, name: str | Var, type: Type | None = None,
              direction: ParamDirection = ParamDirection.In) -> Var:
        """Add a parameter (a name and type, or an existing Var) and return its Var."""
        if isinstance(name, Var):
            v = name
        elif type is None:
            raise BuilderError(f"parameter {name} needs a type")
        else:
            v = Var(name, type, span=caller_span())
        self.params.append(v)
        self.directions.append(direction)
        return v

    def return_type(self, t: Type) -> None:
        self.return_types.append(t)

    def _build(self, stmts: list[Stmt]) -> Function:
        fn = Function(self.name, tuple(self.params), tuple(self.directions), tuple(self.return_types),
                      seq(stmts, self.span), self.func_type, span=self.span)
        if self._program is not None:
            self._program.add_function(fn)
        return fn


class _Carrying(_Construct):
    """A construct with results: `return_var(...)` declares them; `output(i)` / `outputs()` read them."""

    def __init__(self, ib: IRBuilder, span: Span) -> None:
        super().__init__(ib, span)
        self.return_vars: list[Var] = []

    def outputs(self) -> tuple[Var, ...]:
        return tuple(self.return_vars)

    def output(self, i: int = 0) -> Var:
        if not 0 <= i < len(self.return_vars):
            raise BuilderError(f"{self.what} has {len(self.return_vars)} return vars; output({i}) does not exist")
        return self.return_vars[i]

    def expected_yield(self) -> int | None:
        """How many values a yield here must carry, when already known."""
        return None

    def _check_tail(self, stmts: list[Stmt], n: int, where: str) -> None:
        last = stmts[-1] if stmts else None
        if n == 0:
            if isinstance(last, YieldStmt) and last.values:
                raise BuilderError(f"{where} yields {len(last.values)} values but the {self.what} has no results")
        elif not isinstance(last, YieldStmt):
            raise BuilderError(f"{where} must end with ib.yield_(...) of {n} value(s)")
        elif len(last.values) != n:
            raise BuilderError(f"{where} yields {len(last.values)} value(s), expected {n}")


class _LoopBuilder(_Carrying):
    """Common part of for and while loops: iter_args, and return vars typed like them."""

    def __init__(self, ib: IRBuilder, span: Span) -> None:
        super().__init__(ib, span)
        self.iter_args: list[IterArg] = []

    def iter_arg(self, name: str, init_value: Any, type: Type | None = None) -> IterArg:
        """A loop-carried value starting at `init_value` (typed like it unless `type` is given)."""
        sp = caller_span()
        init = as_expr(init_value, sp)
        ia = IterArg(name, type if type is not None else init.type, init, span=sp)
        self.iter_args.append(ia)
        return ia

    def return_var(self, name: str, type: Type | None = None) -> Var:
        """Declare the next result; its type defaults to the matching iter_arg's."""
        i = len(self.return_vars)
        if type is None:
            if i >= len(self.iter_args):
                raise BuilderError(f"return var {name}: no iter_arg #{i} to take the type from; pass a type")
            type = self.iter_args[i].type
        v = Var(name, type, span=caller_span())
        self.return_vars.append(v)
        return v

    def expected_yield(self) -> int | None:
        return len(self.iter_args)

    def _results(self, stmts: list[Stmt]) -> tuple[tuple[IterArg, ...], tuple[Var, ...]]:
        if not self.return_vars:  # results not declared: name them after the iter_args
            self.return_vars = [Var(f"{ia.name}_out", ia.type, span=self.span) for ia in self.iter_args]
        if len(self.return_vars) != len(self.iter_args):
            raise BuilderError(f"{self.what} has {len(self.iter_args)} iter_args but {len(self.return_vars)} "
                               f"return vars")
        self._check_tail(stmts, len(self.iter_args), f"{self.what} body")
        return tuple(self.iter_args), tuple(self.return_vars)


class ForLoopBuilder(_LoopBuilder):
    what = "for loop"

    def __init__(self, ib: IRBuilder, var: Var, bounds: tuple[Expr, Expr, Expr], kind: ForKind,
                 chunk: int | None, chunk_policy: str, origin: LoopOrigin, span: Span) -> None:
        super().__init__(ib, span)
        self.var = var
        self.start, self.stop, self.step = bounds
        self.kind, self.chunk, self.chunk_policy, self.origin = kind, chunk, chunk_policy, origin

    @property
    def loop_var(self) -> Var:
        return self.var

    def _build(self, stmts: list[Stmt]) -> ForStmt:
        iter_args, rets = self._results(stmts)
        return ForStmt(self.var, self.start, self.stop, self.step, iter_args, seq(stmts, self.span), rets,
                       self.kind, self.chunk, self.chunk_policy, self.origin, span=self.span)


class WhileLoopBuilder(_LoopBuilder):
    what = "while loop"

    def __init__(self, ib: IRBuilder, condition: Expr | None, span: Span) -> None:
        super().__init__(ib, span)
        self.condition = condition

    def cond(self, condition: Any) -> None:
        """Set the loop condition (it may read the iter_args)."""
        self.condition = as_expr(condition, caller_span())

    set_condition = cond

    def _build(self, stmts: list[Stmt]) -> WhileStmt:
        if self.condition is None:
            raise BuilderError("while loop has no condition: pass one to ib.while_loop(...) or call .cond(...)")
        iter_args, rets = self._results(stmts)
        return WhileStmt(self.condition, iter_args, seq(stmts, self.span), rets, span=self.span)


class _ElseBlock:
    """Returned by `IfBuilder.else_()`: statements go to the else branch from the call on; leaving
    its with block closes the branch."""

    def __init__(self, owner: IfBuilder) -> None:
        self._owner = owner

    def __enter__(self) -> _ElseBlock:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self._owner._else_closed = True
        return False


class IfBuilder(_Carrying):
    what = "if"

    def __init__(self, ib: IRBuilder, condition: Expr, span: Span) -> None:
        super().__init__(ib, span)
        self.condition = condition
        self._then: list[Stmt] | None = None
        self._else_closed = False

    def return_var(self, name: str, type: Type) -> Var:
        v = Var(name, type, span=caller_span())
        self.return_vars.append(v)
        return v

    def else_(self) -> _ElseBlock:
        if not self.is_open:
            raise BuilderError("else_() must be called inside the if's with block")
        if self._then is not None:
            raise BuilderError("else_() called twice for the same if")
        if self._ib._frames[-1] is not self._frame:
            raise BuilderError("else_() called while an inner block is still open")
        self._then, self._frame.stmts = self._frame.stmts, []
        return _ElseBlock(self)

    def expected_yield(self) -> int | None:
        return len(self.return_vars) if self.return_vars else None

    def _build(self, stmts: list[Stmt]) -> IfStmt:
        n = len(self.return_vars)
        then, els = (stmts, None) if self._then is None else (self._then, stmts)
        if n and els is None:
            raise BuilderError(f"if with {n} return var(s) needs an else branch that yields them")
        self._check_tail(then, n, "then branch")
        if els is not None:
            self._check_tail(els, n, "else branch")
        return IfStmt(self.condition, seq(then, self.span), seq(els, self.span) if els is not None else None,
                      tuple(self.return_vars), span=self.span)


class ScopeBuilder(_Construct):
    what = "scope"

    def __init__(self, ib: IRBuilder, kind: ScopeKind, span: Span) -> None:
        super().__init__(ib, span)
        self.kind = kind

    def _build(self, stmts: list[Stmt]) -> ScopeStmt:
        return ScopeStmt(self.kind, seq(stmts, self.span), span=self.span)


# ---------------------------------------------------------------------------------------------
# the builder


class IRBuilder:
    """Holds the stack of open constructs; statements go to the innermost one."""

    def __init__(self) -> None:
        self._frames: list[_Frame] = []

    # -- frame stack
    def _pop(self, frame: _Frame | None, owner: _Construct) -> None:
        if not self._frames or self._frames[-1] is not frame:
            inner = self._frames[-1].owner.what if self._frames else "nothing"
            raise BuilderError(f"closing a {owner.what} while a {inner} opened inside it is still open "
                               f"(blocks must close innermost first)")
        self._frames.pop()

    def _unwind_to(self, frame: _Frame | None) -> None:
        while self._frames and self._frames.pop() is not frame:
            pass

    def _in_function(self) -> bool:
        return any(isinstance(f.owner, FunctionBuilder) for f in self._frames)

    def _target(self, what: str) -> _Frame:
        """The frame new statements go to (raises when there is none)."""
        if not self._in_function():
            raise BuilderError(f"{what} outside a function: open one with `with ib.function(...)`")
        frame = self._frames[-1]
        if isinstance(frame.owner, IfBuilder) and frame.owner._else_closed:
            raise BuilderError(f"{what} after the else block closed, still inside the if")
        return frame

    def _open(self, c: _Construct) -> Any:
        if not self._in_function():
            raise BuilderError(f"{c.what} outside a function: open one with `with ib.function(...)`")
        return c

    # -- constructs
    def program(self, name: str) -> ProgramBuilder:
        if self._frames:
            raise BuilderError(f"program {name} must be the outermost block")
        return ProgramBuilder(self, name, caller_span())

    def function(self, name: str, type: FunctionType = FunctionType.Opaque) -> FunctionBuilder:
        return FunctionBuilder(self, name, type, caller_span())

    def for_loop(self, var: str | Var, start: Any, stop: Any, step: Any = 1, kind: ForKind = ForKind.Sequential,
                 *, chunk: int | None = None, chunk_policy: str = "leading_full",
                 origin: LoopOrigin = LoopOrigin.Original) -> ForLoopBuilder:
        sp = caller_span()
        v = var if isinstance(var, Var) else Var(var, scalar_type(DataType.INDEX), span=sp)
        bounds = (as_expr(start, sp), as_expr(stop, sp), as_expr(step, sp))
        return self._open(ForLoopBuilder(self, v, bounds, kind, chunk, chunk_policy, origin, sp))

    def while_loop(self, condition: Any = None) -> WhileLoopBuilder:
        sp = caller_span()
        return self._open(WhileLoopBuilder(self, None if condition is None else as_expr(condition, sp), sp))

    def if_stmt(self, condition: Any) -> IfBuilder:
        sp = caller_span()
        return self._open(IfBuilder(self, as_expr(condition, sp), sp))

    def scope(self, kind: ScopeKind = ScopeKind.InCore) -> ScopeBuilder:
        return self._open(ScopeBuilder(self, kind, caller_span()))

    # -- statements
    def emit(self, stmt: Stmt) -> Stmt:
        if not isinstance(stmt, Stmt):
            raise BuilderError(f"emit() takes a statement, got {type(stmt).__name__}")
        self._target("emit").stmts.append(stmt)
        return stmt

    def var(self, name: str, type: Type) -> Var:
        """A new variable (not yet defined: assign it with `ib.assign`)."""
        return Var(name, type, span=caller_span())

    def let(self, name: str, value: Any, type: Type | None = None) -> Var:
        """`name = value` as a fresh Var (typed like the value unless `type` is given)."""
        sp = caller_span()
        e = as_expr(value, sp)
        t = type if type is not None else e.type
        if t is None:
            raise BuilderError(f"let {name}: the value has no type; pass type=")
        v = Var(name, t, span=sp)
        self._target(f"let {name}").stmts.append(AssignStmt(v, e, span=sp))
        return v

    def assign(self, var: Var, value: Any) -> Var:
        sp = caller_span()
        self._target(f"assign {var.name}").stmts.append(AssignStmt(var, as_expr(value, sp), span=sp))
        return var

    def eval(self, expr: Any) -> EvalStmt:
        sp = caller_span()
        s = EvalStmt(as_expr(expr, sp), span=sp)
        self._target("eval").stmts.append(s)
        return s

    def yield_(self, *values: Any) -> YieldStmt:
        sp = caller_span()
        frame = self._target("yield_")
        owner = frame.owner
        if not isinstance(owner, _Carrying):
            raise BuilderError(f"yield_ directly inside a {owner.what}; it belongs at the end of a loop or "
                               f"if branch")
        n = owner.expected_yield()
        if n is not None and n != len(values):
            raise BuilderError(f"yield_ of {len(values)} value(s) in a {owner.what} expecting {n}")
        s = YieldStmt(tuple(as_expr(v, sp) for v in values), span=sp)
        frame.stmts.append(s)
        return s

    def return_(self, *values: Any) -> ReturnStmt:
        sp = caller_span()
        s = ReturnStmt(tuple(as_expr(v, sp) for v in values), span=sp)
        self._target("return_").stmts.append(s)
        return s

    return_stmt = return_

    def break_(self) -> BreakStmt:
        s = BreakStmt(span=caller_span())
        self._target("break_").stmts.append(s)
        return s

    def continue_(self) -> ContinueStmt:
        s = ContinueStmt(span=caller_span())
        self._target("continue_").stmts.append(s)
        return s

    # -- expressions
    def call(self, callee: str | Op | Function | GlobalVar, args: Any = (), kwargs: dict[str, Any] | None = None,
             *, type: Type | None = None) -> Call:
        """A Call: of a registered op (by name or object; its type is inferred through the op), or
        of a program function (a Function, or a GlobalVar with `type=` or a function already
        built in the enclosing program)."""
        sp = caller_span()
        arg_exprs = tuple(as_expr(a, sp) for a in args)
        if isinstance(callee, Function):
            return Call(GlobalVar(callee.name), arg_exprs, tuple((kwargs or {}).items()),
                        type if type is not None else _returns(callee.return_types), span=sp)
        if isinstance(callee, GlobalVar):
            if type is None:
                fn = self._find_function(callee.name)
                if fn is None:
                    raise BuilderError(f"call of {callee.name}: no such function built yet; pass type=")
                type = _returns(fn.return_types)
            return Call(callee, arg_exprs, tuple((kwargs or {}).items()), type, span=sp)
        # operators are registered when the `pypto` package is imported (it imports pypto.ops)
        from .op import OpError, create_op_call

        try:
            return create_op_call(callee, arg_exprs, kwargs or {}, span=sp)
        except OpError as e:
            name = callee if isinstance(callee, str) else callee.name
            hint = f" ({e.hint})" if getattr(e, "hint", None) else ""
            raise BuilderError(f"{sp}: {name}: {e.message}{hint}") from e

    def _find_function(self, name: str) -> Function | None:
        for f in self._frames:
            if isinstance(f.owner, ProgramBuilder):
                for fn in f.owner.functions:
                    if fn.name == name:
                        return fn
        return None


def _returns(types: tuple[Type, ...]) -> Type:
    return types[0] if len(types) == 1 else TupleType(tuple(types))


__all__ = [
    "BuilderError", "FunctionBuilder", "ForLoopBuilder", "IRBuilder", "IfBuilder", "ProgramBuilder",
    "ScopeBuilder", "WhileLoopBuilder", "as_expr", "caller_span", "frame_span",
]
