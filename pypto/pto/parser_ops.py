"""Parsers of the ops with their own syntax: `scf` region ops and terminators, and `pto.*` ops.

A mixin of `parser._Parser`: each `p_<form>(name, lhs, k)` is entered with the op name consumed
(`k` is its token index, `lhs` the result names or None) and returns the Op.
"""

from __future__ import annotations

from .model import (
    I1,
    I64,
    INDEX,
    Op,
    PartitionViewT,
    PtoType,
    ScalarT,
    Sym,
    TensorT,
    TensorViewT,
    TileBufT,
    Value,
)
from .syntax import symbol_name
from .type_text import print_type


class OpParsers:
    """Needs the Cursor's token and scope methods and the parser's `bind`, `body`, `opt_attrs`."""

    # region ops -------------------------------------------------------------------------------

    def p_for(self, name: str, lhs, k: int) -> Op:
        toks = self.toks
        iv_name, ivk = self.def_name()
        self.expect("=")
        lb = self.use()
        self.expect("to")
        ub = self.use()
        self.expect("step")
        st = self.use()
        names: list[tuple[str, int]] = []
        inits: list[Value] = []
        types: list[PtoType] = []
        if toks[self.i] == "iter_args":
            self.i += 1
            self.expect("(")
            while toks[self.i] != ")":
                if names:
                    self.expect(",")
                names.append(self.def_name())
                self.expect("=")
                inits.append(self.use())
            self.i += 1
            self.expect("->")
            tk = self.i
            types = self.paren_types()
            self.carried(names, inits, types, tk)
        iv_t: PtoType = INDEX
        if toks[self.i] == ":":
            self.i += 1
            iv_t = self.type()
        for v in (lb, ub, st):
            if v.type != iv_t:
                self.fail(f"loop bound %{v.name} has type {print_type(v.type)}; the induction variable has "
                          f"{print_type(iv_t)}", k, hint="write `: i32` after the step for a non-index loop")
        mark = self.enter()
        args = [self.define(iv_name, iv_t, ivk)] + [self.define(n, t, nk) for (n, nk), t in zip(names, types)]
        body = self.body(args)
        self.leave(mark)
        attrs = self.opt_attrs()
        return Op(name, self.bind(lhs, types, name, k), [lb, ub, st, *inits], attrs=attrs, regions=[body])

    def carried(self, names, inits: list[Value], types: list[PtoType], tk: int) -> None:
        if len(types) != len(names):
            self.fail(f"{len(names)} carried value(s) but {len(types)} type(s)", tk)
        for v, ty in zip(inits, types):
            self.check_type(v, ty, tk)

    def p_if(self, name: str, lhs, k: int) -> Op:
        cond = self.use()
        if cond.type != I1:
            self.fail(f"scf.if condition %{cond.name} must be i1", self.i - 1)
        types = []
        if self.toks[self.i] == "->":
            self.i += 1
            types = self.paren_types()
        regions = [self.region()]
        if self.toks[self.i] == "else":
            self.i += 1
            regions.append(self.region())
        attrs = self.opt_attrs()
        return Op(name, self.bind(lhs, types, name, k), [cond], attrs=attrs, regions=regions)

    def p_while(self, name: str, lhs, k: int) -> Op:
        toks = self.toks
        self.expect("(")
        names: list[tuple[str, int]] = []
        inits: list[Value] = []
        while toks[self.i] != ")":
            if names:
                self.expect(",")
            names.append(self.def_name())
            self.expect("=")
            inits.append(self.use())
        self.i += 1
        self.expect(":")
        tk = self.i
        in_types = self.paren_types()
        self.carried(names, inits, in_types, tk)
        self.expect("->")
        out_types = self.paren_types()
        mark = self.enter()
        before = self.body([self.define(n, t, nk) for (n, nk), t in zip(names, in_types)])
        self.leave(mark)
        self.expect("do")
        mark = self.enter()
        self.expect("{")
        args: list[Value] = []
        if toks[self.i][:1] == "^":  # the after region's block label and arguments
            self.i += 1
            if toks[self.i] == "(":
                self.i += 1
                while toks[self.i] != ")":
                    if args:
                        self.expect(",")
                    an, ak = self.def_name()
                    self.expect(":")
                    args.append(self.define(an, self.type(), ak))
                self.i += 1
            self.expect(":")
        after = self.ops(args)
        self.leave(mark)
        attrs = self.opt_attrs()
        return Op(name, self.bind(lhs, out_types, name, k), inits, attrs=attrs, regions=[before, after])

    def p_term(self, name: str, lhs, k: int) -> Op:
        self.no_results(lhs, name, k)
        toks = self.toks
        operands: list[Value] = []
        if name == "scf.condition":
            self.expect("(")
            c = self.use()
            if c.type != I1:
                self.fail(f"scf.condition %{c.name} must be i1", self.i - 1)
            self.expect(")")
            operands.append(c)
        # values start on the terminator's line: a bare `scf.yield` is not followed by operands
        vals = self.uses(":") if toks[self.i][:1] == "%" and self.same_line(k, self.i) else []
        attrs = self.opt_attrs()
        if vals:
            self.typed_uses(vals)
        return Op(name, operands=operands + vals, attrs=attrs)

    # pto ops ----------------------------------------------------------------------------------

    def p_pto_generic(self, name: str, lhs, k: int) -> Op:
        toks = self.toks
        if toks[self.i] == "ins":
            self.no_results(lhs, name, k)
            self.i += 1
            ins = self.group()
            self.expect("outs")
            outs = self.group()
            return Op(name, ins=ins, outs=outs, attrs=self.opt_attrs())
        attrs = self.opt_attrs()
        if toks[self.i] == ":":
            self.i += 1
            return Op(name, self.bind(lhs, [self.type()], name, k), attrs=attrs)
        self.no_results(lhs, name, k)
        t = toks[self.i]
        if t and t != "}" and self.same_line(k, self.i):
            self.fail(f"unexpected {self.desc()} after {name}",
                      hint="a tile instruction is written `pto.x ins(%a, ... : types) outs(%d : type) {attrs}`")
        return Op(name, attrs=attrs)

    def group(self) -> list[Value]:
        self.expect("(")
        vals = self.uses(")")
        if vals:
            self.typed_uses(vals)
        self.expect(")")
        return vals

    def src_type(self, src: Value) -> None:
        tk = self.i
        self.check_type(src, self.type(), tk)
        self.expect("->")

    def result_type(self, cls: type, what: str) -> PtoType:
        tk = self.i
        ty = self.type()
        if not isinstance(ty, cls):
            self.fail(f"expected a {what} type here", tk)
        return ty

    def keyword_list(self, word: str) -> list[Value]:
        self.expect(word)
        self.expect("=")
        return self.vlist()

    def p_make_tensor_view(self, name: str, lhs, k: int) -> Op:
        src = self.use()
        self.expect(",")
        shape = self.keyword_list("shape")
        self.expect(",")
        strides = self.keyword_list("strides")
        attrs = self.opt_attrs()
        self.expect(":")
        ty = self.result_type(TensorViewT, "!pto.tensor_view<...>")
        if not len(shape) == len(strides) == ty.rank:  # type: ignore[attr-defined]
            self.fail(f"{name}: shape and strides need one value per dimension ({ty.rank})", k)  # type: ignore
        return Op(name, self.bind(lhs, [ty], name, k), [src, *shape, *strides], attrs=attrs)

    def p_window(self, name: str, lhs, k: int) -> Op:
        src = self.use()
        self.expect(",")
        offsets = self.keyword_list("offsets")
        self.expect(",")
        sizes = self.keyword_list("sizes")
        if len(offsets) != len(sizes):
            self.fail(f"{name}: {len(offsets)} offsets but {len(sizes)} sizes", k)
        attrs = self.opt_attrs()
        self.expect(":")
        self.src_type(src)
        cls = PartitionViewT if name == "pto.partition_view" else TensorT
        ty = self.result_type(cls, "!pto.partition_tensor_view<...>" if cls is PartitionViewT else "!pto.tensor<...>")
        return Op(name, self.bind(lhs, [ty], name, k), [src, *offsets, *sizes], attrs=attrs)

    def p_alloc_tile(self, name: str, lhs, k: int) -> Op:
        toks = self.toks
        got: dict[str, Value] = {}
        for word in ("addr", "valid_row", "valid_col"):
            if toks[self.i] == word:
                self.i += 1
                self.expect("=")
                got[word] = self.use()
        attrs = self.opt_attrs()
        self.expect(":")
        tk = self.i
        ty = self.result_type(TileBufT, "!pto.tile_buf<...>")
        for word, ext in (("valid_row", ty.v_row), ("valid_col", ty.v_col)):  # type: ignore[attr-defined]
            if (word in got) != (ext is None):
                field = "v_row" if word == "valid_row" else "v_col"
                self.fail(f"{word} operand given but the type's {field} is static" if word in got else
                          f"{field}=? needs a {word} operand", tk)
        operands = [got[w] for w in ("addr", "valid_row", "valid_col") if w in got]
        return Op(name, self.bind(lhs, [ty], name, k), operands, attrs=attrs)

    def p_alloc_tensor(self, name: str, lhs, k: int) -> Op:
        shape = self.keyword_list("shape")
        attrs = self.opt_attrs()
        self.expect(":")
        ty = self.result_type(TensorT, "!pto.tensor<...>")
        if len(shape) != len(ty.shape):  # type: ignore[attr-defined]
            self.fail(f"{name}: shape has {len(shape)} values for a rank-{len(ty.shape)} tensor", k)  # type: ignore
        return Op(name, self.bind(lhs, [ty], name, k), shape, attrs=attrs)

    def p_reshape(self, name: str, lhs, k: int) -> Op:
        src = self.use()
        self.expect(",")
        shape = self.keyword_list("shape")
        attrs = self.opt_attrs()
        self.expect(":")
        self.src_type(src)
        ty = self.result_type(TensorT, "!pto.tensor<...>")
        if len(shape) != len(ty.shape):  # type: ignore[attr-defined]
            self.fail(f"{name}: shape has {len(shape)} values for a rank-{len(ty.shape)} tensor", k)  # type: ignore
        return Op(name, self.bind(lhs, [ty], name, k), [src, *shape], attrs=attrs)

    def p_read(self, name: str, lhs, k: int) -> Op:
        src = self.use()
        idx = self.vlist()
        attrs = self.opt_attrs()
        self.expect(":")
        self.src_type(src)
        ty = self.result_type(ScalarT, "scalar")
        return Op(name, self.bind(lhs, [ty], name, k), [src, *idx], attrs=attrs)

    def p_write(self, name: str, lhs, k: int) -> Op:
        self.no_results(lhs, name, k)
        val = self.use()
        self.expect(",")
        dst = self.use()
        idx = self.vlist()
        attrs = self.opt_attrs()
        self.typed_uses([val, dst])
        return Op(name, operands=[val, dst, *idx], attrs=attrs)

    def p_dim(self, name: str, lhs, k: int) -> Op:
        src = self.use()
        self.expect(",")
        t = self.toks[self.i]
        if not (t.isascii() and t.isdigit() and len(t) < 10):
            self.fail(f"expected an axis number, found {self.desc()}")
        self.i += 1
        attrs = self.opt_attrs({"axis": int(t)})
        self.typed_uses([src])
        return Op(name, self.bind(lhs, [INDEX], name, k), [src], attrs=attrs)

    def p_submit(self, name: str, lhs, k: int) -> Op:
        sym = self.toks[self.i]
        if sym[:1] != "@" or len(sym) < 2:
            self.fail(f"expected the kernel symbol (@name), found {self.desc()}")
        self.i += 1
        self.expect("(")
        args = self.uses(")")
        self.expect(")")
        attrs = self.opt_attrs({"callee": Sym(symbol_name(sym))})
        self.expect(":")
        tk = self.i
        types = self.paren_types()
        if len(types) != len(args):
            self.fail(f"{len(args)} argument(s) but {len(types)} type(s)", tk)
        for v, ty in zip(args, types):
            self.check_type(v, ty, tk)
        results = self.bind(lhs, [I64], name, k) if lhs is not None else []  # the task id
        return Op(name, results, operands=args, attrs=attrs)
