"""The task program (orchestration function) -> the C++ body of `pto_program_run`.

Tensors are `pto_tensor` values (root buffer + view). `pto.submit` packs the task's arguments and
calls `api->submit`; the runtime derives dependencies from the regions. Results the program
returns that are not its parameters are written into extra *output* parameters the caller passes
after the entry parameters: when a returned tensor is created by `pto.alloc_tensor`, it is created
in the output buffer (no copy; the caller hands it over zero-filled, as alloc_tensor promises);
otherwise it is copied there at the end.
"""

from __future__ import annotations

import json

from pypto.pto.analysis import analyze_task_program
from pypto.pto.model import Func, Op, ScalarT, Sym, TensorT, Value, walk
from pypto.pto.syntax import JOIN_KERNEL, TASK_DIRS

from .emit_common import AssemblyError, FuncEmitter, cpp_type, elem_bytes, is_float
from .emit_tasks import emit_task_submit, is_task_submit


def static_param_shapes(kernel: Func) -> list[list[int | None] | None]:
    """Per kernel parameter: the extents its tensor view fixes at compile time (None where dynamic)."""
    consts: dict[int, int] = {}
    views: dict[int, list[int | None]] = {}
    for op in walk(kernel.body):
        if op.name == "arith.constant":
            consts[id(op.result)] = op.attrs["value"]
        elif op.name == "pto.make_tensor_view":
            rank = op.result.type.rank  # type: ignore[union-attr]
            views[id(op.operands[0])] = [consts.get(id(v)) for v in op.operands[1:1 + rank]]
    return [views.get(id(a)) for a in kernel.args]


class OrchestrationEmitter(FuncEmitter):
    def __init__(self, func: Func, kernel_ids: dict[str, int],
                 kernel_shapes: dict[str, list[list[int | None] | None]] | None = None):
        super().__init__(func)
        self.kernel_ids = kernel_ids
        self.kernel_shapes = kernel_shapes or {}
        self.valid_slices: set[int] = set()  # tensor_slice results marked `valid` (see codegen)
        info = analyze_task_program(func)  # (return slots shared with the driver: pypto/pto/analysis.py)
        self.slots = list(info.slots)
        self.nparams = len(func.args)
        self.n_outputs = info.n_outputs
        # a returned tensor created by alloc_tensor is created in its output buffer (no copy at the end)
        self.direct: dict[int, int] = dict(info.fresh_outputs)

    def value_ctype(self, v: Value) -> str:
        if isinstance(v.type, TensorT):
            return "pto_tensor"
        return self.ctype(v)

    def emit(self) -> str:
        f = self.func
        total = self.nparams + self.n_outputs
        self.line(f"if (nparams != {total}) return glue::fail(api, rt, \"%s: expected {total} arguments, got "
                  f"%lld\", \"{f.name}\", nparams);")
        for i, a in enumerate(f.args):
            t = a.type
            if isinstance(t, TensorT):
                self.line(f"const pto_tensor {self.name(a)} = params[{i}].t;")
            elif isinstance(t, ScalarT):
                ct = cpp_type(t.name, self.where())
                fld = "f" if is_float(t.name) else "i"
                self.line(f"const {ct} {self.name(a)} = {ct}(params[{i}].{fld});")
            else:
                raise AssemblyError(f"orchestration {f.name}: unsupported parameter %{a.name}")
        self.block(f.body)
        if not f.body.ops or f.body.ops[-1].name != "func.return":
            self.line("return 0;")
        return "\n".join(self.lines)

    def fail_run(self, message: str) -> str:
        return f"return glue::fail(api, rt, \"%s\", {json.dumps(f'{self.func.name}: {message}')});"

    def ret(self, op: Op) -> None:
        copies = [(v, s) for v, s in zip(op.operands, self.slots)
                  if s.output is not None and self.direct.get(id(v)) != s.output]
        if copies:
            self.line("api->wait_all(rt);")
        for v, s in copies:
            k = self.nparams + (s.output or 0)
            self.line(f"{{ pto_tensor out = params[{k}].t; if (!glue::copy(&out, &{self.name(v)})) "
                      f"return glue::fail(api, rt, \"%s: output %lld does not match the returned tensor's shape\", "
                      f"\"{self.func.name}\", {s.output}); }}")
        self.line("return 0;")

    # ---- PTO ops -----------------------------------------------------------------------------

    def pto_op(self, op: Op) -> None:
        h = getattr(self, "op_" + op.name.split(".", 1)[1], None)
        if h is None:
            raise AssemblyError(f"{self.where(op)}: unsupported operation in the task program")
        h(op)

    def _ints(self, vals: list[Value]) -> str:
        return "{" + ", ".join(f"int64_t({self.name(v)})" for v in vals) + "}" if vals else "{0}"

    def op_alloc_tensor(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, TensorT)
        nd = len(t.shape)
        eb = elem_bytes(t.elem, self.where(op))
        n = self.name(r)
        self.line(f"pto_tensor {n};")
        self.line("{")
        self.line(f"  const int64_t shp[] = {self._ints(op.operands)};")
        out = self.direct.get(id(r))
        if out is not None:
            k = self.nparams + out
            self.line(f"  {n} = params[{k}].t;")
            self.line(f"  if ({n}.ndim != {nd}" + "".join(f" || {n}.shape[{i}] != shp[{i}]" for i in range(nd))
                      + f") return glue::fail(api, rt, \"%s: output %lld has the wrong shape\", \"{self.func.name}\", "
                      f"{out});")
        else:
            self.line("  int64_t nb = " + " * ".join([str(eb)] + [f"shp[{i}]" for i in range(nd)]) + ";")
            self.line("  void* p = api->alloc_tensor(rt, nb);")
            self.line("  if (!p) return 1;")
            self.line(f"  {n} = pto_tensor_dense(p, {eb}, {nd}, shp);")
        init = op.attrs.get("init")
        if init is not None:  # pl.create_tensor(..., init_value=v): a fresh tensor, before any task touches it
            ct = cpp_type(t.elem, self.where(op))
            self.line(f"  {{ {ct}* q = static_cast<{ct}*>({n}.data); const int64_t m = " +
                      " * ".join(["int64_t(1)"] + [f"shp[{i}]" for i in range(nd)]) +
                      f"; for (int64_t i = 0; i < m; ++i) q[i] = {ct}({float(init)!r}); }}")
        self.line("}")

    def op_tensor_slice(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, TensorT)
        src, *rest = op.operands
        nd = len(t.shape)
        offs, sizes = rest[:nd], rest[nd:]
        n = self.name(r)
        # (a window running past the tensor is cut back to it: a kernel then sees at most its extent)
        self.valid_slices.add(id(r))
        self.line(f"pto_tensor {n};")
        self.line(f"{{ const int64_t off[] = {self._ints(offs)}; const int64_t sz[] = {self._ints(sizes)};")
        self.line(f"  if (!glue::slice(&{self.name(src)}, {nd}, off, sz, &{n})) return glue::fail(api, rt, "
                  f"\"%s: a view is out of bounds of its tensor\", \"{self.func.name}\"); }}")

    def op_tensor_reshape(self, op: Op) -> None:
        r = op.result
        t = r.type
        assert isinstance(t, TensorT)
        src, *shape = op.operands
        n = self.name(r)
        self.line(f"pto_tensor {n};")
        self.line(f"{{ const int64_t shp[] = {self._ints(shape)};")
        self.line(f"  if (!glue::reshape(&{self.name(src)}, {len(t.shape)}, shp, &{n})) return glue::fail(api, rt, "
                  f"\"%s: reshape needs a contiguous tensor with the same number of elements\", "
                  f"\"{self.func.name}\"); }}")

    def op_submit(self, op: Op) -> None:
        callee = op.attrs.get("callee")
        dirs = op.attrs.get("dirs", [])
        if len(dirs) != len(op.operands):
            raise AssemblyError(f"{self.where(op)}: {len(op.operands)} arguments but {len(dirs)} directions")
        if isinstance(callee, Sym) and callee.name == JOIN_KERNEL:
            emit_task_submit(self, op, -1, [])
            return
        if not isinstance(callee, Sym) or callee.name not in self.kernel_ids:
            raise AssemblyError(f"{self.where(op)}: unknown kernel {callee!r}")
        items = []
        kargs = [(v, d) for v, d in zip(op.operands, dirs) if d not in TASK_DIRS]
        for v, d in kargs:
            t = v.type
            if isinstance(t, TensorT):
                kind = {"in": "PTO_IN", "out": "PTO_OUT", "inout": "PTO_INOUT"}.get(d)
                if kind is None:
                    raise AssemblyError(f"{self.where(op)}: tensor argument with direction {d!r}")
                items.append(f"pto_arg_tensor({kind}, {self.name(v)})")
            elif isinstance(t, ScalarT):
                items.append(f"pto_arg_f64(double({self.ref(v)}))" if is_float(t.name)
                             else f"pto_arg_i64(int64_t({self.name(v)}))")
            else:
                raise AssemblyError(f"{self.where(op)}: unsupported argument %{v.name}")
        kid = self.kernel_ids[callee.name]
        shapes = self.kernel_shapes.get(callee.name) or []
        for k, (v, shp) in enumerate(zip(op.operands, shapes)):
            if shp is None or not isinstance(v.type, TensorT):
                continue
            # the valid part of a window may be smaller than the kernel's extent (its loads check bounds)
            ne, want = (">", "at most") if id(v) in self.valid_slices else ("!=", "")
            for ax, ext in enumerate(shp):
                if ext is None or (ax < len(v.type.shape) and v.type.shape[ax] == ext):
                    continue  # dynamic in the kernel, or statically known to match
                self.line(f"if ({self.name(v)}.shape[{ax}] {ne} {ext}) return glue::fail(api, rt, \"%s: argument "
                          f"{k} has extent %lld on axis {ax}, the kernel expects {want + ' ' if want else ''}{ext}\", "
                          f"\"{callee.name}\", {self.name(v)}.shape[{ax}]);")
        if is_task_submit(op):
            emit_task_submit(self, op, kid, items)
            return
        self.line(f"{{ const pto_arg a[] = {{{', '.join(items)}}};")
        self.line(f"  if (api->submit(rt, {kid}, a, {len(items)}) < 0) return 1; }}  // {callee.name}")

    def _element(self, t: Value, idx: list[Value]) -> str:
        return (f"const int64_t idx[] = {self._ints(idx)}; if (!glue::in_bounds(&{self.name(t)}, idx)) return "
                f"glue::fail(api, rt, \"%s: element index out of bounds\", \"{self.func.name}\"); "
                f"pto_tensor e = glue::element(&{self.name(t)}, idx);")

    def op_tensor_read(self, op: Op) -> None:
        t, *idx = op.operands
        r = op.result
        ct = self.ctype(r)
        n = self.name(r)
        self.line(f"{ct} {n};")
        self.line(f"{{ {self._element(t, idx)} api->wait_tensor(rt, &e); {n} = *static_cast<const {ct}*>(e.data); }}")

    def op_tensor_write(self, op: Op) -> None:
        v, t, *idx = op.operands
        tt = t.type
        assert isinstance(tt, TensorT)
        ct = cpp_type(tt.elem, self.where(op))
        self.line(f"{{ {self._element(t, idx)} api->wait_all(rt); *static_cast<{ct}*>(e.data) = {ct}({self.ref(v)}); }}")

    def op_tensor_dim(self, op: Op) -> None:
        self.define(op.result, f"{self.name(op.operands[0])}.shape[{int(op.attrs['axis'])}]")


__all__ = ["OrchestrationEmitter", "static_param_shapes"]
