"""Running one kernel: arguments, arenas, tensor views, loads/stores, sync ops and the hazard checker.

`run_kernel(module, args)` binds the kernel's parameters (NumPy arrays for `!pto.ptr`, numbers for
scalars), derives the trailing runtime arguments from the arrays (`pto.runtime_args`: extents and
strides in elements), poisons fresh arenas, and executes the body. Tensor data is read and written
in place, through views, so strided arguments and slices of a parent tensor behave as in DDR.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field

import numpy as np

from pypto.ir.enums import MemorySpace
from pypto.ops import ops_by_pto
from pypto.ops.gather_memory import OOB_MODES, oob_index
from pypto.ops.gather_paged import paged_gather_ref
from pypto.pto.model import (
    EnumAttr,
    Func,
    Module,
    Op,
    PartitionViewT,
    PtrT,
    ScalarT,
    TensorViewT,
    TileBufT,
    operand_groups,
    walk,
)

from .engine import Executor, FuncInfo, Signal
from .errors import InterpError
from .hazards import Access, HazardChecker, Instr, Ranges
from .pipes import transfer
from .tasks import block_idx, block_num, pipes, syncall
from .tile_ops import execute, opdef, scratch_indices, tile_index
from .values import Arenas, Tile, Window, make_scalar, np_dtype, strided_view, tile_nbytes, window

_SPACES = {"vec": MemorySpace.Vec, "mat": MemorySpace.Mat, "left": MemorySpace.Left,
           "right": MemorySpace.Right, "acc": MemorySpace.Acc, "bias": MemorySpace.Bias}


@dataclass
class KernelStats:
    """What one kernel run did: instructions seen by the hazard checker, flags left set."""

    instructions: int = 0
    pending_flags: list[str] = field(default_factory=list)


class KernelPlan:
    """Per-function facts computed once: op indices, constants, arena sizes, float tile ranges."""

    def __init__(self, func: Func, target=None):
        self.info = FuncInfo(func)
        self.sizes: dict[str, int] = {loc: 0 for loc in _SPACES}
        self.float_ranges: list[tuple[str, int, int]] = []
        for op in _walk_allocs(func):
            buf = op.results[0].type if len(op.results) == 1 else None
            if not isinstance(buf, TileBufT) or not op.operands or buf.dtype in ("i4", "ui4", "f4"):
                continue
            addr = self.info.consts.get(id(op.operands[0]))
            if not isinstance(addr, int) or buf.loc not in self.sizes:
                continue
            hi = addr + tile_nbytes(buf)
            self.sizes[buf.loc] = max(self.sizes[buf.loc], hi)
            if buf.dtype.startswith(("f", "bf")):
                self.float_ranges.append((buf.loc, addr, hi))
        if target is not None:
            for loc, space in _SPACES.items():
                if not target.has_space(space):
                    continue
                cap = target.capacity(space)
                if self.sizes[loc] > cap:
                    raise InterpError(f"kernel @{func.name} uses {self.sizes[loc]:#x} bytes of {loc}, more than "
                                      f"the {cap:#x} target {target.name} has")
                self.sizes[loc] = cap


def _walk_allocs(func: Func):
    return (op for op in walk(func.body) if op.name == "pto.alloc_tile")


_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def plan_for(func: Func, target=None) -> KernelPlan:
    if target is not None:
        return KernelPlan(func, target)
    plan = _PLANS.get(func)
    if plan is None:
        plan = _PLANS[func] = KernelPlan(func)
    return plan


def _pipe_attr(op: Op, key: str) -> str:
    a = op.attrs.get(key)
    text = a.value.split()[-1] if isinstance(a, EnumAttr) else (a if isinstance(a, str) else None)
    if text is None:
        raise InterpError(f"{op.name} needs a `{key}` attribute like #pto<pipe PIPE_V>")
    return text[5:] if text.startswith("PIPE_") else text


class KernelExecutor(Executor):
    def __init__(self, func: Func, plan: KernelPlan, arenas: Arenas, checker: HazardChecker | None):
        super().__init__(func, plan.info)
        self.arenas = arenas
        self.checker = checker
        h = self.handlers
        h.update({"pto.make_tensor_view": self.op_tensor_view, "pto.partition_view": self.op_partition,
                  "pto.alloc_tile": self.op_alloc, "pto.set_flag": self.op_flag, "pto.wait_flag": self.op_flag,
                  "pto.pipe_barrier": self.op_barrier, "pto.get_block_idx": self.op_block_idx,
                  "pto.get_block_num": self.op_block_idx, "pto.syncall": self.op_syncall,
                  "pto.tgetval": self.op_getval, "pto.tload": self.op_load, "pto.tstore": self.op_store,
                  "pto.tpush": self.op_pipe, "pto.tpop": self.op_pipe})
        for short in _dps_names():
            h.setdefault(f"pto.{short}", self.op_dps)
        h.update({"pto.tmgather": self.op_mgather, "pto.tmscatter": self.op_mscatter,
                  "pto.tpagedgather": self.op_paged_gather})

    # ---- views and tiles -------------------------------------------------------------------

    def op_tensor_view(self, op: Op) -> None:
        t = op.results[0].type if len(op.results) == 1 else None
        if not isinstance(t, TensorViewT):
            raise InterpError("pto.make_tensor_view needs one !pto.tensor_view result")
        if len(op.operands) != 1 + 2 * t.rank:
            raise InterpError(f"a rank-{t.rank} tensor view takes a pointer, {t.rank} extents and {t.rank} strides")
        ptr = self.get(op.operands[0])
        if not isinstance(ptr, np.ndarray):
            raise InterpError(f"%{op.operands[0].name} is not a tensor argument")
        dims = [int(x) for x in self.vals(op.operands[1:])]
        if ptr.ndim == t.rank:  # the valid part of a larger window is passed smaller: bounds are the array's
            dims[: t.rank] = [min(d, e) for d, e in zip(dims[: t.rank], ptr.shape)]
        view = strided_view(ptr, tuple(dims[: t.rank]), tuple(dims[t.rank:]), "pto.make_tensor_view")
        self.env[op.results[0]] = Window(view, op.operands[0].name)

    def op_partition(self, op: Op) -> None:
        t = op.results[0].type if len(op.results) == 1 else None
        if not isinstance(t, PartitionViewT):
            raise InterpError("pto.partition_view needs one !pto.partition_tensor_view result")
        g = operand_groups(op)
        src = self.get(g["source"][0])
        if not isinstance(src, Window):
            raise InterpError(f"%{g['source'][0].name} is not a tensor view")
        offs = [int(x) for x in self.vals(g["offsets"])]
        sizes = [int(x) for x in self.vals(g["sizes"])]
        if len(sizes) != len(t.shape):
            raise InterpError(f"a partition of rank {len(t.shape)} got {len(sizes)} sizes")
        for ax, (s, st) in enumerate(zip(sizes, t.shape)):
            if st is not None and s != st:
                raise InterpError(f"size {s} of axis {ax} contradicts the partition type's static extent {st}")
        sub = window(src.arr, offs, sizes, "pto.partition_view")
        self.env[op.results[0]] = Window(sub, src.name, tuple(offs))

    def op_alloc(self, op: Op) -> None:
        g = operand_groups(op)
        buf = op.results[0].type
        if not g["addr"]:
            raise InterpError(f"tile %{op.results[0].name} has no address (memory planning did not run)")
        addr = int(self.get(g["addr"][0]))
        vr = int(self.get(g["valid_row"][0])) if g["valid_row"] else buf.v_row
        vc = int(self.get(g["valid_col"][0])) if g["valid_col"] else buf.v_col
        self.env[op.results[0]] = self.arenas.tile(op.results[0], buf, addr, vr, vc)

    # ---- sync --------------------------------------------------------------------------------

    def instr(self, op: Op, pipe: str) -> Instr:
        return Instr(op, self.info.index.get(id(op), -1), tuple(self.loops), pipe)

    def op_flag(self, op: Op) -> None:
        src, dst = _pipe_attr(op, "set_pipe"), _pipe_attr(op, "wait_pipe")
        ev = op.attrs.get("event_id", 0)
        if not isinstance(ev, int):
            raise InterpError(f"{op.name}: event_id must be an integer")
        if self.checker is None:
            return
        if op.name == "pto.set_flag":
            self.checker.set_flag(src, dst, ev, self.instr(op, src))
        else:
            self.checker.wait_flag(src, dst, ev, self.instr(op, dst))

    def op_barrier(self, op: Op) -> None:
        pipe = _pipe_attr(op, "pipe")
        if self.checker is not None:
            self.checker.barrier(pipe)

    def op_syncall(self, op: Op) -> None:
        # every pipe drains before the blocks meet (the compiler orders across it like PIPE_ALL)
        if self.checker is not None:
            self.checker.barrier("ALL")
        syncall()

    def op_pipe(self, op: Op) -> None:
        """pto.tpush / pto.tpop: a cross-core pipe of the Group's grid (pipes.py)."""
        push = op.name == "pto.tpush"
        vals = op.ins if push else op.outs
        t = self.get(vals[0]) if len(vals) == 1 else None
        if not isinstance(t, Tile):
            raise InterpError(f"{op.name} takes one tile ({'ins' if push else 'outs'})")
        d = op.attrs.get("dir")
        if d not in ("c2v", "v2c"):
            raise InterpError(f"{op.name}: dir must be \"c2v\" or \"v2c\", got {d!r}")
        name = ("tpush_to_aiv" if d == "c2v" else "tpush_to_aic") if push else \
            ("tpop_from_aic" if d == "c2v" else "tpop_from_aiv")
        if push:  # (the ring is in GM: a push drains like a store, FIX from Acc)
            self.issue(op, "FIX" if t.loc == "acc" else "MTE3", [_tile_acc(t)], [])
        else:
            self.issue(op, "MTE2", [], [_tile_acc(t)])
        transfer(pipes(), block_idx(), block_num(), f"pl.{name}", d, int(op.attrs.get("id", 0)),
                 int(op.attrs.get("split", 0)), t, push)

    def op_block_idx(self, op: Op) -> None:
        t = op.results[0].type if len(op.results) == 1 else None
        v = block_num() if op.name == "pto.get_block_num" else block_idx()
        self.env[op.results[0]] = make_scalar(v, t.name if isinstance(t, ScalarT) else "ui64")

    def issue(self, op: Op, pipe: str, reads: list[tuple[str, Ranges, str]],
              writes: list[tuple[str, Ranges, str]]) -> None:
        if self.checker is None:
            return
        acc = [Access(s, r, False, lab) for s, r, lab in reads] + [Access(s, r, True, lab) for s, r, lab in writes]
        self.checker.issue(pipe, self.instr(op, pipe), acc)

    # ---- instructions ------------------------------------------------------------------------

    def op_getval(self, op: Op) -> None:
        g = operand_groups(op)
        t = self.get(g["source"][0])
        if not isinstance(t, Tile) or len(g["indices"]) != 2:
            raise InterpError("pto.tgetval takes a tile, a row and a column")
        r, c = tile_index(t, *self.vals(g["indices"]), "pto.tgetval")
        self.issue(op, "S", [_tile_acc(t)], [])
        rt = op.results[0].type
        self.env[op.results[0]] = make_scalar(t.arr[r, c].item(), rt.name) if isinstance(rt, ScalarT) \
            else t.arr[r, c]

    def op_load(self, op: Op) -> None:
        w, t = self._one_each(op, Window, Tile)
        _same_dtype(op, w.arr.dtype, t)
        rows, cols = w.as_2d()
        tr = bool(op.attrs.get("transpose", False))
        tr_rows, tr_cols = (cols, rows) if tr else (rows, cols)
        if tr_rows > t.rows or tr_cols > t.cols:
            raise InterpError(f"pto.tload: a [{rows}, {cols}] window{' (transposed)' if tr else ''} does not fit "
                              f"tile %{t.value.name} [{t.rows}, {t.cols}]")
        self.issue(op, "MTE2", [_ddr_acc(w)], [_tile_acc(t)])
        data = w.arr.reshape(rows, cols)
        t.arr[:tr_rows, :tr_cols] = data.T if tr else data

    def op_store(self, op: Op) -> None:
        t, w = self._one_each(op, Tile, Window)
        _same_dtype(op, w.arr.dtype, t)
        rows, cols = w.as_2d()
        if rows <= t.vr and cols <= t.vc:
            data = t.arr[:rows, :cols]
        elif rows * cols == t.vr * t.vc == t.rows * t.cols:  # another shape of a fully valid tile
            data = t.arr.reshape(rows, cols)
        else:
            raise InterpError(f"pto.tstore: the window [{rows}, {cols}] is larger than the valid region "
                              f"[{t.vr}, {t.vc}] of tile %{t.value.name}")
        self.issue(op, "FIX" if t.loc == "acc" else "MTE3", [_tile_acc(t)], [_ddr_acc(w)])
        w.arr[...] = data.reshape(w.arr.shape)

    def op_mgather(self, op: Op) -> None:
        """Rows or flat elements of the whole tensor by index (pypto/ops/gather_memory.py)."""
        if len(op.ins) != 2 or len(op.outs) != 1:
            raise InterpError("pto.tmgather takes a window and an index tile, and writes one tile")
        (w, idx), dst = self.vals(op.ins), self.get(op.outs[0])
        if not (isinstance(w, Window) and isinstance(idx, Tile) and isinstance(dst, Tile)):
            raise InterpError("pto.tmgather takes a window and an index tile, and writes one tile")
        _same_dtype(op, w.arr.dtype, dst)
        self.issue(op, "MTE2", [_ddr_acc(w), _tile_acc(idx)], [_tile_acc(dst)])
        oob = OOB_MODES[int(op.attrs.get("oob", 0))]
        if int(op.attrs.get("coalesce", 0)) == 0:
            ix = idx.arr[0, : dst.vr] if idx.rows == 1 else idx.arr[: dst.vr, 0]
            table = w.arr.reshape(w.arr.shape[0], -1)
            pos, ok = oob_index(ix, table.shape[0], oob)
            dst.arr[: dst.vr, : dst.vc] = np.where(ok[:, None], table[pos][:, : dst.vc], 0)
        else:
            table = w.arr.reshape(-1)
            pos, ok = oob_index(idx.arr[: dst.vr, : dst.vc], table.size, oob)
            dst.arr[: dst.vr, : dst.vc] = np.where(ok, table[pos], 0)

    def op_paged_gather(self, op: Op) -> None:
        """Pool rows through a block table (pypto/ops/gather_paged.py): the registry's reference."""
        if len(op.ins) != 3 or len(op.outs) != 1:
            raise InterpError("pto.tpagedgather takes a pool window, an index tile and a table window")
        (pool, idx, table), dst = self.vals(op.ins), self.get(op.outs[0])
        if not (isinstance(pool, Window) and isinstance(idx, Tile) and isinstance(table, Window)
                and isinstance(dst, Tile)):
            raise InterpError("pto.tpagedgather takes a pool window, an index tile and a table window")
        _same_dtype(op, pool.arr.dtype, dst)
        self.issue(op, "MTE2", [_ddr_acc(pool), _tile_acc(idx), _ddr_acc(table)], [_tile_acc(dst)])
        trans = bool(int(op.attrs.get("trans", 0)))
        n, size = (dst.vc, dst.vr) if trans else (dst.vr, dst.vc)
        got = paged_gather_ref(pool.arr.reshape(pool.arr.shape[0], -1), idx.arr[0, : min(idx.vc, n)], table.arr,
                               block_size=int(op.attrs["block_size"]), size=size, max_indices=n,
                               col_off=int(op.attrs.get("col_off", 0)), is_trans=trans)
        dst.arr[: dst.vr, : dst.vc] = got

    def op_mscatter(self, op: Op) -> None:
        if len(op.ins) != 2 or len(op.outs) != 1:
            raise InterpError("pto.tmscatter takes a tile and an index tile, and writes one window")
        (src, idx), w = self.vals(op.ins), self.get(op.outs[0])
        if not (isinstance(w, Window) and isinstance(idx, Tile) and isinstance(src, Tile)):
            raise InterpError("pto.tmscatter takes a tile and an index tile, and writes one window")
        _same_dtype(op, w.arr.dtype, src)
        self.issue(op, "MTE3", [_tile_acc(src), _tile_acc(idx)], [_ddr_acc(w)])
        u = idx.arr[: src.vr, : src.vc].astype(np.int64) & 0xFFFFFFFF
        ok = u < w.arr.size
        # through the N-d view (a strided one would not reshape in place); the last duplicate wins
        w.arr[np.unravel_index(u[ok], w.arr.shape)] = src.arr[: src.vr, : src.vc][ok]

    def op_dps(self, op: Op) -> None:
        short = op.name[4:]
        ins = self.vals(op.ins)
        outs = self.vals(op.outs)
        if len(outs) != 1 or not isinstance(outs[0], Tile):
            raise InterpError(f"{op.name} writes one tile (outs), got {len(outs)} operand(s)")
        dst = outs[0]
        if self.checker is not None:
            scratch = scratch_indices(short, len(ins))
            reads = [_tile_acc(v) for k, v in enumerate(ins) if isinstance(v, Tile) and k not in scratch]
            writes = [_tile_acc(dst)] + [_tile_acc(ins[k]) for k in scratch if isinstance(ins[k], Tile)]
            self.issue(op, _pipe_of(short, ins, dst), reads, writes)
        execute(op, short, ins, dst)

    def _one_each(self, op: Op, a_cls, b_cls):
        if len(op.ins) != 1 or len(op.outs) != 1:
            raise InterpError(f"{op.name} takes one ins and one outs operand")
        a, b = self.get(op.ins[0]), self.get(op.outs[0])
        if not isinstance(a, a_cls) or not isinstance(b, b_cls):
            what = {Window: "a partition view", Tile: "a tile"}
            raise InterpError(f"{op.name} takes {what[a_cls]} (ins) and {what[b_cls]} (outs)")
        return a, b


@functools.lru_cache(maxsize=1)
def _dps_names() -> tuple[str, ...]:
    """Every destination-passing instruction of the registry (tload / tstore / tgetval have handlers)."""
    return tuple(k for k in ops_by_pto() if k.startswith("t"))


def _pipe_of(short: str, ins: list, dst: Tile) -> str:
    if short == "tmov":
        src = ins[0] if ins and isinstance(ins[0], Tile) else None
        if src is not None and src.loc == "acc":
            return "FIX"
        if src is not None and src.loc == "vec" and dst.loc == "vec":
            return "V"
        return "MTE1"
    od = opdef(short)
    if od is None or od.pipe is None:
        raise InterpError(f"unknown instruction pto.{short}")
    return od.pipe.name


def _tile_acc(t: Tile) -> tuple[str, Ranges, str]:
    return t.loc, Ranges.one(t.addr, t.addr + t.nbytes), t.label()


def _ddr_acc(w: Window) -> tuple[str, Ranges, str]:
    return "ddr", Ranges.of_array(w.arr), w.label()


def _same_dtype(op: Op, dt: np.dtype, t: Tile) -> None:
    if dt != t.arr.dtype:
        raise InterpError(f"{op.name}: the tensor holds {dt}, tile %{t.value.name} "
                          f"holds {t.buf.dtype}", hint="convert with pto.tcvt on a tile instead")


# ---------------------------------------------------------------------------------------------
# entry point


def kernel_func(module: Module, name: str | None = None) -> Func:
    if name is not None:
        f = module.get(name)
        if f is None:
            raise InterpError(f"the module has no function @{name}")
        return f
    for f in module.funcs:
        if f.kind == "kernel":
            return f
    raise InterpError("the module holds no kernel function")


def bind_args(func: Func, args: list) -> list:
    """The values of all of `func`'s arguments: the given ones, then the runtime index arguments."""
    rt = func.attrs.get("pto.runtime_args", []) or []
    n_params = len(func.args) - len(rt)
    if len(args) not in (n_params, len(func.args)):
        raise InterpError(f"kernel @{func.name} takes {n_params} argument(s), got {len(args)}")
    vals = []
    for p, a in zip(func.args, args):
        if isinstance(p.type, PtrT):
            if not isinstance(a, np.ndarray):
                raise InterpError(f"kernel @{func.name}: argument %{p.name} must be a NumPy array, got "
                                  f"{type(a).__name__}")
            want = np_dtype(p.type.elem)
            if a.dtype != want:
                raise InterpError(f"kernel @{func.name}: argument %{p.name} must hold {p.type.elem} ({want}), "
                                  f"got {a.dtype}")
            vals.append(a)
        elif isinstance(p.type, ScalarT):
            if isinstance(a, np.ndarray) and a.ndim > 0:
                raise InterpError(f"kernel @{func.name}: argument %{p.name} is a scalar, got an array")
            vals.append(make_scalar(a.item() if isinstance(a, (np.ndarray, np.generic)) else a, p.type.name))
        else:
            raise InterpError(f"kernel @{func.name}: argument %{p.name} has a type a kernel cannot take")
    if len(args) == len(func.args):
        return vals
    by_name = {p.name: k for k, p in enumerate(func.args[:n_params])}
    for src in rt:
        parts = str(src).split(".")
        k = by_name.get(parts[0])
        if len(parts) != 3 or k is None or parts[1] not in ("dim", "stride") or not parts[2].isdigit():
            raise InterpError(f"kernel @{func.name}: bad runtime argument source {src!r}")
        arr, ax = vals[k], int(parts[2])
        if not isinstance(arr, np.ndarray) or ax >= arr.ndim:
            raise InterpError(f"kernel @{func.name}: runtime argument {src!r} names no axis of a tensor")
        if parts[1] == "dim":
            vals.append(np.int64(arr.shape[ax]))
        else:
            s = arr.strides[ax]
            if s % arr.itemsize:
                raise InterpError(f"kernel @{func.name}: stride {s} bytes of %{parts[0]} is not whole elements")
            vals.append(np.int64(s // arr.itemsize))
    return vals


def run_kernel(module: Module, args: list, *, check_hazards: bool = True, target=None,
               name: str | None = None) -> KernelStats:
    """Execute one kernel on NumPy arguments (written in place); see the package docstring.

    `args` are the kernel's parameters in order (the trailing runtime index arguments may be given
    too, otherwise they are derived from the arrays). `target` (a `pypto.backend.Target`) sizes the
    arenas to its capacities; by default each arena is as large as the tiles the kernel allocates.
    """
    func = kernel_func(module, name)
    plan = plan_for(func, target)
    values = bind_args(func, list(args))
    checker = HazardChecker(func.name) if check_hazards else None
    ex = KernelExecutor(func, plan, Arenas(plan.sizes, plan.float_ranges), checker)
    ex.bind(func.args, values)
    sig: Signal | None = ex.run_block(func.body)
    if sig is not None and sig.kind != "return":
        raise InterpError(f"kernel @{func.name}: stray {sig.kind} at the top level")
    if checker is None:
        return KernelStats()
    return KernelStats(checker.instructions, checker.pending_flags())


__all__ = ["KernelExecutor", "KernelStats", "bind_args", "kernel_func", "run_kernel"]
