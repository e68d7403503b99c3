"""Compiled programs: a hand-written program .so drives the runtime through the C ABI."""

from __future__ import annotations

import ctypes
import gc
from pathlib import Path

import numpy as np
import pytest

from pypto.runtime import ABI_VERSION, ProgramHandle, TaskGraphError, include_dir
from pypto.runtime.abi import PtoProgram
from pypto.runtime.native import library
from pypto.support.native_build import build_and_load

pytestmark = pytest.mark.native

SOURCE = (Path(__file__).parent / "programs" / "tiled_program.cpp").read_text()
_PROGRAMS: dict[int, ProgramHandle] = {}


def program(abi: int | None = None) -> ProgramHandle:
    key = abi or 0
    if key not in _PROGRAMS:
        src = SOURCE if abi is None else f"#define TEST_ABI_VERSION {abi}\n" + SOURCE
        lib, _ = build_and_load(src, f"test_tiled_program_{key}", include_dirs=(include_dir(),))
        _PROGRAMS[key] = lib if abi is not None else ProgramHandle(lib)
    return _PROGRAMS[key]


def reference(x: np.ndarray, iters: int, limit: float) -> tuple[np.ndarray, int]:
    """The program in NumPy; also returns how often the data-dependent branch was taken."""
    x = x.copy()
    taken = 0
    for it in range(iters):
        x = x * 0.5 + (it + 1)
        if x.sum() > limit:
            x -= 1
            taken += 1
    return x, taken


def test_program_handle_metadata():
    p = program()
    assert p.kernel_names == {0: "scale_add", 1: "row_sum_acc"}
    assert p.num_kernels == 2 and p.scratch_bytes == 1 << 16 and p.abi_version == ABI_VERSION


def test_tiled_program_matches_numpy(serial, parallel):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((32, 48))
    # the limit makes the data-dependent branch go both ways over the iterations
    limit = float(x0.sum() * 0.5 + 32 * 48 * 2.5)
    expected, taken = reference(x0, 6, limit)
    assert 0 < taken < 6
    for rt in (serial, parallel):
        x = x0.copy()
        result = rt.run_program(program(), [x, 8, 6, limit, 0], ["inout", "i64", "i64", "f64", "i64"])
        np.testing.assert_allclose(x, expected, rtol=1e-12, atol=1e-12)
        assert result.stats.tasks == 6 * (24 + 24 + 1) + 24 * taken


def test_trace_names_program_kernels(runtimes):
    x = np.ones((16, 16))
    result = runtimes(2, "locality").run_program(program(), [x, 8, 2, 1e9, 0], ["inout", "i64", "i64", "f64",
                                                                                "i64"], trace=True)
    names = {r.kernel for r in result.trace}
    assert names == {"scale_add", "row_sum_acc"}
    assert result.stats.roots == 5  # x, and per iteration: the row sums and the total


@pytest.mark.parametrize("mode,message", [
    (1, "kernel id 7 is out of range (the program has 2 kernels)"),
    (2, "custom failure from the program"),
    (3, "outside its root buffer"),
    (4, "orchestration returned 6"),
])
def test_program_errors(runtimes, mode, message):
    rt = runtimes(2, "fifo")
    x = np.zeros((8, 8))
    with pytest.raises(TaskGraphError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rt.run_program(program(), [x, 4, 1, 0.0, mode], ["inout", "i64", "i64", "f64", "i64"])
    rt.run_program(program(), [x, 4, 1, 1e9, 0], ["inout", "i64", "i64", "f64", "i64"])  # still usable
    assert (x == 1).all()


def test_wrong_parameters_reported_by_the_program(runtimes):
    with pytest.raises(TaskGraphError, match="expected \\(x inout"):
        runtimes(1, "fifo").run_program(program(), [np.zeros((4, 4))], ["in"])


def test_abi_version_mismatch(runtimes):
    lib = program(abi=99)
    with pytest.raises(TypeError, match="ABI version 99"):
        ProgramHandle(lib)
    # and the runtime checks it too, for callers that build the table themselves
    table = PtoProgram(*(ctypes.cast(getattr(lib, f"pto_program_{n}"), ctypes.c_void_p).value
                         for n in ("abi_version", "num_kernels", "kernel_name", "kernel", "scratch_bytes", "run")))
    err = ctypes.create_string_buffer(512)
    rc = library().pto_rt_run_program(runtimes(1, "fifo").handle, ctypes.byref(table), None, 0, 0, err, 512)
    assert rc != 0 and b"ABI version 99" in err.value


def test_not_a_program():
    with pytest.raises(TypeError, match="is not a PyPTO program"):
        ProgramHandle(library())


def test_repeated_program_runs_free_run_tensors(runtimes, rss_bytes):
    rt = runtimes(2, "fifo")
    x = np.zeros((64, 64))
    args = [x, 8, 4, 1e300, 0]
    kinds = ["inout", "i64", "i64", "f64", "i64"]
    for _ in range(5):
        rt.run_program(program(), args, kinds)
    gc.collect()
    before = rss_bytes()
    for _ in range(60):
        rt.run_program(program(), args, kinds)
    gc.collect()
    assert rss_bytes() - before < 2 << 20
