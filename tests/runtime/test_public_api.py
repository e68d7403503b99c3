"""The public PyPTO's compile-and-run API on this package: RunConfig's 27 fields, ir.compile's
parameters, the enums, pypto.runtime's exports and the module paths public code imports."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import warnings

import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

PUBLIC_FIELDS = [
    "platform", "device_id", "rtol", "atol", "strategy", "backend_type", "dump_passes", "save_kernels",
    "save_kernels_dir", "codegen_only", "enable_chip_swimlane", "enable_dump_args", "enable_pmu", "enable_dep_gen",
    "enable_scope_stats", "compile_profiling", "diagnostic_phase", "disabled_diagnostics", "golden_data_dir",
    "aicpu_thread_num", "ring_task_window", "ring_heap", "ring_dep_pool", "distributed_config",
    "analyze_auto_scopes_for_deps", "memory_planner", "dump_ptoas_passes",
]


def test_run_config_has_the_public_fields_in_order_then_ours():
    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert names[:27] == PUBLIC_FIELDS
    assert {"num_workers", "sched_mode", "enable_trace", "trace_path", "warmup", "repeat"} <= set(names[27:])
    c = RunConfig()
    assert c.strategy is ir.OptimizationStrategy.Default and c.codegen_only is False


@pytest.mark.parametrize("platform,backend", [("a2a3sim", "Ascend910B"), ("a2a3", "Ascend910B"),
                                              ("a5sim", "Ascend950"), ("a5", "Ascend950")])
def test_public_platforms_set_the_backend_type(platform, backend):
    assert RunConfig(platform=platform).backend_type.name == backend


def test_run_config_checks_and_aliases():
    with pytest.raises(ValueError, match="platform 'npu' is unknown"):
        RunConfig(platform="npu")
    with pytest.raises(ValueError, match="powers of two"):
        RunConfig(ring_heap=3)
    with pytest.raises(ValueError, match="list of 4"):
        RunConfig(ring_task_window=[1, 2])
    assert RunConfig(ring_dep_pool=[1, 2, 4, 8]).ring_dep_pool == [1, 2, 4, 8]
    with pytest.raises(ValueError, match="enable_chip_swimlane"):
        RunConfig(enable_chip_swimlane=7)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = RunConfig(enable_l2_swimlane=True)
    assert c.enable_chip_swimlane == 4 and any(issubclass(x.category, DeprecationWarning) for x in w)
    assert c.enable_trace and c.save_kernels  # the swimlane is the CPU trace; DFX keeps the artifacts
    assert RunConfig(aicpu_thread_num=3).workers == 3 and RunConfig(num_workers=2, aicpu_thread_num=3).workers == 2


def test_ir_compile_takes_the_public_parameters_in_order():
    params = list(inspect.signature(ir.compile).parameters)
    assert params[:18] == ["program", "output_dir", "strategy", "dump_passes", "backend_type", "skip_ptoas",
                           "verification_level", "diagnostic_phase", "disabled_diagnostics", "memory_planner",
                           "enable_pypto_l0c_double_buffer", "profiling", "platform", "distributed_config",
                           "analyze_auto_scopes_for_deps", "emit_source_loc", "dump_ptoas_passes", "runtime"]


@pl.program
class _Copy:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [0, 0], [8, 8]), [0, 0], y)
        return y


def test_ir_compile_options(tmp_path, monkeypatch):
    import numpy as np

    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    cp = ir.compile(_Copy, skip_ptoas=True, dump_passes=ir.PassDumpLevel.NONE, platform="a5sim", profiling=True,
                    memory_planner=ir.MemoryPlanner.PTOAS, diagnostic_phase=ir.DiagnosticPhase.POST_PASS,
                    runtime=ir.RuntimeKind.TENSORMAP_AND_RINGBUFFER, emit_source_loc=False)
    assert cp.output_dir.parent == tmp_path / "builds" and cp.output_dir.name.startswith("_Copy_")
    assert cp.platform == "a5sim" and cp.backend_type.name == "Ascend950"
    assert not (cp.output_dir / "passes_dump").exists()
    assert (cp.output_dir / "report" / "pipeline_profile.json").is_file()
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.zeros_like(x)
    cp(x, y, config=RunConfig(platform="interp"))
    np.testing.assert_array_equal(y, x)
    with pytest.raises(ValueError, match="platform 'tpu' is unknown"):
        ir.compile(_Copy, output_dir=tmp_path / "o", platform="tpu")
    with pytest.raises(ValueError, match="memory_planner"):
        ir.compile(_Copy, output_dir=tmp_path / "o", memory_planner="fastest")
    assert all(bool(level) for level in ir.PassDumpLevel)


def test_runtime_exports_and_module_paths():
    import pypto.runtime as rt

    for name in ("run", "compile_program", "execute_compiled", "benchmark", "BenchmarkStats", "TraceInvocation",
                 "TraceSpan", "ChipWorker", "Worker", "RegistrationHandle", "DeviceTensor", "StackedDeviceTensor",
                 "DistributedWorker", "DistributedRunHandle", "RunConfig", "RunResult", "TensorSpec", "ScalarSpec",
                 "configure_log", "log_level", "ensure_pto_isa_root", "pto_isa_include_dir"):
        assert hasattr(rt, name), name
    from pypto.backend import BackendType, get_backend_type, reset_for_testing, set_backend_type
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.pypto_core import passes as core_passes
    from pypto.runtime.runner import RunResult

    assert CompiledProgram is ir.CompiledProgram and issubclass(PartialCodegenError, RuntimeError)
    assert core_passes.MemoryPlanner.DSA_RP is ir.MemoryPlanner.DSA_RP
    assert importlib.import_module("pypto.pypto_core").ir is ir
    set_backend_type(BackendType.Ascend910B)
    assert get_backend_type() is BackendType.Ascend910B
    reset_for_testing()
    assert get_backend_type() is None
    assert RunResult(passed=True, test_name="t").passed
    rt.configure_log("INFO")
    assert rt.log_level() == "INFO"
    rt.configure_log("ERROR")
    with pytest.raises(NotImplementedError, match="multi-rank"):
        rt.DistributedWorker()
    with pytest.raises(ValueError, match="ctype"):
        rt.ScalarSpec("n", 3, ctype="int8")


@pytest.mark.native  # (compile_program builds the C++)
def test_run_codegen_only_and_compile_program(tmp_path):
    import pypto.runtime as rt

    cp = rt.run(_Copy, config=RunConfig(platform="interp", codegen_only=True, save_kernels_dir=str(tmp_path / "a")))
    assert cp.output_dir == tmp_path / "a"
    assert rt.compile_program(_Copy, tmp_path / "b", dump_passes=False) is None
    assert (tmp_path / "b" / "signature.json").is_file()
    spec = rt.TensorSpec("x", [2, 3], pl.FP32, init_value=1.5)
    assert spec.create_tensor().sum().item() == 9.0
