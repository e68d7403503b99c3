"""`@pl.function`, `@pl.program`, `@pl.inline`, and `pl.parse` / `pl.loads` for source text.

Decorators parse at decoration time (errors point at the kernel's source) and return IR:
`@pl.function` gives an `ir.Function`, `@pl.program` an `ir.Program`. Inside a `@pl.program` class,
`@pl.function` only marks the method; the program parses all methods together (signatures
first, so methods may call each other in any order).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.errors import InvalidState, InvalidType
from pypto.ir.collector import paused_collector
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.span import Span

from .errors import ParserError, ParserSyntaxError, ParserTypeError, ParseTextError, PythonSyntaxError
from .parser.context import PyEnv, Source
from .parser.function_parser import FunctionParser, ParseCtx

# external functions a standalone @pl.function calls (so a program using it brings them along)
_DEPS: dict[int, tuple[Function, tuple[Function, ...]]] = {}


def function_deps(fn: Function) -> tuple[Function, ...]:
    got = _DEPS.get(id(fn))
    return got[1] if got is not None and got[0] is fn else ()


@dataclass
class _Deferred:
    """A `@pl.function` method waiting for its `@pl.program` class."""

    fn: types.FunctionType
    func_type: FunctionType
    strict_ssa: bool | None

    def __call__(self, *a: Any, **k: Any) -> Any:
        raise InvalidState(f"{self.fn.__qualname__} is part of a @pl.program; compile the program with ir.compile")


class InlineFunction:
    """A `@pl.inline` function: its body is spliced in at every call site."""

    def __init__(self, fn: types.FunctionType | None, frame_locals: dict[str, Any] | None = None, *,
                 node: ast.FunctionDef | None = None, src: Source | None = None, env: PyEnv | None = None):
        self.fn = fn
        self.__name__ = fn.__name__ if fn is not None else (node.name if node else "inline")
        self.__doc__ = fn.__doc__ if fn is not None else None
        self._parsed = (node, src, env) if node is not None else None
        self._frame_locals = frame_locals

    def parsed(self) -> tuple[ast.FunctionDef, Source, PyEnv]:
        if self._parsed is None:
            assert self.fn is not None
            src, node = _source_of(self.fn)
            self._parsed = (node, src, _env_of(self.fn, self._frame_locals))
        return self._parsed  # type: ignore[return-value]

    def __call__(self, *a: Any, **k: Any) -> Any:
        raise InvalidState(f"{self.__name__} is a @pl.inline function: call it inside a @pl.function")


def _caller_locals(depth: int) -> dict[str, Any]:
    try:
        return dict(sys._getframe(depth + 1).f_locals)
    except ValueError:
        return {}


def _in_class_body(fn: types.FunctionType) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _closure(fn: types.FunctionType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass  # not yet bound
    return out


def _env_of(fn: types.FunctionType, frame_locals: dict[str, Any] | None) -> PyEnv:
    return PyEnv(fn.__globals__, frame_locals, _closure(fn))


def _source_of(obj: Any) -> tuple[Source, Any]:
    name = getattr(obj, "__qualname__", repr(obj))
    try:
        found = _class_lines(obj) if isinstance(obj, type) else None
        lines, start = found if found is not None else inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError):
        raise ParserError(f"cannot read the source code of {name}", None,
                          hint="kernels must be defined in a .py file (not typed into an interactive session or "
                               "built with exec); for source text use pl.parse(text)") from None
    text = "".join(lines)
    first = next((ln for ln in lines if ln.strip()), "")
    indent = len(first) - len(first.lstrip())
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError as e:
        raise ParserSyntaxError(f"cannot parse the source of {name}: {e.msg}",
                                Span(filename, start + (e.lineno or 1) - 1, indent + (e.offset or 1) - 1)) from None
    all_lines = _file_lines(filename, lines, start)
    src = Source(filename, all_lines, start - 1, indent)
    node = tree.body[0] if tree.body else None
    if node is None:
        raise ParserError(f"empty source for {name}")
    return src, node


def _class_lines(cls: type) -> tuple[list[str], int] | None:
    """The source lines of a class, found by the line of one of its methods.

    `inspect.getsourcelines` finds a class by its name only, so two classes of the same name in one
    file (say, a program defined in two test functions) would both get the first one's body."""
    import linecache

    hint = None
    for v in cls.__dict__.values():
        fn = getattr(v, "fn", v)  # a deferred @pl.function method keeps its function
        code = getattr(fn, "__code__", None)
        if code is not None:
            hint = code.co_firstlineno
            break
    hint = getattr(cls, "__firstlineno__", None) or hint
    filename = inspect.getsourcefile(cls)
    if hint is None or not filename:
        return None
    lines = linecache.getlines(filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            last = node.end_lineno or node.lineno
            if first <= hint <= last and (best is None or first > best[0]):
                best = (first, last)  # the innermost class holding the line
    if best is None:
        return None
    return lines[best[0] - 1:best[1]], best[0]


def _file_lines(filename: str, lines: list[str], start: int) -> list[str]:
    import linecache

    got = linecache.getlines(filename)
    return got if got else [""] * (start - 1) + lines


def _parse_standalone(fn: types.FunctionType, func_type: FunctionType, strict_ssa: bool,
                      frame_locals: dict[str, Any]) -> Function:
    src, node = _source_of(fn)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ParserError(f"{fn.__qualname__} is not a function definition")
    return _parse_function_node(node, src, _env_of(fn, frame_locals), func_type, strict_ssa)


def _parse_function_node(node: ast.FunctionDef, src: Source, env: PyEnv, func_type: FunctionType,
                         strict_ssa: bool) -> Function:
    if isinstance(node, ast.AsyncFunctionDef):
        raise ParserSyntaxError("kernels cannot be async functions", src.span(node))
    ctx = ParseCtx(in_program=False)
    p = FunctionParser(ctx, src, env, node, func_type=func_type, strict_ssa=strict_ssa)
    sig = p.parse_signature()
    ctx.signatures[sig.name] = sig
    ctx.method_names.add(sig.name)
    fn = p.parse_function()
    if ctx.externals:
        deps: list[Function] = []
        for ext in ctx.externals.values():
            deps.append(ext)
            deps.extend(function_deps(ext))
        _DEPS[id(fn)] = (fn, tuple(deps))
    return fn


def function(fn: types.FunctionType | None = None, *, type: FunctionType = FunctionType.Opaque,  # noqa: A002
             strict_ssa: bool = False, attrs: dict | None = None, **options: Any) -> Any:
    """Parse a Python function into an `ir.Function` (inside a @pl.program class: mark a method).

    `attrs=` is the March spelling of `pl.func_attr({...})` (device metadata: checked, no effect on
    the CPU); it warns, as upstream does."""
    external = options.pop("external_source", None)
    if options:
        raise InvalidType(f"pl.function got unexpected option(s) {', '.join(options)} "
                          "(known: type, strict_ssa, attrs, external_source)")
    if attrs is not None:
        import warnings

        from .hints import check_func_attrs

        check_func_attrs(attrs)
        warnings.warn("@pl.function(attrs=...) is deprecated: write pl.func_attr({...}) as the function's first "
                      "statement", DeprecationWarning, stacklevel=2)
    if not isinstance(type, FunctionType):
        raise InvalidType(f"pl.function type= must be a pl.FunctionType, got {type!r}")
    frame_locals = _caller_locals(1)

    def deco(f: types.FunctionType) -> Any:
        if not isinstance(f, types.FunctionType):
            raise InvalidType(f"@pl.function decorates a function, got {f!r}")
        if external is not None:  # a hand-written device kernel: refused with the reason (external.py)
            from .external import refuse_external_source

            refuse_external_source(f, external)
        if _in_class_body(f):
            return _Deferred(f, type, strict_ssa if strict_ssa else None)
        return _parse_standalone(f, type, strict_ssa, frame_locals)

    return deco if fn is None else deco(fn)


def inline(fn: types.FunctionType) -> InlineFunction:
    """Mark a function whose body is expanded at each call site inside kernels."""
    if not isinstance(fn, types.FunctionType):
        raise InvalidType(f"@pl.inline decorates a function, got {fn!r}")
    return InlineFunction(fn, _caller_locals(1))


@dataclass
class _Method:
    node: ast.FunctionDef
    src: Source
    env: PyEnv
    func_type: FunctionType
    strict_ssa: bool


def _parse_program(name: str, methods: dict[str, _Method], span: Span) -> Program:
    with paused_collector():
        return _parse_methods(name, methods, span)


def _check_groups(functions: dict[str, Function]) -> None:
    """A Group function's shape (two calls and a return; LowerGroupFunctions runs it), at parse time."""
    from pypto.ir.groups import GroupError, check_groups

    try:
        check_groups(functions)
    except GroupError as e:
        cls = ParserSyntaxError if e.kind == "syntax" else ParserTypeError
        raise cls(e.message, e.span) from None


def _parse_methods(name: str, methods: dict[str, _Method], span: Span) -> Program:
    ctx = ParseCtx(in_program=True, method_names=set(methods))
    parsers: dict[str, FunctionParser] = {}
    for mname, m in methods.items():
        p = FunctionParser(ctx, m.src, m.env, m.node, func_type=m.func_type, strict_ssa=m.strict_ssa, is_method=True)
        ctx.signatures[mname] = p.parse_signature()
        parsers[mname] = p
    functions: dict[str, Function] = {}
    for mname, p in parsers.items():
        functions[mname] = p.parse_function()
    _check_groups(functions)
    for ext in list(ctx.externals.values()):
        for dep in function_deps(ext):
            ctx.add_external(dep, span)
    all_fns = list(functions.values()) + list(ctx.externals.values())
    try:
        return Program(name, tuple(all_fns), span=span)
    except ValueError as e:
        raise ParserError(str(e), span) from None


def program(cls: type | None = None, *, strict_ssa: bool = False) -> Any:
    """Parse a class of `@pl.function` methods into an `ir.Program` named after the class."""
    frame_locals = _caller_locals(1)

    def deco(c: type) -> Program:
        if not isinstance(c, type):
            raise InvalidType(f"@pl.program decorates a class, got {c!r}")
        src, node = _source_of(c)
        if not isinstance(node, ast.ClassDef):
            raise ParserError(f"{c.__qualname__} is not a class definition")
        defs = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        methods: dict[str, _Method] = {}
        for attr, v in c.__dict__.items():
            if isinstance(v, _Deferred):
                fnode = defs.get(v.fn.__name__)
                if fnode is None:
                    raise ParserError(f"cannot find the source of method {attr}", src.span(node))
                ss = v.strict_ssa if v.strict_ssa is not None else strict_ssa
                methods[v.fn.__name__] = _Method(fnode, src, _env_of(v.fn, frame_locals), v.func_type, ss)
        for n in defs.values():
            if n.name not in methods and not n.name.startswith("__"):
                raise ParserSyntaxError(f"method '{n.name}' of a @pl.program class needs @pl.function", src.span(n))
        return _parse_program(c.__name__, methods, src.span(node))

    return deco if cls is None else deco(cls)


# ---------------------------------------------------------------------------------------------
# source text


def _decorator_kind(dec: ast.expr, env: PyEnv, src: Source) -> tuple[str, dict[str, Any]] | None:
    import pypto.language as pl_mod

    target, kw = dec, {}
    if isinstance(dec, ast.Call):
        target = dec.func
        for k in dec.keywords:
            kw[k.arg] = _py_eval(k.value, env, src)
    obj = _py_eval(target, env, src)
    kind = {id(pl_mod.program): "program", id(pl_mod.function): "function", id(pl_mod.inline): "inline"}.get(id(obj))
    if kind is None:
        return None
    # the same options the decorators accept when applied in Python
    known = {"program": ("strict_ssa",), "function": ("type", "strict_ssa"), "inline": ()}[kind]
    sp = src.span(dec)
    if isinstance(dec, ast.Call) and dec.args:
        raise ParserSyntaxError(f"@pl.{kind} takes keyword options only", sp)
    bad = [k for k in kw if k not in known]
    if bad or (isinstance(dec, ast.Call) and any(k.arg is None for k in dec.keywords)):
        raise ParserSyntaxError(f"@pl.{kind} got unexpected option(s) {', '.join(str(b) for b in bad) or '**'}"
                                f" (known: {', '.join(known) or 'none'})", sp)
    if "type" in kw and not isinstance(kw["type"], FunctionType):
        raise ParserTypeError(f"@pl.function type= must be a pl.FunctionType, got {kw['type']!r}", sp)
    if "strict_ssa" in kw and not isinstance(kw["strict_ssa"], bool):
        raise ParserTypeError(f"strict_ssa= must be True or False, got {kw['strict_ssa']!r}", sp)
    return kind, kw


_NOT_SIMPLE = object()


def _simple_value(node: ast.expr, env: PyEnv) -> Any:
    """The value of a name, a constant or an attribute chain (`pl.FunctionType.InCore`), looked up the
    way `eval` would; `_NOT_SIMPLE` for anything else or on any failure (then `eval` runs and reports)."""
    if isinstance(node, ast.Attribute):
        base = _simple_value(node.value, env)
        if base is _NOT_SIMPLE:
            return base
        try:
            return getattr(base, node.attr)
        except Exception:
            return _NOT_SIMPLE
    if isinstance(node, ast.Name):
        v = env.lookup(node.id)
        return _NOT_SIMPLE if v is PyEnv._MISSING else v
    if isinstance(node, ast.Constant):
        return node.value
    return _NOT_SIMPLE


def _py_eval(node: ast.expr, env: PyEnv, src: Source) -> Any:
    value = _simple_value(node, env)  # decorators are mostly such chains: no need to compile them
    if value is not _NOT_SIMPLE:
        return value
    tree = ast.Expression(body=node)
    ast.fix_missing_locations(tree)
    try:
        return eval(compile(tree, src.filename, "eval"), env.eval_namespace())  # noqa: S307
    except Exception as e:
        raise ParserError(f"cannot evaluate this expression: {type(e).__name__}: {e}", src.span(node)) from None


def parse(text: str, filename: str | None = None) -> Program | Function:
    """Parse `pl` source text (as `ir.python_print` writes it) into a Program or a Function."""
    with paused_collector():  # the Python AST and the IR are trees: no cycles to collect
        try:
            return _parse_text(text, filename)
        except (RecursionError, MemoryError):
            raise ParserSyntaxError("the source is nested too deeply to parse (an expression or block "
                                    "thousands of levels deep)", None) from None


def _parse_text(text: str, filename: str | None) -> Program | Function:
    import pypto.language as pl_mod

    if not isinstance(text, str):
        raise InvalidType(f"pl.parse takes source text, got {type(text).__name__}")
    fname = filename or f"<pl.parse-{hashlib.sha1(text.encode()).hexdigest()[:12]}>"
    lines = Source.register_text(fname, text)
    src = Source(fname, lines)
    try:
        mod = ast.parse(text, filename=fname)
    except SyntaxError as e:
        raise PythonSyntaxError(f"invalid Python syntax: {e.msg}", Span(fname, e.lineno or 0, (e.offset or 1) - 1),
                                source_lines=lines) from None
    env = PyEnv({"pl": pl_mod, "__name__": "__pl_text__", "__builtins__": __builtins__})
    results: list[Program | Function] = []
    for st in mod.body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            try:
                exec(compile(ast.Module([st], []), fname, "exec"), env.globals)  # noqa: S102
            except ImportError as e:
                raise ParserError(f"import failed: {e}", src.span(st)) from None
        elif isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            value = _py_eval(st.value, env, src)
            for t in targets:
                if not isinstance(t, ast.Name):
                    raise ParserSyntaxError("only simple top-level assignments are allowed", src.span(t))
                env.globals[t.id] = value
        elif isinstance(st, ast.ClassDef):
            kinds = [_decorator_kind(d, env, src) for d in st.decorator_list]
            prog = next((k for k in kinds if k and k[0] == "program"), None)
            if prog is None:
                raise ParserSyntaxError(f"class {st.name} needs @pl.program", src.span(st))
            ss = bool(prog[1].get("strict_ssa", False))
            methods: dict[str, _Method] = {}
            for n in st.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    mk = [_decorator_kind(d, env, src) for d in n.decorator_list]
                    fk = next((k for k in mk if k and k[0] == "function"), None)
                    if fk is None:
                        raise ParserSyntaxError(f"method '{n.name}' needs @pl.function", src.span(n))
                    methods[n.name] = _Method(n, src, env, fk[1].get("type", FunctionType.Opaque),
                                              bool(fk[1].get("strict_ssa", ss)))
                elif not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) and not isinstance(n, ast.Pass):
                    raise ParserSyntaxError("a @pl.program class holds only @pl.function methods", src.span(n))
            p = _parse_program(st.name, methods, src.span(st))
            env.globals[st.name] = p
            results.append(p)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kinds = [_decorator_kind(d, env, src) for d in st.decorator_list]
            k = next((k for k in kinds if k), None)
            if k is None:
                raise ParserSyntaxError(f"function {st.name} needs @pl.function or @pl.inline", src.span(st))
            if k[0] == "inline":
                env.globals[st.name] = InlineFunction(None, node=st, src=src, env=env)
                continue
            ft = k[1].get("type", FunctionType.Opaque)
            if not isinstance(ft, FunctionType):
                raise ParserTypeError("type= must be a pl.FunctionType", src.span(st))
            f = _parse_function_node(st, src, env, ft, bool(k[1].get("strict_ssa", False)))
            env.globals[st.name] = f
            results.append(f)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        else:
            raise ParserSyntaxError(f"unexpected top-level {type(st).__name__} in pl source", src.span(st))
    progs = [r for r in results if isinstance(r, Program)]
    if len(progs) == 1:
        return progs[0]
    if len(progs) > 1:
        raise ParseTextError(f"the text defines {len(progs)} programs; pl.parse expects one", None, source_lines=lines)
    if not results:
        raise ParseTextError("the text defines no @pl.program class and no @pl.function", None, source_lines=lines)
    if len(results) > 1:
        names = ", ".join(f.name for f in results)
        raise ParseTextError(f"the text defines {len(results)} functions ({names}) and no @pl.program; pl.parse "
                             f"returns one program or one function", None, hint="wrap them in a @pl.program class",
                             source_lines=lines)
    return results[0]


def loads(path: str | Path) -> Program | Function:
    """Parse a file of `pl` source."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ParserError(f"cannot read {p}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ParserError(f"cannot read {p}: not UTF-8 text (byte {e.start})") from None
    return parse(text, filename=str(p))


def parse_program(text: str, filename: str | None = None) -> Program:
    """Deprecated alias of `parse` that insists on a program."""
    r = parse(text, filename)
    if not isinstance(r, Program):
        raise ParserError("the text defines a function, not a @pl.program")
    return r


def loads_program(path: str | Path) -> Program:
    r = loads(path)
    if not isinstance(r, Program):
        raise ParserError(f"{path} defines a function, not a @pl.program")
    return r


__all__ = ["InlineFunction", "function", "function_deps", "inline", "loads", "loads_program", "parse",
           "parse_program", "program"]
