"""The registry is complete: every op has what its traits and level require, everywhere it must.

An op that lacks one of these does not fail at its definition; without this test it would silently
stop being lowered, run by the interpreter, tiled, or tested. Each check reports every op it finds,
so one run lists the whole gap. Extension ops (`pypto.extend`) are held to the same rules.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pypto.backend.cpu import emit_kernel, lowering
from pypto.backend.interp.tile_ops import rule_of
from pypto.codegen.tile_ops import SPECIAL_OPS
from pypto.ops import OPS, Level, ops_by_pto
from pypto.ops.traits import ShapeClass
from pypto.passes.tiling import SPECIAL as TILING_RULES
from tests.programs import op_table as P

# block ops with neither a PTO instruction nor a code-generator rule, and why that is right
IR_ONLY = {"block.expand_clone": "the tile form of tensor.expand_clone, made by the tiling pass (no pl spelling)"}


def _kernel_ops():
    return [op for op in OPS.values() if op.level is not Level.TENSOR]


def _gaps(check) -> list[str]:
    return [f"{op.name}: {why}" for op in OPS.values() for why in [check(op)] if why]


def _lowered(op) -> str | None:
    """A block or system op reaches machine code: by its PTO instruction, or by a rule of the code
    generator (alloc, load, store, views, axis reductions, ...)."""
    if op.level is Level.TENSOR or op in SPECIAL_OPS or op.name in IR_ONLY:
        return None
    if not op.pto:
        return "no PTO instruction and no code-generator rule (pypto/codegen/tile_ops.py)"
    missing = []
    if lowering.lowering(op.pto) is None:
        missing.append(f"no CPU lowering row for pto.{op.pto} (pypto/backend/cpu/lowering.py)")
    if rule_of(op.pto) is None:
        missing.append(f"no interpreter rule for pto.{op.pto} (reference + shape class, or a handler)")
    return "; ".join(missing) or None


def test_every_kernel_op_is_lowered_on_cpu_and_interp():
    gaps = _gaps(_lowered)
    assert not gaps, "ops the backends cannot run:\n" + "\n".join(gaps)


def test_every_tensor_op_becomes_tiles():
    """A tensor op in a kernel becomes block ops: through its tile form, or a tiling rule of its own."""
    def check(op):
        if op.level is not Level.TENSOR or op.tile_form is not None or op in TILING_RULES or op in SPECIAL_OPS:
            return None
        return "no tile_form and no rule in pypto/passes/tiling.py SPECIAL"
    gaps = _gaps(check)
    assert not gaps, "tensor ops no kernel can hold:\n" + "\n".join(gaps)


def test_tile_forms_keep_the_shape_class_and_reference():
    def check(op):
        t = op.tile_form
        if t is None:
            return None
        if t.level is Level.TENSOR:
            return f"tile_form {t.name} is itself a tensor op"
        if t.shape_class is not op.shape_class:
            return f"shape class {op.shape_class.value}, its tile form {t.name} {t.shape_class.value}"
        if op.traits.row_local and not t.traits.row_local:
            return f"row-local, its tile form {t.name} is not"
        return None
    gaps = _gaps(check)
    assert not gaps, "\n".join(gaps)


def test_expand_ops_name_the_op_they_broadcast():
    """Tiling turns `op(tile, row_vector)` into the op's row-expand form: the link must be there."""
    def check(op):
        if op.level is not Level.BLOCK or op.shape_class not in (ShapeClass.ROW_EXPAND, ShapeClass.COL_EXPAND):
            return None
        if op.name in ("block.row_expand", "block.col_expand"):  # plain broadcasts: nothing applied
            return None
        if op.name in ("block.row_expand_expdif", "block.col_expand_expdif"):  # exp(a - v): no one elementwise
            return None  # op to rewrite into it (tiling never forms it from an op with a broadcast vector)
        if op.broadcasts is None:
            return "an expand op with no `broadcasts` (the elementwise op it applies)"
        if op.broadcasts.shape_class is not ShapeClass.ELEMENTWISE:
            return f"broadcasts {op.broadcasts.name}, which is not elementwise"
        return None
    gaps = _gaps(check)
    assert not gaps, "\n".join(gaps)


def test_every_op_has_a_numeric_test_row():
    """Each registry op has a row of tests/programs/op_table.py that runs in some dtype against its
    NumPy reference, or a reason why not (op_table.SKIP)."""
    covered = {c.op for dt in P.DTYPES for c in P.block_cases(dt) + P.tensor_cases(dt)}
    missing = sorted(set(OPS) - covered - set(P.SKIP))
    assert not missing, f"registry ops with no row in tests/programs/op_table.py and no reason to skip: {missing}"
    assert not covered & set(P.SKIP), "an op is both tested and skipped"
    assert not set(P.SKIP) - set(OPS), "op_table.SKIP names ops that no longer exist"


def test_every_lowering_row_is_used_and_defined():
    """No dead rows: each CPU lowering names an instruction some op emits (or the kernel emitter
    writes itself), and each row written by hand in the tile library has its C++ entry point."""
    emitted = set(ops_by_pto()) | {"set_flag", "wait_flag", "pipe_barrier"}
    dead = sorted(set(lowering.CPU) - emitted)
    assert not dead, f"CPU lowering rows no op emits: {dead}"
    include = Path(lowering.__file__).parent / "include" / "pto"
    generated = lowering.instruction_source()
    missing = []
    for instr, row in lowering.CPU.items():
        if isinstance(row, lowering.Library) and row.header == lowering.EMIT:
            if not hasattr(emit_kernel.KernelEmitter, f"op_{instr.replace('.', '_')}"):
                missing.append(f"{instr}: KernelEmitter.op_{instr.replace('.', '_')}")
        elif isinstance(row, lowering.Library):
            if not re.search(rf"\b{lowering.cpp_name(instr)}\b", (include / row.header).read_text()):
                missing.append(f"{instr}: C++ {lowering.cpp_name(instr)} in pto/{row.header}")
        elif not re.search(rf"\b{lowering.cpp_name(instr)}\b", generated):
            missing.append(f"{instr}: generated C++ {lowering.cpp_name(instr)}")
    assert not missing, "lowering rows with no C++ behind them:\n" + "\n".join(missing)


def _samples(dtype):
    rng = np.random.default_rng(7)
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-50, 50, (4, 8)).astype(dtype) for _ in range(2)]
    return [rng.standard_normal((4, 8)).astype(dtype) for _ in range(2)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_commutative_trait_holds_for_the_reference(dtype):
    """`commutative` lets passes swap operands: the reference must agree (NaN-free data)."""
    a, b = _samples(dtype)
    wrong = []
    for op in OPS.values():
        if not op.traits.commutative or op.reference is None:
            continue
        try:
            ab, ba = op.reference(a, b), op.reference(b, a)
        except TypeError:  # the op does not take this dtype (bitwise ops on floats)
            continue
        if not np.array_equal(np.asarray(ab), np.asarray(ba)):
            wrong.append(op.name)
    assert not wrong, f"marked commutative, reference is not: {wrong}"


def test_inplace_safe_only_where_each_element_reads_its_own_position():
    bad = [op.name for op in OPS.values() if op.traits.inplace_safe and op.shape_class not in (
        ShapeClass.ELEMENTWISE, ShapeClass.ROW_EXPAND, ShapeClass.COL_EXPAND, ShapeClass.FILL)]
    assert not bad, f"in-place-safe ops whose elements read other positions: {bad}"


_EXTENSION_CHECK = """
from pypto import extend
from pypto.ops.registry import tensor_ops
from tests.ops import test_registry_completeness as T

extend.elementwise("probe_sq", reference=lambda x: x * x, cpp="x * x")
extend.reduction("probe_absmax", reference=lambda x: abs(x).max(axis=-1, keepdims=True), combine="a > b ? a : b",
                 init=0.0, map="x < 0 ? -x : x")
for check in (T._lowered, T.test_every_tensor_op_becomes_tiles, T.test_tile_forms_keep_the_shape_class_and_reference):
    if check is T._lowered:
        gaps = T._gaps(check)
        assert not gaps, gaps
    else:
        check()
assert tensor_ops.probe_sq.tile_form.pto and tensor_ops.probe_absmax.tile_form.pto
print("ok")
"""


def test_an_extension_op_is_held_to_the_same_rules(tmp_path):
    """Ops added through pypto.extend meet the same rules (in a child process: extension ops join
    the compile cache's key, which would change every later compile of this worker)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", _EXTENSION_CHECK], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
