"""The public API's pass factories: `passes.convert_to_ssa()`, ... build the pass classes."""

from __future__ import annotations

import pytest

from pypto import passes


@pytest.mark.parametrize("factory", sorted(passes._FACTORIES))
def test_each_factory_builds_its_pass(factory):
    p = getattr(passes, factory)()
    assert isinstance(p, passes.Pass) and type(p).__name__ == passes._FACTORIES[factory][1]


def test_modules_stay_importable_and_run_verifier_takes_rules():
    from pypto.passes.convert_to_ssa import ConvertToSSA
    from pypto.passes.insert_sync import insert_sync

    assert callable(insert_sync) and isinstance(passes.convert_to_ssa(), ConvertToSSA)
    assert passes.run_verifier(["SSAVerify"]).name == "RunVerifier"
