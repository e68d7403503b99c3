"""The interpreter runs parsed `.pto` text exactly like the modules the code generator built
(the PTO boundary: the backend consumes text). Skipped until `pypto.pto.parser` exists."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.backend.interp import run_kernel, run_program
from pypto.pto.printer import print_module
from tests.programs.interp_kernels import SLICES, build_kernel, build_program, cube_kernel, loop_kernel

parser = pytest.importorskip("pypto.pto.parser")


def _reparse(m):
    return parser.parse_module(print_module(m))


def test_parsed_kernels_run_like_built_ones():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 64), np.float32)
    built = build_kernel(loop_kernel(back_sync=True))
    out1, out2 = np.zeros_like(a), np.zeros_like(a)
    run_kernel(built, [a, out1])
    run_kernel(_reparse(built), [a, out2])
    assert np.array_equal(out1, out2)

    cube = cube_kernel(fix_flag=True).build()
    x, y = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 16)).astype(np.float16)
    o1, o2 = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    run_kernel(cube, [x, y, o1])
    run_kernel(_reparse(cube), [x, y, o2])
    assert np.array_equal(o1, o2)


def test_parsed_program_runs_like_the_built_one():
    kernels, orch, entry = build_program(SLICES)
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((64, 64), np.float32), rng.standard_normal((64, 64), np.float32)
    (c1,) = run_program(kernels, orch, entry, [a, b])
    (c2,) = run_program({k: _reparse(m) for k, m in kernels.items()}, _reparse(orch), entry, [a, b])
    assert np.array_equal(c1, c2)
