"""`pypto pto FILE.pto`: check a hand-written PTO kernel, and with `--target interp|cpu` run it.

A kernel module is run once on generated arguments: random `in` / `inout` tensors, zero `out`
tensors (shapes from the kernel's tensor views, `--shape NAME=RxC` where they are dynamic),
scalars from `--scalar NAME=V` (else 1). On `cpu` it is assembled into C++ with a one-task
program that submits it, built and run by the native runtime; on `interp` the NumPy
interpreter runs it (checking pipe hazards). The outputs' checksums are printed and, with
`-o DIR`, written as DIR/NAME.npy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .cli_load import CliError, Progress, parse_assignments


def _read(path: str) -> tuple[Any, str]:
    from pypto.pto import parse_module

    p = Path(path)
    if not p.is_file():
        raise CliError(f"no such file: {p}")
    text = p.read_text()
    return parse_module(text, filename=str(p)), text


def cmd_pto(args: argparse.Namespace) -> int:
    from pypto.pto import print_module

    mod, text = _read(args.file)
    if args.target is None:
        again = print_module(mod)
        if not args.quiet:
            print(again, end="")
        status = "canonical" if again == text else "valid (not in canonical print form)"
        print(f"// {args.file}: {len(mod.funcs)} function(s), {status}", file=sys.stderr)
        return 0
    return _run(mod, args)


def _kernel(mod: Any, path: str) -> Any:
    if len(mod.funcs) != 1:
        raise CliError(f"{path}: a runnable kernel module holds one function, this one {len(mod.funcs)}")
    f = mod.funcs[0]
    kind = getattr(f.attrs.get("pto.kind"), "value", None)
    if kind != "kernel":
        raise CliError(f"{path}: @{f.name} is a {kind or 'function without pto.kind'}, not a kernel; "
                       f"run a whole program with `pypto run FILE.py`")
    return f


def _arguments(f: Any, shapes: dict[str, str], scalars: dict[str, str], seed: int) -> list[tuple[Any, str, Any]]:
    """(parameter, direction, value) for each non-runtime parameter of kernel `f`."""
    from pypto.backend.cpu.emit_orchestration import static_param_shapes
    from pypto.backend.interp.values import np_dtype
    from pypto.pto.model import PtrT

    n = len(f.args) - len(f.attrs.get("pto.runtime_args", []) or [])
    dirs = list(f.attrs.get("pto.param_dirs", []) or [])
    static = static_param_shapes(f)
    known = {a.name for a in f.args[:n]}
    for opt, table in (("--shape", shapes), ("--scalar", scalars)):
        for name in table:
            if name not in known:
                raise CliError(f"{opt} {name}: @{f.name} has no parameter %{name} (has: {', '.join(sorted(known))})")
    rng = np.random.default_rng(seed)
    out = []
    for i, a in enumerate(f.args[:n]):
        d = dirs[i] if i < len(dirs) else ("in" if isinstance(a.type, PtrT) else "scalar")
        if isinstance(a.type, PtrT):
            shape = _shape(f.name, a.name, shapes.get(a.name), static[i])
            dt = np_dtype(a.type.elem)
            if d == "out":
                val = np.zeros(shape, dt)
            elif np.issubdtype(dt, np.floating):
                val = rng.standard_normal(shape).astype(dt)
            else:
                val = rng.integers(0, 8, shape).astype(dt)
        else:
            text = scalars.get(a.name, "1")
            try:
                val = float(text) if a.type.name.startswith(("f", "bf")) else int(text)
            except ValueError:
                raise CliError(f"--scalar {a.name}={text}: not a {a.type.name} value") from None
        out.append((a, d, val))
    return out


def _shape(kernel: str, name: str, given: str | None, static: list[int | None] | None) -> tuple[int, ...]:
    if given is not None:
        try:
            dims = tuple(int(x) for x in given.lower().split("x"))
        except ValueError:
            dims = ()
        if not dims or min(dims) < 1:
            raise CliError(f"--shape {name}={given}: write the extents as RxC (positive integers)")
        return dims
    if static is None or any(d is None for d in static):
        raise CliError(f"@{kernel}: the extents of %{name} are not fixed in the kernel "
                       f"({static or 'no tensor view'}); give them with --shape {name}=RxC")
    return tuple(int(d) for d in static)  # type: ignore[arg-type]


def _one_task_program(f: Any, argv: list[tuple[Any, str, Any]]) -> Any:
    """A task program that submits kernel `f` once on its parameters (the CPU runtime runs programs)."""
    from pypto.pto import parse_module, print_type
    from pypto.pto.model import PtrT

    params, types, dirs = [], [], []
    for a, d, v in argv:
        if isinstance(a.type, PtrT):
            t = f"!pto.tensor<{'x'.join(str(x) for x in v.shape)}x{a.type.elem}>"
        else:
            t = print_type(a.type)
        params.append(f"%{a.name}: {t}")
        types.append(t)
        dirs.append(d)
    q = ", ".join(f'"{d}"' for d in dirs)
    text = (f"module {{\n  func.func @run_{f.name}({', '.join(params)}) attributes {{pto.kind = "
            f"#pto.kind<orchestration>, pto.param_dirs = [{q}]}} {{\n"
            f"    pto.submit @{f.name}({', '.join('%' + a.name for a, _, _ in argv)}) {{dirs = [{q}]}} : "
            f"({', '.join(types)})\n    func.return\n  }}\n}}\n")
    return parse_module(text, filename=f"<task program for @{f.name}>")


def _run(mod: Any, args: argparse.Namespace) -> int:
    f = _kernel(mod, args.file)
    argv = _arguments(f, parse_assignments(args.shape, "--shape"), parse_assignments(args.scalar, "--scalar"),
                      args.seed)
    values = [v for _, _, v in argv]
    if args.target == "interp":
        from pypto.backend.interp import run_kernel

        run_kernel(mod, values, check_hazards=not args.no_hazards)
    else:
        from pypto.compile.stages import native_program
        from pypto.runtime import default_runtime

        progress = Progress(args.verbose)
        progress.step(f"assembling and building @{f.name} (C++)")
        native = native_program(f"pto_cli_{f.name}", ({f.name: mod}, _one_task_program(f, argv)))
        progress.done()
        kinds = [d if d != "scalar" else ("f64" if isinstance(v, float) else "i64") for _, d, v in argv]
        default_runtime().run_program(native.handle, values, kinds)
    out = Path(args.output) if args.output else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    print(f"ran @{f.name} on {args.target}")
    for a, d, v in argv:
        if d in ("out", "inout"):
            line = f"  %{a.name}: {v.dtype}{list(v.shape)} sum {float(np.sum(v, dtype=np.float64)):.6g}"
            if out is not None:
                np.save(out / f"{a.name}.npy", v)
                line += f" -> {out / (a.name + '.npy')}"
            print(line)
    return 0


__all__ = ["cmd_pto"]
