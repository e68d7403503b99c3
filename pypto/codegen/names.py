"""Unique, readable SSA names within one PTO function."""

from __future__ import annotations

import re

_BAD = re.compile(r"[^A-Za-z0-9_]")


class Namer:
    def __init__(self) -> None:
        self.used: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = _BAD.sub("_", hint or "v") or "v"
        if base[0].isdigit():
            base = "v" + base
        name = base
        k = 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name
