"""Property: random well-typed programs (nested loops with accumulators, if/else with yields, op chains
over tensors and tiles) survive print -> parse -> print unchanged and reparse to an equal IR."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

import pypto.language as pl
from tests.programs.random_programs import program_texts
from tests.programs.roundtrip import roundtrip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_texts())
def test_random_programs_roundtrip(text):
    prog = pl.parse(text)
    roundtrip(prog)
