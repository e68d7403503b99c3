"""`pypto.runtime.run(program, tensor_specs, golden, config=None)`: the March 2026 form of `run`.

That era's `run` compiled the program, built its arguments from `TensorSpec`s (outputs start at
zero), ran it, computed the expected outputs with `golden(tensors, params)` (which writes
`tensors[name]` in place for each output) and compared them with `config.rtol` / `config.atol`.
It returned a `RunResult(passed, error=..., execution_time=...)` rather than raising, and so does
this one: a compile error, a run error and a mismatch all come back as `passed=False` with the
reason in `error`. Today's `run(program, *tensors, config=None)` is in `public.py`, which hands a
call whose first argument is a list of specs here.
"""

from __future__ import annotations

import inspect
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any


def is_spec_list(v: Any) -> bool:
    from .public import ScalarSpec, TensorSpec

    return isinstance(v, (list, tuple)) and bool(v) and all(isinstance(s, (TensorSpec, ScalarSpec)) for s in v)


def _call_golden(golden: Callable, tensors: dict, params: dict) -> None:
    try:
        n = len(inspect.signature(golden).parameters)
    except (TypeError, ValueError):
        n = 2
    golden(tensors, params) if n >= 2 else golden(tensors)


def _mismatch(name: str, got: Any, want: Any, rtol: float, atol: float) -> str | None:
    import torch

    g, w = got.detach().float(), want.detach().float()
    if g.shape != w.shape:
        return f"output '{name}': shape {tuple(g.shape)} vs golden {tuple(w.shape)}"
    close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    bad = int((~close).sum())
    diff = (g - w).abs()
    diff = diff[~torch.isnan(diff)]
    worst = float(diff.max()) if diff.numel() else float("nan")
    return (f"output '{name}' does not match the golden: {bad}/{g.numel()} elements differ "
            f"(rtol={rtol}, atol={atol}), max abs diff {worst:.4g}")


def run_with_golden(program: Any, tensor_specs: Sequence[Any], golden: Callable | None, config: Any = None) -> Any:
    from .public import ScalarSpec, _compile, _compile_options
    from .run_config import RunConfig
    from .runner import RunResult

    cfg = config if config is not None else RunConfig()
    start = time.monotonic()
    try:
        compiled = _compile(program, **_compile_options(cfg))
        if cfg.codegen_only:
            return RunResult(passed=True, execution_time=time.monotonic() - start)
        args: list[Any] = []
        tensors: dict[str, Any] = {}
        for s in tensor_specs:
            if isinstance(s, ScalarSpec):
                args.append(s.value)
                continue
            t = s.create_tensor()
            if s.is_output:
                t.zero_()  # (outputs start at zero; their content is the program's)
            tensors[s.name] = t
            args.append(t)
        expected = {n: t.clone() for n, t in tensors.items()}
        compiled(*args, config=cfg)
        if golden is not None:
            _call_golden(golden, expected, {s.name: s.value for s in tensor_specs if isinstance(s, ScalarSpec)})
            for s in tensor_specs:
                if not isinstance(s, ScalarSpec) and s.is_output:
                    why = _mismatch(s.name, tensors[s.name], expected[s.name], cfg.rtol, cfg.atol)
                    if why is not None:
                        return RunResult(passed=False, error=why, execution_time=time.monotonic() - start)
        return RunResult(passed=True, execution_time=time.monotonic() - start)
    except Exception:  # the March API reports every failure in the result
        return RunResult(passed=False, error=traceback.format_exc(), execution_time=time.monotonic() - start)
