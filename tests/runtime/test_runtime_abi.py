"""The C ABI: the headers, the ctypes mirrors and the layering of pypto.runtime agree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import pypto.runtime as rt_pkg
from pypto.runtime import ABI_VERSION, ArgKind, include_dir
from pypto.runtime.native import library
from pypto.support.native_build import build_and_load

HEADER = (include_dir() / "pto_runtime.h").read_text()

LAYOUT_PROBE = r"""
#include <cstddef>
#include "pto_runtime_host.h"
#define EXPORT extern "C" __attribute__((visibility("default")))
EXPORT long probe(int i) {
    const long v[] = {
        (long)sizeof(pto_tensor), (long)offsetof(pto_tensor, shape), (long)offsetof(pto_tensor, strides),
        (long)offsetof(pto_tensor, root), (long)offsetof(pto_tensor, root_nbytes),
        (long)sizeof(pto_arg), (long)offsetof(pto_arg, t), (long)offsetof(pto_arg, i), (long)offsetof(pto_arg, f),
        (long)sizeof(pto_trace_record), (long)sizeof(pto_rt_stats), (long)sizeof(pto_task_desc),
        (long)sizeof(pto_program), (long)sizeof(pto_rt_api)};
    return v[i];
}
"""


@pytest.mark.native
def test_header_constants_match_python():
    assert int(re.search(r"#define PTO_ABI_VERSION (\d+)", HEADER).group(1)) == ABI_VERSION
    for kind in ArgKind:
        name = {"IN": "PTO_IN", "OUT": "PTO_OUT", "INOUT": "PTO_INOUT", "I64": "PTO_SCALAR_I64",
                "F64": "PTO_SCALAR_F64"}[kind.name]
        assert re.search(rf"{name} = {int(kind)}\b", HEADER), name
    assert library().pto_rt_abi_version() == ABI_VERSION


@pytest.mark.native
def test_struct_layouts_match_ctypes():
    import ctypes

    from pypto.runtime.abi import PtoArg, PtoProgram, PtoRtStats, PtoTaskDesc, PtoTensor, PtoTraceRecord

    lib, _ = build_and_load(LAYOUT_PROBE, "test_layout_probe", include_dirs=(include_dir(),))
    lib.probe.restype = ctypes.c_long
    got = [lib.probe(i) for i in range(14)]
    want = [ctypes.sizeof(PtoTensor), PtoTensor.shape.offset, PtoTensor.strides.offset, PtoTensor.root.offset,
            PtoTensor.root_nbytes.offset, ctypes.sizeof(PtoArg), 8, 8, 8, ctypes.sizeof(PtoTraceRecord),
            ctypes.sizeof(PtoRtStats), ctypes.sizeof(PtoTaskDesc), ctypes.sizeof(PtoProgram), 64]  # pto_rt_api (submit_ex since ABI 2)
    assert got == want


def test_runtime_imports_nothing_of_the_compiler():
    forbidden = ("pypto.ir", "pypto.ops", "pypto.passes", "pypto.codegen", "pypto.language", "pypto.frontend",
                 "pypto.backend", "pypto.tools")
    pkg = Path(rt_pkg.__file__).parent
    for path in pkg.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert not n.startswith(forbidden), f"{path.name} imports {n}"
