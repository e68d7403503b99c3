"""`pto.submit` with task-language options -> `api->submit_ex` (pto_runtime.h, pto_submit_opts).

A submit with any of the task operands (`dep`, `core_num`, `pred`, `pred_idx`) or attributes
(`manual`, `sync`, `untracked`) passes the kernel's arguments followed by three block arguments
(block index, block count, barrier; the runtime fills them per block), and the options. Kernels
read their block index from there (`get_block_idx`; 0 when absent).
"""

from __future__ import annotations

from pypto.pto.model import Op, TensorT
from pypto.pto.syntax import JOIN_KERNEL, TASK_DIRS

from .emit_common import AssemblyError, is_float, is_unsigned

PRED_CMP = {"eq": "PTO_PRED_EQ", "ne": "PTO_PRED_NE", "gt": "PTO_PRED_GT", "lt": "PTO_PRED_LT",
            "ge": "PTO_PRED_GE", "le": "PTO_PRED_LE"}
TASK_ATTRS = ("manual", "sync", "untracked")


def is_task_submit(op: Op) -> bool:
    return bool(op.results) or any(d in TASK_DIRS for d in op.attrs.get("dirs", [])) or \
        any(k in op.attrs for k in TASK_ATTRS)


def emit_task_submit(em, op: Op, kid: int, items: list[str]) -> None:
    """`items`: the kernel arguments as `pto_arg` expressions (already checked)."""
    dirs = op.attrs.get("dirs", [])
    callee = op.attrs["callee"].name
    deps = [em.name(v) for v, d in zip(op.operands, dirs) if d == "dep"]
    core = [v for v, d in zip(op.operands, dirs) if d == "core_num"]
    pred = [v for v, d in zip(op.operands, dirs) if d in ("pred", "pred_idx")]
    join = callee == JOIN_KERNEL
    tid = em.name(op.results[0]) if op.results else None
    if tid:
        em.line(f"int64_t {tid};")
    em.line("{ pto_submit_opts o = {};")
    flags = (["PTO_TASK_MANUAL"] if op.attrs.get("manual") else []) + (["PTO_TASK_SYNC"] if op.attrs.get("sync") else [])
    em.line(f"  o.flags = {' | '.join(flags) or '0'};")
    if deps:
        em.line(f"  const int64_t deps[] = {{{', '.join(f'int64_t({d})' for d in deps)}}};")
        em.line(f"  o.deps = deps; o.ndeps = {len(deps)};")
    n = 0 if join else len(items)
    if not join:
        items = items + ["pto_arg_i64(0)", "pto_arg_i64(1)", "pto_arg_i64(0)"]
        em.line(f"  o.block_arg = {n};")
        unt = op.attrs.get("untracked") or []
        if unt:
            flags_arr = ["1" if k in unt else "0" for k in range(n + 3)]
            em.line(f"  static const uint8_t untracked[] = {{{', '.join(flags_arr)}}};")
            em.line("  o.untracked = untracked;")
    else:
        em.line("  o.block_arg = -1;")
    if core:
        c = em.name(core[0])
        em.line(f"  if (int64_t({c}) < 1) return glue::fail(api, rt, \"%s: spmd core_num must be > 0, got %lld\", "
                f"\"{callee}\", (long long)({c}));")
        em.line(f"  o.nblocks = int32_t({c});")
    else:
        em.line("  o.nblocks = 1;")
    if pred:
        t, idx = pred[0], pred[1:]
        tt = t.type
        if not isinstance(tt, TensorT):
            raise AssemblyError(f"{em.where(op)}: the predicate must read a tensor element")
        kind = "PTO_PRED_FLOAT" if is_float(tt.elem) else "PTO_PRED_UINT" if is_unsigned(tt.elem) else "PTO_PRED_SINT"
        cmp = PRED_CMP.get(op.attrs.get("pred_cmp", ""))
        if cmp is None:
            raise AssemblyError(f"{em.where(op)}: predicate comparison {op.attrs.get('pred_cmp')!r}")
        em.line(f"  {{ {em._element(t, idx)} o.pred = e; }}")
        em.line(f"  o.pred_cmp = {cmp}; o.pred_type = {kind}; o.pred_value = {float(op.attrs.get('pred_value', 0))!r};")
    arr = f"const pto_arg a[] = {{{', '.join(items)}}};" if items else "const pto_arg* a = nullptr;"
    em.line(f"  {arr}")
    call = f"api->submit_ex(rt, {-1 if join else kid}, a, {len(items)}, &o)"
    if tid:
        em.line(f"  {tid} = {call}; if ({tid} < 0) return 1; }}  // {callee}")
    else:
        em.line(f"  if ({call} < 0) return 1; }}  // {callee}")


__all__ = ["emit_task_submit", "is_task_submit"]
