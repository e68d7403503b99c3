"""`@pypto.frontend.jit`: a tensor-level kernel, traced and compiled on its first call.

Calling a jit kernel binds its arguments (tensor parameters: NumPy arrays or PyTorch CPU tensors,
zero-copy; other parameters: compile-time constants), checks them against the annotations (errors
name the parameter), and looks up the compiled program for the specialisation: the non-tensor
values, each tensor's dtype and rank and its static dims (dynamic dims are not part of it, so one
program serves every size). A miss traces the function into a `pl` function (`trace.py`) and
compiles it with `ir.compile`, whose compile cache is on disk: a second process re-traces (cheap)
and finds the built program there.

Results: tensors the kernel writes (`pypto.assemble(..., out)`, `out[...] = x`, `out.move(x)`)
are written in place into the caller's arrays; tensors it returns (`return out`) are returned.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import Error
from pypto.ir.dtype import DataType
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import DynVar, Var, scalar_type
from pypto.ir.function import Function, Program
from pypto.ir.stmt import ReturnStmt, seq
from pypto.ir.types import TensorType

from . import options as _opts
from .symbolic import SymbolicScalar
from .tensor import STATIC, StatusType, Tensor, TensorSpec
from .trace import FrontendError, Tracer, active, tracing


class JitArgumentError(Error, TypeError):
    """A call of a jit kernel whose arguments do not match its parameters."""


_OPTION_GROUPS = ("host_options", "codegen_options", "pass_options", "runtime_options", "verify_options",
                  "debug_options")


@dataclass(frozen=True)
class _ArgInfo:
    dtype: DataType
    shape: tuple[int, ...]


def _array_info(name: str, v: Any) -> _ArgInfo | None:
    """dtype and shape of a NumPy array or torch CPU tensor argument (None: not a tensor)."""
    import numpy as np

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.Tensor):
        if v.device.type != "cpu":
            raise JitArgumentError(f"parameter '{name}': tensor is on {v.device}; pass a CPU tensor")
        if not v.is_contiguous():
            raise JitArgumentError(f"parameter '{name}': tensor is not contiguous (strides {tuple(v.stride())}); "
                                   "call .contiguous() first")
        from .tensor import _TORCH

        dt = _TORCH.get(str(v.dtype).removeprefix("torch."))
        if dt is None:
            raise JitArgumentError(f"parameter '{name}': torch dtype {v.dtype} is not supported")
        return _ArgInfo(dt, tuple(v.shape))
    if isinstance(v, np.ndarray):
        if not v.flags.c_contiguous:
            raise JitArgumentError(f"parameter '{name}': array is not C-contiguous; use np.ascontiguousarray")
        try:
            dt = DataType.from_numpy(v.dtype)
        except Exception:
            raise JitArgumentError(f"parameter '{name}': dtype {v.dtype} is not supported") from None
        return _ArgInfo(dt, tuple(v.shape))
    return None


class JitFunction:
    """A `@pypto.frontend.jit` kernel (see the module docstring)."""

    def __init__(self, fn: Any, options: dict[str, Any], captured: dict[str, Any]):
        self.fn = fn
        self.options = options
        self._captured = captured
        self._sig = inspect.signature(fn)
        self._specs: dict[str, TensorSpec] | None = None
        self._programs: dict[Any, Any] = {}
        self._rewritten: Any = None
        self.labels: dict[str, str] = {}
        self._memo: dict[tuple, tuple] = {}  # argument kinds (_memo_key) -> (program, tensor positions)
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    # --- annotations
    def _annotations(self) -> dict[str, TensorSpec]:
        if self._specs is None:
            specs = {}
            for name, p in self._sig.parameters.items():
                ann = p.annotation
                if isinstance(ann, str):
                    env = {**self.fn.__globals__, **self._captured}
                    try:
                        ann = eval(ann, env)  # noqa: S307  (the user's own annotation text)
                    except Exception as e:
                        raise FrontendError(f"cannot evaluate the annotation of '{name}': {e}") from None
                if isinstance(ann, Tensor):
                    ann = ann._spec
                if isinstance(ann, TensorSpec):
                    specs[name] = ann
            self._specs = specs
        return self._specs

    def _traced_fn(self) -> Any:
        """The function with its `if` statements able to branch at run time (autograph.py)."""
        if self._rewritten is None:
            from .autograph import rewrite_ifs
            from .control import _Branch

            self._rewritten = rewrite_ifs(self.fn, _Branch)
        return self._rewritten

    # --- calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if active() is not None:  # called from another kernel being traced: inlined there
            return self._traced_fn()(*args, **kwargs)
        if not kwargs:  # the warm path: these argument kinds were checked and compiled before
            memo = _memo_key(args, _opts.VERSION[0])
            hit = self._memo.get(memo) if memo is not None else None
            if hit is not None:
                runner, tensor_at = hit
                return runner(*[args[i] for i in tensor_at])
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise JitArgumentError(f"{self.fn.__name__}(): {e}") from None
        bound.apply_defaults()
        opts = self._options()
        key, consts = self._key(bound, opts)
        stage = int(opts["host_options"].get("compile_stage", 0))
        if stage not in (0, 5):  # stop after an earlier stage: its graphs are written, nothing runs
            self._stop_at(stage, key, consts)
            return None
        program = self._program(key, consts)
        if not kwargs and len(args) == len(bound.arguments) and memo is not None:
            names = list(bound.arguments)
            self._memo[memo] = (program, tuple(i for i, n in enumerate(names) if n not in consts))
        return program(*[v for name, v in bound.arguments.items() if name not in consts])

    def _options(self) -> dict[str, dict[str, Any]]:
        """The options in force now: the process-wide scopes overridden by the decorator's."""
        return _opts.effective(self.options)

    def _key(self, bound: inspect.BoundArguments, opts: dict | None = None) -> tuple[tuple, dict[str, Any]]:
        """The specialisation key of bound arguments (and of the options in force), and the
        non-tensor arguments."""
        specs = self._annotations()
        consts, key = {}, [("__options__", _opts.key_of(opts or self._options()))]
        groups: dict[int, str] = {}  # size of a pypto.DYNAMIC dim at this call -> the dim that names it
        for name, v in bound.arguments.items():
            info = _array_info(name, v)
            if info is None and name in specs:
                raise JitArgumentError(f"parameter '{name}' is a tensor ({specs[name]}); got {type(v).__name__}")
            if info is not None:
                dims = self._check(name, specs.get(name), info)
                key.append((name, info.dtype, _dynamic_groups(dims, info.shape, groups, name, specs.get(name))))
            else:
                consts[name] = v
                key.append((name, _const_key(v)))
        return tuple(key), consts

    def _check(self, name: str, spec: TensorSpec | None, info: _ArgInfo) -> tuple:
        """The argument's dims for the specialisation key (None: dynamic), checked against `spec`."""
        if spec is None or spec.dims is None:
            if spec is not None and spec.dtype is not None and spec.dtype is not info.dtype:
                raise JitArgumentError(f"parameter '{name}': dtype {info.dtype.name}, the annotation says "
                                       f"{spec.dtype.name}")
            return tuple(info.shape)
        if spec.dtype is not None and spec.dtype is not info.dtype:
            raise JitArgumentError(f"parameter '{name}': dtype {info.dtype.name}, the annotation says {spec.dtype.name}")
        dims = list(spec.dims)
        if dims and dims[-1] is Ellipsis:
            if len(info.shape) < len(dims) - 1:
                raise JitArgumentError(f"parameter '{name}': rank {len(info.shape)}, the annotation needs at least "
                                       f"{len(dims) - 1}")
            dims = dims[:-1] + [STATIC] * (len(info.shape) - len(dims) + 1)
        if len(dims) != len(info.shape):
            raise JitArgumentError(f"parameter '{name}': rank {len(info.shape)} (shape {list(info.shape)}), the "
                                   f"annotation has rank {len(dims)}")
        out = []
        for i, (d, n) in enumerate(zip(dims, info.shape)):
            if isinstance(d, int):
                if d != n:
                    raise JitArgumentError(f"parameter '{name}': dim {i} is {n}, the annotation says {d} "
                                           f"(shape {list(info.shape)})")
                out.append(n)
            elif d is STATIC:
                out.append(n)
            else:  # DYNAMIC or a SymbolicScalar
                out.append(None)
        return tuple(out)

    # --- compiling
    def _program(self, key: tuple, consts: dict[str, Any]) -> Any:
        prog = self._programs.get(key)
        if prog is not None:
            return prog
        with self._lock:
            prog = self._programs.get(key)
            if prog is None:
                prog = self._compile(key, consts)
                self._programs[key] = prog
        return prog

    def trace(self, key: tuple, consts: dict[str, Any]) -> Program:
        """The traced `pl` program of one specialisation."""
        specs = self._annotations()
        tr = Tracer(self.fn.__name__)
        from .control import _GLOBAL_TILES

        tr.vec_tile_shapes, tr.cube_tile_shapes = _GLOBAL_TILES["vec"], _GLOBAL_TILES["cube"]
        tr.options = {g: dict(v) for g, v in self._options().items()}
        params, handles, call_args = [], [], {}
        shared: dict[str, DynVar] = {}
        with tracing(tr):
            for entry in key:
                name = entry[0]
                if name == "__options__":
                    continue
                if len(entry) == 2:
                    call_args[name] = consts[name]
                    continue
                dtype, dims = entry[1], entry[2]
                spec = specs.get(name)
                shape = []
                for i, d in enumerate(dims):
                    sd = spec.dims[i] if spec is not None and spec.dims and i < len(spec.dims) else None
                    if isinstance(d, str):  # a pypto.DYNAMIC dim, named by the first of its size
                        shared.setdefault(d, DynVar(d, scalar_type(DataType.INDEX)))
                        shape.append(shared[d])
                    elif d is not None:
                        shape.append(d)
                    elif isinstance(sd, SymbolicScalar):
                        shape.append(sd.expr)
                    else:
                        shape.append(DynVar(f"{name}_d{i}", scalar_type(DataType.INDEX)))
                var = Var(name, TensorType(tuple(shape), dtype))
                params.append(var)
                h = Tensor._wrap(var, name, depth=0)
                h._param = True
                handles.append(h)
                call_args[name] = h
            result = self._traced_fn()(**call_args)
            outs = _returned(result, self.fn.__name__)
            tr.close_block(keep={h._var for h in tr.handles if h._param or any(h is o for o in outs)})
            body = tr.blocks[0].stmts
            written = [h for h in handles if h._var is not _param_var(params, h) or h._written]
            inplace = [h for h in written if not any(h is o for o in outs)]
            values = [t._value() for t in outs] + [h._value() for h in inplace]
            body.append(ReturnStmt(tuple(values)))
        self.labels = dict(tr.labels)  # (the semantic labels of the last trace: graphs.dump)
        dirs = tuple(ParamDirection.InOut if any(h is w for w in inplace) else ParamDirection.In for h in handles)
        fn = Function(self.fn.__name__, tuple(params), dirs, tuple(v.type for v in values), seq(body),
                      FunctionType.Opaque)
        self._n_returned = len(outs)
        return Program(self.fn.__name__, (fn,))

    def _compile(self, key: tuple, consts: dict[str, Any]) -> Any:
        from pypto import ir

        opts = self._options()
        _opts.report_ignored(self.fn.__name__, opts)
        program = self.trace(key, consts)
        interp_only = opts["runtime_options"].get("platform") == "interp"  # no native build
        compiled = ir.compile(program, skip_ptoas=interp_only)
        debug = opts["debug_options"]
        if debug.get("compile_debug_mode") or debug.get("dump_graph"):  # the four graph levels beside the build
            from . import graphs

            _dump_beside(compiled, graphs.levels(program, compiled.program), self.labels)
        return _Runner(compiled, self._n_returned, _run_config(opts["runtime_options"], opts["debug_options"]))

    def _stop_at(self, stage: int, key: tuple, consts: dict[str, Any]) -> None:
        from pypto import ir
        from pypto.config import config

        from . import graphs

        traced = self.trace(key, consts)
        levels: dict[str, Any] = {"tensor": traced}
        if stage >= graphs.CompStage.TILE_GRAPH:
            levels["tile"] = graphs.tile_graph(traced)
        if stage >= graphs.CompStage.EXECUTE_GRAPH:
            compiled = ir.compile(traced, skip_ptoas=True)
            levels = graphs.levels(traced, compiled.program)
        out = Path(config.output_root) / f"{self.fn.__name__}_stage{stage}"
        paths = graphs.dump(levels, out, self.labels)
        print(f"pypto: {self.fn.__name__}: compile_stage {graphs.CompStage(stage).name}: graphs in {out} "
              f"({len(paths)} files); nothing was run", file=sys.stderr)

    def graphs(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The tensor, tile, block and execution graphs of the kernel for these arguments (compiling it
        if needed): level name -> `pl` program (see pypto/frontend/graphs.py)."""
        from . import graphs

        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        key, consts = self._key(bound)
        runner = self._program(key, consts)
        return graphs.levels(self.trace(key, consts), runner.compiled.program)

    def dump_graphs(self, *args: Any, out_dir: str | Path | None = None, **kwargs: Any) -> list[Path]:
        """Write the four graph levels (`<level>_graph.py` and `.json`) for these arguments into
        `out_dir` (default: the compiled program's output directory, `graphs/`); their paths."""
        from . import graphs

        levels = self.graphs(*args, **kwargs)
        if out_dir is None:
            bound = self._sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return _dump_beside(self._program(*self._key(bound)).compiled, levels, self.labels)
        return graphs.dump(levels, out_dir, self.labels)

    @property
    def compiled_programs(self) -> list[Any]:
        """The compiled programs of the specialisations called so far (`pypto.compile.CompiledProgram`)."""
        return [r.compiled for r in self._programs.values()]

    def lower(self, *args: Any, **kwargs: Any) -> Program:
        """The traced `pl` program these arguments would run (nothing is compiled or run)."""
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        key, consts = self._key(bound)
        return self.trace(key, consts)


def _dump_beside(compiled: Any, levels: dict[str, Any], labels: dict[str, str] | None = None) -> list[Path]:
    """Write the graph levels into the compiled program's output directory (`graphs/`), recorded
    as the compile's own files."""
    from pypto.compile.output import record

    from . import graphs

    out = Path(compiled.output_dir)
    paths = graphs.dump(levels, out / "graphs", labels)
    for p in paths:
        record(out, p)
    return paths


def _memo_key(args: tuple, version: int) -> tuple | None:
    """What the specialisation of positional arguments depends on, cheaply: per array its dtype and
    shape (contiguous only), per other value its type and value, and the options' version; None
    when that cannot be said."""
    parts: list[Any] = [version]
    for v in args:
        t = type(v)
        if t is np.ndarray:
            if not v.flags.c_contiguous:
                return None
            parts.append((v.dtype, v.shape))
        elif _is_torch_tensor(v):
            if v.device.type != "cpu" or not v.is_contiguous():
                return None
            parts.append((v.dtype, tuple(v.shape)))
        else:
            try:
                hash(v)
            except TypeError:
                return None
            parts.append((t, v))
    return tuple(parts)


def _is_torch_tensor(v: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def _param_var(params: list[Var], h: Tensor) -> Var | None:
    return next((p for p in params if p.name == h._hint), None)


def _returned(result: Any, name: str) -> list[Tensor]:
    if result is None:
        return []
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    for r in items:
        if not isinstance(r, Tensor):
            raise FrontendError(f"{name} returned a {type(r).__name__}; a kernel returns tensors (or nothing, "
                                "writing its outputs in place)")
    return items


def _dynamic_groups(dims: tuple, shape: tuple, groups: dict[int, str], name: str, spec: Any) -> tuple:
    """The key's dims of one argument: a `pypto.DYNAMIC` dim becomes the name of the first dynamic
    dim of this call with the same size (`x_d0`), so dims equal at the call share one dynamic
    size in the program (elementwise ops and row tiling need to know they are equal) and the
    program serves every call with the same pattern of equal sizes."""
    out = []
    for i, (d, n) in enumerate(zip(dims, shape)):
        sd = spec.dims[i] if spec is not None and spec.dims and i < len(spec.dims) else None
        if d is None and not isinstance(sd, SymbolicScalar):
            out.append(groups.setdefault(int(n), f"{name}_d{i}"))
        else:
            out.append(d)
    return tuple(out)


def _const_key(v: Any) -> Any:
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return (type(v).__name__, repr(v))


class _Runner:
    """A compiled specialisation: calls the program and hands back what the kernel returned."""

    __slots__ = ("compiled", "n_returned", "config")

    def __init__(self, compiled: Any, n_returned: int, config: Any):
        self.compiled = compiled
        self.n_returned = n_returned
        self.config = config

    def __call__(self, *arrays: Any) -> Any:
        res = self.compiled(*arrays, config=self.config)
        if self.n_returned == 0:
            return None
        items = res if isinstance(res, tuple) else (res,)
        return items[0] if self.n_returned == 1 else tuple(items[:self.n_returned])


_NOTED: set[str] = set()


def _run_config(runtime_options: dict[str, Any], debug_options: dict[str, Any] | None = None) -> Any:
    """The RunConfig of the options: `platform` ("cpu", the default, or "interp"), `num_workers`,
    `device_sched_mode` (1 and 3, L2 affinity: the runtime's "locality" scheduling; 0 and 2: one
    FIFO ready queue), `runtime_debug_mode` 1 (a swimlane trace of each run, Chrome trace JSON, in
    the output directory); `run_mode` NPU and SIM both run natively on this CPU (said once)."""
    from pypto.runtime import RunConfig

    mode = runtime_options.get("run_mode")
    if mode is not None and "run_mode" not in _NOTED:
        _NOTED.add("run_mode")
        print(f"pypto: run_mode {getattr(mode, 'name', mode)}: kernels run natively on this machine's CPU, with "
              "real numerics", file=sys.stderr)
    kw = {}
    if "platform" in runtime_options:
        kw["platform"] = runtime_options["platform"]
    if "num_workers" in runtime_options:
        kw["num_workers"] = int(runtime_options["num_workers"])
    sched = runtime_options.get("device_sched_mode")
    if sched is not None:
        kw["sched_mode"] = "locality" if int(sched) & 1 else "fifo"
    if int((debug_options or {}).get("runtime_debug_mode", runtime_options.get("runtime_debug_mode", 0)) or 0) == 1:
        kw["enable_trace"] = True
    return RunConfig(**kw) if kw else None


def jit(func: Any = None, *, host_options: dict | None = None, codegen_options: dict | None = None,
        pass_options: dict | None = None, runtime_options: dict | None = None, verify_options: dict | None = None,
        debug_options: dict | None = None, new_ir: bool = True, create_new_logical_tensor: bool = False) -> Any:
    """Decorate a tensor-level kernel: `@pypto.frontend.jit` or `@pypto.frontend.jit(runtime_options=...)`."""
    options = {"host_options": dict(host_options or {}), "codegen_options": dict(codegen_options or {}),
               "pass_options": dict(pass_options or {}), "runtime_options": dict(runtime_options or {}),
               "verify_options": dict(verify_options or {}), "debug_options": dict(debug_options or {})}
    frame = sys._getframe(1)
    captured = dict(frame.f_locals) if frame.f_code.co_name != "<module>" else {}

    def deco(f: Any) -> JitFunction:
        if isinstance(f, JitFunction):
            return f
        if not callable(f):
            raise FrontendError(f"@pypto.frontend.jit decorates a function, got {type(f).__name__}")
        return JitFunction(f, options, captured)

    return deco if func is None else deco(func)


def function(func: Any = None, **_kw: Any) -> Any:
    """`@pypto.frontend.function`: a helper inlined where a kernel calls it (it simply runs while
    the kernel is traced)."""
    def deco(f: Any) -> Any:
        return f
    return deco if func is None else deco(func)


def dynamic(name: str) -> SymbolicScalar:
    """A named dynamic dim for annotations (`pypto.Tensor((pypto.frontend.dynamic("b"), 64), ...)`),
    usable in the kernel body as a SymbolicScalar."""
    return SymbolicScalar(name)


__all__ = ["JitArgumentError", "JitFunction", "dynamic", "function", "jit", "StatusType"]
