"""The token cursor under the PTO parser: tokenizing, locations and errors, scopes, types.

Tokens are plain strings from one regex (`syntax.TOKEN`), read line by line so that a token's line
is known without storing positions; a column is recomputed only for an error message. A token's
kind is its first character (`%` value, `@` symbol, `!` type, `#` enum, `"` string, ...). The end
of input reads as empty tokens, so look-ahead never runs off the list.

Scopes: `scope` maps each visible value name to its Value (an int marks a result group `%r:N`);
`stack` lists names in definition order so that leaving a region forgets what it defined.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NoReturn

from .errors import PtoParseError
from .model import PtoType, Value
from .syntax import TOKEN
from .type_text import TYPE_CACHE, BadType, cached_type, print_type

MAX_REGION_DEPTH = 100  # keeps recursion far from Python's limit; real kernels nest < 10 deep


class Cursor:
    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.lines = text.split("\n")
        findall = TOKEN.findall
        toks: list[str] = []
        starts: list[int] = []
        firsts: dict[int, tuple[int, int]] = {}  # index of a line's first token -> its (line, col)
        for ln, line in enumerate(self.lines, 1):
            starts.append(len(toks))
            if line:
                ts = findall(line)
                if ts and ts[-1][:2] == "//":
                    ts.pop()
                if ts:
                    firsts[len(toks)] = (ln, len(line) - len(line.lstrip()) + 1)
                    toks += ts
        self.n = len(toks)
        toks += ("", "", "")  # end of input (padding: a look-ahead never runs off the list)
        self.toks = toks
        self.starts = starts
        self.i = 0
        self.firsts = firsts
        self.scope: dict[str, Value | int] = {}  # visible names; an int marks a result group `%r:N`
        self.stack: list[str] = []  # names in definition order, for leaving regions
        self.depth = 0

    # -- locations and errors -----------------------------------------------------------------

    def where(self, k: int) -> tuple[int, int]:
        lines = self.lines
        k = max(0, k)
        if k >= self.n:  # end of input: just after the last token
            k = self.n
            if k == 0:
                return 1, 1
            ln = bisect_right(self.starts, k - 1) - 1
            return ln + 1, len(lines[ln].rstrip()) + 1
        ln = bisect_right(self.starts, k) - 1
        j = k - self.starts[ln]
        for n, m in enumerate(TOKEN.finditer(lines[ln])):
            if n == j:
                return ln + 1, m.start(1) + 1
        return ln + 1, 1

    def same_line(self, a: int, b: int) -> bool:
        starts = self.starts
        return bisect_right(starts, a) == bisect_right(starts, b)

    def fail(self, message: str, k: int | None = None, hint: str | None = None, shift: int = 0) -> NoReturn:
        line, col = self.where(self.i if k is None else k)
        self.fail_at(message, line, col + shift, hint)

    def fail_at(self, message: str, line: int, col: int, hint: str | None = None) -> NoReturn:
        src = self.lines[line - 1].rstrip("\r") if 0 < line <= len(self.lines) else None
        raise PtoParseError(message, self.filename, line, col, src, hint)

    def desc(self, k: int | None = None) -> str:
        t = self.toks[self.i if k is None else k]
        if not t:
            return "end of input"
        if not t.isprintable():
            return f"character {t!r}" if len(t) == 1 else repr(t[:40])
        return f"'{t[:40]}...'" if len(t) > 40 else f"'{t}'"

    def expect(self, tok: str) -> None:
        if self.toks[self.i] != tok:
            self.fail(f"expected '{tok}', found {self.desc()}")
        self.i += 1

    # -- values --------------------------------------------------------------------------------

    def use(self) -> Value:
        t = self.toks[self.i]
        v = self.scope.get(t[1:]) if t[:1] == "%" else None
        if v.__class__ is not Value:
            self.bad_use(t)
        self.i += 1
        return v  # type: ignore[return-value]

    def bad_use(self, t: str) -> NoReturn:
        if t[:1] != "%":
            self.fail(f"expected a value (%name), found {self.desc()}")
        v = self.scope.get(t[1:])
        if isinstance(v, int):
            self.fail(f"{t} names {v} results: use {t}#0 .. {t}#{v - 1}")
        self.fail(f"use of undefined value {t}",
                  hint=f"define {t} before this line, in this region or an enclosing one")

    def uses(self, close: str) -> list[Value]:
        """Values separated by commas, up to (not including) `close`."""
        toks, i = self.toks, self.i
        if toks[i] == close:
            return []
        get = self.scope.get
        vals: list[Value] = []
        while True:
            t = toks[i]
            v = get(t[1:]) if t[:1] == "%" else None
            if v.__class__ is not Value:
                self.i = i
                self.bad_use(t)
            vals.append(v)  # type: ignore[arg-type]
            i += 1
            if toks[i] != ",":
                self.i = i
                return vals
            i += 1

    def vlist(self) -> list[Value]:
        self.expect("[")
        vals = self.uses("]")
        self.expect("]")
        return vals

    def def_name(self) -> tuple[str, int]:
        t = self.toks[self.i]
        if t[:1] != "%" or len(t) < 2:
            self.fail(f"expected a value name (%name), found {self.desc()}")
        if "#" in t:
            self.fail(f"'{t}': '#' is for uses of a result group; define the group as %name:N")
        self.i += 1
        return t[1:], self.i - 1

    def define(self, name: str, ty: PtoType, k: int) -> Value:
        if name in self.scope:
            self.fail(f"redefinition of %{name}", k, hint="each value is defined once; pick a new name")
        v = Value(name, ty)
        self.scope[name] = v
        self.stack.append(name)
        return v

    def enter(self) -> int:
        self.depth += 1
        if self.depth > MAX_REGION_DEPTH:
            self.fail(f"regions are nested more than {MAX_REGION_DEPTH} levels deep")
        return len(self.stack)

    def leave(self, mark: int) -> None:
        scope = self.scope
        for name in self.stack[mark:]:
            del scope[name]
        del self.stack[mark:]
        self.depth -= 1

    # -- types ---------------------------------------------------------------------------------

    def type(self) -> PtoType:
        t = self.toks[self.i]
        ty = TYPE_CACHE.get(t)
        if ty is None:
            try:
                ty = cached_type(t)
            except BadType as e:
                if not t:
                    self.fail("expected a type, found end of input")
                self.fail(e.message, shift=e.offset)
        self.i += 1
        return ty

    def check_type(self, v: Value, ty: PtoType, k: int) -> None:
        if v.type is not ty and v.type != ty:
            self.fail(f"type mismatch: %{v.name} has type {print_type(v.type)}, but {print_type(ty)} is written "
                      "here", k)

    def typed_uses(self, vals: list[Value]) -> None:
        """`: T1, T2, ...` matching `vals` one to one."""
        toks, i, cache = self.toks, self.i, TYPE_CACHE
        if toks[i] != ":":
            self.expect(":")
        for j, v in enumerate(vals):
            i += 1
            if j:
                if toks[i] != ",":
                    self.i = i
                    self.expect(",")
                i += 1
            if cache.get(toks[i]) is not v.type:  # the common case is one cached type object
                self.i = i
                ty = self.type()
                if v.type != ty:
                    self.check_type(v, ty, i)
        self.i = i + 1

    def paren_types(self) -> list[PtoType]:
        self.expect("(")
        types: list[PtoType] = []
        if self.toks[self.i] != ")":
            types.append(self.type())
            while self.toks[self.i] == ",":
                self.i += 1
                types.append(self.type())
        self.expect(")")
        return types
