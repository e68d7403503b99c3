"""The CPU target: PTO text -> C++ over the tile-instruction library -> native shared object.

`build_program(output_dir, name)` reads the `.pto` files a compile wrote (the PTO boundary: the
text, not IR objects), assembles them, builds them through the content-hash cache, and loads them.
"""

from __future__ import annotations

from pathlib import Path

from pypto.pto.model import Module

from .emit_common import AssemblyError
from .program import AssembledProgram, NativeProgram, assemble, build


def read_modules(output_dir: Path) -> tuple[dict[str, Module], Module | None]:
    from pypto.pto.parser import parse_module

    kernels = {}
    for p in sorted((output_dir / "kernels").glob("*.pto")):
        kernels[p.stem] = parse_module(p.read_text(), filename=str(p))
    orch = None
    files = sorted((output_dir / "orchestration").glob("*.pto"))
    if len(files) > 1:
        raise AssemblyError(f"{output_dir}/orchestration holds {len(files)} task programs; expected one")
    if files:
        orch = parse_module(files[0].read_text(), filename=str(files[0]))
    return kernels, orch


def build_program(output_dir: str | Path, name: str) -> NativeProgram:
    out = Path(output_dir)
    kernels, orch = read_modules(out)
    asm = assemble(name, kernels, orch)
    native = out / "native"
    native.mkdir(parents=True, exist_ok=True)
    (native / f"{name}.cpp").write_text(asm.source)
    return build(asm)


__all__ = ["AssembledProgram", "AssemblyError", "NativeProgram", "assemble", "build", "build_program",
           "read_modules"]
