"""Run-time `if` in a traced kernel: the function's `if` statements are rewritten (once, from its
source) so that a branch on a run-time value records both sides as an `if` of the traced program,
while a branch on a value known at trace time runs only the side it chooses, as plain Python does.

    if cond:                          with __pypto_if__(cond) as b:
        A                                 if b.then():
    else:                     ->              A
        B                                     b.save("then", locals(), ("x",))
                                          if b.orelse():
                                              B
                                              b.save("else", locals(), ("x",))
                                      x, = b.merged(("x",))     # names assigned on both sides

Tensors a branch writes (`pypto.assemble`, `out[...] = `, `out.move`, `+=`) and tensor names
assigned on both sides are the `if`'s results. An `if` holding `return`, `break` or `continue` is
left as written (a run-time condition there is refused with a clear error).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

_HELPER = "__pypto_if__"


def _assigned(stmts: list[ast.stmt]) -> list[str]:
    """Names bound by these statements (not inside nested functions or classes), in order."""
    out: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.setdefault(node.id, None)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return [n for n in out if not n.startswith("__pypto")]


def _jumps(stmts: list[ast.stmt]) -> bool:
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                return True
    return False


class _Rewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # (nested functions keep their own ifs)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)  # inner ifs first (an elif is an If in orelse)
        if _jumps(node.body) or _jumps(node.orelse):
            return node
        self.count += 1
        b = f"__pypto_b{self.count}"
        then_names, else_names = _assigned(node.body), _assigned(node.orelse)
        both = [n for n in then_names if n in else_names]

        def save(side: str, names: list[str]) -> ast.stmt:
            return ast.parse(f"{b}.save({side!r}, locals(), {tuple(names)!r})").body[0]

        then_if = ast.If(test=ast.parse(f"{b}.then()", mode="eval").body,
                         body=[*node.body, save("then", then_names)], orelse=[])
        else_if = ast.If(test=ast.parse(f"{b}.orelse()", mode="eval").body,
                         body=[*node.orelse, save("else", else_names)], orelse=[])
        with_ = ast.With(items=[ast.withitem(context_expr=ast.Call(func=ast.Name(_HELPER, ast.Load()), args=[node.test],
                                                                   keywords=[]),
                                             optional_vars=ast.Name(b, ast.Store()))],
                         body=[then_if, else_if])
        out: list[ast.stmt] = [with_]
        if both:
            out.append(ast.parse(f"{', '.join(both)}, = {b}.merged({tuple(both)!r})").body[0])
        for n in out:
            ast.copy_location(n, node)
            ast.fix_missing_locations(n)
        return out


def rewrite_ifs(fn: Any, helper: Any) -> Any:
    """`fn` with its `if` statements rewritten (see the module docstring), or `fn` itself when it
    has none or its source cannot be read."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return fn
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or not _matches(fdef, fn, first, len(lines)):
        return fn  # (the file changed since the function was defined: it runs as written)
    rw = _Rewriter()
    fdef.body = [rw.visit(s) if not isinstance(s, ast.If) else rw.visit_If(s) for s in fdef.body]
    fdef.body = [s for item in fdef.body for s in (item if isinstance(item, list) else [item])]
    fdef.body = _flatten(fdef.body)
    if rw.count == 0:
        return fn
    # the signature is the original's (annotations and defaults are not evaluated again)
    fdef.decorator_list = []
    fdef.returns = None
    for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs, fdef.args.vararg, fdef.args.kwarg):
        if a is not None:
            a.annotation = None
    fdef.args.defaults = []
    fdef.args.kw_defaults = [None] * len(fdef.args.kwonlyargs)
    free = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(name="__pypto_factory__", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(_HELPER)] + [ast.arg(n) for n in free], kwonlyargs=[], kw_defaults=[],
        defaults=[]), body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - 1)
    code = compile(module, fn.__code__.co_filename, "exec")
    ns: dict[str, Any] = {}
    exec(code, fn.__globals__, ns)  # noqa: S102  (the user's own function, rewritten)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    new = ns["__pypto_factory__"](helper, *cells)
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _matches(fdef: ast.FunctionDef, fn: Any, first: int, n_lines: int) -> bool:
    """Is this source the function's own: its name, its parameters, and the lines its code covers?"""
    code = fn.__code__
    n_args = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    args = [a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args)]
    args += [fdef.args.vararg.arg] if fdef.args.vararg else []
    args += [a.arg for a in fdef.args.kwonlyargs] + ([fdef.args.kwarg.arg] if fdef.args.kwarg else [])
    if fdef.name != fn.__name__ or sorted(args) != sorted(code.co_varnames[:n_args]):
        return False
    last = max((ln for _, _, ln in code.co_lines() if ln is not None), default=first)
    return first <= code.co_firstlineno and last <= first + n_lines - 1


def _flatten(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, list):
            out.extend(_flatten(s))
        else:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, _flatten(getattr(s, field)))
            out.append(s)
    return out


__all__ = ["rewrite_ifs"]
