"""`@pl.jit` on the native CPU backend (and the public platform names, which run there), the
warm-call plan, the CompiledProgram surface and the worker API on jit-compiled programs."""

from __future__ import annotations

import pytest
import torch

from pypto import ir
from pypto.ir.compiled_program import CompiledProgram
from pypto.runtime import ChipWorker, RunConfig, benchmark

pytestmark = pytest.mark.native

from tests.programs.jit_kernels import add, copy_dyn, deps_entry, scale_rows  # noqa: E402


@pytest.mark.parametrize("platform", ["cpu", "a2a3sim", "a5"])
def test_add_on_native_platforms(platform):
    add._cache.clear()
    cfg = RunConfig(platform=platform)
    a, b, c = torch.randn(32, 32), torch.randn(32, 32), torch.zeros(32, 32)
    assert add(a, b, c, config=cfg) is None
    torch.testing.assert_close(c, a + b)
    for _ in range(3):  # warm calls go through the plan and keep writing in place
        a.add_(1.0)
        add(a, b, c, config=cfg)
        torch.testing.assert_close(c, a + b)
    assert len(add._cache) == 1
    want = a + b
    add(a, b, a, config=cfg)  # the output aliases an input: the plan's direct route steps aside for binding
    torch.testing.assert_close(a, want)


def test_deps_dynamic_and_scalars_native():
    deps_entry._cache.clear()
    src, mid, out = torch.randn(64, 32), torch.zeros(32, 32), torch.zeros(32, 32)
    deps_entry(src, mid, out)
    torch.testing.assert_close(out, (src[:32] + 1) * 2)
    copy_dyn._cache.clear()
    for rows in (64, 56):
        a, o = torch.randn(rows, 32), torch.zeros(rows, 32)
        copy_dyn(a, o)
        torch.testing.assert_close(o, a)
    assert len(copy_dyn._cache) == 1
    scale_rows._cache.clear()
    a, o = torch.randn(64, 32), torch.zeros(64, 32)
    scale_rows(a, o, 4, 2.0)
    torch.testing.assert_close(o, a * 2)


def test_compiled_program_surface_and_from_dir(tmp_path):
    add._cache.clear()
    a, b, c = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    add(a, b, c, config=RunConfig(platform="a2a3sim"))
    cp = next(iter(add._cache.values()))
    assert isinstance(cp, CompiledProgram) and cp.platform == "a2a3sim"
    assert (cp.param_names, cp.output_indices, cp.has_return) == (["a", "b", "c"], [2], True)
    assert cp.chip_callable is cp.chip_callable and isinstance(cp.runtime_config, dict) and cp.runtime_name
    assert cp.build_call_config(RunConfig(), aicpu_thread_num=3).aicpu_thread_num == 3
    out = cp(a, b)  # return style: the Out parameter is allocated and returned
    torch.testing.assert_close(out, a + b)
    again = CompiledProgram.from_dir(cp.output_dir)
    assert again == cp and again.param_names == cp.param_names
    c2 = torch.zeros(16, 16)
    again(a, b, c2)
    torch.testing.assert_close(c2, a + b)
    with pytest.raises(FileNotFoundError):
        CompiledProgram.from_dir(tmp_path)


def test_chip_worker_device_tensor_and_benchmark():
    add._cache.clear()
    a, b = torch.full((16, 16), 2.0), torch.full((16, 16), 3.0)
    cp = add.compile(a, b, torch.zeros(16, 16))
    out = torch.zeros(16, 16)
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as w:
        dev_b = w.alloc_tensor((16, 16), torch.float32, init=b)
        cp(a, dev_b, out)
        back = torch.zeros(16, 16)
        w.copy_from(back.data_ptr(), dev_b.data_ptr, dev_b.nbytes)
        w.free_tensor(dev_b)
    torch.testing.assert_close(out, a + b)
    torch.testing.assert_close(back, b)
    stats = benchmark(cp, [a, b, out], rounds=5, warmup=1)
    assert stats.samples == 5 and stats.device_us_min > 0 and len(stats.host_wall_us) == 5
    assert "benchmark: 5 rounds" in stats.format_tree()


def test_dump_passes_and_validate_ir(tmp_path):
    add._cache.clear()
    a, b, c = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    cfg = RunConfig(dump_passes=ir.PassDumpLevel.CONCISE, save_kernels_dir=str(tmp_path / "k"))
    add(a, b, c, config=cfg)
    cp = next(iter(add._cache.values()))
    assert list((tmp_path / "k" / "passes_dump").glob("*.py"))
    cp.validate_ir({"a": a, "b": b, "c": torch.zeros(16, 16)}, {"c": a + b})
    with pytest.raises(AssertionError, match="output 'c'"):
        cp.validate_ir({"a": a, "b": b, "c": torch.zeros(16, 16)}, {"c": a - b})
