"""The callables of the `pl` namespace.

Inside a `@pl.function` nothing here is called: the parser reads the Python AST and recognises
these objects. Called directly from Python they explain where they belong.
"""

from __future__ import annotations

import types
from typing import Any

from pypto.errors import InvalidState
from pypto.ops import NAMESPACES
from pypto.ops.registry import Dispatch, OpDef


class DslOp:
    """A `pl` operator spelling (`pl.add`, `pl.block.load`, ...) bound to its registry entry."""

    __slots__ = ("entry", "spelling", "doc")

    def __init__(self, spelling: str, entry: OpDef | Dispatch):
        self.spelling = spelling
        self.entry = entry
        self.doc = entry.doc or f"The {spelling} operator."

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise InvalidState(f"{self.spelling}(...) builds IR: use it inside a @pl.function or @pl.program, "
                           "not from ordinary Python code")

    def __repr__(self) -> str:
        return f"<pl op {self.spelling}>"


class DslHelper:
    """A language construct (`pl.range`, `pl.yield_`, `pl.incore`, ...)."""

    __slots__ = ("name", "doc")

    def __init__(self, name: str, doc: str):
        self.name = name
        self.doc = doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise InvalidState(f"pl.{self.name}(...) is part of the pl language: use it inside a @pl.function")

    def __repr__(self) -> str:
        return f"<pl.{self.name}>"


range = DslHelper("range", "for i in pl.range(stop) / (start, stop[, step]) [, init_values=(...)]: a sequential loop")  # noqa: A001
parallel = DslHelper("parallel", "like pl.range, but iterations are independent and may run in parallel")
unroll = DslHelper("unroll", "like pl.range with constant bounds; the loop is unrolled at compile time")
while_ = DslHelper("while_", "for (x,) in pl.while_(init_values=(x0,)): pl.cond(...) first; a loop with state")
cond = DslHelper("cond", "pl.cond(c): the condition of a pl.while_ loop (its first statement)")
yield_ = DslHelper("yield_", "pass values out of a loop iteration or an if branch (SSA phi)")
const = DslHelper("const", "pl.const(value, dtype): a typed literal")
incore = DslHelper("incore", "with pl.incore(): a region outlined into an InCore kernel")
auto_incore = DslHelper("auto_incore", "with pl.auto_incore(): a region the compiler splits into kernels")
at = DslHelper("at", "with pl.at(level=pl.Level.CORE_GROUP): a region outlined into one device task (a kernel)")
# the task language (docs/tasks.md)
spmd = DslHelper("spmd", "for i in pl.spmd(n) / with pl.spmd(n[, sync_start=, deps=, predicate=]) [as tid]: one task "
                         "fanned out over n blocks (pl.get_block_idx())")
cluster = DslHelper("cluster", "with pl.cluster(): AIC and AIV work of one cluster (one task here: no effect)")
manual_scope = DslHelper("manual_scope", "with pl.manual_scope(): only explicit deps= order the tasks inside")
scope = DslHelper("scope", "with pl.scope(mode=pl.ScopeMode.MANUAL|AUTO): a runtime scope")
pipeline = DslHelper("pipeline", "for i in pl.pipeline(..., stage=F): a software-pipelined pl.range (same results)")
submit = DslHelper("submit", "res, tid = pl.submit(self.kernel, *args, deps=[...], predicate=(t[i] > 0)): a task")
spmd_submit = DslHelper("spmd_submit", "res, tid = pl.spmd_submit(self.kernel, *args, core_num=n, ...): an spmd task")
no_dep = DslHelper("no_dep", "self.kernel(pl.no_dep(t), ...): this argument of this task is not dependency-tracked")
dump_tag = DslHelper("dump_tag", "pl.dump_tag(t): mark t for partial argument dumps (a device debugging aid)")
task_dummy = DslHelper("task_dummy", "pl.system.task_dummy(deps=[...]): a task without work, done when its deps are")
task_invalid = DslHelper("task_invalid", "pl.system.task_invalid(): the 'no producer' task id")
# pl.array / pl.prefetch (pypto/language/parser/arrays.py)
array_create = DslHelper("array.create", "pl.array.create(n, dtype): an array of n integers / BOOLs / task ids")
array_get_element = DslHelper("array.get_element", "pl.array.get_element(arr, i) (also arr[i])")
array_update_element = DslHelper("array.update_element", "pl.array.update_element(arr, i, v): arr with element i "
                                                         "set to v (arr[i] = v updates in place)")
prefetch_make_context = DslHelper("prefetch.make_context", "pl.prefetch.make_context(): a GM->L2 prefetch context "
                                                           "(no effect on the CPU)")
prefetch_async_prefetch = DslHelper("prefetch.async_prefetch", "pl.prefetch.async_prefetch(tensor, ctx): start a "
                                                               "prefetch (no effect on the CPU)")
prefetch_session = DslHelper("prefetch.session", "pl.prefetch.session(ctx): the context's session")
prefetch_wait = DslHelper("prefetch.wait", "pl.prefetch.wait(event, session): wait for a prefetch (true at once)")
ARRAY_HELPERS = {h.name: h for h in (array_create, array_get_element, array_update_element, prefetch_make_context,
                                     prefetch_async_prefetch, prefetch_session, prefetch_wait)}
TASK_HELPERS = frozenset({"submit", "spmd_submit", "no_dep", "dump_tag", "task_dummy", "task_invalid"})

static_print = DslHelper("static_print", "pl.static_print(*values): print at parse time (types of IR values)")
static_assert = DslHelper("static_assert", "pl.static_assert(cond, msg=''): a parse-time check of a Python value")
func_attr = DslHelper("func_attr", "pl.func_attr({...}) as a function's first statement: function metadata "
                                   "(device hints; no effect on the CPU)")

HELPERS = {**{h.name: h for h in (range, parallel, unroll, while_, cond, yield_, const, incore, auto_incore, at,
                               static_print, static_assert, func_attr, spmd, cluster, manual_scope, scope, pipeline,
                               submit, spmd_submit, no_dep, dump_tag, task_dummy, task_invalid)}, **ARRAY_HELPERS}


def make_namespace(ns: str) -> types.SimpleNamespace:
    table = NAMESPACES.get(ns, {})
    spaced = types.SimpleNamespace(**{name: DslOp(f"{ns}.{name}", e) for name, e in sorted(table.items())})
    return spaced


def top_level_ops() -> dict[str, DslOp]:
    return {name: DslOp(f"pl.{name}", e) for name, e in NAMESPACES["pl"].items()}


__all__ = ["ARRAY_HELPERS", "HELPERS", "DslHelper", "DslOp", "make_namespace", "top_level_ops"]
