"""Randomized differential tests: generated programs give the same results on cpu, interp and NumPy.

Each example draws a program description (tests/programs/differential/{kernels,orch,tensor_level}.py),
writes it as `pl` source, compiles it once with `ir.compile`, and runs it in the interpreter and
natively with 1 and 2 workers under fifo and locality scheduling. Every result is compared with NumPy
evaluating the same description (integers exactly, floats within the program's own rounding noise),
and the native runs must agree bit for bit. Examples are derandomized: CI sees the same programs every
run. A failure is shrunk by hypothesis and printed as the program's source; keep it in
test_regressions.py.

Every example builds a native library, so a test's examples are split into shards of a few each
(one test item per shard, each searching from a seed of its own): no item runs long, and two
workers share the work.
"""

from __future__ import annotations

import zlib

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.programs.differential.case import check
from tests.programs.differential.kernels import kernel_programs
from tests.programs.differential.orch import orch_programs
from tests.programs.differential.tensor_level import tensor_programs

pytestmark = pytest.mark.native

SEEDS = st.integers(0, 2**31 - 1)


def examples(n: int):
    # every example builds a native library (about a second): a fixed, modest count keeps the directory
    # under two minutes on two cores
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def run_shard(name: str, programs, n: int, shard: int) -> None:
    """`n` examples of `programs`, searched from a seed of this shard's own. (Every hypothesis search
    starts with the simplest program, so each shard after the first repeats it, a compile-cache hit;
    each shard draws one example more than its share of the unsharded count to make up for it.)"""

    @seed(zlib.crc32(f"{name}/{shard}".encode()))
    @examples(n)
    @given(programs, SEEDS)
    def run(prog, case_seed):
        check(prog.case(case_seed))

    run()


@pytest.mark.parametrize("shard", range(5))
def test_kernels(shard):
    """One InCore kernel: op chains over ragged tiles (fp32/fp16/bf16/int32), ifs on scalar parameters,
    loops carrying tiles, K-loop matmuls through Mat/Left/Right/Acc, fillpad of the padding."""
    run_shard("kernels", kernel_programs(), 6, shard)


@pytest.mark.parametrize("shard", range(4))
def test_orchestrations(shard):
    """Loops over row/column blocks submitting several kernels per iteration (RAW through
    pl.create_tensor intermediates, WAR into pl.InOut inputs, accumulation into one InOut row,
    neighbouring-block reads, scalar reads and writes in the orchestration, dynamic ragged rows)."""
    run_shard("orchestrations", orch_programs(), 6, shard)


@pytest.mark.parametrize("shard", range(2))
def test_orchestrations_many_blocks(shard):
    """The same with up to 8 x 3 blocks and 7 steps per iteration: task graphs of a few hundred tasks,
    where dependency tracking and scheduling have more to get wrong."""
    run_shard("orchestrations_many_blocks", orch_programs(max_steps=7, row_blocks=8, col_blocks=3), 4, shard)


@pytest.mark.parametrize("shard", range(4))
def test_tensor_level(shard):
    """Plain @pl.function tensor programs, outlined and tiled by the compiler (static and dynamic rows,
    pl.incore scopes, loops and ifs over tensors, a matmul prologue, a view/assemble block loop)."""
    run_shard("tensor_level", tensor_programs(), 6, shard)
