"""Every registry op, end to end: `pl` source -> ir.compile -> native code (`cpu`) and the NumPy
interpreter (`interp`), each result compared with the op's registry reference.

The table and the programs live in `tests/programs/op_table.py`: block-level rows (`CASES`, one
InCore kernel each, over full, ragged and dynamic valid regions) and tensor-level rows (`TCASES`,
written in the orchestration and outlined by the pipeline; row-local ones also on tensors with a
dynamic row count). A dtype's rows are split by op family into shards (`op_table.SHARDS`: add_sub,
mul_div, unary, compare, bitwise, cast, reduce, broadcast, matmul, memory, layout), one program
each; a second compile of each (no native build) gives the interpreter the same kernels with
static valid shapes.

A test item is one shard of one dtype on both backends (they share its compile, whose native
build is the slow part); it checks every row of the shard and reports every row that differs.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig
from tests.programs import op_table as P


def _compile(dt: str, shard: str, static: bool, tmp_path):
    built = P.ops_program(dt, static, shard)
    # the static variant only runs on the interpreter: no native build
    return built, ir.compile(pl.parse(built.text), output_dir=tmp_path / built.name, skip_ptoas=static)


def _shards(static: bool) -> list:
    return [pytest.param(dt, shard, id=f"{dt}-{shard}") for dt in P.DTYPES for shard in P.shards(dt, static)]


def _run(built: P.Built, compiled, dt: str, platform: str, m: int = P.M_ROWS) -> list[str]:
    """Run the program on `platform` with M = m; one line per row whose result differs from the reference."""
    x = P.make_inputs(dt, m)
    args = [x[n] for n in P.INPUTS] + [x["row"], x["col"], x["w"], P.scalar_arg(dt)]
    outs = {o: np.full((P.OUT_ROWS, w), P.SENTINEL, P.NP[o]) for o, w in built.out_cols.items()}
    rets = compiled(*args, *outs.values(), config=RunConfig(platform=platform))
    rets = rets if isinstance(rets, tuple) else (rets,)
    bad = []
    for e in built.entries:
        if e.kind == "block":
            exp, scale = P.expected_block(e.case, dt, x)
            got = outs[e.out][:, e.col0:e.col0 + P.C]
        elif e.kind == "tensor":
            exp, scale = P.expected_tensor(e.case, dt, x, dynamic=False)
            got = outs[e.out][:, e.col0:e.col0 + P.C]
        else:
            exp, scale = P.expected_tensor(e.case, dt, x, dynamic=True)
            got = rets[e.ret]
        msg = P.compare(got, exp, e.case.tol, e.out, scale)
        if msg is not None:
            bad.append(f"{e.case.op} [{e.key}] on {platform}, M = {m}: {msg}")
    return bad


@pytest.mark.native
@pytest.mark.parametrize("dt,shard", _shards(static=False))
def test_ops_match_reference(dt: str, shard: str, tmp_path):
    """Both backends in one item: they share the compile (a native build is the slow part). The
    program runs twice, M = 45 and M = 48: nothing is recompiled for another dynamic row count."""
    built, compiled = _compile(dt, shard, False, tmp_path)
    bad = []
    for m in (P.M_ROWS, 48):  # the last row block ragged (13 rows) / full
        bad += _run(built, compiled, dt, "cpu", m) + _run(built, compiled, dt, "interp", m)
    assert not bad, f"{len(bad)} of 4 x {len(built.entries)} rows differ from the reference:\n" + "\n".join(bad)


@pytest.mark.parametrize("dt,shard", _shards(static=True))
def test_ops_static_valid_shapes_interp(dt: str, shard: str, tmp_path):
    """The block rows with their valid regions as static shapes (the tensor rows as above)."""
    built, compiled = _compile(dt, shard, True, tmp_path)
    bad = _run(built, compiled, dt, "interp")
    assert not bad, f"{len(bad)} of {len(built.entries)} rows differ from the reference:\n" + "\n".join(bad)


def test_dtypes_follow_the_type_rules():
    """The dtype sets come from the type rules (spot checks that the probing works)."""
    by_name = {c.name: c for c in P.CASES}
    assert P.dtypes_of(by_name["add"]) == P.DTYPES
    assert P.dtypes_of(by_name["exp"]) == P.FLOATS
    assert P.dtypes_of(by_name["and"]) == ("INT32", "INT8")
    assert P.dtypes_of(by_name["matmul"]) == P.DTYPES


@pytest.mark.parametrize("op", sorted(P.SKIP))
def test_skipped_ops(op: str):
    pytest.skip(P.SKIP[op])
