"""Fresh variable names (`pypto.ir.names`)."""

from __future__ import annotations

from pypto.ir.names import NameGen, base_name
from tests.programs.toolkit_sample import T, _vars, sample


def test_names():
    g = NameGen(["x", "x__ssa_v1"])
    assert g.fresh("x") == "x__ssa_v2"
    assert g.fresh("x__ssa_v2") == "x__ssa_v3"  # versions of versions stay flat
    assert g.fresh("exp", "tmp") == "exp__tmp_v1"
    assert g.unique("x") == "x_1" and g.unique("y") == "y"
    assert base_name("a__tmp_v3__ssa_v2") == "a" and base_name("__ssa_v1") == "__ssa_v1"
    g2 = NameGen.for_node(sample)
    assert "acc" in g2.taken and g2.fresh("acc") == "acc__ssa_v1"
    v = g2.fresh_var(_vars(sample)["acc"])
    assert v.name == "acc__ssa_v2" and v.type == T
