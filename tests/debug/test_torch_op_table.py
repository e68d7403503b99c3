"""Every row of the op table (tests/programs/op_table.py) through `torch_codegen`: the generated
PyTorch code of each shard's program, run on torch tensors, gives the registry reference's values
(full, ragged and dynamic valid regions, every dtype), as the compiled program does."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.debug.torch_rt import from_numpy, to_numpy
from pypto.passes.pass_manager import OptimizationStrategy, PassManager
from tests.programs import op_table as P


def _torch(a):
    return from_numpy(np.array(a, copy=True)) if isinstance(a, np.ndarray) else a


def _differences(dt: str, shard: str, passes: bool) -> tuple[int, list[str]]:
    built = P.ops_program(dt, False, shard)
    program = pl.parse(built.text)
    if passes:
        program = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(program)
    ns: dict = {}
    exec(torch_codegen(program, check_shapes=True), ns)  # noqa: S102
    x = P.make_inputs(dt, P.M_ROWS)
    args = [x[n] for n in P.INPUTS] + [x["row"], x["col"], x["w"], P.scalar_arg(dt)]
    outs = {o: _torch(np.full((P.OUT_ROWS, w), P.SENTINEL, P.NP[o])) for o, w in built.out_cols.items()}
    rets = ns["main"](*[_torch(a) for a in args], *outs.values())
    rets = rets if isinstance(rets, tuple) else (rets,)
    bad = []
    for e in built.entries:
        if e.kind == "dynamic":
            exp, scale = P.expected_tensor(e.case, dt, x, dynamic=True)
            got = to_numpy(rets[e.ret])
        else:
            exp, scale = (P.expected_block(e.case, dt, x) if e.kind == "block"
                          else P.expected_tensor(e.case, dt, x, dynamic=False))
            got = to_numpy(outs[e.out])[:, e.col0:e.col0 + P.C]
        msg = P.compare(np.array(got), exp, e.case.tol, e.out, scale)
        if msg is not None:
            bad.append(f"{e.case.op} [{e.key}]: {msg}")
    return len(built.entries), bad


@pytest.mark.parametrize("dt", P.DTYPES)
def test_op_table_rows(dt: str):
    total, bad = 0, []
    for shard in P.shards(dt, False):
        n, b = _differences(dt, shard, passes=False)
        total, bad = total + n, bad + b
    assert total > 100
    assert not bad, f"{len(bad)} of {total} rows differ:\n" + "\n".join(bad)


@pytest.mark.parametrize("shard", ["add_sub", "reduce", "matmul", "memory"])
def test_op_table_rows_after_the_pipeline(shard: str):
    n, bad = _differences("FP32", shard, passes=True)
    assert not bad, f"{len(bad)} of {n} rows differ:\n" + "\n".join(bad)
