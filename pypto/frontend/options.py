"""Options of the tensor-level frontend (reference §1.9): `pypto.set_pass_options(...)` and its
siblings, `pypto.set_options(...)`, scoped `with pypto.options(...)` / `@pypto.options(...)`,
`pypto.reset_options()`, `pypto.get_options_tree()`, `pypto.set_semantic_label(...)`.

Options a kernel is compiled with are the process-wide ones (innermost scope last) overridden by
the jit decorator's own dicts. Options that mean something on the CPU are honoured:

  runtime_options   platform ("cpu" | "interp"), num_workers, run_mode (NPU and SIM both run here),
                    device_sched_mode (1 / 3: the runtime's locality scheduling, 0 / 2: FIFO)
  host_options      compile_stage (pypto.CompStage)
  pass_options      sg_set_scope (merge_scopes.py: the ops recorded under one id make one kernel),
                    vec_nbuffer_setting (n loop iterations per task, one kernel)
  debug_options     compile_debug_mode (writes the graph levels), runtime_debug_mode 1 (a swimlane
                    trace of each run), report_options (lists the rest)
  vec_tile_shapes / cube_tile_shapes (set_options): as set_vec_tile_shapes / set_cube_tile_shapes

Every other key of the reference is accepted and recorded (it tunes Ascend hardware: partitioning,
n-buffering, scheduling threads, ...); `debug_options={"report_options": True}` lists, at compile,
which options of a kernel were accepted without effect here.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from pypto.errors import InvalidType

GROUPS = ("host_options", "codegen_options", "pass_options", "runtime_options", "verify_options", "debug_options",
          "operation_options")
HONOURED = {"runtime_options": {"platform", "num_workers", "run_mode", "device_sched_mode", "runtime_debug_mode"},
            "host_options": {"compile_stage"}, "pass_options": {"sg_set_scope", "vec_nbuffer_setting"},
            "debug_options": {"compile_debug_mode", "dump_graph", "report_options", "runtime_debug_mode"}}

# the scope stack: each entry a dict group -> {key: value}; [0] is the process-wide scope
_SCOPES: list[dict[str, dict[str, Any]]] = [{g: {} for g in GROUPS}]
_LABEL: list[str] = [""]
VERSION = [0]  # bumped on every change (the jit's warm path keys on it)


def _set(group: str, kw: dict[str, Any]) -> None:
    _SCOPES[-1][group].update(kw)
    VERSION[0] += 1
    from .trace import active

    tr = active()
    if tr is not None:  # set inside a kernel: ops recorded from here on see it
        tr.options.setdefault(group, {}).update(kw)


def traced_option(group: str, key: str, default: Any = None) -> Any:
    """An option as the op being recorded sees it: the trace's (the decorator's over the scopes',
    updated by set_*_options calls in the kernel), else the scopes'."""
    from .trace import active

    tr = active()
    if tr is not None:
        return tr.options.get(group, {}).get(key, default)
    return _get(group).get(key, default)


def _get(group: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scope in _SCOPES:
        out.update(scope[group])
    return out


def set_host_options(**kw: Any) -> None:
    _set("host_options", kw)


def set_codegen_options(**kw: Any) -> None:
    _set("codegen_options", kw)


def set_pass_options(**kw: Any) -> None:
    _set("pass_options", kw)


def set_runtime_options(**kw: Any) -> None:
    _set("runtime_options", kw)


def set_verify_options(**kw: Any) -> None:
    _set("verify_options", kw)


def set_debug_options(**kw: Any) -> None:
    _set("debug_options", kw)


def get_host_options() -> dict[str, Any]:
    return _get("host_options")


def get_codegen_options() -> dict[str, Any]:
    return _get("codegen_options")


def get_pass_options() -> dict[str, Any]:
    return _get("pass_options")


def get_runtime_options() -> dict[str, Any]:
    return _get("runtime_options")


def get_verify_options() -> dict[str, Any]:
    return _get("verify_options")


def get_debug_options() -> dict[str, Any]:
    return _get("debug_options")


def set_options(**groups: Any) -> None:
    """`set_options(pass_options={...}, runtime_options={...}, vec_tile_shapes=(...), ...)`."""
    from .control import set_cube_tile_shapes, set_vec_tile_shapes

    for k, v in groups.items():
        if k == "vec_tile_shapes":
            set_vec_tile_shapes(*v)
        elif k == "cube_tile_shapes":
            set_cube_tile_shapes(*v)
        elif k in GROUPS:
            _set(k, dict(v or {}))
        else:
            raise InvalidType(f"pypto.set_options: unknown option group {k!r} (groups: {', '.join(GROUPS)}, "
                            "vec_tile_shapes, cube_tile_shapes)")


def reset_options() -> None:
    del _SCOPES[1:]
    for g in GROUPS:
        _SCOPES[0][g].clear()
    _LABEL[0] = ""
    VERSION[0] += 1


def get_options_tree() -> list[dict[str, dict[str, Any]]]:
    """The scopes, outermost first (copies)."""
    return [{g: dict(v) for g, v in s.items()} for s in _SCOPES]


class options(contextlib.ContextDecorator):  # noqa: N801  (the reference's spelling)
    """A scope of options: `with pypto.options(name="attn", pass_options={...}, vec_tile_shapes=(...)):`
    or as a decorator. Option groups as keyword dicts; other keywords go to `operation_options`."""

    def __init__(self, name: str = "", **groups: Any):
        self.name = name
        self.groups = groups

    def __enter__(self) -> options:
        _SCOPES.append({g: {} for g in GROUPS})
        for k, v in self.groups.items():
            if k in GROUPS:
                _SCOPES[-1][k].update(dict(v or {}))
            elif k in ("vec_tile_shapes", "cube_tile_shapes"):
                set_options(**{k: v})
            else:
                _SCOPES[-1]["operation_options"][k] = v
        VERSION[0] += 1
        return self

    def __exit__(self, *exc: Any) -> bool:
        if len(_SCOPES) > 1:
            _SCOPES.pop()
        VERSION[0] += 1
        return False


def set_semantic_label(label: str) -> None:
    """Tag the ops recorded from here on (the tensor graph's JSON shows the label; "" ends it)."""
    _LABEL[0] = str(label)


def get_semantic_label() -> str:
    return _LABEL[0]


def set_print_options(**kw: Any) -> None:
    """Accepted for compatibility (NumPy arrays print the results here)."""


def effective(jit_options: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The options a kernel compiles with: the scopes' values overridden by the decorator's."""
    return {g: {**_get(g), **jit_options.get(g, {})} for g in GROUPS}


def key_of(opts: dict[str, dict[str, Any]]) -> str:
    """A text of the options for the specialisation key."""
    return repr(sorted((g, sorted((k, repr(v)) for k, v in kv.items())) for g, kv in opts.items() if kv))


def report_ignored(name: str, opts: dict[str, dict[str, Any]]) -> list[str]:
    """The options accepted without effect on this backend (printed when report_options is set)."""
    ignored = [f"{g}.{k}" for g, kv in opts.items() for k in kv if k not in HONOURED.get(g, set())]
    if opts.get("debug_options", {}).get("report_options"):
        print(f"pypto: {name}: options accepted without effect on the CPU backend: "
              f"{', '.join(ignored) or 'none'}", file=sys.stderr)
    return ignored


NAMES = ("set_host_options", "set_codegen_options", "set_pass_options", "set_runtime_options", "set_verify_options",
         "set_debug_options", "get_host_options", "get_codegen_options", "get_pass_options", "get_runtime_options",
         "get_verify_options", "get_debug_options", "set_options", "reset_options", "get_options_tree", "options",
         "set_semantic_label", "get_semantic_label", "set_print_options")  # (what pypto.* exports from here)


__all__ = list(NAMES) + ["GROUPS", "HONOURED", "effective", "report_ignored"]
