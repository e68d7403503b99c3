"""docs/extending.md runs as written: each of its Python blocks (a custom elementwise op and
reduction on both backends, a custom pass in the pipeline, a new target) in a fresh process, so
the ops it defines do not leak into the rest of the suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "extending.md").read_text(), re.S)


def test_the_page_has_its_three_examples():
    assert len(BLOCKS) == 3


@pytest.mark.native  # (each example compiles and runs natively, in a child process the safety net cannot see)
@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=["custom_ops", "custom_pass", "new_target"])
def test_extending_example_runs(tmp_path, index):
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[index])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]


def test_extension_errors_are_clear(tmp_path):
    """Bad definitions are refused with what is wrong (run in a child: definitions are global)."""
    code = '''
import numpy as np
from pypto import extend
for kwargs, want in [
    (dict(name="Bad-Name", reference=np.exp, cpp="x"), "lowercase identifier"),
    (dict(name="add", reference=np.exp, cpp="x"), "exists already"),
    (dict(name="twice_a", reference=np.exp, cpp="x; y"), "one C++ expression"),
    (dict(name="twice_b", reference=np.exp, cpp="x", arity=3), "arity must be 1 or 2"),
    (dict(name="twice_c", reference=None, cpp="x"), "reference must be a function"),
]:
    name = kwargs.pop("name")
    try:
        extend.elementwise(name, **kwargs)
    except extend.ExtensionError as e:
        assert want in str(e), (want, str(e))
    else:
        raise AssertionError(f"{name} was accepted")
try:
    extend.reduction("colsq", reference=np.sum, combine="a + b", init=0, axis="diagonal")
except extend.ExtensionError as e:
    assert "axis must be" in str(e)
print("ok")
'''
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
