"""Structural checks of a PTO module (run by the parser and by codegen tests).

Rules, each reported as an `Issue` naming the op:

- dominance: every value is defined once, before its uses, in the using op's region or an enclosing
  one (function arguments and region arguments included);
- terminators: `scf.yield` ends an `scf.for` / `scf.if` / `scf.while` after-region, `scf.condition`
  ends a while before-region, `func.return` ends the function (types = the function's results),
  `scf.break` / `scf.continue` end a block inside a loop; none appears elsewhere;
- region ops: `scf.for` iter_args = inits = yielded values = results (count and types), its step
  not the constant 0, `scf.if`
  with results has an else and both yield the result types, `scf.while` before-args = inits,
  condition args = after-args = results, after yields the before-arg types;
- scalar ops: operand counts and types per form (syntax.SCALAR_OPS), known predicates, constants
  that fit their type;
- tiles: a DPS instruction has >= 1 `outs` and no results; its operands are tiles, partition views
  or scalars; every tile is a `pto.alloc_tile` result whose operands match its type's dynamic valid
  extents; `pto.tload` reads a partition view into a tile, `pto.tstore` the reverse;
- views and tensors: operand counts follow the result/source rank, element types agree;
  `pto.submit` names a kernel and its `dirs` (if given) has one of in/out/inout/scalar per argument;
- types (for modules built in code): tile fields in range, element types known.

Codegen tests call `verify_module(m)` (raises PtoVerifyError listing every issue with the op's
text) or `module_issues(m, check_types=True)` (the list). The parser calls `module_issues` on what
it read and reports the first issue at the op's `file:line:col`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PtoVerifyError
from .model import (
    I1,
    I64,
    INDEX,
    Block,
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
from .printer import print_op
from .syntax import (
    CMP_PREDICATES,
    FLOAT_BITS,
    IDENT_RE,
    INT_BITS,
    SCALAR_ARITY,
    SCALAR_NAMES,
    SCALAR_OPS,
    SUBMIT_DIRS,
    TASK_DIRS,
    TERMINATORS,
    TILE_LOCS,
    int_fits,
    is_dps_name,
)
from .type_text import print_type


@dataclass
class Issue:
    message: str
    op: Op | None = None
    func: str | None = None
    hint: str | None = None
    loc: tuple[int, int] | None = None  # (line, col) of the op, else of its function, when parsed

    def __str__(self) -> str:
        where = f"@{self.func}" if self.func else "module"
        if self.op is not None:
            where += f": {self.op.name}"
        if self.loc:
            where += f" (line {self.loc[0]})"
        return f"{where}: {self.message}"


def _t(t: PtoType) -> str:
    try:
        return print_type(t)
    except ValueError:
        return repr(t)


def type_problem(t: object) -> str | None:
    """Why `t` is not a valid PTO type, or None."""
    if isinstance(t, ScalarT):
        return None if t.name in SCALAR_NAMES else f"unknown scalar type '{t.name}'"
    if isinstance(t, (PtrT, TensorViewT, PartitionViewT, TensorT)):
        if t.elem not in SCALAR_NAMES:
            return f"unknown element type '{t.elem}'"
        shape = getattr(t, "shape", ())
        if any(d is not None and (not isinstance(d, int) or d < 0) for d in shape):
            return f"bad extent in {shape}"
        return None
    if isinstance(t, TileBufT):
        if t.loc not in TILE_LOCS:
            return f"tile loc '{t.loc}' is not one of {', '.join(TILE_LOCS)}"
        if t.dtype not in SCALAR_NAMES:
            return f"unknown tile dtype '{t.dtype}'"
        if not (isinstance(t.rows, int) and isinstance(t.cols, int) and t.rows >= 0 and t.cols >= 0):
            return "tile rows/cols must be non-negative integers"
        if t.v_row is not None and not 0 <= t.v_row <= t.rows or t.v_col is not None and not 0 <= t.v_col <= t.cols:
            return f"valid extent ({t.v_row}, {t.v_col}) exceeds the tile ({t.rows}, {t.cols})"
        if not (IDENT_RE.fullmatch(t.blayout) and IDENT_RE.fullmatch(t.slayout)):
            return "tile blayout/slayout must be names"
        return None
    return f"not a PTO type: {t!r}"


_LOOPS = ("scf.for", "scf.while")


class _Verifier:
    def __init__(self, check_types: bool, parsed: bool = False):
        self.issues: list[Issue] = []
        self.check_types = check_types
        self.parsed = parsed  # a module fresh from the parser: scopes and scalar ops are known good
        self.func = ""
        self.func_loc: tuple[int, int] | None = None
        self.visible: set[int] = set()
        self.seen: set[int] = set()
        self.tiles: set[int] = set()  # ids of pto.alloc_tile results
        self.zeros: set[int] = set()  # ids of arith.constant 0 results (a loop step must not be one)

    def issue(self, op: Op | None, message: str, hint: str | None = None) -> None:
        loc = op.loc if op is not None and op.loc else self.func_loc
        self.issues.append(Issue(message, op, self.func, hint, loc))

    def define(self, v: Value, op: Op | None) -> None:
        if id(v) in self.seen:
            self.issue(op, f"%{v.name} is defined twice")
        self.seen.add(id(v))
        self.visible.add(id(v))
        if self.check_types:
            why = type_problem(v.type)
            if why:
                self.issue(op, f"%{v.name}: {why}")

    # -- structure ------------------------------------------------------------------------------

    def module(self, m: Module) -> None:
        names = set()
        for f in m.funcs:
            if f.name in names:
                self.issues.append(Issue(f"function @{f.name} is defined twice", None, f.name, loc=f.loc))
            names.add(f.name)
            self.function(f)

    def function(self, f: Func) -> None:
        self.func, self.func_loc = f.name, f.loc
        self.visible, self.seen, self.tiles = set(), set(), set()
        for a in f.args:
            self.define(a, None)
            if isinstance(a.type, TileBufT):
                self.issue(None, f"argument %{a.name} is a tile; kernels take tensors as !pto.ptr")
        self.block(f.body, "func", False)
        ops = f.body.ops
        last = ops[-1] if ops else None
        if last is None or last.name != "func.return":
            self.issue(last, "the function body must end with func.return")
        else:
            self.yielded(last, list(f.results), "func.return")

    def block(self, b: Block, kind: str, in_loop: bool) -> None:
        visible = self.visible
        added = [a for a in b.args if id(a) not in visible]
        for a in b.args:
            self.define(a, None)
        n = len(b.ops)
        superset, seen, parsed = visible.issuperset, self.seen, self.parsed
        for j, op in enumerate(b.ops):
            name = op.name
            if name in TERMINATORS:
                self.terminator(op, kind, in_loop, j == n - 1)
            if name == "arith.constant" and op.attrs.get("value") == 0 and op.results:
                self.zeros.add(id(op.results[0]))
            check = _CHECKS.get(name)
            if check is not None:
                check(self, op, in_loop)
            elif name.startswith("pto."):
                if op.ins or op.outs or is_dps_name(name):
                    self.dps(op)
            elif parsed:  # the parser has checked scopes and scalar ops already
                continue
            elif name in SCALAR_OPS:
                self.scalar(op)
            if parsed:
                continue
            if not (superset(map(id, op.operands)) and superset(map(id, op.ins)) and superset(map(id, op.outs))):
                for v in op.operands + op.ins + op.outs:
                    if id(v) not in visible:
                        self.issue(op, f"%{v.name} is used but not defined before this op in an enclosing scope")
            for r in op.results:
                if self.check_types or id(r) in seen:
                    self.define(r, op)
                else:
                    seen.add(id(r))
                    visible.add(id(r))
            added += op.results
        for v in added:
            visible.discard(id(v))

    def terminator(self, op: Op, kind: str, in_loop: bool, last: bool) -> None:
        name = op.name
        allowed = {"scf.yield": ("for", "if", "after"), "scf.condition": ("before",), "func.return": ("func",)}
        if name in ("scf.break", "scf.continue"):
            if not in_loop:
                self.issue(op, f"{name} outside a loop")
        elif kind not in allowed[name]:
            self.issue(op, f"{name} cannot end this region")
        if not last:
            self.issue(op, f"{name} must be the last op of its region")
        if op.results:
            self.issue(op, f"{name} has no results")

    def yielded(self, op: Op, types: list[PtoType], what: str, skip: int = 0) -> None:
        got = [v.type for v in op.operands[skip:]]
        if got != types:
            self.issue(op, f"{what} passes ({', '.join(map(_t, got))}) where ({', '.join(map(_t, types))}) "
                           "is expected")

    def last_op(self, b: Block, name: str) -> Op | None:
        return b.ops[-1] if b.ops and b.ops[-1].name == name else None

    # -- region ops -----------------------------------------------------------------------------

    def v_for(self, op: Op, in_loop: bool) -> None:
        try:
            g = operand_groups(op)
        except ValueError as e:
            self.issue(op, str(e))
            return
        inits = g["inits"]
        if len(op.regions) != 1:
            self.issue(op, "scf.for has one region")
            return
        body = op.regions[0]
        iv_t = g["lb"][0].type
        if not (isinstance(iv_t, ScalarT) and iv_t.name in INT_BITS):
            self.issue(op, "loop bounds must be index or integer")
        if g["ub"][0].type != iv_t or g["step"][0].type != iv_t:
            self.issue(op, "lb, ub and step must have the same type")
        if id(g["step"][0]) in self.zeros:
            self.issue(op, "the loop step is the constant 0 (range() needs a non-zero step)")
        init_t = [v.type for v in inits]
        if [a.type for a in body.args] != [iv_t, *init_t]:
            self.issue(op, "region args must be the induction variable and one per iter_arg, with their types")
        if [r.type for r in op.results] != init_t:
            self.issue(op, f"scf.for with {len(inits)} iter_args must have {len(inits)} result(s) of their types")
        self.block(body, "for", True)
        y = self.last_op(body, "scf.yield")
        if inits and y is None:
            self.issue(op, "the body of an scf.for with iter_args must end with scf.yield")
        elif y is not None:
            self.yielded(y, init_t, "scf.yield")

    def v_if(self, op: Op, in_loop: bool) -> None:
        if len(op.operands) != 1 or op.operands[0].type != I1:
            self.issue(op, "scf.if takes one i1 condition")
        if len(op.regions) not in (1, 2) or any(r.args for r in op.regions):
            self.issue(op, "scf.if has a then region and an optional else region, without arguments")
            return
        types = [r.type for r in op.results]
        if types and len(op.regions) != 2:
            self.issue(op, "scf.if with results needs an else region")
        for r in op.regions:
            self.block(r, "if", in_loop)
            y = self.last_op(r, "scf.yield")
            if y is None and types:
                self.issue(op, "each region of an scf.if with results must end with scf.yield")
            elif y is not None:
                self.yielded(y, types, "scf.yield")

    def v_while(self, op: Op, in_loop: bool) -> None:
        if len(op.regions) != 2:
            self.issue(op, "scf.while has a before and an after region")
            return
        before, after = op.regions
        init_t = [v.type for v in op.operands]
        if [a.type for a in before.args] != init_t:
            self.issue(op, "the before region's args must match the inits")
        self.block(before, "before", True)
        cond = self.last_op(before, "scf.condition")
        res_t = [r.type for r in op.results]
        if cond is None:
            self.issue(op, "the before region must end with scf.condition")
        else:
            if not cond.operands or cond.operands[0].type != I1:
                self.issue(cond, "scf.condition takes an i1 condition first")
            self.yielded(cond, res_t, "scf.condition", skip=1)
        if [a.type for a in after.args] != res_t:
            self.issue(op, "the after region's args must match the results")
        self.block(after, "after", True)
        y = self.last_op(after, "scf.yield")
        if y is None:
            self.issue(op, "the after region must end with scf.yield")
        else:
            self.yielded(y, init_t, "scf.yield")

    # -- scalar ops -----------------------------------------------------------------------------

    def scalar(self, op: Op) -> None:
        form = SCALAR_OPS[op.name]
        o = op.operands
        if len(op.results) != 1 or len(o) != SCALAR_ARITY[form]:
            self.issue(op, f"{op.name} takes {SCALAR_ARITY[form]} operand(s) and has one result")
            return
        rt = op.results[0].type
        if form == "constant":
            self.constant(op, rt)
        elif form == "cast":
            pass
        elif form == "cmp":
            if op.attrs.get("predicate") not in CMP_PREDICATES[op.name]:
                self.issue(op, f"unknown predicate {op.attrs.get('predicate')!r}")
            if rt != I1 or o[0].type != o[1].type:
                self.issue(op, "comparison operands share a type; the result is i1")
        elif form == "select":
            if o[0].type != I1 or o[1].type != rt or o[2].type != rt:
                self.issue(op, "arith.select takes an i1 and two values of the result type")
        elif any(v.type != rt for v in o):
            self.issue(op, f"operands must have the result type {_t(rt)}")

    def constant(self, op: Op, rt: PtoType) -> None:
        v = op.attrs.get("value")
        if not isinstance(rt, ScalarT):
            self.issue(op, "arith.constant has a scalar type")
        elif rt.name in FLOAT_BITS:
            if not isinstance(v, (int, float)):
                self.issue(op, "a float constant needs a number value")
        elif not isinstance(v, int) or not int_fits(int(v), rt.name):
            self.issue(op, f"constant {v!r} does not fit {rt.name}")

    # -- pto ops --------------------------------------------------------------------------------

    def dps(self, op: Op) -> None:
        if not op.outs:
            self.issue(op, f"{op.name} needs at least one outs operand", "write `outs(%dst : type)`")
        if op.results or op.operands:
            self.issue(op, f"{op.name} takes ins/outs only and has no results")
        for v in op.ins + op.outs:
            t = v.type
            if isinstance(t, TileBufT):
                if id(v) not in self.tiles:
                    self.issue(op, f"tile %{v.name} does not come from pto.alloc_tile")
            elif not isinstance(t, (PartitionViewT, ScalarT)):
                self.issue(op, f"%{v.name} of type {_t(t)} cannot be an operand of a tile instruction")
        for v in op.outs:
            if isinstance(v.type, ScalarT):
                self.issue(op, f"outs %{v.name} is a scalar; outs are tiles or partition views")
        io = {"pto.tload": (PartitionViewT, TileBufT), "pto.tstore": (TileBufT, PartitionViewT)}.get(op.name)
        if io and not (len(op.ins) >= 1 and isinstance(op.ins[0].type, io[0])
                       and len(op.outs) == 1 and isinstance(op.outs[0].type, io[1])):
            src, dst = ("partition view", "tile") if io[0] is PartitionViewT else ("tile", "partition view")
            self.issue(op, f"{op.name} reads a {src} into one {dst}")

    def v_alloc_tile(self, op: Op, in_loop: bool) -> None:
        try:
            operand_groups(op)  # checks the operands against the type's dynamic extents
        except ValueError as e:
            self.issue(op, str(e), "valid_row / valid_col operands are present exactly when v_row / v_col is ?")
            return
        if any(v.type != INDEX for v in op.operands):
            self.issue(op, "addr, valid_row and valid_col are index values")
        self.tiles.add(id(op.results[0]))

    def v_make_tensor_view(self, op: Op, in_loop: bool) -> None:
        g = self.groups(op, TensorViewT)
        if g is None:
            return
        src, ty = g["source"][0].type, op.results[0].type
        if not isinstance(src, PtrT) or src.elem != ty.elem:
            self.issue(op, "the source is a !pto.ptr of the view's element type")
        if len(g["shape"]) != ty.rank:
            self.issue(op, f"shape and strides need {ty.rank} values each")
        self.index_operands(op, op.operands[1:])

    def v_window(self, op: Op, in_loop: bool) -> None:
        want = PartitionViewT if op.name == "pto.partition_view" else TensorT
        g = self.groups(op, want)
        if g is None:
            return
        src, ty = g["source"][0].type, op.results[0].type
        src_cls = TensorViewT if want is PartitionViewT else TensorT
        if not isinstance(src, src_cls) or src.elem != ty.elem:
            self.issue(op, f"the source must be a {src_cls.__name__} of the same element type")
            return
        rank = src.rank if isinstance(src, TensorViewT) else len(src.shape)
        if len(g["offsets"]) != rank or len(ty.shape) != rank:
            self.issue(op, f"offsets, sizes and the result need one entry per source dimension ({rank})")
        self.index_operands(op, op.operands[1:])

    def v_alloc_tensor(self, op: Op, in_loop: bool) -> None:
        if self.groups(op, TensorT) is not None:
            if len(op.operands) != len(op.results[0].type.shape):
                self.issue(op, "shape needs one value per dimension")
            self.index_operands(op, op.operands)

    def v_reshape(self, op: Op, in_loop: bool) -> None:
        g = self.groups(op, TensorT)
        if g is not None:
            if not isinstance(g["source"][0].type, TensorT):
                self.issue(op, "the source is a !pto.tensor")
            if len(g["shape"]) != len(op.results[0].type.shape):
                self.issue(op, "shape needs one value per result dimension")
            self.index_operands(op, g["shape"])

    def v_read(self, op: Op, in_loop: bool) -> None:
        g = self.groups(op, ScalarT)
        if g is None:
            return
        src = g["source"][0].type
        if op.name == "pto.tgetval":
            ok = isinstance(src, TileBufT) and len(g["indices"]) == 2 and op.results[0].type.name == src.dtype
            what = "pto.tgetval reads a tile element [row, col] of the tile's dtype"
        else:
            ok = (isinstance(src, TensorT) and len(g["indices"]) == len(src.shape)
                  and op.results[0].type.name == src.elem)
            what = "pto.tensor_read reads a tensor element (one index per dimension) of its element type"
        if not ok:
            self.issue(op, what)
        self.index_operands(op, g["indices"])

    def v_write(self, op: Op, in_loop: bool) -> None:
        try:
            g = operand_groups(op)
        except ValueError as e:
            self.issue(op, str(e))
            return
        val, dst = g["value"][0].type, g["dest"][0].type
        if not (isinstance(dst, TensorT) and val == ScalarT(dst.elem) and len(g["indices"]) == len(dst.shape)):
            self.issue(op, "pto.tensor_write stores a scalar of the element type at one index per dimension")
        if op.results:
            self.issue(op, "pto.tensor_write has no results")
        self.index_operands(op, g["indices"])

    def v_dim(self, op: Op, in_loop: bool) -> None:
        d = op.attrs.get("axis")
        ok = len(op.operands) == 1 and isinstance(op.operands[0].type, TensorT) and len(op.results) == 1
        if not ok or op.results[0].type != INDEX or not isinstance(d, int) or isinstance(d, bool) \
                or not 0 <= d < len(op.operands[0].type.shape):
            self.issue(op, "pto.tensor_dim takes a tensor and an axis in range (attrs['axis']); the result is index")

    def v_submit(self, op: Op, in_loop: bool) -> None:
        if not isinstance(op.attrs.get("callee"), Sym):
            self.issue(op, "pto.submit needs attrs['callee'] = Sym(kernel name)")
        dirs = op.attrs.get("dirs")
        if dirs is not None and (not isinstance(dirs, list) or len(dirs) != len(op.operands)
                                 or any(d not in SUBMIT_DIRS and d not in TASK_DIRS for d in dirs)):
            self.issue(op, f"dirs must give one of {sorted(SUBMIT_DIRS | TASK_DIRS)} per argument")
        if len(op.results) > 1 or (op.results and op.results[0].type != I64):
            self.issue(op, "pto.submit has at most one result, its task id (i64)")

    def groups(self, op: Op, result_cls: type) -> dict | None:
        if len(op.results) != 1 or not isinstance(op.results[0].type, result_cls):
            self.issue(op, f"{op.name} has one result of kind {result_cls.__name__}")
            return None
        try:
            return operand_groups(op)
        except ValueError as e:
            self.issue(op, str(e))
            return None

    def index_operands(self, op: Op, vals: list[Value]) -> None:
        for v in vals:
            if v.type != INDEX:
                self.issue(op, f"%{v.name} must be an index value, not {_t(v.type)}")


_CHECKS = {
    "scf.for": _Verifier.v_for,
    "scf.if": _Verifier.v_if,
    "scf.while": _Verifier.v_while,
    "pto.alloc_tile": _Verifier.v_alloc_tile,
    "pto.make_tensor_view": _Verifier.v_make_tensor_view,
    "pto.partition_view": _Verifier.v_window,
    "pto.tensor_slice": _Verifier.v_window,
    "pto.alloc_tensor": _Verifier.v_alloc_tensor,
    "pto.tensor_reshape": _Verifier.v_reshape,
    "pto.tgetval": _Verifier.v_read,
    "pto.tensor_read": _Verifier.v_read,
    "pto.tensor_write": _Verifier.v_write,
    "pto.tensor_dim": _Verifier.v_dim,
    "pto.submit": _Verifier.v_submit,
    "pto.tpush": lambda v, op, in_loop: v_pipe(v, op),
    "pto.tpop": lambda v, op, in_loop: v_pipe(v, op),
}


def v_pipe(v: _Verifier, op: Op) -> None:
    """pto.tpush ins(%tile) / pto.tpop outs(%tile) {dir = "c2v" | "v2c", split, id} (a cross-core pipe)."""
    push = op.name == "pto.tpush"
    tiles = op.ins if push else op.outs
    if len(tiles) != 1 or (op.outs if push else op.ins) or op.operands or op.results \
            or not isinstance(tiles[0].type, TileBufT):
        v.issue(op, f"{op.name} takes one tile ({'ins' if push else 'outs'}) and nothing else")
    if op.attrs.get("dir") not in ("c2v", "v2c"):
        v.issue(op, f"{op.name} needs dir = \"c2v\" or \"v2c\"")
    if op.attrs.get("split", 0) not in (0, 1, 2) or not isinstance(op.attrs.get("id", 0), int):
        v.issue(op, f"{op.name}: split is 0, 1 or 2 and id an int")


def module_issues(module: Module, check_types: bool = False, parsed: bool = False) -> list[Issue]:
    """Every structural fault of `module` (empty when it is well formed).

    `check_types` also validates each value's type (types built in code; parsed types are valid).
    `parsed` skips what the parser has already checked (scopes, scalar ops); only the parser sets it.
    """
    v = _Verifier(check_types, parsed)
    v.module(module)
    return v.issues


def verify_module(module: Module) -> None:
    """Raise PtoVerifyError listing every fault of `module` (types included)."""
    issues = module_issues(module, check_types=True)
    if issues:
        raise PtoVerifyError(issues, [_op_text(i.op) for i in issues])


def _op_text(op: Op | None) -> str | None:
    """The first line of the op's text, for the message (None if it cannot be printed)."""
    if op is None:
        return None
    try:
        line = print_op(op).split("\n", 1)[0]
    except (ValueError, KeyError, IndexError, AttributeError, TypeError):
        return None
    return line if len(line) <= 200 else line[:197] + "..."


__all__ = ["Issue", "PtoVerifyError", "module_issues", "type_problem", "verify_module"]
