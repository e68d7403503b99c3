"""`debug/run.py`: a self-contained script written beside every `@pl.jit` compile that re-runs the
compiled program on inputs it makes itself (`_inline_inputs`: random inputs, zeroed outputs, the
scalars of the call), so a build directory can be replayed without the code that called it.
`PYPTO_EMIT_DEBUG_RUNNER=0` turns it off."""

from __future__ import annotations

import os
from typing import Any

from pypto.ir.dtype import DataType
from pypto.ir.enums import ParamDirection

_TORCH_NAMES = {DataType.FP16: "float16", DataType.FP32: "float32", DataType.BF16: "bfloat16",
                DataType.INT8: "int8", DataType.INT16: "int16", DataType.INT32: "int32", DataType.INT64: "int64",
                DataType.UINT8: "uint8", DataType.BOOL: "bool", DataType.INDEX: "int64"}

_TEMPLATE = '''"""Re-run the @pl.jit program {name!r} compiled into this directory (written by PyPTO).

    python debug/run.py

Inputs are made here (`_inline_inputs`): random data for inputs, zeros for outputs, the call's scalars.
"""

import pathlib

import torch

from pypto.ir.compiled_program import CompiledProgram

BUILD_DIR = pathlib.Path(__file__).resolve().parent.parent


def _inline_inputs():
    torch.manual_seed(0)
    return [
{args}
    ]


def main():
    compiled = CompiledProgram.from_dir(BUILD_DIR)
    args = _inline_inputs()
    compiled(*args)
    for name, value in zip({names!r}, args):
        if isinstance(value, torch.Tensor):
            print(name, tuple(value.shape), value.dtype, float(value.double().abs().sum()))


if __name__ == "__main__":
    main()
'''


def _tensor_expr(shape: tuple[int, ...], dt: DataType, direction: ParamDirection) -> str:
    tdt = _TORCH_NAMES.get(dt)
    if tdt is None:
        return f"None  # {dt.name}: no torch dtype; supply this argument by hand"
    shp = "(" + ", ".join(str(max(d, 1)) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    if direction is ParamDirection.Out:
        return f"torch.zeros({shp}, dtype=torch.{tdt})"
    if dt.is_float:
        return f"torch.randn({shp}, dtype=torch.{tdt})"
    if dt is DataType.BOOL:
        return f"torch.randint(0, 2, {shp}).to(torch.bool)"
    return f"torch.randint(0, 8, {shp}, dtype=torch.{tdt})"


def render(name: str, params: list[tuple[str, Any]]) -> str:
    lines = []
    for pname, text in params:
        lines.append(f"        {text},  # {pname}")
    return _TEMPLATE.format(name=name, args="\n".join(lines), names=tuple(p for p, _ in params))


def write_run_script(compiled: Any, call: Any) -> None:
    """Write `debug/run.py` into the compiled program's directory (recorded as its file)."""
    if os.environ.get("PYPTO_EMIT_DEBUG_RUNNER", "1") == "0":
        return
    from pypto.compile.output import record

    sig = compiled.signature
    params: list[tuple[str, str]] = []
    for p in sig.params:
        if p.kind == "tensor":
            meta = call.metas.get(p.name)
            shape = meta.extents if meta is not None else tuple(d if isinstance(d, int) else 1 for d in p.shape)
            params.append((p.name, _tensor_expr(shape, p.dtype, ParamDirection[p.dir.capitalize()
                                                                              if p.dir != "inout" else "InOut"])))
        else:
            v = call.scalars.get(p.name, (0, None))[0]
            params.append((p.name, repr(v)))
    path = compiled.output_dir / "debug" / "run.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(compiled.name, params), encoding="utf-8")
    record(compiled.output_dir, path)


__all__ = ["render", "write_run_script"]
