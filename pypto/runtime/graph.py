"""`TaskGraph`: build a task graph over NumPy arrays from Python and run it in one native call.

Dependencies come from the arguments' regions, exactly as for compiled programs; explicit edges
(`deps=` / `add_dep`) may add more. Task ids are indices in submission order, and an explicit
edge must point from an earlier task to a later one (anything else would be a cycle; the runtime
reports it as an error when the graph runs).

    g = TaskGraph()
    x = np.zeros((64, 64))
    a = g.add("fill", x[:32], 1.0)
    b = g.add("scale_add", x, 2.0, 1.0)          # waits for `a` (overlapping write)
    Runtime(num_workers=2).run_graph(g)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.runtime.abi import ARG_DTYPE, TASK_DESC_DTYPE, ArgKind
from pypto.runtime.errors import TaskGraphError
from pypto.runtime.kernels import Kernel, as_kernel
from pypto.runtime.marshal import RootMap, fill_rows, resolve


@dataclass
class _Task:
    kernel: Kernel
    args: list[tuple[ArgKind, Any]]
    deps: list[int] = field(default_factory=list)


@dataclass
class PackedGraph:
    """The native form of a graph: task descriptors pointing into one argument and one dep array."""

    descs: np.ndarray
    args: np.ndarray
    deps: np.ndarray
    keepalive: list[Any]
    kernel_names: dict[int, str]

    def __len__(self) -> int:
        return len(self.descs)


class TaskGraph:
    """An ordered list of kernel calls (tasks) with their arguments and explicit extra edges."""

    def __init__(self) -> None:
        self._tasks: list[_Task] = []
        self._packed: PackedGraph | None = None

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, kernel: Kernel | str, *args: Any, kinds: list[ArgKind | str] | None = None,
            deps: tuple[int, ...] | list[int] = ()) -> int:
        """Append a call of `kernel` (a built-in name or a `Kernel`); returns its task id.

        Argument kinds come from the kernel's signature, else from `kinds`, else they are inferred
        (arrays "inout", ints "i64", floats "f64"). `deps` are explicit predecessor ids.
        """
        k = as_kernel(kernel)
        tid = len(self._tasks)
        resolved = resolve(args, k.kinds_for(args, kinds), where=f"task {tid} ({k.name})")
        k.check(resolved)
        self._tasks.append(_Task(k, resolved, [int(d) for d in deps]))
        self._packed = None
        return tid

    def add_dep(self, before: int, after: int) -> None:
        """Explicit edge: task `after` runs after task `before` (which must be an earlier task)."""
        if not 0 <= after < len(self._tasks):
            raise TaskGraphError(f"add_dep({before}, {after}): unknown task {after} "
                                 f"(the graph has {len(self._tasks)} tasks)")
        self._tasks[after].deps.append(int(before))
        self._packed = None

    def kernel_names(self) -> dict[int, str]:
        return {t.kernel.kernel_id: t.kernel.name for t in self._tasks}

    def pack(self) -> PackedGraph:
        """Marshal every task (cached until the graph changes)."""
        if self._packed is not None:
            return self._packed
        tasks = self._tasks
        nargs = np.array([len(t.args) for t in tasks], dtype=np.int64)
        ndeps = np.array([len(t.deps) for t in tasks], dtype=np.int64)
        args = np.zeros(max(1, int(nargs.sum())), dtype=ARG_DTYPE)
        deps = np.array([d for t in tasks for d in t.deps] or [0], dtype=np.int64)
        roots = RootMap(v for t in tasks for k, v in t.args if k.is_tensor)
        arg_off = np.concatenate([[0], np.cumsum(nargs)[:-1]]) if len(tasks) else nargs
        dep_off = np.concatenate([[0], np.cumsum(ndeps)[:-1]]) if len(tasks) else ndeps
        for i, t in enumerate(tasks):
            fill_rows(args, int(arg_off[i]), t.args, roots, where=f"task {i} ({t.kernel.name}): ")
        descs = np.zeros(len(tasks), dtype=TASK_DESC_DTYPE)
        descs["fn"] = [t.kernel.fn for t in tasks]
        descs["args"] = args.ctypes.data + arg_off * ARG_DTYPE.itemsize
        descs["deps"] = deps.ctypes.data + dep_off * 8
        descs["kernel_id"] = [t.kernel.kernel_id for t in tasks]
        descs["nargs"] = nargs
        descs["ndeps"] = ndeps
        keep = [v for t in tasks for k, v in t.args if k.is_tensor]
        self._packed = PackedGraph(descs, args, deps, keep, self.kernel_names())
        return self._packed


__all__ = ["PackedGraph", "TaskGraph"]
