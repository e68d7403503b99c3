"""The CPU target: PTO text -> C++ over the tile-instruction library -> native shared object.

`build_program(output_dir, name)` reads the `.pto` files a compile wrote (the PTO boundary: the
text, not IR objects), assembles them, builds them through the content-hash cache, and loads them.
"""

from __future__ import annotations

from pathlib import Path

from pypto.pto.model import Module

from .emit_common import AssemblyError
from .program import AssembledProgram, NativeProgram, assemble, build


def parse_modules(texts: dict[str, str]) -> tuple[dict[str, Module], Module | None]:
    """Parse a program's PTO files (path -> text, `.../kernels/*.pto` and one
    `.../orchestration/*.pto`) into kernels by function name and the task program."""
    from pypto.pto.parser import parse_module

    kernels: dict[str, Module] = {}
    orchs: list[Module] = []
    for path, text in sorted(texts.items()):
        mod = parse_module(text, filename=path)
        if Path(path).parent.name == "orchestration":
            orchs.append(mod)
        elif len(mod.funcs) != 1:
            raise AssemblyError(f"{path}: a kernel module must hold exactly one function")
        else:
            kernels[mod.funcs[0].name] = mod
    if len(orchs) > 1:
        raise AssemblyError(f"{len(orchs)} task programs (orchestration/*.pto); expected one")
    return kernels, (orchs[0] if orchs else None)


def read_modules(output_dir: Path) -> tuple[dict[str, Module], Module | None]:
    """The PTO modules of an output directory, as `parse_modules` gives them."""
    out = Path(output_dir)
    files = sorted((out / "kernels").glob("*.pto")) + sorted((out / "orchestration").glob("*.pto"))
    return parse_modules({str(p): p.read_text() for p in files})


def build_program(output_dir: str | Path, name: str) -> NativeProgram:
    """Assemble and build the PTO files of an output directory (hand-edited ones included)."""
    kernels, orch = read_modules(Path(output_dir))
    return build(assemble(name, kernels, orch))


__all__ = ["AssembledProgram", "AssemblyError", "NativeProgram", "assemble", "build", "build_program",
           "parse_modules", "read_modules"]
