"""`pypto.backend.pto_backend`: the public PyPTO's code-generation module path.

`PartialCodegenError` (codegen failed after writing some files) and `generate(program, output_dir,
skip_ptoas=False)`, which compiles a program into `output_dir` and returns the files it wrote
(relative path -> text); on this CPU build that is `ir.compile`'s output (PTO modules, the
signature, lowered IR; with `skip_ptoas=False` also the C++). There is no ptoas here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pypto.errors import Error


class PartialCodegenError(Error, RuntimeError):
    """Code generation failed after some files were written (the message names the failure)."""


def generate(program: Any, output_dir: str | os.PathLike, skip_ptoas: bool = False, **compile_options: Any) -> dict:
    import importlib  # (string-keyed: the backend sits below the compile driver)

    compile_ = importlib.import_module("pypto.compile").compile
    compiled = compile_(program, output_dir=output_dir, skip_ptoas=skip_ptoas, **compile_options)
    root = Path(compiled.output_dir)
    return {str(p.relative_to(root)): p.read_text(errors="replace") for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".pypto") and p.suffix in (".pto", ".cpp", ".json", ".py")}


__all__ = ["PartialCodegenError", "generate"]
