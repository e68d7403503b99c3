"""The layering of ARCHITECTURE.md, enforced: each package may import only the packages below it.

Edges are read from the source with `ast` (imports inside functions count too). `pypto.ir` serves
`ir.compile` and `ir.OptimizationStrategy` from upper layers through a lazy, string-keyed table,
which is not an import edge of the IR core.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "pypto"

BASE = {"pypto.config", "pypto.support"}
ALLOWED: dict[str, set[str]] = {
    "pypto.errors": set(),  # the error hierarchy: every layer may raise pypto errors
    "pypto.config": set(),
    "pypto.support": {"pypto.config", "pypto.support"},
    "pypto.ir": {"pypto.ir"},
    "pypto.ops": {"pypto.ir", "pypto.ops"},
    "pypto.language": {"pypto.ir", "pypto.ops", "pypto.language"},
    # the tensor-level frontend: traces into pl programs, compiles them (ir.compile), runs them (RunConfig)
    "pypto.frontend": {"pypto.ir", "pypto.ops", "pypto.language", "pypto.frontend", "pypto.runtime",
                       "pypto.passes", "pypto.compile", "pypto.target"} | BASE,
    "pypto.target": {"pypto.ir.dtype", "pypto.ir.enums"} | BASE,  # machine descriptions: pure data
    "pypto.pto": {"pypto.pto"},
    "pypto.runtime": {"pypto.runtime"} | BASE,
    "pypto.backend": {"pypto.backend", "pypto.pto", "pypto.ops", "pypto.ir.dtype", "pypto.ir.enums",
                      "pypto.runtime", "pypto.target"} | BASE,
    # analyses compute facts about a program; passes and codegen read them, they read no pass
    "pypto.passes.analysis": {"pypto.ir", "pypto.ops", "pypto.target", "pypto.passes.analysis"} | BASE,
    "pypto.passes": {"pypto.ir", "pypto.ops", "pypto.passes", "pypto.target"} | BASE,
    "pypto.codegen": {"pypto.ir", "pypto.ops", "pypto.codegen", "pypto.pto", "pypto.target",
                      "pypto.passes.analysis"} | BASE,
    "pypto.compile": {"pypto"},  # the compile driver sits on top of the pipeline
    "pypto.pljit": {"pypto"},
    "pypto.pypto_core": {"pypto"},  # the public package's native-core module path, re-exporting ours  # @pl.jit: specialises, compiles (ir.compile) and runs; served lazily as pl.jit
    "pypto.driver": {"pypto"},  # (its old name, re-exporting pypto.compile)
    "pypto.extend": {"pypto.ops", "pypto.backend.cpu.lowering"},  # (ops from user modules)
    "pypto.tools": {"pypto"},
    # torch_codegen: programs as PyTorch code; its runtime evaluates the op registry's references
    "pypto.debug": {"pypto.ir", "pypto.ops", "pypto.debug"},
    "pypto": {"pypto.ops", "pypto.config", "pypto.ir.dtype", "pypto.errors", "pypto.frontend"},
}
ALLOWED = {layer: deps | {"pypto.errors"} for layer, deps in ALLOWED.items()}


def _package_of(module: str) -> str:
    for key in sorted(ALLOWED, key=len, reverse=True):
        if module == key or module.startswith(key + "."):
            return key
    raise AssertionError(f"module {module} is in no layer; add it to ALLOWED in {__file__}")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("pypto")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_pkg:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("pypto"):
                if node.module is None or name in ("pypto",):
                    out += [(f"{name}.{a.name}" if name != "pypto" else f"pypto.{a.name}", node.lineno)
                            for a in node.names]
                else:
                    out.append((name, node.lineno))
    return out


def _allowed(src_pkg: str, target: str) -> bool:
    for a in ALLOWED[src_pkg]:
        if target == a or target.startswith(a + ".") or (a == "pypto"):
            return True
    return False


def test_imports_follow_the_layering():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        pkg = _package_of(module)
        for target, line in _imports(path, module):
            tpkg = _package_of(target) if target != "pypto" else "pypto"
            if tpkg == pkg or _allowed(pkg, target):
                continue
            bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {module} ({pkg}) imports {target}")
    assert not bad, "layering violations:\n" + "\n".join(bad)


def test_nothing_imports_tools():
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        if module.startswith("pypto.tools"):
            continue
        for target, line in _imports(path, module):
            assert not target.startswith("pypto.tools"), f"{path}:{line} imports {target}"


def test_checker_sees_a_violation(tmp_path):
    """The walker itself works: a fake IR module importing the passes is caught."""
    fake = tmp_path / "probe.py"
    fake.write_text("from pypto.passes import pass_manager\nfrom ..passes import x\n")
    imports = _imports(fake, "pypto.ir.probe")
    assert [t for t, _ in imports] == ["pypto.passes", "pypto.passes"]
    assert not any(_allowed("pypto.ir", t) for t, _ in imports)


def test_analyses_do_not_import_passes():
    assert _package_of("pypto.passes.analysis.pipes") == "pypto.passes.analysis"
    assert not _allowed("pypto.passes.analysis", "pypto.passes.base")
    assert _allowed("pypto.passes.analysis", "pypto.ops.registry")
    assert _allowed("pypto.passes", "pypto.passes.analysis.tile_liveness")
    assert _allowed("pypto.codegen", "pypto.passes.analysis.pipes")
    assert not _allowed("pypto.codegen", "pypto.passes.base")
