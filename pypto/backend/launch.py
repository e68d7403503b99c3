"""Calling a compiled program: bind the arguments, run on a platform, hand back the results.

`compiled(*args)` takes the entry function's parameters in order, as NumPy arrays or PyTorch CPU
tensors (passed zero-copy) and Python numbers for scalars. `pl.Out` / `pl.InOut` parameters are
written in place. Results the caller did not pass are allocated and returned; they may instead be
passed as trailing arguments, which are then filled in place (the public runtime's convention).
Omitting all `pl.Out` parameters also works: they are allocated and returned.

A call is three steps, each a function here:

    cfg = run_config(config)            # RunConfig (or a Runtime to run on)
    call = bind(signature, args, kw)    # -> BoundCall (pypto/backend/binding.py)
    run = dispatch(program, call, cfg)  # cpu (native runtime) or interp (NumPy); -> NativeRun | None
    return unpack(call)                 # copy back, pick what the caller gets (torch or NumPy)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pypto.ir.dtype import DataType

from .binding import BoundCall, bind
from .signature import ArgumentError, Signature


class Launchable(Protocol):
    """What running needs from a compiled program (`pypto.compile.CompiledProgram` is one)."""

    @property
    def output_dir(self) -> Path: ...  # where a trace goes unless RunConfig.trace_path says otherwise

    @property
    def synced(self) -> bool: ...  # its kernels carry InsertSync's flags: the interpreter checks hazards

    def native_library(self) -> Any: ...  # an object with `.handle` (pypto.runtime.ProgramHandle)

    def pto_modules(self) -> tuple[dict[str, Any], Any]: ...  # kernels by name, the task program


@dataclass(frozen=True)
class NativeRun:
    """What a run on the native runtime leaves besides its outputs."""

    result: Any  # the last timed run's pypto.runtime.RunResult (stats, trace)
    times: list[float]  # seconds per timed run (RunConfig.repeat of them)
    trace_path: Path | None  # the Chrome trace written (RunConfig.enable_trace), else None


_DEFAULT: Any = None


def run_config(config: Any) -> Any:
    """The run configuration: `config`, or the default `RunConfig()` for None."""
    from pypto.runtime import RunConfig, Runtime

    if config is None:  # (one default instance: only read here, and building one costs a few us per call)
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = RunConfig()
        return _DEFAULT
    cfg = config
    if not isinstance(cfg, (RunConfig, Runtime)):  # (a Runtime runs the program on its own workers)
        raise ArgumentError(f"config must be a pypto.runtime.RunConfig, got {type(cfg).__name__} {cfg!r}")
    return cfg


def dispatch(program: Launchable, call: BoundCall, cfg: Any) -> NativeRun | None:
    """Run `call` on the platform `cfg` names; the outputs are written in `call`'s arrays."""
    platform = getattr(cfg, "platform", "cpu")
    if platform == "interp":
        _run_interp(program, call)
        return None
    if platform in _PUBLIC_PLATFORMS:
        _note_public_platform(platform)
        platform = "cpu"
    if platform == "cpu":
        return _run_native(program, call, cfg)
    raise ArgumentError(f"unknown platform {platform!r}: this build runs on 'cpu' (native) or 'interp' (NumPy)")


_PUBLIC_PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")
_NOTED: set[str] = set()


def _note_public_platform(platform: str) -> None:
    """Say once per process that an Ascend platform name runs on the CPU here."""
    if platform not in _NOTED:
        _NOTED.add(platform)
        import logging

        logging.getLogger("pypto.runtime").warning(
            "platform %r: this PyPTO build has no Ascend device or simulator; running on the CPU runtime", platform)


def unpack(call: BoundCall) -> Any:
    """After the run: copy results back into arguments that were run on a copy, and return the
    results — the caller's own object where it passed one, else the array written (as a torch
    tensor when the call passed torch tensors); one result bare, several as a tuple, none as None."""
    for orig, tmp in call.writebacks:
        orig[...] = tmp
    params, given, values = call.signature.params, call.given, call.values
    trailing = call.trailing
    results = []
    k = 0
    for pidx, _ in call.signature.slots:
        if pidx is not None:
            copied = params[pidx].dir == "in" and params[pidx].written  # the caller's array stayed as it was
            res = given[pidx] if given[pidx] is not None and not copied else values[pidx]
            if (given[pidx] is None or copied) and call.torch:
                res = _to_torch(values[pidx])
        else:
            res = call.outputs[k]
            if not trailing and call.torch:
                res = _to_torch(res)
            elif trailing:
                res = trailing[k]
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


def _run_native(program: Launchable, call: BoundCall, cfg: Any) -> NativeRun:
    from pypto.runtime import Runtime, default_runtime

    native = program.native_library()
    nw = getattr(cfg, "workers", getattr(cfg, "num_workers", None))
    mode = getattr(cfg, "sched_mode", "fifo")
    rt = default_runtime(nw, mode) if not isinstance(cfg, Runtime) else cfg
    trace = bool(getattr(cfg, "enable_trace", False))
    args = [*call.values, *call.outputs]
    kinds = _kinds(call.signature, len(call.outputs))
    for _ in range(getattr(cfg, "warmup", 0)):  # benchmarking runs (InOut arguments see every one)
        rt.run_program(native.handle, args, kinds)
    times = []
    for _ in range(getattr(cfg, "repeat", 1)):
        result = rt.run_program(native.handle, args, kinds, trace=trace)
        times.append(result.stats.elapsed_ns / 1e9)
    path = None
    if trace and result.trace is not None:
        result.trace.kernel_info = kernel_info(program.output_dir)
        path = Path(getattr(cfg, "trace_path", None) or (Path(program.output_dir) / "trace.json"))
        result.trace.to_chrome_json(path)
    return NativeRun(result, times, path)


def kernel_info(output_dir: Any) -> dict[str, dict[str, Any]]:
    """Kernel name -> {"source": "file.py:line"} from the compile's report/memory.json (empty if absent):
    the trace's slices then name the user's line that defines each kernel."""
    import json

    p = Path(output_dir) / "report" / "memory.json"
    try:
        rep = json.loads(p.read_text())
        return {k["function"]: {"source": k["source"]} for k in rep["kernels"] if k.get("source")}
    except (OSError, ValueError, KeyError, TypeError):  # (no report, or not one: the trace goes without)
        return {}


def _run_interp(program: Launchable, call: BoundCall) -> None:
    from pypto.backend.interp import run_program

    kernels, orch = program.pto_modules()  # (the text this object compiled, not the directory's)
    rets = run_program(kernels, orch, call.signature.entry, list(call.values), check_hazards=program.synced)
    k = 0
    for (pidx, _), r in zip(call.signature.slots, rets or []):
        if pidx is None:
            call.outputs[k][...] = r
            k += 1


__all__ = ["ArgumentError", "BoundCall", "Launchable", "NativeRun", "Signature", "bind", "dispatch", "run_config",
           "unpack"]
