"""The test suite's own layout: what several test modules share lives in `tests/programs/`, and no
test module imports another (pytest collects every test module, so importing one runs its module
code twice and ties unrelated tests together). Imports are read with `ast`, those inside
functions and the ones subprocess scripts spell in strings included."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_IMPORT_IN_TEXT = re.compile(r"\b(?:from|import)\s+(tests(?:\.\w+)+)")


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path) -> set[str]:
    """Module names under `tests` that `path` imports (absolute or relative), or names in a string."""
    tree = ast.parse(path.read_text(), str(path))
    package = ".".join(path.relative_to(TESTS.parent).parent.parts)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, `level - 1` packages up
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out |= set(_IMPORT_IN_TEXT.findall(node.value))
    return {m for m in out if m == "tests" or m.startswith("tests.")}


def test_no_test_module_imports_another():
    found = set()
    for path in _modules():
        for mod in _imported(path):
            parts = mod.split(".")
            hit = next((i for i, part in enumerate(parts) if part.startswith("test_")), None)
            if hit is not None:
                found.add(f"{path.relative_to(TESTS.parent)} imports {'.'.join(parts[:hit + 1])}")
    found = sorted(found)
    assert not found, "move what is shared into tests/programs/:\n" + "\n".join(found)


def test_shared_modules_live_in_tests_programs():
    """Besides test modules and conftest.py files, Python files under tests/ are in tests/programs/."""
    stray = [str(p.relative_to(TESTS.parent)) for p in _modules()
             if not p.name.startswith("test_") and p.name != "conftest.py"
             and (TESTS / "programs") not in p.parents]
    assert not stray, f"shared test code belongs in tests/programs/: {stray}"
