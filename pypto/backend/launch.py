"""Calling a compiled program: check and marshal arguments, run, hand back the results.

`compiled(*args)` takes the entry function's parameters in order, as NumPy arrays or PyTorch CPU
tensors (passed zero-copy) and Python numbers for scalars. `pl.Out` / `pl.InOut` parameters are
written in place. Results the caller did not pass are allocated and returned; they may instead be
passed as trailing arguments, which are then filled in place (the public runtime's convention).
Omitting all `pl.Out` parameters also works: they are allocated and returned.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.ir.dtype import DataType

_TOO_HARD = getattr(np, "exceptions", np).TooHardError


class ArgumentError(TypeError):
    """Arguments that do not match the compiled program's parameters."""


@dataclass
class Param:
    name: str
    kind: str  # tensor / scalar
    dtype: DataType
    shape: list[int | str]
    dir: str  # in / out / inout / scalar
    written: bool = False  # an `in` tensor some task writes: it gets a copy (the caller's array is input)


@dataclass
class Signature:
    entry: str
    params: list[Param]
    returns: list[Param]
    slots: list[tuple[int | None, int | None]]  # per result: (parameter it is, or None; extra output index)
    build: str = ""  # a random id of the compile that wrote it

    @staticmethod
    def load(output_dir: Path) -> Signature:
        path = output_dir / "signature.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ArgumentError(f"cannot read {path}: {e}; compile the program again") from None

        def conv(p: dict, i: int) -> Param:
            return Param(p.get("name", f"result{i}"), p["kind"], DataType[p["dtype"]], list(p.get("shape", [])),
                         p.get("dir", "scalar"), bool(p.get("written", False)))

        try:
            return Signature(data["entry"], [conv(p, i) for i, p in enumerate(data["params"])],
                             [conv(r, i) for i, r in enumerate(data["returns"])],
                             [(s[0], s[1]) for s in data.get("slots", [])], str(data.get("build", "")))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise ArgumentError(f"{path} is malformed ({type(e).__name__}: {e}); compile the program again") from None


def _is_torch(v: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def _to_numpy(v: Any, p: Param) -> np.ndarray:
    if isinstance(v, np.ndarray):
        return v
    if _is_torch(v):
        import torch

        if v.device.type != "cpu":
            raise ArgumentError(f"parameter '{p.name}': tensor is on {v.device}; move it to the CPU with .cpu()")
        t = v.detach()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(DataType.BF16.to_numpy())
        try:
            return t.numpy()
        except TypeError as e:
            raise ArgumentError(f"parameter '{p.name}': cannot view torch dtype {t.dtype} as an array: {e}") from None
    raise ArgumentError(f"parameter '{p.name}' is a tensor ({p.dtype.name} {_shape_str(p.shape)}); got "
                        f"{type(v).__name__}")


def _shape_str(shape: list) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _usable(a: np.ndarray) -> bool:
    """Can the runtime take this array as is (innermost axis contiguous, positive aligned strides)?"""
    if a.ndim == 0:
        return True
    isz = a.itemsize
    if a.strides[-1] != isz and a.shape[-1] > 1:
        return False
    return all(s >= 0 and s % isz == 0 for s in a.strides) and a.__array_interface__["data"][0] % isz == 0


class Binder:
    """Binds dynamic dimension names to sizes, checking consistency."""

    def __init__(self) -> None:
        self.dims: dict[str, tuple[int, str]] = {}

    def check(self, p: Param, a: np.ndarray) -> None:
        if a.dtype != p.dtype.to_numpy():
            raise ArgumentError(f"parameter '{p.name}' expects dtype {p.dtype.name} "
                                f"({p.dtype.to_numpy()}), got {a.dtype}")
        if a.ndim != len(p.shape):
            raise ArgumentError(f"parameter '{p.name}' expects rank {len(p.shape)} {_shape_str(p.shape)}, got shape "
                                f"{list(a.shape)}")
        for ax, (d, n) in enumerate(zip(p.shape, a.shape)):
            if isinstance(d, int):
                if d != n:
                    raise ArgumentError(f"parameter '{p.name}' expects shape {_shape_str(p.shape)}, got "
                                        f"{list(a.shape)} (axis {ax})")
            elif d != "?":
                prev = self.dims.get(d)
                if prev is not None and prev[0] != n:
                    raise ArgumentError(f"dynamic dimension '{d}' is {prev[0]} from {prev[1]} but {n} from "
                                        f"parameter '{p.name}' (axis {ax})")
                self.dims.setdefault(d, (n, f"parameter '{p.name}'"))

    def shape_of(self, p: Param, what: str) -> tuple[int, ...]:
        out = []
        for d in p.shape:
            if isinstance(d, int):
                out.append(d)
            elif d in self.dims:
                out.append(self.dims[d][0])
            else:
                raise ArgumentError(f"cannot tell the shape of {what} ({_shape_str(p.shape)}); pass it as an argument")
        return tuple(out)


def _scalar(v: Any, p: Param) -> int | float:
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if _is_torch(v) and v.dim() == 0:
        v = v.item()
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if p.dtype.is_float:
        if isinstance(v, (int, float, np.integer, np.floating)):
            try:
                return float(v)
            except OverflowError:
                raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; {v} is too large for a "
                                    f"float") from None
    elif isinstance(v, (int, np.integer)):
        v = int(v)
        if p.dtype.is_int:
            lo, hi = p.dtype.int_range
            hi = min(hi, (1 << 63) - 1)  # scalars travel as int64
            if not lo <= v <= hi:
                raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; {v} is outside its range "
                                    f"[{lo}, {hi}]")
        return v
    raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; got {type(v).__name__} {v!r}")


def _bind(sig: Signature, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """The arguments in parameter order (None: an output to allocate), then any trailing outputs."""
    params = sig.params
    n = len(params)
    n_new = sum(1 for s in sig.slots if s[0] is None)
    outs_idx = [i for i, p in enumerate(params) if p.dir == "out"]
    names = ", ".join(p.name for p in params)
    if kwargs:
        if len(args) > n:
            raise ArgumentError(f"{sig.entry}() takes {n} arguments ({names}); got {len(args)} positional ones and "
                                f"keywords {', '.join(kwargs)} (trailing outputs cannot be mixed with keywords)")
        given: list[Any] = [*args, *([None] * (n - len(args)))]
        index = {p.name: i for i, p in enumerate(params)}
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                raise ArgumentError(f"{sig.entry}() has no parameter '{k}'; its parameters are {names}")
            if i < len(args):
                raise ArgumentError(f"{sig.entry}() got parameter '{k}' twice (by position and by keyword)")
            given[i] = v
        missing = [params[i].name for i, v in enumerate(given) if v is None and params[i].dir != "out"]
        if missing:
            raise ArgumentError(f"{sig.entry}() is missing argument{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(m) for m in missing)}")
        return given
    given = list(args)
    if len(given) == n - len(outs_idx) and outs_idx and len(given) != n:
        it = iter(given)
        return [None if i in outs_idx else next(it) for i in range(n)]
    if len(given) not in (n, n + n_new):
        extra = f" (+ {n_new} output{'s' if n_new > 1 else ''})" if n_new else ""
        raise ArgumentError(f"{sig.entry}() takes {n} arguments ({names}){extra}, got {len(args)}")
    return given


def _separate_overlaps(named: list[tuple[str, np.ndarray, bool]]) -> dict[int, np.ndarray]:
    """Arguments that share memory with an argument the program writes: each read-only one is
    replaced by a copy (the program reads its inputs as they were at the call, as NumPy's `out=`
    does); two written ones that overlap are an error. Returns index -> copy."""
    copies: dict[int, np.ndarray] = {}
    for i, (ni, ai, wi) in enumerate(named):
        for j in range(i):
            nj, aj, wj = named[j]
            if not (wi or wj) or not np.may_share_memory(ai, aj):
                continue
            if wi and wj:
                try:
                    overlap = np.shares_memory(ai, aj, max_work=10_000)
                except _TOO_HARD:
                    overlap = True
                if overlap:
                    raise ArgumentError(f"{ni} and {nj} are both written by the program and overlap in memory; "
                                        f"pass separate arrays")
                continue
            k = j if wi else i
            if k not in copies:
                copies[k] = np.array(named[k][1], order="C", copy=True)
    return copies


def run_compiled(compiled: Any, args: tuple, config: Any = None, kwargs: dict[str, Any] | None = None) -> Any:
    from pypto.runtime import RunConfig, Runtime

    cfg = config if config is not None else RunConfig()
    if not isinstance(cfg, (RunConfig, Runtime)):  # (a Runtime runs the program on its own workers)
        raise ArgumentError(f"config must be a pypto.runtime.RunConfig, got {type(cfg).__name__} {cfg!r}")
    sig = getattr(compiled, "_signature", None)
    if sig is None:
        sig = compiled._signature = Signature.load(compiled.output_dir)
    slots = sig.slots
    params = sig.params
    n = len(params)
    given = _bind(sig, args, kwargs or {})
    binder = Binder()
    values: list[Any] = []
    torch_in = any(_is_torch(v) for v in (*args, *(kwargs or {}).values()))
    for p, v in zip(params, given[:n]):
        if p.kind == "scalar":
            values.append(_scalar(v, p))
            continue
        if v is None:
            values.append(None)
            continue
        a = _to_numpy(v, p)
        binder.check(p, a)
        if p.dir in ("out", "inout") and not a.flags.writeable:
            raise ArgumentError(f"parameter '{p.name}' is written ({p.dir}) but the array passed is read-only")
        if p.dir == "in" and p.written:  # written by the program, declared input: work on a copy
            a = np.array(a, order="C", copy=True)
        values.append(a)
    for i, (p, v) in enumerate(zip(params, values)):
        if v is None:
            values[i] = np.zeros(binder.shape_of(p, f"output parameter '{p.name}'"), p.dtype.to_numpy())
    outputs: list[np.ndarray] = []
    extra_given = given[n:]
    k = 0
    for (pidx, _), r in zip(slots, sig.returns):
        if pidx is not None or r.kind != "tensor":
            continue
        if extra_given:
            o = _to_numpy(extra_given[k], r)
            binder.check(Param(f"output {k}", "tensor", r.dtype, r.shape, "out"), o)
            if not _usable(o) or not o.flags.writeable:
                raise ArgumentError(f"output {k} must be a writeable, contiguous, aligned array")
            o.fill(0)  # a tensor the program creates starts zeroed, wherever its buffer comes from
        else:
            o = np.zeros(binder.shape_of(r, f"result {k}"), r.dtype.to_numpy())
        outputs.append(o)
        k += 1
    tensors = [(f"parameter '{p.name}'", v, p.dir in ("out", "inout")) for p, v in zip(params, values)
               if p.kind == "tensor"] + [(f"output {k}", o, True) for k, o in enumerate(outputs) if extra_given]
    where = [i for i, p in enumerate(params) if p.kind == "tensor"] + [n + k for k in range(len(outputs))]
    writebacks: list[tuple[np.ndarray, np.ndarray]] = []
    for t, copy in _separate_overlaps(tensors).items():  # (only read-only arguments are copied)
        values[where[t]] = copy
    for i, (p, a) in enumerate(zip(params, values)):
        if p.kind == "tensor" and not _usable(a):
            c = np.array(a, order="C", copy=True)  # (ascontiguousarray keeps a misaligned array as is)
            if p.dir in ("out", "inout"):
                writebacks.append((a, c))
            values[i] = c
    platform = getattr(cfg, "platform", "cpu")
    if platform == "interp":
        _run_interp(compiled, sig, values, outputs, slots, cfg)
    elif platform == "cpu":
        _run_native(compiled, sig, values, outputs, cfg)
    else:
        raise ArgumentError(f"unknown platform {platform!r}: this build runs on 'cpu' (native) or 'interp' (NumPy)")
    for orig, tmp in writebacks:
        orig[...] = tmp
    results = []
    k = 0
    for pidx, _ in slots:
        if pidx is not None:
            copied = params[pidx].dir == "in" and params[pidx].written  # the caller's array stayed as it was
            res = given[pidx] if given[pidx] is not None and not copied else values[pidx]
            if (given[pidx] is None or copied) and torch_in:
                res = _to_torch(values[pidx])
        else:
            res = outputs[k]
            if not extra_given and torch_in:
                res = _to_torch(res)
            elif extra_given:
                res = extra_given[k]
            k += 1
        results.append(res)
    if not results:
        return None
    return results[0] if len(results) == 1 else tuple(results)


def _to_torch(a: np.ndarray) -> Any:
    import torch

    if a.dtype == DataType.BF16.to_numpy():
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _kinds(sig: Signature, n_out: int) -> list[str]:
    kinds = []
    for p in sig.params:
        if p.kind == "scalar":
            kinds.append("f64" if p.dtype.is_float else "i64")
        else:
            kinds.append(p.dir)
    return kinds + ["out"] * n_out


def _run_native(compiled: Any, sig: Signature, values: list, outputs: list, cfg: Any) -> None:
    from pypto.runtime import Runtime, default_runtime

    native = compiled._native
    if native is None:
        native = compiled._build()
    nw = getattr(cfg, "num_workers", None)
    mode = getattr(cfg, "sched_mode", "fifo")
    rt = default_runtime(nw, mode) if not isinstance(cfg, Runtime) else cfg
    trace = bool(getattr(cfg, "enable_trace", False))
    kinds = _kinds(sig, len(outputs))
    for _ in range(getattr(cfg, "warmup", 0)):  # benchmarking runs (InOut arguments see every one)
        rt.run_program(native.handle, values + outputs, kinds)
    times = []
    for _ in range(getattr(cfg, "repeat", 1)):
        result = rt.run_program(native.handle, values + outputs, kinds, trace=trace)
        times.append(result.stats.elapsed_ns / 1e9)
    compiled.last_run = result
    compiled.last_times = times  # seconds per timed run (RunConfig.repeat of them)
    if trace and result.trace is not None:
        path = Path(getattr(cfg, "trace_path", None) or (compiled.output_dir / "trace.json"))
        result.trace.to_chrome_json(path)
        record = getattr(compiled, "_record_output", None)
        if record is not None:
            record(path)


def _run_interp(compiled: Any, sig: Signature, values: list, outputs: list, slots, cfg: Any) -> None:
    from pypto.backend.interp import run_program

    kernels, orch = compiled.pto_modules()  # (the text this object compiled, not the directory's)
    check = getattr(compiled, "strategy", None) is None or compiled.strategy.name == "Default"
    rets = run_program(kernels, orch, sig.entry, values, check_hazards=check)
    k = 0
    for (pidx, _), r in zip(slots, rets or []):
        if pidx is None:
            outputs[k][...] = r
            k += 1


__all__ = ["ArgumentError", "Signature", "run_compiled"]
