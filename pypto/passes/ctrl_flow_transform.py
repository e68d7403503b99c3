"""CtrlFlowTransform: remove `break` and `continue`, leaving structured control flow."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.dtype import DataType
from pypto.ir.enums import ForKind, FunctionType
from pypto.ir.expr import (
    Add,
    And,
    Cast,
    ConstBool,
    ConstInt,
    Expr,
    Not,
    Var,
    scalar_type,
)
from pypto.ir.function import Function, Program
from pypto.ir.names import NameGen
from pypto.ir.node import replace
from pypto.ir.rewrite import StmtRewriter, substitute
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, ForStmt, IfStmt, ScopeStmt, Stmt, WhileStmt
from pypto.ir.types import ScalarType
from pypto.ir.variables import assigned_vars, expr_vars
from pypto.ir.walk import body_stmts, make_body, make_else, split_yield, walk_stmts

from .base import FunctionPass, IRProperty, PassContext, PassError
from .loop_bounds import as_index, check_constant_step, in_range, next_in_range, step_check


@dataclass(frozen=True)
class CtrlFlowTransformOptions:
    # the function types to transform (None: all). The reference transforms InCore functions only.
    function_types: frozenset[FunctionType] | None = None


class CtrlFlowTransform(FunctionPass):
    """Remove every `break` and `continue`.

    Pre: TypeChecked; non-SSA input is fine (it runs before ConvertToSSA). break/continue appear
    only in sequential `for` loops and `while` loops, and not inside a `with` scope within the loop.
    Post: no BreakStmt/ContinueStmt remains, with the same behaviour:
    - `continue`: the statements after the construct holding it move into the branch(es) of the
      enclosing ifs that do not continue (duplicated when two branches both fall through);
    - `break`: the loop gets a bool flag `__break_N` (False before the loop, set True at the break,
      which then skips the rest of the body like a continue) and becomes a `while`: a `for` loop
      becomes `ctr = start; more = ctr < stop; while not flag and more: i = ctr; body;
      nxt = ctr + step; more = nxt > ctr and nxt < stop; ctr = nxt` (the comparisons follow the sign
      of the step; `nxt > ctr` catches a sum that wrapped past INT64_MAX; stop/step are captured
      once and a run-time step is checked for 0, as range() does: loop_bounds.py), a `while c`
      becomes `while not flag and c`. So the loop variable takes the same values and the state after
      the loop is the same.
    - a loop with iter_args that breaks or continues is first written in non-SSA form: each
      iter_arg becomes a plain variable assigned its init value before the loop and its yielded value
      at the end of the body, and each return var is assigned from it after the loop (ConvertToSSA
      carries them again). A continue keeps the current values; a break leaves with them.
    - an if with return vars holding a break/continue is written the same way (its yields become
      assignments of the return vars).
    Errors: break/continue in a parallel or unrolled loop, inside a `with` scope in the loop, or
    outside any loop; break in a chunked loop; a constant step of 0 in a loop that breaks.
    """

    name = "CtrlFlowTransform"
    requires = frozenset({IRProperty.TypeChecked})
    produces = frozenset({IRProperty.StructuredCtrlFlow})

    def __init__(self, options: CtrlFlowTransformOptions | None = None) -> None:
        self.options = options or CtrlFlowTransformOptions()

    def run_on_function(self, fn: Function, program: Program, ctx: PassContext) -> Function:
        if not any(isinstance(s, (BreakStmt, ContinueStmt)) for s in walk_stmts(fn.body)):
            return fn
        types = self.options.function_types
        if types is not None and fn.func_type not in types:
            return fn
        for s in walk_stmts(fn.body, into_loops=False):
            if isinstance(s, (BreakStmt, ContinueStmt)):
                raise PassError(f"'{_word(s)}' outside a loop", s.span)
        body = _Transformer(NameGen.for_node(fn)).rewrite_body(fn.body)
        return replace(fn, body=body)


def _word(s: Stmt) -> str:
    return "break" if isinstance(s, BreakStmt) else "continue"


def _exits(body: Stmt | None) -> list[Stmt]:
    """The break/continue statements of the loop owning `body` (not those of nested loops)."""
    return [s for s in walk_stmts(body, into_loops=False) if isinstance(s, (BreakStmt, ContinueStmt))]


def _may_exit(s: Stmt) -> bool:
    return not isinstance(s, (ForStmt, WhileStmt)) and bool(_exits(s))


def _always_exits(stmts: list[Stmt]) -> bool:
    for s in stmts:
        if isinstance(s, (BreakStmt, ContinueStmt)):
            return True
        if isinstance(s, IfStmt) and s.else_body is not None and _always_exits(body_stmts(s.then_body)) \
                and _always_exits(body_stmts(s.else_body)):
            return True
    return False


def _index(e: Expr) -> Expr:
    t = e.type
    if isinstance(t, ScalarType) and t.dtype is not DataType.INDEX:
        return Cast(e, DataType.INDEX, span=e.span)
    return e


def _bool(e: Expr) -> Expr:
    t = e.type
    if isinstance(t, ScalarType) and t.dtype is not DataType.BOOL:
        return Cast(e, DataType.BOOL, span=e.span)
    return e


def parallel_assign(targets: list[Var], values: list[Expr], span) -> list[Stmt]:
    """Assignments `targets[i] = values[i]` that behave as if done at once (temporaries are used when
    a later value reads an earlier target); trivial `x = x` are dropped."""
    pairs = [(t, v) for t, v in zip(targets, values) if v is not t]
    clash = any(expr_vars(v) & {t for t, _ in pairs[:i]} for i, (_, v) in enumerate(pairs))
    if not clash:
        return [AssignStmt(t, v, span=span) for t, v in pairs]
    tmps = [Var(f"{t.name}_next", t.type, span=span) for t, _ in pairs]
    return ([AssignStmt(x, v, span=span) for x, (_, v) in zip(tmps, pairs)]
            + [AssignStmt(t, x, span=span) for x, (t, _) in zip(tmps, pairs)])


def _desugar_if(s: IfStmt) -> IfStmt:
    """An if with return vars, rewritten so each branch assigns the return vars (non-SSA)."""
    def branch(body: Stmt | None) -> list[Stmt]:
        stmts, y = split_yield(body)
        vals = y.values if y is not None else ()
        return stmts + [AssignStmt(rv, v, span=s.span) for rv, v in zip(s.return_vars, vals)]

    return IfStmt(s.condition, make_body(branch(s.then_body)), make_else(branch(s.else_body)), (), span=s.span)


class _Transformer(StmtRewriter):
    def __init__(self, names: NameGen) -> None:
        self.names = names
        self.nbreak = 0

    def rewrite(self, s: Stmt) -> Stmt | list[Stmt]:
        s = self.recurse(s)  # inner loops first: their exits are their own
        if isinstance(s, (ForStmt, WhileStmt)) and _exits(s.body):
            return self.loop(s)
        return s

    def loop(self, s: ForStmt | WhileStmt) -> list[Stmt]:
        exits = _exits(s.body)
        if isinstance(s, ForStmt) and s.kind is not ForKind.Sequential:
            raise PassError(f"'{_word(exits[0])}' inside a {s.kind.name} loop (only sequential for loops and while "
                            "loops can break or continue)", exits[0].span)
        if isinstance(s, ForStmt) and s.chunk is not None and any(isinstance(x, BreakStmt) for x in exits):
            raise PassError("'break' inside a chunked loop (chunk=) is not supported", exits[0].span,
                            hint="drop chunk= or restructure the loop without break")
        pre: list[Stmt] = []
        post: list[Stmt] = []
        body = s.body
        cond = s.condition if isinstance(s, WhileStmt) else None
        if s.iter_args:  # carried values become plain variables (ConvertToSSA carries them again)
            carries = [Var(ia.name, ia.type, span=ia.span) for ia in s.iter_args]
            mapping = dict(zip(s.iter_args, carries))
            pre += [AssignStmt(c, ia.init_value, span=s.span) for c, ia in zip(carries, s.iter_args)]
            stmts, y = split_yield(substitute(body, mapping))
            body = make_body(stmts + parallel_assign(carries, list(y.values) if y is not None else [], s.span))
            cond = substitute(cond, mapping) if cond is not None else None
            post += [AssignStmt(rv, c, span=s.span) for rv, c in zip(s.return_vars, carries)]
        brk = None
        if any(isinstance(x, BreakStmt) for x in exits):
            brk = Var(self.names.unique(f"__break_{self.nbreak}"), scalar_type(DataType.BOOL), span=s.span)
            self.nbreak += 1
            pre.append(AssignStmt(brk, ConstBool(False), span=s.span))
        stmts = self.exits(body_stmts(body), brk)
        if brk is None:
            loop: Stmt = (replace(s, iter_args=(), body=make_body(stmts), return_vars=())
                          if isinstance(s, ForStmt) else WhileStmt(cond, (), make_body(stmts), (), span=s.span))
            return pre + [loop] + post
        running = Not(brk, DataType.BOOL, span=s.span)
        if isinstance(s, WhileStmt):
            assert cond is not None
            return pre + [WhileStmt(And(running, _bool(cond), DataType.BOOL, span=s.span), (), make_body(stmts), (),
                                    span=s.span)] + post
        lv = s.loop_var
        check_constant_step(s)
        ctr = Var(self.names.unique(f"{lv.name}__ctr"), lv.type, span=lv.span)
        nxt = Var(self.names.unique(f"{lv.name}__next"), lv.type, span=lv.span)
        more = Var(self.names.unique(f"{lv.name}__more"), scalar_type(DataType.BOOL), span=s.span)
        modified = set(assigned_vars(s.body))
        stop, step = s.stop, s.step
        for what in ("stop", "step"):  # range() evaluates them once
            e = stop if what == "stop" else step
            if not isinstance(e, ConstInt) and expr_vars(e) & modified:
                v = Var(self.names.unique(f"{lv.name}__{what}"), lv.type, span=s.span)
                pre.append(AssignStmt(v, _index(e), span=s.span))
                stop, step = (v, step) if what == "stop" else (stop, v)
        pre += step_check(step, self.names.unique(f"{lv.name}__step_check"), s.span)
        step = as_index(step)
        pre += [AssignStmt(ctr, _index(s.start), span=s.span),
                AssignStmt(more, in_range(ctr, stop, step), span=s.span)]
        # the next value is tested before it is taken: `ctr + step` may wrap past stop at the end
        body_out = ([AssignStmt(lv, ctr, span=s.span)] + stmts
                    + [AssignStmt(nxt, Add(ctr, step, DataType.INDEX, span=s.span), span=s.span),
                       AssignStmt(more, next_in_range(nxt, ctr, stop, step), span=s.span),
                       AssignStmt(ctr, nxt, span=s.span)])
        test = And(running, more, DataType.BOOL, span=s.span)
        loop = WhileStmt(test, (), make_body(body_out), (), span=s.span)
        return pre + [loop] + post

    def exits(self, stmts: list[Stmt], brk: Var | None) -> list[Stmt]:
        """`stmts` with the exits of the current loop removed: whatever follows an exit point moves
        into the branches that fall through."""
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            if not _may_exit(s):
                out.append(s)
                continue
            rest = stmts[i + 1:]
            if isinstance(s, BreakStmt):
                assert brk is not None
                out.append(AssignStmt(brk, ConstBool(True), span=s.span))
                return out
            if isinstance(s, ContinueStmt):
                return out
            if isinstance(s, IfStmt):
                if s.return_vars:
                    s = _desugar_if(s)
                then, els = body_stmts(s.then_body), body_stmts(s.else_body)
                new_then = self.exits(then if _always_exits(then) else then + rest, brk)
                new_else = self.exits(els if _always_exits(els) else els + rest, brk)
                if not new_then and not new_else:  # nothing left to choose between (conditions are pure)
                    return out
                if not new_then:  # `if c: continue` + rest  ->  `if not c: rest`
                    out.append(IfStmt(Not(_bool(s.condition), DataType.BOOL, span=s.condition.span),
                                      make_body(new_else), None, (), span=s.span))
                else:
                    out.append(IfStmt(s.condition, make_body(new_then), make_else(new_else), (), span=s.span))
                return out
            if isinstance(s, ScopeStmt):
                x = _exits(s)[0]
                raise PassError(f"'{_word(x)}' inside a `with` scope cannot be removed", x.span,
                                hint="move the break/continue out of the `with` block")
            raise PassError(f"cannot remove break/continue from a {type(s).__name__}", s.span)  # pragma: no cover
        return out


__all__ = ["CtrlFlowTransform", "CtrlFlowTransformOptions", "parallel_assign"]
