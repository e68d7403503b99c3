"""The PTO printer: model objects -> canonical `.pto` text (docs/pto_format.md).

Canonical means: one op per line, two spaces per nesting level, attributes in stored order, every
type written in full, a trailing newline. The printer is deterministic and `parse_module` reads back
everything it writes (`print_module(parse_module(t)) == t` for every `t` it produces).

Value names come from `Value.name`. The printer keeps them where it can and renames only what the
parser would reject: characters outside `[A-Za-z0-9_.$]` become `_`, and a name already visible in
the current scope (a duplicate, or a shadowing name in a nested region) gets a `_1`, `_2`, ...
suffix. Results named `r#0 .. r#N-1` print as the group `%r:N` (uses `%r#i`).
"""

from __future__ import annotations

import numbers

from pypto.errors import InvalidValue

from .model import (
    INDEX,
    Block,
    EnumAttr,
    Func,
    Module,
    Op,
    PartitionViewT,
    PtoType,
    PtrT,
    ScalarT,
    Sym,
    TensorT,
    TensorViewT,
    TileBufT,
    Value,
    operand_groups,
)
from .syntax import (
    FLOAT_BITS,
    IDENT_RE,
    INT_BITS,
    NAME_RE,
    PTO_FORMS,
    SCALAR_OPS,
    TERMINATORS,
    format_float,
    quote,
    sanitize_name,
    special_float_bits,
)
from .type_text import print_type

_INDENT = ["  " * i for i in range(64)]


_TYPE_CLASSES = (ScalarT, TileBufT, PtrT, TensorViewT, PartitionViewT, TensorT)


def _symbol(name: str) -> str:
    if NAME_RE.fullmatch(name):
        return "@" + name
    if not name:
        raise InvalidValue("an empty symbol name cannot be printed")
    return "@" + quote(name)


def print_attr(v: object) -> str:
    """The text of one attribute value (see the Attributes section of the spec)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_float(v)
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(print_attr(x) for x in v) + "]"
    if isinstance(v, Sym):
        return _symbol(v.name)
    if isinstance(v, EnumAttr):
        if not IDENT_RE.fullmatch(v.dialect) or any(c in v.value for c in "<>\n"):
            raise InvalidValue(f"enum attribute {v!r} cannot be printed")
        return f"#{v.dialect}<{v.value}>"
    if isinstance(v, _TYPE_CLASSES):
        return print_type(v)
    if isinstance(v, dict):
        return print_attr_dict(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return format_float(float(v))
    raise InvalidValue(f"attribute value {v!r} of type {type(v).__name__} has no PTO text")


def print_attr_dict(attrs: dict) -> str:
    parts = []
    for k, v in attrs.items():
        key = k if IDENT_RE.fullmatch(k) else quote(k)
        parts.append(f"{key} = {print_attr(v)}")
    return "{" + ", ".join(parts) + "}"


def _const_text(op: Op) -> str:
    if "value" not in op.attrs or len(op.results) != 1 or not isinstance(op.results[0].type, ScalarT):
        raise InvalidValue(f"arith.constant needs attrs['value'] and one scalar result: {op!r}")
    v, ty = op.attrs["value"], op.results[0].type.name
    if ty in FLOAT_BITS:
        f = float(v)
        return repr(f) if f - f == 0 else special_float_bits(f, ty)
    if ty == "i1":
        return "true" if v else "false"
    if ty in INT_BITS:
        return str(int(v))
    raise InvalidValue(f"arith.constant of type {ty}")


class _Printer:
    def __init__(self) -> None:
        self.lines: list[str | None] = []
        self.names: dict[int, str] = {}  # id(Value) -> printed name (without '%')
        self.visible: set[str] = set()
        self.stack: list[str] = []  # names defined, innermost last, for leaving scopes
        self.tcache: dict[int, str] = {}  # id(type) -> text; types live as long as the module

    # -- names and types ----------------------------------------------------------------------

    def ty(self, t: PtoType) -> str:
        s = self.tcache.get(id(t))
        if s is None:
            s = self.tcache[id(t)] = print_type(t)
        return s

    def _fresh(self, base: str) -> str:
        if base not in self.visible:
            return base
        k = 1
        while f"{base}_{k}" in self.visible:
            k += 1
        return f"{base}_{k}"

    def define(self, v: Value) -> str:
        name = self._fresh(v.name if NAME_RE.fullmatch(v.name) else sanitize_name(v.name))
        self.visible.add(name)
        self.stack.append(name)
        self.names[id(v)] = name
        return "%" + name

    def use(self, v: Value) -> str:
        name = self.names.get(id(v))
        return "%" + (name if name is not None else sanitize_name(v.name))

    def uses(self, vs: list[Value]) -> str:
        get = self.names.get
        return ", ".join("%" + (get(id(v)) or sanitize_name(v.name)) for v in vs)

    def types(self, vs: list[Value]) -> str:
        return ", ".join(self.ty(v.type) for v in vs)

    def leave(self, mark: int) -> None:
        for name in self.stack[mark:]:
            self.visible.discard(name)
        del self.stack[mark:]

    def lhs(self, results: list[Value]) -> str:
        if not results:
            return ""
        if len(results) == 1:
            return self.define(results[0]) + " = "
        base, _, _ = results[0].name.partition("#")
        if NAME_RE.fullmatch(base) and all(r.name == f"{base}#{i}" for i, r in enumerate(results)):
            base = self._fresh(base)
            self.visible.add(base)
            self.stack.append(base)
            for i, r in enumerate(results):
                self.names[id(r)] = f"{base}#{i}"
            return f"%{base}:{len(results)} = "
        return ", ".join(self.define(r) for r in results) + " = "

    def extra(self, op: Op, consumed: str = "") -> str:
        attrs = op.attrs
        if not attrs or (len(attrs) == 1 and consumed in attrs):
            return ""
        if consumed in attrs:
            attrs = {k: v for k, v in attrs.items() if k != consumed}
        return " " + print_attr_dict(attrs)

    # -- structure ------------------------------------------------------------------------------

    def module(self, m: Module) -> None:
        self.lines.append(f"module attributes {print_attr_dict(m.attrs)} {{" if m.attrs else "module {")
        for i, f in enumerate(m.funcs):
            if i:
                self.lines.append("")
            self.func(f, 1)
        self.lines.append("}")

    def func(self, f: Func, depth: int) -> None:
        self.names.clear()
        self.visible.clear()
        self.stack.clear()
        ind = _INDENT[depth]
        args = ", ".join(f"{self.define(a)}: {self.ty(a.type)}" for a in f.args)
        head = f"{ind}func.func {_symbol(f.name)}({args})"
        if len(f.results) == 1:
            head += " -> " + self.ty(f.results[0])
        elif f.results:
            head += " -> (" + ", ".join(self.ty(t) for t in f.results) + ")"
        if f.attrs:
            head += " attributes " + print_attr_dict(f.attrs)
        self.lines.append(head + " {")
        self.block(f.body, depth + 1)
        self.lines.append(ind + "}")

    def block(self, b: Block, depth: int) -> None:
        if depth >= len(_INDENT):
            _INDENT.extend("  " * i for i in range(len(_INDENT), depth + 1))
        for op in b.ops:
            self.op(op, depth)

    def op(self, op: Op, depth: int) -> None:
        name = op.name
        special = _REGION_PRINTERS.get(name)
        if special is not None:
            special(self, op, depth)
            return
        self.lines.append(_INDENT[depth] + self.line(op))

    def line(self, op: Op) -> str:  # noqa: C901 - one branch per syntax form
        name = op.name
        form = SCALAR_OPS.get(name)
        if form is not None or name.startswith(("arith.", "math.")):
            return self.scalar(op, form)
        if name in TERMINATORS:
            return self.terminator(op)
        form = PTO_FORMS.get(name)
        if form is not None:
            return self.pto_form(op, form)
        if name.startswith("pto."):
            if op.ins or op.outs:
                if op.operands:
                    raise InvalidValue(f"{name}: a DPS instruction takes ins/outs, not operands")
                return (f"{self.lhs(op.results)}{name} ins({self.uses(op.ins)}{self._colon_types(op.ins)}) "
                        f"outs({self.uses(op.outs)}{self._colon_types(op.outs)}){self.extra(op)}")
            if not op.operands:
                if len(op.results) == 1:
                    return f"{self.lhs(op.results)}{name}{self.extra(op)} : {self.ty(op.results[0].type)}"
                if not op.results:
                    return name + self.extra(op)
        raise InvalidValue(f"no PTO syntax for {name} with {len(op.operands)} operand(s), "
                         f"{len(op.results)} result(s) (see docs/pto_format.md)")

    def _colon_types(self, vs: list[Value]) -> str:
        return " : " + self.types(vs) if vs else ""

    def scalar(self, op: Op, form: str | None) -> str:
        name, o = op.name, op.operands
        if len(op.results) != 1:
            raise InvalidValue(f"{name} must have one result, has {len(op.results)}")
        res = op.results[0]
        if form == "constant":
            text = _const_text(op)
            return f"{self.lhs(op.results)}{name} {text}{self.extra(op, 'value')} : {self.ty(res.type)}"
        if form is None:  # an op the table does not know: print by shape; the parser will reject it
            form = "cast" if len(o) == 1 and o[0].type != res.type else "binary"
        if not o:
            raise InvalidValue(f"{name} needs operands")
        args = self.uses(o)
        if form == "cast":
            return f"{self.lhs(op.results)}{name} {args}{self.extra(op)} : {self.ty(o[0].type)} to {self.ty(res.type)}"
        if form == "cmp":
            pred = op.attrs.get("predicate")
            if not isinstance(pred, str):
                raise InvalidValue(f"{name} needs attrs['predicate'] as a string such as 'slt'")
            return f"{self.lhs(op.results)}{name} {pred}, {args}{self.extra(op, 'predicate')} : {self.ty(o[0].type)}"
        return f"{self.lhs(op.results)}{name} {args}{self.extra(op)} : {self.ty(res.type)}"

    def terminator(self, op: Op) -> str:
        o = op.operands
        head = op.name
        if op.name == "scf.condition":
            if not o:
                raise InvalidValue("scf.condition needs a condition operand")
            head += f"({self.use(o[0])})"
            o = o[1:]
        if op.results:
            raise InvalidValue(f"{op.name} has no results")
        if not o:
            return head + self.extra(op)
        return f"{head} {self.uses(o)}{self.extra(op)} : {self.types(o)}"

    def pto_form(self, op: Op, form: str) -> str:  # noqa: C901 - one branch per syntax form
        name, g = op.name, operand_groups(op)
        if form == "submit":
            callee = op.attrs.get("callee")
            if not isinstance(callee, Sym) or len(op.results) > 1:
                raise InvalidValue("pto.submit needs attrs['callee'] = Sym(kernel) and at most one result (task id)")
            return (f"{self.lhs(op.results)}{name} {_symbol(callee.name)}({self.uses(op.operands)}){self.extra(op, 'callee')} : "
                    f"({self.types(op.operands)})")
        if form == "write":
            if op.results:
                raise InvalidValue("pto.tensor_write has no results")
            val, dst = g["value"][0], g["dest"][0]
            return (f"{name} {self.use(val)}, {self.use(dst)}[{self.uses(g['indices'])}]{self.extra(op)} : "
                    f"{self.ty(val.type)}, {self.ty(dst.type)}")
        if len(op.results) != 1:
            raise InvalidValue(f"{name} must have one result, has {len(op.results)}")
        res_t = self.ty(op.results[0].type)
        if form == "alloc_tile":
            parts = [f" {k} = {self.use(g[k][0])}" for k in ("addr", "valid_row", "valid_col") if g[k]]
            return f"{self.lhs(op.results)}{name}{''.join(parts)}{self.extra(op)} : {res_t}"
        if form == "alloc_tensor":
            return f"{self.lhs(op.results)}{name} shape = [{self.uses(g['shape'])}]{self.extra(op)} : {res_t}"
        src = g["source"][0] if "source" in g else (op.operands[0] if len(op.operands) == 1 else None)
        if src is None:
            raise InvalidValue(f"{name} needs one source operand")
        s, st = self.use(src), self.ty(src.type)
        if form == "make_tensor_view":
            return (f"{self.lhs(op.results)}{name} {s}, shape = [{self.uses(g['shape'])}], "
                    f"strides = [{self.uses(g['strides'])}]{self.extra(op)} : {res_t}")
        if form == "window":
            return (f"{self.lhs(op.results)}{name} {s}, offsets = [{self.uses(g['offsets'])}], "
                    f"sizes = [{self.uses(g['sizes'])}]{self.extra(op)} : {st} -> {res_t}")
        if form == "reshape":
            return f"{self.lhs(op.results)}{name} {s}, shape = [{self.uses(g['shape'])}]{self.extra(op)} : {st} -> {res_t}"
        if form == "read":
            return f"{self.lhs(op.results)}{name} {s}[{self.uses(g['indices'])}]{self.extra(op)} : {st} -> {res_t}"
        axis = op.attrs.get("axis")
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise InvalidValue("pto.tensor_dim needs attrs['axis'] as an int")
        return f"{self.lhs(op.results)}{name} {s}, {axis}{self.extra(op, 'axis')} : {st}"

    # -- region ops ----------------------------------------------------------------------------

    def _open(self) -> int:
        self.lines.append(None)  # the header; written once the results are named
        return len(self.lines) - 1

    def _close(self, at: int, op: Op, depth: int, header: str) -> None:
        ind = _INDENT[depth]
        self.lines[at] = ind + self.lhs(op.results) + header
        self.lines.append(ind + "}" + self.extra(op))

    def region_for(self, op: Op, depth: int) -> None:
        g = operand_groups(op)
        if len(op.regions) != 1 or len(op.regions[0].args) != 1 + len(g["inits"]):
            raise InvalidValue("scf.for needs one region whose args are the induction variable and iter_args")
        body = op.regions[0]
        bounds = f"{self.use(g['lb'][0])} to {self.use(g['ub'][0])} step {self.use(g['step'][0])}"
        inits = [self.use(v) for v in g["inits"]]
        mark = len(self.stack)
        head = f"scf.for {self.define(body.args[0])} = {bounds}"
        if inits:
            pairs = ", ".join(f"{self.define(a)} = {i}" for a, i in zip(body.args[1:], inits))
            head += f" iter_args({pairs}) -> ({self.types(body.args[1:])})"
        iv_t = body.args[0].type
        if iv_t != INDEX:
            head += " : " + self.ty(iv_t)
        at = self._open()
        self.block(body, depth + 1)
        self.leave(mark)
        self._close(at, op, depth, head + " {")

    def region_if(self, op: Op, depth: int) -> None:
        if len(op.operands) != 1 or len(op.regions) not in (1, 2):
            raise InvalidValue("scf.if needs one condition and one or two regions")
        head = f"scf.if {self.use(op.operands[0])}"
        if op.results:
            head += f" -> ({self.types(op.results)})"
        at = self._open()
        for i, r in enumerate(op.regions):
            if i:
                self.lines.append(_INDENT[depth] + "} else {")
            mark = len(self.stack)
            self.block(r, depth + 1)
            self.leave(mark)
        self._close(at, op, depth, head + " {")

    def region_while(self, op: Op, depth: int) -> None:
        if len(op.regions) != 2 or len(op.regions[0].args) != len(op.operands):
            raise InvalidValue("scf.while needs a before region (args = inits) and an after region")
        before, after = op.regions
        inits = [self.use(v) for v in op.operands]
        mark = len(self.stack)
        pairs = ", ".join(f"{self.define(a)} = {i}" for a, i in zip(before.args, inits))
        head = f"scf.while ({pairs}) : ({self.types(before.args)}) -> ({self.types(op.results)}) {{"
        at = self._open()
        self.block(before, depth + 1)
        self.leave(mark)
        self.lines.append(_INDENT[depth] + "} do {")
        if after.args:
            args = ", ".join(f"{self.define(a)}: {self.ty(a.type)}" for a in after.args)
            self.lines.append(f"{_INDENT[depth]}^bb0({args}):")
        self.block(after, depth + 1)
        self.leave(mark)
        self._close(at, op, depth, head)


_REGION_PRINTERS = {"scf.for": _Printer.region_for, "scf.if": _Printer.region_if,
                    "scf.while": _Printer.region_while}


def _join(lines: list[str | None]) -> str:
    return "\n".join(lines) + "\n"  # type: ignore[arg-type]


def print_module(module: Module) -> str:
    """Canonical text of a module (ends with a newline)."""
    p = _Printer()
    p.module(module)
    return _join(p.lines)


def print_func(func: Func) -> str:
    """Canonical text of one `func.func` (no module around it; ends with a newline)."""
    p = _Printer()
    p.func(func, 0)
    return _join(p.lines)


def print_op(op: Op) -> str:
    """One op as text, for messages (region ops print their regions too; names are not scoped)."""
    p = _Printer()
    p.op(op, 0)
    return _join(p.lines).rstrip("\n")


__all__ = ["print_attr", "print_attr_dict", "print_func", "print_module", "print_op", "print_type"]
