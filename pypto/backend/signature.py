"""The calling signature of a compiled program: its entry's parameters and results, and where each
result lands. A compile writes it as `signature.json`; calling checks arguments against it.

`Signature.to_json()` and `Signature.load()` are inverse: a signature read back from its file is
equal to the one the compile built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pypto.errors import Error
from pypto.ir.dtype import DataType


class ArgumentError(Error, TypeError):
    """Arguments that do not match the compiled program's parameters."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # tensor / scalar
    dtype: DataType
    shape: tuple[int | str, ...]  # an int, a dynamic dimension's name, or "?"
    dir: str  # in / out / inout / scalar
    written: bool = False  # an `in` tensor some task writes: it gets a copy (the caller's array is input)


@dataclass(frozen=True)
class Signature:
    entry: str
    params: tuple[Param, ...]
    returns: tuple[Param, ...]  # named `result<k>`, direction "scalar" (only kind, dtype and shape count)
    slots: tuple[tuple[int | None, int | None], ...]  # per result: (parameter it is, or None; extra output index)
    build: str = ""  # a random id of the compile that wrote it

    @staticmethod
    def load(output_dir: Path) -> Signature:
        """Read `output_dir/signature.json` (an `ArgumentError` naming the file if it is not one)."""
        path = output_dir / "signature.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ArgumentError(f"cannot read {path}: {e}; compile the program again") from None

        def conv(p: dict, i: int) -> Param:
            return Param(p.get("name", f"result{i}"), p["kind"], DataType[p["dtype"]], tuple(p.get("shape", [])),
                         p.get("dir", "scalar"), bool(p.get("written", False)))

        try:
            return Signature(data["entry"], tuple(conv(p, i) for i, p in enumerate(data["params"])),
                             tuple(conv(r, i) for i, r in enumerate(data["returns"])),
                             tuple((s[0], s[1]) for s in data.get("slots", [])), str(data.get("build", "")))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise ArgumentError(f"{path} is malformed ({type(e).__name__}: {e}); compile the program again") from None

    def to_json(self) -> str:
        """The text of `signature.json`."""

        def param(p: Param) -> dict:
            if p.kind == "tensor":
                return {"name": p.name, "kind": p.kind, "dtype": p.dtype.name, "shape": list(p.shape),
                        "dir": p.dir, "written": p.written}
            return {"name": p.name, "kind": p.kind, "dtype": p.dtype.name}

        def result(r: Param) -> dict:
            if r.kind == "tensor":
                return {"kind": r.kind, "dtype": r.dtype.name, "shape": list(r.shape)}
            return {"kind": r.kind, "dtype": r.dtype.name}

        return json.dumps({"entry": self.entry, "params": [param(p) for p in self.params],
                           "returns": [result(r) for r in self.returns], "slots": [list(s) for s in self.slots],
                           "build": self.build}, indent=2)


__all__ = ["ArgumentError", "Param", "Signature"]
