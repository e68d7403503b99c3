"""`set_pass_options(sg_set_scope=n)` (reference §1.9): the ops recorded while a scope id is set go
into one kernel (a `pl.incore` scope) — a manual depth-merge of what the pipeline would otherwise
split, e.g. around a view or a reshape. `sg_set_scope=-1` ends it. A group holding a loop, a branch,
or a scalar that the rest of the kernel's caller reads is left to the pipeline.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.enums import ScopeKind
from pypto.ir.stmt import AssignStmt, ScopeStmt, seq
from pypto.ir.types import ScalarType
from pypto.ir.variables import used_vars


def current_scope() -> int:
    from .options import traced_option

    v = traced_option("pass_options", "sg_set_scope", -1)
    if isinstance(v, (tuple, list)):
        v = v[0] if v else -1
    try:
        return int(v)
    except (TypeError, ValueError):
        return -1


def merge_block(block: Any, keep: set) -> None:
    """Wrap each run of consecutive statements recorded under the same scope id in one InCore scope."""
    stmts = block.stmts
    out: list = []
    k = 0
    while k < len(stmts):
        sid = block.scope_of.get(id(stmts[k]), -1)
        j = k
        while j < len(stmts) and block.scope_of.get(id(stmts[j]), -1) == sid:
            j += 1
        group = stmts[k:j]
        if sid >= 0 and len(group) > 1 and _mergeable(group, stmts[j:], keep):
            out.append(ScopeStmt(ScopeKind.InCore, seq(group, span=group[0].span), span=group[0].span))
        else:
            out += group
        k = j
    block.stmts[:] = out
    block.scope_of.clear()


def _mergeable(group: list, rest: list, keep: set) -> bool:
    if not all(isinstance(s, AssignStmt) for s in group):
        return False  # (loops, branches, tiled scopes: left as they are)
    later = set(keep)
    for s in rest:
        later |= set(used_vars(s))
    # a scalar computed in the group and read after it cannot leave a kernel
    return not any(isinstance(s.var.type, ScalarType) and s.var in later for s in group)


__all__ = ["current_scope", "merge_block"]
