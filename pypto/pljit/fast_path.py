"""The warm call's direct route to the native runtime.

A call plan is made after a full call (binding checked every argument's dtype, rank, extents and
dynamic dims) and is used only for arguments of exactly that signature (shapes, dtypes,
contiguity), so a warm call need not bind again. When the compiled program is simple enough —
native platform, every result written into a parameter, no input that a task writes (those need
a private copy), no trace or repeat runs — the plan hands the arguments' memory straight to
`Runtime.run_program`. Anything else (and any call whose tensors share memory, which binding
separates) goes through `CompiledProgram.__call__`.
"""

from __future__ import annotations

from typing import Any


def native_runner(compiled: Any, cfg: Any) -> Any:
    """A `run(args) -> bool` for the compiled program (False: use the ordinary call), or None when
    the program or the config needs the ordinary call every time."""
    from pypto.backend.binding import _scalar, _to_numpy
    from pypto.backend.launch import _kinds
    from pypto.runtime import default_runtime

    platform = getattr(cfg, "platform", "cpu") if cfg is not None else "cpu"
    if platform == "interp":
        return None
    if cfg is not None and (cfg.enable_trace or cfg.warmup or cfg.repeat != 1):
        return None
    sig = compiled.signature
    params = sig.params
    if any(pidx is None for pidx, _ in sig.slots):
        return None  # (a result that is no parameter: allocated per call)
    if any(p.kind == "tensor" and p.dir == "in" and p.written for p in params):
        return None
    native = compiled.native_library()
    kinds = _kinds(sig, 0)
    tensors = tuple(i for i, p in enumerate(params) if p.kind == "tensor")
    scalars = tuple(i for i, p in enumerate(params) if p.kind == "scalar")
    workers = cfg.workers if cfg is not None else None
    mode = cfg.sched_mode if cfg is not None else "fifo"
    handle = native.handle

    def run(args: list[Any]) -> bool:
        bases = set()
        for i in tensors:
            a = args[i]
            if hasattr(a, "untyped_storage"):
                bases.add(a.untyped_storage().data_ptr())
            elif getattr(a, "base", None) is None:
                bases.add(a.__array_interface__["data"][0])
            else:
                return False  # (a NumPy view: binding checks what it overlaps)
        if len(bases) != len(tensors):
            return False  # (tensors sharing memory: binding decides what to copy)
        vals = list(args)
        for i in tensors:
            vals[i] = _to_numpy(args[i], params[i])
        for i in scalars:
            vals[i] = _scalar(args[i], params[i])
        default_runtime(workers, mode).run_program(handle, vals, kinds)
        return True

    return run


__all__ = ["native_runner"]
