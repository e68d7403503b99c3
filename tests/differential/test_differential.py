"""Randomized differential tests: generated programs give the same results on cpu, interp and NumPy.

Each example draws a program description (tests/differential/{kernels,orch,tensor_level}.py), writes
it as `pl` source, compiles it once with `ir.compile`, and runs it in the interpreter and natively with
1 and 2 workers under fifo and locality scheduling. Every result is compared with NumPy evaluating the
same description (integers exactly, floats within the program's own rounding noise), and the native
runs must agree bit for bit. Examples are derandomized: CI sees the same programs every run. A failure
is shrunk by hypothesis and printed as the program's source; keep it in test_regressions.py.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .case import check
from .kernels import kernel_programs
from .orch import orch_programs
from .tensor_level import tensor_programs

SEEDS = st.integers(0, 2**31 - 1)


def examples(n: int):
    # every example builds a native library (about a second): a fixed, modest count keeps the directory
    # under two minutes on two cores
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@examples(25)
@given(kernel_programs(), SEEDS)
def test_kernels(prog, seed):
    """One InCore kernel: op chains over ragged tiles (fp32/fp16/bf16/int32), ifs on scalar parameters,
    loops carrying tiles, K-loop matmuls through Mat/Left/Right/Acc, fillpad of the padding."""
    check(prog.case(seed))


@examples(20)
@given(orch_programs(), SEEDS)
def test_orchestrations(prog, seed):
    """Loops over row/column blocks submitting several kernels per iteration (RAW through
    pl.create_tensor intermediates, WAR into pl.InOut inputs, accumulation into one InOut row,
    neighbouring-block reads, scalar reads and writes in the orchestration, dynamic ragged rows)."""
    check(prog.case(seed))


@examples(6)
@given(orch_programs(max_steps=7, row_blocks=8, col_blocks=3), SEEDS)
def test_orchestrations_many_blocks(prog, seed):
    """The same with up to 8 x 3 blocks and 7 steps per iteration: task graphs of a few hundred tasks,
    where dependency tracking and scheduling have more to get wrong."""
    check(prog.case(seed))


@examples(20)
@given(tensor_programs(), SEEDS)
def test_tensor_level(prog, seed):
    """Plain @pl.function tensor programs, outlined and tiled by the compiler (static and dynamic rows,
    pl.incore scopes, loops and ifs over tensors, a matmul prologue, a view/assemble block loop)."""
    check(prog.case(seed))
