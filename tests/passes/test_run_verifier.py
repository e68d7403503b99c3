"""RunVerifier: the program passes through unchanged when valid; otherwise a located PassError that
carries the verifier's rendering. Options select the rules."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes import PassError
from pypto.passes.pass_manager import pipeline
from pypto.passes.run_verifier import RunVerifier, RunVerifierOptions


@pl.function
def non_ssa(x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
    y = x + 1
    y = y * 2
    return y


@pl.function
def nested(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    y = pl.add(pl.exp(a), a)
    return y


def prog(fn: ir.Function) -> ir.Program:
    return ir.Program("t", (fn,))


def test_valid_program_is_returned_unchanged():
    p = prog(nested)
    assert RunVerifier()(p) is p


def test_invalid_program_raises_located_pass_error_with_rendering():
    with pytest.raises(PassError) as ei:
        RunVerifier()(prog(non_ssa))
    e = ei.value
    assert "SSAVerify 1" in e.message and "variable y is defined more than once" in e.message
    assert "in function non_ssa" in e.message
    second = ir.stmt_list(non_ssa.body)[1]
    assert e.lineno == second.span.begin_line  # at the fault
    assert "--> " in str(e)


def test_options_select_rules():
    p = prog(non_ssa)
    assert RunVerifier(RunVerifierOptions(rules=("TypeCheck", "UseAfterDef")))(p) is p
    assert RunVerifier(rules=("TypeCheck",))(p) is p
    assert RunVerifier(rules=("SSAVerify",))(prog(nested)) is not None
    with pytest.raises(PassError, match="NoNestedCall 501"):
        RunVerifier(rules=("NoNestedCall",))(prog(nested))


def test_bad_configuration():
    with pytest.raises(ValueError, match="unknown verifier rule"):
        RunVerifier(rules=("Nope",))(prog(nested))
    with pytest.raises(ValueError, match="either options or rules"):
        RunVerifier(RunVerifierOptions(), rules=("TypeCheck",))


def test_in_the_pipeline_after_the_front_passes():
    names = [p.name for p in pipeline()]
    front = ["UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "FlattenCallExpr", "SplitChunkedLoops",
             "InterchangeChunkLoops", "RunVerifier"]
    assert names[:len(front)] == front


def test_front_passes_end_to_end_with_roundtrip_checks():

    @pl.function
    def kernel(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
               n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 32], pl.FP32]:
        k = 0
        for j in pl.unroll(2):
            k = k + j
        for i in pl.range(n):
            if i % 3 == 1:
                continue
            k = k + i
            if k > 50:
                break
        with pl.auto_incore():
            for r in pl.parallel(0, 64, 1, chunk=16):
                row = pl.view(x, [1, 32], [r, 0])
                out = pl.assemble(out, pl.mul(pl.exp(row), 2.0), [r, 0])
        return out

    from pypto.ir.verifier import DEFAULT_RULES, verify
    from pypto.ir.walk import walk_stmts
    from tests.programs.roundtrip import roundtrip

    got = prog(kernel)
    ssa = False
    for p in pipeline()[:7]:  # the front passes; SSA rules once ConvertToSSA has run
        got = p(got)
        ssa = ssa or p.name == "ConvertToSSA"
        assert not verify(got, None if ssa else [r for r in DEFAULT_RULES if r != "SSAVerify"]), p.name
        # (the parser refuses init_values on a chunk= loop, which SSA gives a loop carrying a value)
        if not any(isinstance(s, ir.ForStmt) and s.chunk and s.iter_args for f in got.functions
                   for s in walk_stmts(f.body)):
            roundtrip(got)
    assert not verify(got, [*DEFAULT_RULES, "NoNestedCall"])
    stmts = [s for f in got.functions for s in walk_stmts(f.body)]
    assert not any(isinstance(s, (ir.BreakStmt, ir.ContinueStmt)) for s in stmts)
    assert not any(isinstance(s, ir.ForStmt) and (s.kind is pl.ForKind.Unroll or s.chunk) for s in stmts)
    scopes = [s.kind for s in stmts if isinstance(s, ir.ScopeStmt)]
    assert scopes == [pl.ScopeKind.InCore]
