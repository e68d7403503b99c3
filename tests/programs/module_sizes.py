"""Lines of code under `pypto/`, per module and per package (the size budget of STYLE.md).

Used by tests/test_module_budget.py (which fails on a module over `MAX_LINES`) and by the suite's
terminal summary, which prints the per-package table whenever that test ran (so CI's log has it).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "pypto"
MAX_LINES = 600


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def sizes() -> dict[str, int]:
    """`pypto/ir/expr.py` -> its line count, for every module of the package."""
    return {str(p.relative_to(ROOT.parent)): _lines(p) for p in sorted(ROOT.rglob("*.py"))}


def per_package() -> dict[str, list[int]]:
    """`pypto.ir` -> the line counts of its own modules (subpackages counted separately)."""
    out: dict[str, list[int]] = defaultdict(list)
    for rel, n in sizes().items():
        out[str(Path(rel).parent).replace("/", ".")].append(n)
    return dict(out)


def table() -> list[str]:
    pkgs = per_package()
    lines = [f"{'package':<32} {'modules':>7} {'lines':>7} {'largest':>7}"]
    lines += [f"{pkg:<32} {len(s):>7} {sum(s):>7} {max(s):>7}" for pkg, s in sorted(pkgs.items())]
    lines.append(f"{'total':<32} {sum(map(len, pkgs.values())):>7} {sum(map(sum, pkgs.values())):>7}"
                 f" {max(map(max, pkgs.values())):>7}")
    return lines
