"""The compile cache: a second compile of the same program is served from it; a damaged entry
(any file of it) is a miss that the next compile rebuilds and rewrites."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.config import config


@pl.function
def twice_plus_one(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.add(pl.mul(x, 2.0), 1.0)


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", tmp_path / "cache")
    monkeypatch.setattr(config, "compile_cache", True)
    return tmp_path / "cache"


def _entries(cache: Path) -> list[Path]:
    return [p.parent for p in (cache / "compiled").rglob("native.json")]


def _run(c) -> None:
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(c(x), x * 2 + 1)


def test_second_compile_is_a_hit(fresh_cache, tmp_path):
    a = ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    assert not a.timings.get("cached")
    b = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
    assert b.timings.get("cached")
    assert (tmp_path / "b" / "signature.json").exists() and list((tmp_path / "b" / "kernels").glob("*.pto"))
    _run(a)
    _run(b)


@pytest.mark.parametrize("victim", ["signature.json", "lowered.py", "kernels", "native.json"])
def test_damaged_entry_is_rebuilt(fresh_cache, tmp_path, victim):
    ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    (entry,) = _entries(fresh_cache)
    target = next((entry / "kernels").glob("*.pto")) if victim == "kernels" else entry / victim
    target.write_text("garbage {" if victim != "signature.json" else json.dumps({}))
    c = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
    assert not c.timings.get("cached")  # detected: compiled again
    _run(c)
    d = ir.compile(twice_plus_one, output_dir=tmp_path / "c")
    assert d.timings.get("cached")  # and the entry was rewritten
    _run(d)
    assert ir.python_print(d.program)  # lowered.py reads back


def test_bad_output_dir_and_backend_type(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="cannot create the directory"):
        ir.compile(twice_plus_one, output_dir=f / "sub")
    with pytest.raises(TypeError, match="backend_type must be"):
        ir.compile(twice_plus_one, output_dir=tmp_path / "o", backend_type=3)
