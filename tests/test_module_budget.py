"""The size budget of STYLE.md: no module under `pypto/` over 600 lines; lines per package printed.

Run with `-s` to see the table (lines per package are the sum of its modules' lines, subpackages
counted separately).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "pypto"
MAX_LINES = 600


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def _sizes() -> dict[str, int]:
    return {str(p.relative_to(ROOT.parent)): _lines(p) for p in sorted(ROOT.rglob("*.py"))}


def test_lines_per_package():
    per_package: dict[str, list[int]] = defaultdict(list)
    for rel, n in _sizes().items():
        per_package[str(Path(rel).parent).replace("/", ".")].append(n)
    print(f"\n{'package':<32} {'modules':>7} {'lines':>7} {'largest':>7}")
    for pkg, sizes in sorted(per_package.items()):
        print(f"{pkg:<32} {len(sizes):>7} {sum(sizes):>7} {max(sizes):>7}")
    print(f"{'total':<32} {sum(map(len, per_package.values())):>7} "
          f"{sum(map(sum, per_package.values())):>7}")
    assert per_package


def test_no_module_over_budget():
    over = {rel: n for rel, n in _sizes().items() if n > MAX_LINES}
    assert not over, (f"modules over {MAX_LINES} lines (split them by responsibility, STYLE.md): "
                      + ", ".join(f"{rel} ({n})" for rel, n in sorted(over.items(), key=lambda t: -t[1])))
