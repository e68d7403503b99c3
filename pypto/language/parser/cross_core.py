"""The cross-core and system names of today's public `pl` (pl-head §3.8) and `pl.split_aiv` (§2.3).

On the device a cluster's cube core (AIC) and its two vector cores (AIV) exchange tiles through
ring buffers (`tpush_*` / `tpop_*`), set up by `*_initialize_pipe` / `reserve_buffer` /
`import_peer_buffer`, and synchronise with cross-core events (`sync_set` / `sync_wait`). The CPU
runs a kernel's code in order on one thread, so (docs/pl_ops.md §3.8):

- ring setup, slot release, events, fences and cache invalidation do nothing (`reserve_buffer` and
  `import_peer_buffer` give address 0); `pl.AUTO` is -1;
- `available_cluster_count()` / `available_aiv_count()` are the a2a3 device's 24 / 48 (the
  launch width a syncall kernel asks for; spmd blocks run on the CPU's workers whatever the width);
- a hand-written `tpush_*` / `tpop_*` is a pipe op (parser/pipes.py, ops/cross_core.py): the AIC and
  AIV functions of a `pl.FunctionType.Group` run at the same time and the pops wait (pypto/ir/groups.py);
- `for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.X):` parses its body once per vector lane
  (aiv_id 0, then 1), in order; `pl.aiv_shard(x)` is this lane's half of x (UP_DOWN: rows,
  LEFT_RIGHT: columns, NONE: all of it) and `pl.aic_gather(v)` re-joins the two lanes' halves
  after lane 1 (NONE: lane 1's value, defined when the lanes agree).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstInt, Expr, Var
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TensorType, TileType
from pypto.ops import lookup_dsl

from ..dsl import DslHelper
from ..errors import InvalidOperationError, ParserSyntaxError, ParserTypeError
from ..placement import SplitMode
from .context import Binding

AUTO = -1
CLUSTERS, AIVS = 24, 48  # the a2a3 (910B) device: 24 clusters of 1 AIC + 2 AIV

# (the consumer buffers' public keywords are c2v_consumer_buf / v2c_consumer_buf; c2v_buf / v2c_buf too)
_PIPE_SETUP = {"c2v_consumer_buf", "v2c_consumer_buf", "c2v_buf", "v2c_buf", "dir_mask", "slot_size", "slot_num",
               "local_slot_num", "id"}
_NOOPS = {  # name -> accepted keywords (positional arguments are accepted as the public signatures say)
    "tfree_to_aic": {"split", "id"}, "tfree_to_aiv": {"split", "id"},
    "aic_initialize_pipe": _PIPE_SETUP, "aiv_initialize_pipe": _PIPE_SETUP,
    "sync_set": {"event_id", "pipe", "ffts_mode", "core_type"}, "sync_wait": {"event_id", "pipe", "core_type"},
    "set_ffts": {"workspace"}, "fence": set(), "cacheinvalid": {"tensor", "shapes", "offsets"},
}
_ADDRESSES = {"reserve_buffer": {"name", "size", "base"}, "import_peer_buffer": {"name", "peer_func"}}
_COUNTS = {"available_cluster_count": CLUSTERS, "available_aiv_count": AIVS}
_PIPES = ("tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv")

HELPERS: dict[str, DslHelper] = {}
for _n in (*_NOOPS, *_ADDRESSES, *_COUNTS, *_PIPES):
    HELPERS[_n] = DslHelper(_n, f"pl.{_n}: a cross-core / system operation (docs/pl_ops.md §3.8)")
split_aiv = DslHelper("split_aiv", "for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.X): the region on both AIV lanes")
aiv_shard = DslHelper("aiv_shard", "pl.aiv_shard(x): this vector lane's half of a cube-produced tile")
aic_gather = DslHelper("aic_gather", "pl.aic_gather(v): the two vector lanes' halves joined for cube code")
HELPERS.update(aiv_shard=aiv_shard, aic_gather=aic_gather)
SYSTEM_NAMES = ("sync_set", "sync_wait", "set_ffts", "fence", "cacheinvalid", "available_cluster_count",
                "available_aiv_count")


@dataclass
class _Lane:
    mode: SplitMode
    lane: int
    extent: int | None = None  # the split axis's extent of the region's last aiv_shard
    gathered: dict = field(default_factory=dict)  # aic_gather call site -> lane 0's value


class CrossCoreParser:
    """Mixin of the function parser: the §3.8 helpers and the split_aiv loop."""

    _split: _Lane | None = None

    def cross_core_call(self, h: DslHelper, node: ast.Call) -> Any:
        sp = self.span(node)
        name = h.name
        if name in _PIPES:
            from .pipes import pipe_call

            return pipe_call(self, name, node)
        if name in ("aiv_shard", "aic_gather"):
            return self._split_value(name, node)
        args, kwargs, _ = self.call_args(node)
        allowed = _NOOPS.get(name) or _ADDRESSES.get(name) or set()
        extra = sorted(set(kwargs) - allowed)
        if extra:
            raise ParserSyntaxError(f"pl.{name} got unexpected keyword(s) {', '.join(extra)}", sp,
                                    hint=f"accepted: {', '.join(sorted(allowed)) or 'none'}")
        if name in ("sync_set", "sync_wait"):
            ev = args[0] if args else kwargs.get("event_id")
            if not isinstance(ev, int) or not 0 <= ev <= 13:
                raise ParserTypeError(f"pl.system.{name}: event_id must be an int in 0..13, got {ev!r}", sp)
        if name in _COUNTS:
            if args or kwargs:
                raise ParserSyntaxError(f"pl.system.{name}() takes no arguments", sp)
            return ConstInt(_COUNTS[name], DataType.INT32, span=sp)
        if name in _ADDRESSES:
            return ConstInt(0, DataType.INT32, span=sp)  # (the ring's address: nothing to place on the CPU)
        return None  # a no-op: nothing is emitted

    # ---- split_aiv ---------------------------------------------------------------------------

    def split_aiv_for(self, node: ast.For) -> None:
        sp = self.span(node)
        it = node.iter
        assert isinstance(it, ast.Call)
        args, kwargs, _ = self.call_args(it)
        mode = kwargs.pop("mode", None)
        if kwargs:
            raise ParserSyntaxError(f"pl.split_aiv got unexpected keyword(s) {', '.join(kwargs)}", self.span(it))
        if len(args) != 1 or args[0] != 2 or isinstance(args[0], bool):
            raise ParserSyntaxError("pl.split_aiv takes the literal 2 (the two vector lanes)", self.span(it))
        if not isinstance(mode, SplitMode):
            raise ParserSyntaxError("pl.split_aiv needs mode=pl.SplitMode.UP_DOWN / LEFT_RIGHT / NONE", self.span(it))
        if node.orelse:
            raise ParserSyntaxError("for ... else is not supported", sp)
        if not isinstance(node.target, ast.Name):
            raise ParserSyntaxError("pl.split_aiv binds one name: `for aiv_id in pl.split_aiv(...)`",
                                    self.span(node.target))
        if self._split is not None:
            raise ParserSyntaxError("pl.split_aiv regions do not nest", sp)
        state = _Lane(mode, 0)
        for lane in (0, 1):  # the body once per lane, in order (the lanes touch disjoint data or agree)
            state.lane = lane
            self._split = state
            self.scopes.push("with", True)
            try:
                self.scopes.define(node.target.id, Binding(ConstInt(lane, DataType.INDEX), self.span(node.target)))
                body = self.parse_block(node.body)
            finally:
                self.scopes.pop()
                self._split = None
            for s in body:
                self.emit(s)

    def _split_value(self, name: str, node: ast.Call) -> Expr:
        sp = self.span(node)
        state = self._split
        if state is None:
            raise InvalidOperationError(f"pl.{name} is only meaningful inside `for aiv_id in pl.split_aiv(...)`", sp)
        args, kwargs, _ = self.call_args(node)
        if len(args) != 1 or kwargs:
            raise ParserSyntaxError(f"pl.{name} takes one tile", sp)
        x = args[0]
        if not isinstance(x, Expr) or not isinstance(x.type, (TileType, TensorType)) or x.type.rank != 2:
            raise ParserTypeError(f"pl.{name} takes a 2-D tile or tensor, got {self.describe(x)}", sp)
        tensor = isinstance(x.type, TensorType)
        ns = "pl.tensor" if tensor else "pl.block"
        rows, cols = x.type.shape
        up = state.mode is SplitMode.UP_DOWN
        if name == "aiv_shard":
            if state.mode is SplitMode.NONE:
                return x
            n = rows if up else cols
            if not isinstance(n, ConstInt) or (n.value % 2 and not tensor):
                raise ParserTypeError(f"pl.aiv_shard: the split dim ({'rows' if up else 'columns'}) must be a static "
                                      f"{'' if tensor else 'even '}number, got {n!r}", sp)
            # an odd extent (tensors): lane 0 holds the ceil half, lane 1 the floor half (pto-isa's _ODD
            # split codes); both lanes' windows are the ceil half, lane 1's valid part one shorter
            half = (n.value + 1) // 2
            mine = half if state.lane == 0 else n.value - half
            state.extent = n.value
            shape = [half, cols] if up else [rows, half]
            off = [state.lane * half, 0] if up else [0, state.lane * half]
            call = [x, shape, off]
            if mine != half:
                call.append([mine, cols] if up else [rows, mine])
            return self.call_entry(f"{ns}.slice", lookup_dsl(ns, "slice"), call, {}, sp, None)
        # aic_gather
        if state.mode is SplitMode.NONE:
            return x
        key = (sp.begin_line, sp.begin_col)
        if state.lane == 0:
            # lane 1 joins the halves and its binding is the value after the region; lane 0's binding
            # only needs the joined type (a value nothing reads, removed as dead code)
            # (a value of its own: the parser rebinds lane 0's names in lane 1)
            keep = Var(f"aic_gather_lane0_{sp.begin_line}_{sp.begin_col}", x.type, span=sp)
            self.emit(AssignStmt(keep, x, span=sp))
            state.gathered[key] = first = keep
        else:
            first = state.gathered.pop(key)
        second = x
        ext = getattr(state, "extent", None)
        n = rows if up else cols
        if tensor and ext is not None and ext % 2 and isinstance(n, ConstInt) and n.value == (ext + 1) // 2:
            # the odd split of this region: lane 1's part is one shorter than its window
            m = ext - n.value
            second = self.call_entry(f"{ns}.slice", lookup_dsl(ns, "slice"),
                                     [x, [m, cols] if up else [rows, m], [0, 0]], {}, sp, None)
        cat = lookup_dsl(ns, "concat")
        if state.mode is SplitMode.LEFT_RIGHT:
            return self.call_entry(f"{ns}.concat", cat, [first, second], {}, sp, None)
        if tensor:  # rows joined: concat of the transposes, transposed back
            tr = lookup_dsl(ns, "transpose")
            t_kw = {"axis1": 0, "axis2": 1}
            a = self.call_entry(f"{ns}.transpose", tr, [first], t_kw, sp, None)
            b = self.call_entry(f"{ns}.transpose", tr, [second], t_kw, sp, None)
            return self.call_entry(f"{ns}.transpose", tr, [self.call_entry(f"{ns}.concat", cat, [a, b], {}, sp, None)],
                                   t_kw, sp, None)
        tv = lookup_dsl("pl.block", "transpose_view")
        a = self.call_entry("pl.tile.transpose_view", tv, [first], {}, sp, None)
        b = self.call_entry("pl.tile.transpose_view", tv, [second], {}, sp, None)
        return self.call_entry("pl.tile.transpose_view", tv,
                               [self.call_entry("pl.tile.concat", cat, [a, b], {}, sp, None)], {}, sp, None)


__all__ = ["AUTO", "HELPERS", "SYSTEM_NAMES", "CrossCoreParser", "aic_gather", "aiv_shard", "split_aiv"]
