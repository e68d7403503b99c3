"""The PTO parser: `.pto` text -> model objects (docs/pto_format.md).

A hand-written recursive-descent parser over one regex tokenizer (`lexer.Cursor`). It checks what
a reader needs to trust the text: every `%value` is defined before its use in an enclosing scope,
every type written on an op matches the operand's known type, result counts match, unknown op
syntax is an error. After parsing it runs the verifier (`verify.py`). Every fault is a
`PtoParseError` with `file:line:col`, the line and a caret; no input makes it raise anything else
or loop (nesting is bounded; the end of input reads as empty tokens).

This file holds attributes, the module and functions, generic op parsing and scalar ops;
`parser_ops.py` holds the ops with a syntax of their own.
"""

from __future__ import annotations

import os

from pypto.errors import InvalidType, InvalidValue

from .errors import PtoParseError
from .lexer import Cursor
from .model import I1, Block, EnumAttr, Func, Module, Op, PtoType, ScalarT, Sym, Value
from .parser_ops import OpParsers
from .syntax import (
    CMP_PREDICATES,
    FLOAT_BITS,
    IDENT_RE,
    INT_BITS,
    PTO_FORMS,
    SCALAR_ARITY,
    SCALAR_OPS,
    bits_to_float,
    int_fits,
    symbol_name,
    unquote,
)
from .type_text import SCALARS

MAX_ATTR_DEPTH = 50
MAX_RESULTS = 1024


def _num(tok: str) -> int | float | None:
    """The number a numeric token spells, else None. Raises ValueError on absurd lengths."""
    c = tok[:1]
    if not (c.isdigit() or (c == "-" and tok[1:2].isdigit())):
        return None
    if len(tok) > 64:
        raise InvalidValue("numeric literal is too long")
    if tok[:2] in ("0x", "0X"):
        return int(tok, 16)
    if "." in tok or "e" in tok or "E" in tok:
        return float(tok)
    return int(tok)


class _Parser(Cursor, OpParsers):
    # -- attributes ----------------------------------------------------------------------------

    def attr_dict(self, depth: int = 0, into: dict | None = None) -> dict:
        """`{k = v, ...}`, added to `into` (whose keys the op's syntax already set) when given."""
        self.expect("{")
        d: dict = {} if into is None else into
        fixed = tuple(d)
        toks = self.toks
        if toks[self.i] == "}":
            self.i += 1
            return d
        while True:
            k = self.i
            key = toks[k]
            if key[:1] == '"' and len(key) > 1:
                key = self._string(key)
            elif not IDENT_RE.fullmatch(key):
                self.fail(f"expected an attribute name, found {self.desc()}")
            if key in d:
                self.fail(f"attribute '{key}' is part of the op's syntax, not of its dictionary" if key in fixed
                          else f"attribute '{key}' is given twice", k)
            self.i += 1
            self.expect("=")
            d[key] = self.attr_value(depth)
            t = toks[self.i]
            self.i += 1
            if t == "}":
                return d
            if t != ",":
                self.fail(f"expected ',' or '}}' in the attribute dictionary, found {self.desc(self.i - 1)}",
                          self.i - 1)

    def _string(self, tok: str) -> str:
        if len(tok) < 2:
            self.fail("unterminated string")
        try:
            return unquote(tok)
        except ValueError as e:
            self.fail(str(e))

    def attr_value(self, depth: int = 0) -> object:  # noqa: C901 - one branch per attribute kind
        if depth > MAX_ATTR_DEPTH:
            self.fail(f"attribute values are nested more than {MAX_ATTR_DEPTH} levels deep")
        toks = self.toks
        t = toks[self.i]
        c = t[:1]
        if len(t) == 1 and c in '"@#!^%':
            self.fail("unterminated string" if c == '"' else f"expected an attribute value, found {self.desc()}")
        if c == '"':
            v: object = self._string(t)
        elif c == "[":
            self.i += 1
            items = []
            if toks[self.i] != "]":
                items.append(self.attr_value(depth + 1))
                while toks[self.i] == ",":
                    self.i += 1
                    items.append(self.attr_value(depth + 1))
            self.expect("]")
            return items
        elif c == "{":
            return self.attr_dict(depth + 1)
        elif c == "@":
            v = Sym(symbol_name(t))
        elif c == "#":
            lt = t.index("<")
            v = EnumAttr(t[1:lt], " ".join(t[lt + 1:-1].split()))
        elif c == "!":
            return self.type()
        elif t == "true" or t == "false":
            v = t == "true"
        elif t in ("inf", "-inf", "nan"):
            v = float(t)
        elif t in SCALARS:
            v = SCALARS[t]
        else:
            try:
                v = _num(t)
            except ValueError as e:
                self.fail(str(e))
            if v is None:
                self.fail(f"expected an attribute value, found {self.desc()}",
                          hint="values: integers, floats, true/false, \"strings\", [arrays], @symbols, "
                          "#pto<enum value>, types")
        self.i += 1
        return v

    def opt_attrs(self, into: dict | None = None) -> dict:
        if self.toks[self.i] == "{":
            return self.attr_dict(0, into)
        return {} if into is None else into

    # -- module and functions ------------------------------------------------------------------

    def module(self) -> Module:
        toks = self.toks
        attrs: dict = {}
        funcs: list[Func] = []
        if toks[self.i] == "module":
            self.i += 1
            if toks[self.i] == "attributes":
                self.i += 1
                attrs = self.attr_dict()
            self.expect("{")
            while toks[self.i] != "}":
                if toks[self.i] != "func.func":
                    self.fail(f"expected 'func.func' or '}}' in the module, found {self.desc()}")
                funcs.append(self.func(funcs))
            self.i += 1
        elif toks[self.i] == "func.func":
            while toks[self.i] == "func.func":
                funcs.append(self.func(funcs))
        else:
            self.fail(f"expected 'module', found {self.desc()}",
                      hint="a .pto file is `module attributes {...} { func.func @name(...) { ... } }`")
        if toks[self.i] != "":
            self.fail(f"unexpected {self.desc()} after the end of the module")
        return Module(funcs, attrs)

    def func(self, previous: list[Func]) -> Func:
        toks = self.toks
        loc = self.where(self.i)
        self.i += 1
        sym = toks[self.i]
        if sym[:1] != "@" or len(sym) < 2:
            self.fail(f"expected the function name (@name), found {self.desc()}")
        if any(f.name == symbol_name(sym) for f in previous):
            self.fail(f"redefinition of function {sym}")
        self.i += 1
        self.scope, self.stack = {}, []
        self.expect("(")
        args: list[Value] = []
        if toks[self.i] != ")":
            while True:
                name, k = self.def_name()
                self.expect(":")
                args.append(self.define(name, self.type(), k))
                if toks[self.i] != ",":
                    break
                self.i += 1
        self.expect(")")
        results: list[PtoType] = []
        if toks[self.i] == "->":
            self.i += 1
            results = self.paren_types() if toks[self.i] == "(" else [self.type()]
        attrs: dict = {}
        if toks[self.i] == "attributes":
            self.i += 1
            attrs = self.attr_dict()
        self.enter()
        body = self.body([])
        self.depth -= 1
        return Func(symbol_name(sym), args, body, results, attrs, loc=loc)

    def body(self, args: list[Value]) -> Block:
        """`{ ops }` (the caller has defined `args` in the region's scope)."""
        self.expect("{")
        return self.ops(args)

    def ops(self, args: list[Value]) -> Block:
        """Ops up to and including the region's closing `}`."""
        ops: list[Op] = []
        toks = self.toks
        op = self.op
        while True:
            t = toks[self.i]
            if t == "}":
                self.i += 1
                return Block(args, ops)
            if not t:
                self.fail("unexpected end of input: a region is missing its '}'")
            ops.append(op())

    def region(self) -> Block:
        mark = self.enter()
        b = self.body([])
        self.leave(mark)
        return b

    # -- ops -----------------------------------------------------------------------------------

    def op(self) -> Op:
        toks = self.toks
        k0 = self.i
        t = toks[k0]
        if t[:1] != "%":
            lhs = None
        elif toks[k0 + 1] == "=" and "#" not in t:  # the common `%x = ...`
            lhs = ([(t[1:], k0)], None)
            self.i += 2
        else:
            lhs = self.lhs()
        # the op's location: its first token, known when that starts its line (the printer's layout)
        loc = self.firsts.get(k0) or self.where(k0)
        k = self.i
        name = toks[k]
        handler = _HANDLERS.get(name)
        if handler is None:
            handler = self.route(name)
        self.i += 1
        op = handler(self, name, lhs, k)
        op.loc = loc
        return op

    def route(self, name: str):
        if name in SCALAR_OPS:
            return _Parser.p_scalar
        if name in PTO_FORMS:
            return _PTO_HANDLERS[PTO_FORMS[name]]
        if name.startswith("pto.") and IDENT_RE.fullmatch(name):
            if len(_HANDLERS) < 4096:  # remember instruction names (bounded: names are data)
                _HANDLERS[name] = _Parser.p_pto_generic
            return _Parser.p_pto_generic
        if name.startswith(("arith.", "math.")):
            self.fail(f"unknown operation '{name}'",
                      hint="scalar ops are listed in docs/pto_format.md (Scalar operations)")
        if name == "func.func":
            self.fail("func.func is only allowed at the module level")
        if not name:
            self.fail("unexpected end of input: expected an operation")
        if IDENT_RE.fullmatch(name):
            self.fail(f"unknown operation '{name}'")
        self.fail(f"expected an operation, found {self.desc()}")

    def lhs(self) -> tuple[list[tuple[str, int]], str | None]:
        """`%a = `, `%a, %b = ` or `%r:N = `; names with their token index, and the group name."""
        toks = self.toks
        group = None
        name, k = self.def_name()
        if toks[self.i] == ":":
            n = toks[self.i + 1]
            if not (n.isascii() and n.isdigit() and len(n) <= 6 and 1 <= int(n) <= MAX_RESULTS):
                self.fail(f"expected a result count after '%{name}:', found {self.desc(self.i + 1)}", self.i + 1)
            names = [(f"{name}#{j}", k) for j in range(int(n))]
            group = name
            self.i += 2
        else:
            names = [(name, k)]
            while toks[self.i] == ",":
                self.i += 1
                names.append(self.def_name())
        if toks[self.i] != "=":
            self.fail(f"expected '=' after the result name(s), found {self.desc()}")
        self.i += 1
        return names, group

    def bind(self, lhs, types: list[PtoType], name: str, k: int) -> list[Value]:
        if lhs is None:
            if types:
                self.fail(f"{name} has {len(types)} result(s): name them (%r = ...)", k)
            return []
        names, group = lhs
        if group is None and len(names) == 1 and len(types) == 1:  # the common case, inlined
            n = names[0][0]
            if n in self.scope:
                self.fail(f"redefinition of %{n}", names[0][1], hint="each value is defined once; pick a new name")
            v = Value(n, types[0])
            self.scope[n] = v
            self.stack.append(n)
            return [v]
        if len(names) != len(types):
            self.fail(f"{name} has {len(types)} result(s) but {len(names)} name(s) are bound", k)
        if group is not None:
            if group in self.scope:
                self.fail(f"redefinition of %{group}", names[0][1])
            self.scope[group] = len(names)
            self.stack.append(group)
        define = self.define
        return [define(n, t, kk) for (n, kk), t in zip(names, types)]

    def no_results(self, lhs, name: str, k: int) -> None:
        if lhs is not None:
            self.fail(f"{name} has no results", k)

    # scalar ops -------------------------------------------------------------------------------

    def p_scalar(self, name: str, lhs, k: int) -> Op:
        form = SCALAR_OPS[name]
        toks = self.toks
        if form == "constant":
            vk = self.i
            if not toks[vk] or toks[vk] in "{:":
                self.fail(f"expected the constant's value, found {self.desc()}")
            self.i += 1
            attrs = self.opt_attrs({"value": None})
            self.expect(":")
            ty = self.type()
            attrs["value"] = self.const_value(toks[vk], ty, vk)
            return Op(name, self.bind(lhs, [ty], name, k), attrs=attrs)
        attrs: dict = {}
        if form == "cmp":
            pred = toks[self.i]
            if pred not in CMP_PREDICATES[name]:
                self.fail(f"unknown predicate {self.desc()} for {name}",
                          hint="one of " + " ".join(sorted(CMP_PREDICATES[name])))
            self.i += 1
            self.expect(",")
            attrs["predicate"] = pred
        operands = self.uses(":")
        if len(operands) != SCALAR_ARITY[form]:
            self.fail(f"{name} takes {SCALAR_ARITY[form]} operand(s), {len(operands)} given", k)
        i = self.i
        if toks[i] == ":":  # no attributes: the common case
            self.i = i + 1
        else:
            self.opt_attrs(attrs)
            self.expect(":")
        tk = self.i
        ty = self.type()
        if form == "cast":
            self.check_type(operands[0], ty, tk)
            self.expect("to")
            rty = self.type()
        else:
            if form == "select":
                if operands[0].type != I1:
                    self.fail(f"arith.select condition %{operands[0].name} must be i1", k)
                for v in operands[1:]:
                    self.check_type(v, ty, tk)
            else:
                for v in operands:
                    if v.type is not ty:
                        self.check_type(v, ty, tk)
            rty = I1 if form == "cmp" else ty
        return Op(name, self.bind(lhs, [rty], name, k), operands, attrs=attrs)

    def const_value(self, tok: str, ty: PtoType, k: int) -> object:
        if not isinstance(ty, ScalarT):
            self.fail("arith.constant needs a scalar type", k)
        tn = ty.name
        try:
            v = _num(tok)
        except ValueError as e:
            self.fail(str(e), k)
        if tn in FLOAT_BITS:
            if isinstance(v, float):
                return v
            if isinstance(v, int) and tok[:2] in ("0x", "0X"):
                try:
                    return bits_to_float(v, tn)
                except ValueError as e:
                    self.fail(str(e), k)
            self.fail(f"expected a float literal for a {tn} constant, found {self.desc(k)}", k,
                      hint="write 1.0 rather than 1; infinities and NaN as bit patterns, e.g. 0x7F800000")
        if tn == "i1" and tok in ("true", "false"):
            return tok == "true"
        if not isinstance(v, int):
            self.fail(f"expected an integer literal for a {tn} constant, found {self.desc(k)}", k)
        if not int_fits(v, tn):
            self.fail(f"{tok} does not fit in {tn} ({INT_BITS[tn]} bits)", k)
        return bool(v) if tn == "i1" else v


_HANDLERS = {
    "scf.for": _Parser.p_for,
    "scf.if": _Parser.p_if,
    "scf.while": _Parser.p_while,
    "scf.yield": _Parser.p_term,
    "scf.condition": _Parser.p_term,
    "scf.break": _Parser.p_term,
    "scf.continue": _Parser.p_term,
    "func.return": _Parser.p_term,
}
_HANDLERS.update({n: _Parser.p_scalar for n in SCALAR_OPS})
_PTO_HANDLERS = {
    "make_tensor_view": _Parser.p_make_tensor_view,
    "window": _Parser.p_window,
    "alloc_tile": _Parser.p_alloc_tile,
    "alloc_tensor": _Parser.p_alloc_tensor,
    "reshape": _Parser.p_reshape,
    "read": _Parser.p_read,
    "write": _Parser.p_write,
    "dim": _Parser.p_dim,
    "submit": _Parser.p_submit,
}
_HANDLERS.update({n: _PTO_HANDLERS[f] for n, f in PTO_FORMS.items()})


def parse_type(text: str) -> PtoType:
    """A type from its text, e.g. `parse_type("!pto.tensor<64x?xf32>")`."""
    p = _Parser(text, "<type>")
    ty = p.type()
    if p.toks[p.i] != "":
        p.fail(f"unexpected {p.desc()} after the type")
    return ty


def parse_module(text: str, filename: str | os.PathLike = "<pto>", verify: bool = True) -> Module:
    """Parse a `.pto` text. Raises PtoParseError (a ValueError) located at `filename:line:col`.

    With `verify` (the default) the module also passes the verifier's structural rules
    (`verify.module_issues`); the first fault is reported at its op's line.
    """
    if not isinstance(text, str):
        raise InvalidType(f"parse_module takes the text as str, not {type(text).__name__}")
    p = _Parser(text, os.fspath(filename))
    module = p.module()
    if verify:
        from .verify import module_issues

        issues = module_issues(module, parsed=True)
        if issues:
            first = issues[0]
            line, col = first.loc or (1, 1)
            more = f" (and {len(issues) - 1} more issue(s))" if len(issues) > 1 else ""
            p.fail_at(first.message + more, line, col, first.hint)
    return module


__all__ = ["PtoParseError", "parse_module", "parse_type"]
