"""System operators: pipe synchronization (flags and barriers), and the barrier across the blocks of an spmd grid."""

from __future__ import annotations

from pypto.ir.enums import PipeType

from .memory import UNIT
from .registry import arg, attr, define
from .traits import ELEMENT, SYNC


def _unit(args, kw):
    return UNIT


def _sync_rule(name: str):
    def infer(args, kw):
        from .typing import OpError

        if not 0 <= kw["event_id"] < 16:
            raise OpError(f"{name}: event_id must be in [0, 16), got {kw['event_id']}")
        return UNIT
    return infer


_SYNC = [attr("set_pipe", "pipe"), attr("wait_pipe", "pipe"), attr("event_id", "int", 0)]
define("system.sync_src", _SYNC, _sync_rule("system.sync_src"), traits=SYNC, pto="set_flag",
       doc="producer side: set_pipe signals event_id to wait_pipe")
define("system.sync_dst", _SYNC, _sync_rule("system.sync_dst"), traits=SYNC, pto="wait_flag",
       doc="consumer side: wait_pipe waits for event_id from set_pipe")
define("system.bar_v", [], _unit, traits=SYNC, pto="pipe_barrier", pipe=PipeType.V, doc="barrier within the vector pipe")
define("system.bar_m", [], _unit, traits=SYNC, pto="pipe_barrier", pipe=PipeType.M, doc="barrier within the matrix pipe")
define("system.bar_all", [], _unit, traits=SYNC, pto="pipe_barrier", pipe=PipeType.ALL, doc="barrier across all pipes")


def _syncall_rule(args, kw):
    from .typing import OpError

    if kw["core_type"] not in ("mix", "aiv", "aic", "vector", "cube"):
        raise OpError(f"system.syncall: core_type must be 'mix', 'aiv' or 'aic', got {kw['core_type']!r}")
    if kw["mode"] not in ("hard", "soft"):
        raise OpError(f"system.syncall: mode must be 'hard' or 'soft', got {kw['mode']!r}")
    return UNIT


# every block of the spmd grid waits until all arrived (the CPU runs such a grid's blocks at once);
# gm_workspace / used_cores (a soft barrier's polling area) are accepted and not needed here. Not a
# pipe-sync op (InsertSync still synchronizes the kernel); backends drain every pipe before it.
define("system.syncall", [arg("gm_workspace", "tensor", None, optional=True),
                          arg("used_cores", "scalar", None, optional=True),
                          attr("core_type", "str", "mix"), attr("mode", "str", "hard")],
       _syncall_rule, traits=ELEMENT, pipe=PipeType.S, reference=lambda *a, **k: None,
       doc="barrier across all blocks of the spmd grid (arrival only)")
