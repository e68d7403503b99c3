"""A PTO kernel function -> a C++ function over the tile-instruction library (`pto/pto.hpp`).

Tiles live in the worker's scratch arena: each memory space has a base offset in the arena (the
program lays the spaces out once, `SpaceLayout`), and a tile sits at `base[space] + addr`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pypto.pto.model import EnumAttr, Func, Op, PartitionViewT, PtrT, ScalarT, TensorViewT, TileBufT, Value

from .emit_common import AssemblyError, FuncEmitter, cpp_type, elem_bytes
from .fusion import Fuser, fusable
from .lowering import cpp_name, lowering

LOCS = ("vec", "mat", "left", "right", "acc", "bias")
_LOC_CPP = {"vec": "Vec", "mat": "Mat", "left": "Left", "right": "Right", "acc": "Acc", "bias": "Bias"}
_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_PAD = {"zero": "Zero", "max": "Max", "min": "Min", "null": "Null"}


@dataclass
class SpaceLayout:
    """Byte offset of each memory space inside a worker's scratch arena."""

    base: dict[str, int]
    total: int

    @staticmethod
    def of(funcs: list[Func]) -> SpaceLayout:
        need = {loc: 0 for loc in LOCS}
        for f in funcs:
            consts: dict[int, int] = {}
            for op in _walk(f):
                if op.name == "arith.constant":
                    consts[id(op.result)] = op.attrs["value"]
                elif op.name == "pto.alloc_tile":
                    t = op.result.type
                    assert isinstance(t, TileBufT)
                    addr = consts.get(id(op.operands[0]))
                    if addr is None:
                        raise AssemblyError(f"function {f.name}: alloc_tile address must be a constant")
                    need[t.loc] = max(need[t.loc], addr + tile_bytes(t, f"function {f.name}"))
        base, off = {}, 0
        for loc in LOCS:
            base[loc] = off
            off += (need[loc] + 63) // 64 * 64
        return SpaceLayout(base, max(off, 64))


def _walk(f: Func):
    from pypto.pto.model import walk

    return walk(f.body)


def tile_bytes(t: TileBufT, where: str = "") -> int:
    return t.rows * t.cols * elem_bytes(t.dtype, where)


def tile_cpp_type(t: TileBufT) -> str:
    return f"pto::Tile<{cpp_type(t.dtype)}, {t.rows}, {t.cols}, pto::Loc::{_LOC_CPP[t.loc]}>"


def instr_name(op_name: str) -> str:
    return cpp_name(op_name.split(".", 1)[1])


class KernelEmitter(FuncEmitter):
    def __init__(self, func: Func, layout: SpaceLayout, cpp_name: str, fuse: bool = True):
        super().__init__(func)
        self.layout = layout
        self.cpp_name = cpp_name
        self.views: dict[int, tuple[str, list[str], list[str], str]] = {}
        self.valid_names: dict[int, tuple[str, str]] = {}
        self.params: dict[int, tuple[int, str]] = {}  # pointer parameter -> (argument index, name)
        self.view_ext: dict[int, tuple[list[str], str]] = {}  # tensor view -> (run-time extents, name)
        self.windows: dict[int, tuple[list[str], list[str], list[str], str]] = {}  # partition -> ext, offs, sizes
        self.checked: set[int] = set()  # loads/stores whose bounds check is emitted
        self.fuser = Fuser(self) if fuse else None

    def run_ops(self, ops: list[Op]) -> None:
        i = 0
        while i < len(ops):
            op = ops[i]
            if self.fuser is not None and op.name.startswith("pto.t") and fusable(op):
                group, i = self.fuser.collect(ops, i)
                self.fuser.emit(group)
            else:
                self.op(op)
                i += 1

    def emit(self) -> str:
        f = self.func
        dirs = f.attrs.get("pto.param_dirs", [])
        rt_args = f.attrs.get("pto.runtime_args", [])
        nparams = len(f.args) - len(rt_args)
        if len(dirs) != nparams:
            raise AssemblyError(f"kernel {f.name}: pto.param_dirs names {len(dirs)} parameters, the signature has "
                                f"{nparams}")
        self.line(f"// kernel {f.name}")
        by_name: dict[str, int] = {}
        for i, a in enumerate(f.args[:nparams]):
            by_name[a.name] = i
            t = a.type
            if isinstance(t, PtrT):
                ct = cpp_type(t.elem, self.where())
                self.line(f"{ct}* const {self.name(a)} = static_cast<{ct}*>(args[{i}].t.data);")
                self.params[id(a)] = (i, a.name)
            elif isinstance(t, ScalarT):
                ct = cpp_type(t.name, self.where())
                field = "f" if t.name.startswith("f") or t.name == "bf16" else "i"
                self.line(f"const {ct} {self.name(a)} = {ct}(args[{i}].{field});")
            else:
                raise AssemblyError(f"kernel {f.name}: unsupported parameter type for %{a.name}")
        for a, src in zip(f.args[nparams:], rt_args):
            try:
                pname, what, axis = src.rsplit(".", 2)
                p = by_name[pname]
            except (ValueError, KeyError):
                raise AssemblyError(f"kernel {f.name}: bad pto.runtime_args entry {src!r}") from None
            fld = {"dim": "shape", "stride": "strides"}.get(what)
            if fld is None:
                raise AssemblyError(f"kernel {f.name}: bad pto.runtime_args entry {src!r}")
            self.line(f"const int64_t {self.name(a)} = args[{p}].t.{fld}[{int(axis)}];")
        if any(op.name in ("pto.tpush", "pto.tpop") for op in _walk(f)):
            # this block's place in its Group's pipes; leaving the kernel (any return) marks it done
            self.line(f"glue::pipes::Block pipe_block_({self._block_arg(2, '0')}, {self._block_arg(0, '0')}, "
                      f"{self._block_arg(1, '1')});")
        self.block(f.body)
        head = [f"static void {self.cpp_name}(const pto_arg* args, int32_t nargs, char* scratch) {{",
                "  (void)nargs;"]
        return "\n".join(head + self.lines + ["}"])

    def fail_run(self, message: str) -> str:
        return (f"kfail(\"kernel %s: %s\", {json.dumps(self.func.name)}, {json.dumps(message)}); "
                "pto::stream_fence(); return;")

    def ret(self, op: Op) -> None:
        # streaming stores are fenced once per kernel (not per store) so the next task sees the data
        self.line("pto::stream_fence();")
        self.line("return;")

    # ---- PTO ops -----------------------------------------------------------------------------

    def pto_op(self, op: Op) -> None:
        n = op.name
        h = getattr(self, "op_" + n.split(".", 1)[1].replace(".", "_"), None)
        if h is not None:
            h(op)
        elif n.startswith("pto.t") and lowering(n.split(".", 1)[1]) is not None:
            self.dps(op, instr_name(n))
        elif n.startswith("pto.t"):
            raise AssemblyError(f"{self.where(op)}: the CPU target has no lowering for {n} "
                                f"(pypto/backend/cpu/lowering.py lists the instructions it implements)")
        else:
            raise AssemblyError(f"{self.where(op)}: unsupported operation in a kernel")

    def op_make_tensor_view(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, TensorViewT)
        ptr, *rest = op.operands
        shape, strides = rest[: t.rank], rest[t.rank:]
        self.views[id(r)] = (self.name(ptr), [self.name(v) for v in shape], [self.name(v) for v in strides], t.elem)
        p = self.params.get(id(ptr))
        if p is not None:  # bounds come from the tensor actually passed (a ragged view may be smaller)
            i, pname = p
            ext = [f"(args[{i}].t.ndim == {t.rank} ? long(args[{i}].t.shape[{k}]) : long({self.name(v)}))"
                   for k, v in enumerate(shape)]
            self.view_ext[id(r)] = (ext, pname)

    def op_partition_view(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, PartitionViewT)
        view, *rest = op.operands
        rank = len(t.shape)
        offs, sizes = rest[:rank], rest[rank:]
        ptr, _shape, strides, elem = self.views[id(view)]
        off = " + ".join(f"{self.name(o)} * {s}" for o, s in zip(offs, strides)) or "0"
        ct = cpp_type(elem, self.where(op))
        szs = ", ".join(f"long({self.name(s)})" for s in sizes)
        sts = ", ".join(f"long({s})" for s in strides)
        self.line(f"const pto::GTensor<{ct}> {self.name(r)}({ptr} + ({off}), {{{szs}}}, {{{sts}}});")
        ve = self.view_ext.get(id(view))
        if ve is not None:
            self.windows[id(r)] = (ve[0], [self.name(o) for o in offs], [self.name(z) for z in sizes], ve[1])

    def window_check(self, op: Op) -> None:
        """Before a TLOAD/TSTORE: fail the kernel (not the process) if it would touch memory outside
        the tensor (offsets and valid extents are run-time values)."""
        load = op.name == "pto.tload"
        g, tile = (op.ins[0], op.outs[0]) if load else (op.outs[0], op.ins[0])
        w = self.windows.get(id(g))
        if w is None or not w[1] or id(op) in self.checked:
            return
        self.checked.add(id(op))
        ext, offs, sizes, pname = w
        nd = len(offs)
        tn = self.name(tile)
        vr, vc = f"long({tn}.vr)", f"long({tn}.vc)"
        if op.attrs.get("transpose"):
            vr, vc = vc, vr
        what = ("a load" if load else "a store") + (" (transposed)" if op.attrs.get("transpose") else "")
        self.line(f"{{ const long e_[] = {{{', '.join(ext)}}}, o_[] = {{{', '.join(f'long({o})' for o in offs)}}}, "
                  f"s_[] = {{{', '.join(f'long({z})' for z in sizes)}}};")
        self.line(f"  if (!glue::window_in_bounds({nd}, e_, o_, s_, {vr}, {vc})) {{ char b0[160], b1[160], b2[160]; "
                  f"kfail(\"kernel %s: %s of %ld x %ld elements at offsets %s (window %s) is outside tensor '%s' "
                  f"of shape %s\", \"{self.func.name}\", \"{what}\", {vr}, {vc}, glue::fmt_dims(b0, 160, {nd}, o_), "
                  f"glue::fmt_dims(b1, 160, {nd}, s_), \"{pname}\", glue::fmt_dims(b2, 160, {nd}, e_)); "
                  f"pto::stream_fence(); return; }} }}")

    def note_tile(self, op: Op) -> tuple[str, str, int]:
        """Record an alloc_tile's valid extents (as C++ text) and arena offset before it is emitted, so
        the fuser can reason about tiles allocated between the instructions of a run."""
        r = op.result
        t = r.type
        assert isinstance(t, TileBufT)
        addr, *valid = op.operands
        vr = self.name(valid.pop(0)) if t.v_row is None else str(t.v_row)
        vc = self.name(valid.pop(0)) if t.v_col is None else str(t.v_col)
        base = self.layout.base[t.loc]
        self.valid_names[id(r)] = (vr, vc)
        if self.fuser is not None:
            a = self.const_of(addr)
            self.fuser.note_alloc(op, base, int(a) if a is not None else None)
        return vr, vc, base

    def op_alloc_tile(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, TileBufT)
        addr = op.operands[0]
        vr, vc, base = self.note_tile(op)
        ct = cpp_type(t.dtype, self.where(op))
        if t.v_row is None or t.v_col is None:  # run-time valid extents must fit the tile's buffer
            self.line(f"if (long({vr}) < 0 || long({vr}) > {t.rows} || long({vc}) < 0 || long({vc}) > {t.cols}) {{ "
                      f"kfail(\"kernel %s: tile %s has valid extents [%ld, %ld] beyond its shape [{t.rows}, {t.cols}]\", "
                      f"\"{self.func.name}\", \"{r.name}\", long({vr}), long({vc})); pto::stream_fence(); return; }}")
        self.line(f"{tile_cpp_type(t)} {self.name(r)}(reinterpret_cast<{ct}*>(scratch + {base} + {self.name(addr)}), "
                  f"int({vr}), int({vc}));")

    def op_tload(self, op: Op) -> None:
        fn = "TLOAD_T" if op.attrs.get("transpose") else "TLOAD"
        self.window_check(op)
        self.line(f"pto::{fn}({self.name(op.outs[0])}, {self.name(op.ins[0])});")

    def op_tstore(self, op: Op) -> None:
        self.window_check(op)
        self.line(f"pto::TSTORE({self.name(op.outs[0])}, {self.name(op.ins[0])});")

    def op_tmov(self, op: Op) -> None:
        fn = "TMOV_T" if op.attrs.get("transpose") else "TMOV"
        self.line(f"pto::{fn}({self.name(op.outs[0])}, {self.name(op.ins[0])});")

    def op_tsetval(self, op: Op) -> None:
        v, r, c = op.ins
        self.line(f"pto::TSETVAL({self.name(op.outs[0])}, int({self.name(r)}), int({self.name(c)}), {self.ref(v)});")

    def op_tgetval(self, op: Op) -> None:
        t, r, c = op.operands
        self.define(op.result, f"pto::TGETVAL({self.name(t)}, int({self.name(r)}), int({self.name(c)}))")

    # an spmd submission passes [block index, block count, barrier] after the kernel's parameters
    # (pto_submit_opts.block_arg); a plain one passes none: one block
    def _block_arg(self, k: int, absent: str) -> str:
        n = len(self.func.attrs.get("pto.param_dirs", []))  # the pto_args (runtime args are derived)
        return f"(nargs >= {n + 3} ? args[{n + k}].i : {absent})"

    def op_get_block_idx(self, op: Op) -> None:
        self.define(op.result, self._block_arg(0, "0"))

    def op_get_block_num(self, op: Op) -> None:
        self.define(op.result, self._block_arg(1, "1"))

    def op_syncall(self, op: Op) -> None:
        # stores before the barrier must be visible to the other blocks after it
        self.line("pto::stream_fence();")
        self.line(f"pto_barrier_wait(reinterpret_cast<pto_barrier*>(static_cast<intptr_t>({self._block_arg(2, '0')})));")

    def op_tpush(self, op: Op) -> None:
        self._pipe(op, op.ins, "push", "tpush_to_aiv", "tpush_to_aic")

    def op_tpop(self, op: Op) -> None:
        self._pipe(op, op.outs, "pop", "tpop_from_aic", "tpop_from_aiv")

    def _pipe(self, op: Op, tiles: list[Value], fn: str, c2v: str, v2c: str) -> None:
        """A cross-core pipe op (glue/pto_pipes.hpp): a failure fails the run with the pipe's name."""
        d = op.attrs.get("dir")
        if d not in ("c2v", "v2c") or len(tiles) != 1:
            raise AssemblyError(f"{self.where(op)}: {op.name} takes one tile and dir = \"c2v\" or \"v2c\"")
        pid, split = int(op.attrs.get("id", 0)), int(op.attrs.get("split", 0))
        what = json.dumps(f"pl.{c2v if d == 'c2v' else v2c} (pipe id {pid})")
        self.line(f"if (const char* e_ = glue::pipes::{fn}(pipe_block_, glue::pipes::{d.upper()}, {pid}, {split}, "
                  f"{self.name(tiles[0])}, {what})) {{ {self.fail_run_msg('e_')} }}")

    def fail_run_msg(self, var: str) -> str:
        return (f"kfail(\"kernel %s: %s\", {json.dumps(self.func.name)}, {var}); pto::stream_fence(); return;")

    def op_set_flag(self, op: Op) -> None:
        self.line("// set_flag: a kernel runs in program order on one thread")

    def op_wait_flag(self, op: Op) -> None:
        self.line("// wait_flag")

    def op_pipe_barrier(self, op: Op) -> None:
        self.line("// pipe_barrier")

    def dps(self, op: Op, fn: str) -> None:
        if len(op.outs) != 1:
            raise AssemblyError(f"{self.where(op)}: expected one destination")
        args = [self.name(op.outs[0])]
        for v in op.ins:
            args.append(self.name(v) if isinstance(v.type, TileBufT) else self.operand(v))
        extra = self.enum_args(op)
        self.line(f"pto::{fn}({', '.join(args + extra)});")

    def operand(self, v: Value) -> str:
        return self.ref(v)

    def enum_args(self, op: Op) -> list[str]:
        out = []
        for k in ("cmpMode", "rmode", "pad"):
            a = op.attrs.get(k)
            if a is None:
                continue
            if not isinstance(a, EnumAttr):
                raise AssemblyError(f"{self.where(op)}: attribute {k} must be an enum attribute")
            _, val = a.value.split(" ", 1)
            if k == "cmpMode":
                out.append(f"pto::CmpMode::{_CMP[val]}")
            elif k == "rmode":
                out.append(f"pto::RoundMode::{val}")
            else:
                out.append(f"pto::PadValue::{_PAD[val]}")
        # integer attributes (gather_mask's pattern, scatter's reduce mode) follow, in their order
        out += [str(v) for v in op.attrs.values() if type(v) is int]
        return out


__all__ = ["KernelEmitter", "SpaceLayout", "instr_name", "tile_bytes"]
