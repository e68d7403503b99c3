"""The size budget of STYLE.md: no module under `pypto/` over 600 lines. The lines per package are
printed at the end of any run that includes this module (tests/conftest.py)."""

from __future__ import annotations

from tests.programs import module_sizes


def test_lines_per_package_cover_every_module():
    pkgs = module_sizes.per_package()
    assert sum(map(len, pkgs.values())) == len(module_sizes.sizes()) > 0
    assert "pypto.ir" in pkgs and "pypto.ops" in pkgs


def test_no_module_over_budget():
    over = {rel: n for rel, n in module_sizes.sizes().items() if n > module_sizes.MAX_LINES}
    assert not over, (f"modules over {module_sizes.MAX_LINES} lines (split them by responsibility, STYLE.md): "
                      + ", ".join(f"{rel} ({n})" for rel, n in sorted(over.items(), key=lambda t: -t[1])))
