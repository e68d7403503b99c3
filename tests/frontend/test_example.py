"""examples/tensor_level.py runs and reports small errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.native
ROOT = Path(__file__).resolve().parents[2]


def test_the_tensor_level_example_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "tensor_level.py")], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-3000:]
    errors = [float(m) for m in re.findall(r"max error vs NumPy ([0-9.e+-]+)", r.stdout)]
    assert len(errors) == 3 and max(errors) < 1e-5, r.stdout
    assert "graphs (tensor, tile, block, execution)" in r.stdout
