"""Running the orchestration (task program): tensors, views, submits and scalar reads, in program order.

Tensors are NumPy arrays; `pto.alloc_tensor` makes zero-filled ones, `pto.tensor_slice` and
`pto.tensor_reshape` make views (never copies), so a kernel writing a slice writes its parent.
`pto.submit` runs the kernel at once: program order is a valid schedule of the task graph, since
every dependency the runtime derives points from an earlier submit to a later one.
"""

from __future__ import annotations

import numpy as np

from pypto.pto.model import Func, Module, Op, ScalarT, Sym, TensorT, operand_groups
from pypto.pto.syntax import JOIN_KERNEL

from .engine import Executor, FuncInfo
from .errors import HazardError, InterpError
from .kernel import run_kernel
from .tasks import fill, run_task, split_operands
from .values import make_scalar, np_dtype, window


class ProgramExecutor(Executor):
    def __init__(self, func: Func, kernels: dict[str, Module], check_hazards: bool, target):
        super().__init__(func, FuncInfo(func))
        self.kernels = kernels
        self.next_task_id = 0
        self.check_hazards = check_hazards
        self.target = target
        self.handlers.update({
            "pto.alloc_tensor": self.op_alloc, "pto.tensor_slice": self.op_slice,
            "pto.tensor_reshape": self.op_reshape, "pto.submit": self.op_submit, "pto.tensor_read": self.op_read,
            "pto.tensor_write": self.op_write, "pto.tensor_dim": self.op_dim,
        })

    def tensor(self, v) -> np.ndarray:
        a = self.get(v)
        if not isinstance(a, np.ndarray):
            raise InterpError(f"%{v.name} is not a tensor")
        return a

    def op_alloc(self, op: Op) -> None:
        t = _result_tensor(op)
        dims = [int(x) for x in self.vals(op.operands)]
        _check_shape(t, dims, "pto.alloc_tensor")
        if any(d < 0 for d in dims):
            raise InterpError(f"pto.alloc_tensor: negative extent in {dims}")
        self.env[op.results[0]] = fill(np.zeros(dims, dtype=np_dtype(t.elem)), op.attrs.get("init"))

    def op_slice(self, op: Op) -> None:
        t = _result_tensor(op)
        g = operand_groups(op)
        src = self.tensor(g["source"][0])
        sizes = [int(x) for x in self.vals(g["sizes"])]
        _check_shape(t, sizes, "pto.tensor_slice")
        offs = [int(x) for x in self.vals(g["offsets"])]
        # a window running past the tensor's end is cut back to it (as the native runtime does)
        sizes = [min(s, d - o) if 0 <= o <= d else s for o, s, d in zip(offs, sizes, src.shape)]
        self.env[op.results[0]] = window(src, offs, sizes, "pto.tensor_slice")

    def op_reshape(self, op: Op) -> None:
        t = _result_tensor(op)
        g = operand_groups(op)
        src = self.tensor(g["source"][0])
        shape = [int(x) for x in self.vals(g["shape"])]
        _check_shape(t, shape, "pto.tensor_reshape")
        if int(np.prod(shape)) != src.size:
            raise InterpError(f"pto.tensor_reshape: {src.size} elements cannot take shape {shape}")
        v = src.view()
        try:
            v.shape = tuple(shape)
        except AttributeError:
            raise InterpError(f"pto.tensor_reshape: a tensor of shape {list(src.shape)} with strides "
                              f"{list(src.strides)} cannot be viewed as {shape} without a copy") from None
        self.env[op.results[0]] = v

    def op_submit(self, op: Op) -> None:
        callee = op.attrs.get("callee")
        name = callee.name if isinstance(callee, Sym) else str(callee)
        module = self.kernels.get(name)
        if name == JOIN_KERNEL:
            run_task(self, op, lambda: None)
            return
        if module is None:
            raise InterpError(f"pto.submit of @{name}, which is not among the kernels "
                              f"({', '.join(sorted(self.kernels)) or 'none'})")
        dirs = op.attrs.get("dirs")
        if dirs is not None and len(dirs) != len(op.operands):
            raise InterpError(f"pto.submit: {len(dirs)} dirs for {len(op.operands)} operands")
        kargs, dirs, task = split_operands(op)
        args = self.vals(kargs)
        if op.results or any(task.values()) or op.attrs.get("sync"):
            run_task(self, op, lambda: self._run(op, module, name, args))
            return
        for a, d in zip(args, dirs or []):
            if (d == "scalar") == isinstance(a, np.ndarray):
                raise InterpError(f"pto.submit: an argument with direction '{d}' is a "
                                  f"{'tensor' if isinstance(a, np.ndarray) else 'scalar'}")
        self._run(op, module, name, args)

    def _run(self, op: Op, module, name: str, args: list) -> None:
        try:
            run_kernel(module, args, check_hazards=self.check_hazards, target=self.target,
                       name=name if module.get(name) is not None else None)
        except InterpError as e:
            if e.func is not None or isinstance(e, HazardError):  # raised inside the kernel
                e.called_from(f"@{self.func.name}, {self.where(op)}")
            raise

    def op_read(self, op: Op) -> None:
        g = operand_groups(op)
        t = self.tensor(g["source"][0])
        idx = _indices(t, self.vals(g["indices"]), op.name)
        rt = op.results[0].type
        self.env[op.results[0]] = make_scalar(t[idx].item(), rt.name) if isinstance(rt, ScalarT) else t[idx]

    def op_write(self, op: Op) -> None:
        g = operand_groups(op)
        t = self.tensor(g["dest"][0])
        idx = _indices(t, self.vals(g["indices"]), op.name)
        with np.errstate(all="ignore"):
            t[idx] = np.asarray(self.get(g["value"][0])).astype(t.dtype)

    def op_dim(self, op: Op) -> None:
        t = self.tensor(op.operands[0])
        ax = op.attrs.get("axis", op.attrs.get("dim"))  # docs/pto_format.md says "axis"; accept "dim" too
        if not isinstance(ax, int) or not -t.ndim <= ax < t.ndim:
            raise InterpError(f"pto.tensor_dim: axis {ax!r} out of range for rank {t.ndim}")
        rt = op.results[0].type
        self.env[op.results[0]] = make_scalar(t.shape[ax], rt.name if isinstance(rt, ScalarT) else "index")


def _result_tensor(op: Op) -> TensorT:
    t = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(t, TensorT):
        raise InterpError(f"{op.name} needs one !pto.tensor result")
    return t


def _check_shape(t: TensorT, dims: list[int], what: str) -> None:
    if len(dims) != len(t.shape):
        raise InterpError(f"{what}: {len(dims)} extents for a rank-{len(t.shape)} tensor type")
    for ax, (d, s) in enumerate(zip(dims, t.shape)):
        if s is not None and d != s:
            raise InterpError(f"{what}: extent {d} of axis {ax} contradicts the type's static extent {s}")


def _indices(t: np.ndarray, idx: list, what: str) -> tuple[int, ...]:
    if len(idx) != t.ndim:
        raise InterpError(f"{what}: {len(idx)} indices for a rank-{t.ndim} tensor")
    out = tuple(int(i) for i in idx)
    for ax, (i, d) in enumerate(zip(out, t.shape)):
        if not 0 <= i < d:
            raise InterpError(f"{what}: index {i} out of range for axis {ax} of extent {d}")
    return out


def _bind(func: Func, args: list) -> list:
    if len(args) != len(func.args):
        raise InterpError(f"@{func.name} takes {len(func.args)} argument(s), got {len(args)}")
    vals = []
    for p, a in zip(func.args, args):
        t = p.type
        if isinstance(t, TensorT):
            if not isinstance(a, np.ndarray):
                raise InterpError(f"@{func.name}: argument %{p.name} must be a NumPy array, got {type(a).__name__}")
            if a.dtype != np_dtype(t.elem):
                raise InterpError(f"@{func.name}: argument %{p.name} must hold {t.elem}, got {a.dtype}")
            try:
                _check_shape(t, list(a.shape), f"argument %{p.name}")
            except InterpError as e:
                raise InterpError(f"@{func.name}: {e.message}") from None
            vals.append(a)
        elif isinstance(t, ScalarT):
            vals.append(make_scalar(a.item() if isinstance(a, (np.ndarray, np.generic)) else a, t.name))
        else:
            raise InterpError(f"@{func.name}: argument %{p.name} has a type the orchestration cannot take")
    return vals


def run_program(kernels: dict[str, Module], orchestration: Module | None, entry: str, args: list, *,
                check_hazards: bool = True, target=None) -> list:
    """Execute the program's entry function on NumPy arguments; return what it returns.

    With no orchestration, `entry` names a kernel: it runs once and its `out` / `inout` arrays are
    returned. Tensor arguments are written in place; see the package docstring for `check_hazards`.
    """
    args = list(args)
    if orchestration is None:
        module = kernels.get(entry)
        if module is None:
            raise InterpError(f"no kernel @{entry} and no orchestration")
        run_kernel(module, args, check_hazards=check_hazards, target=target,
                   name=entry if module.get(entry) is not None else None)
        func = module.get(entry) or module.funcs[0]
        dirs = func.attrs.get("pto.param_dirs", [])
        return [a for a, d in zip(args, dirs) if d in ("out", "inout")]
    func = orchestration.get(entry)
    if func is None:
        orch = [f for f in orchestration.funcs if f.kind == "orchestration"]
        if len(orch) != 1:
            raise InterpError(f"the orchestration module has no function @{entry}")
        func = orch[0]
    ex = ProgramExecutor(func, kernels, check_hazards, target)
    ex.bind(func.args, _bind(func, args))
    sig = ex.run_block(func.body)
    if sig is None:
        return []
    if sig.kind != "return":
        raise InterpError(f"@{func.name}: stray {sig.kind} at the top level")
    return list(sig.values)


__all__ = ["ProgramExecutor", "run_program"]
