"""RunConfig: defaults, validation, unknown fields."""

from __future__ import annotations

import dataclasses

import pytest

from pypto.runtime import RunConfig, Runtime


def test_defaults():
    c = RunConfig()
    assert (c.platform, c.device_id, c.rtol, c.atol) == ("cpu", 0, 1e-5, 1e-5)
    assert c.num_workers is None and c.sched_mode == "fifo"
    assert c.enable_trace is False and c.trace_path is None
    assert (c.warmup, c.repeat) == (0, 1)


def test_unknown_field_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"RunConfig has no field 'workers'; valid fields: platform, device_id"):
        RunConfig(workers=4)
    with pytest.raises(TypeError, match="no fields 'a', 'b'"):
        RunConfig(a=1, b=2)
    with pytest.raises(TypeError, match="no field 'speed'"):
        RunConfig().replace(speed=2)


@pytest.mark.parametrize("kwargs", [
    {"sched_mode": "random"}, {"num_workers": -1}, {"repeat": 0}, {"warmup": -1}, {"rtol": -1.0},
    {"platform": ""}, {"device_id": -2},
])
def test_invalid_values(kwargs):
    with pytest.raises(ValueError, match="RunConfig"):
        RunConfig(**kwargs)


def test_replace_and_trace_path(tmp_path):
    c = RunConfig(num_workers=2, sched_mode="locality")
    d = c.replace(repeat=5)
    assert d.repeat == 5 and d.num_workers == 2 and c.repeat == 1
    assert RunConfig(trace_path=tmp_path / "t.json").enable_trace is True
    assert [f.name for f in dataclasses.fields(RunConfig)][:4] == ["platform", "device_id", "rtol", "atol"]


@pytest.mark.native
def test_runtime_from_config():
    rt = Runtime.from_config(RunConfig(num_workers=1, sched_mode="locality"))
    assert rt.num_workers == 1 and rt.mode.name == "LOCALITY"
    rt.close()
    with pytest.raises(RuntimeError, match="closed"):
        rt.handle
