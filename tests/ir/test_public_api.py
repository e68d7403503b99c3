"""Public-API details code written for the public PyPTO relies on."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace


@pl.function
def h(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.exp(x)


@pl.function
def h2(y: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.exp(y)


def test_serialize_stays_a_function():
    a = ir.serialize(h)
    assert ir.serialize(h) == a  # (the submodule of the same name does not shadow it)
    assert ir.structural_equal(ir.deserialize(a), h)


def test_structural_hash_of_op_calls():
    again = pl.parse(ir.python_print(h))  # fresh variables, same structure
    assert ir.structural_equal(again, h)
    assert ir.structural_hash(again) == ir.structural_hash(h)  # (op calls with kwargs hash)
    assert ir.structural_hash(h2) != ir.structural_hash(pl.parse(ir.python_print(h2).replace("exp", "abs")))


def test_pass_manager_reachable_from_ir():
    assert ir.pass_manager.PassManager is not None
    assert ir.pass_manager.OptimizationStrategy.PTOAS is not None


def test_reference_keyword_names():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        tm = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        m = pl.row_max(t, tmp_tile=tm)
        e = pl.expands(t, scalar=2.0)
        v = pl.read(src=t, offset=[0, 1])
        f = pl.fillpad(value=e)
        return pl.store(pl.row_expand_sub(pl.adds(f, v), m), [0, 0], o)

    text = ir.python_print(k)
    assert "row_max(t, tm)" in text and "expands(t, 2.0)" in text


def test_three_number_memref_takes_the_tiles_space():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(0, 16384, 0), pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])
        return pl.store(t, [0, 0], o)

    from pypto.ir.walk import walk_stmts

    t = next(s.var for s in walk_stmts(k.body) if getattr(getattr(s, "var", None), "name", "") == "t")
    assert t.type.memref.memory_space is MemorySpace.Vec and t.type.memref.size == 16384


def test_aic_and_aiv_kernels_are_incore():
    from pypto.ir.enums import FunctionType

    assert pl.FunctionType.AIV is FunctionType.InCore and pl.FunctionType.AIC is FunctionType.InCore
    assert FunctionType.parse("pl.FunctionType.AIV") is FunctionType.InCore

    @pl.function(type=pl.FunctionType.AIV)
    def k(a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], o)

    assert "type=pl.FunctionType.InCore" in ir.python_print(k)


@pl.program
class _TwoFunctions:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        return pl.store(t, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, c)
        return c


def test_program_functions_read_as_sequence_and_mapping():
    fns = _TwoFunctions.functions
    assert [f.name for f in fns] == ["k", "main"]  # our form: a sorted sequence
    assert [f.name for f in fns.values()] == ["k", "main"]  # today's public form: a mapping
    assert [g.name for g in fns.keys()] == ["k", "main"]
    assert [(g.name, f.func_type) for g, f in fns.items()] == [
        ("k", pl.FunctionType.InCore), ("main", pl.FunctionType.Orchestration)]
