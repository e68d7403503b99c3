"""Pass tests verify the IR after every pass they run."""

from __future__ import annotations

import pytest

from pypto.ir.verifier import verify


@pytest.fixture
def verified():
    """`verified(program, ssa=True)`: raise if the verifier finds anything (SSA rules only once in SSA)."""

    def check(program, ssa: bool = True):
        rules = None
        if not ssa:
            from pypto.ir.verifier import DEFAULT_RULES

            rules = [r for r in DEFAULT_RULES if r != "SSAVerify"]
        diags = verify(program, rules)
        assert not diags, "\n".join(str(d) for d in diags)
        return program

    return check
