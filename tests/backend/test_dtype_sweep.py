"""Every member of `DataType`, both frontends: it works end to end on both backends, or it is refused
where it is written.

A dtype some target can store (`pypto.ir.limits`) runs one small program on `cpu` and `interp`,
compared exactly with NumPy: load / store of two tensors, `pl.maximum` and `pl.add` on them, a
cast to FP32 and a cast from FP32. The same program is built with the IR builder, checked
structurally equal to the parsed one, and run too. A dtype no target has is refused: in `pl`
source at the annotation (file:line:col, the source line, the dtype, the targets, what to use
instead), at an op call and in `pl.const`; in a program built with the IR builder at the start of
the compile, naming function and parameter.
"""

from __future__ import annotations

import importlib.util
import sys

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.builder import IRBuilder
from pypto.ir.dtype import DataType
from pypto.ir.limits import UNSUPPORTED_DTYPES, dtype_problem
from pypto.ir.types import TensorType
from pypto.language.errors import ParserTypeError
from pypto.passes.base import PassError
from pypto.runtime import RunConfig

SHAPE = (16, 32)
# the decision, pinned: a change to the set of supported dtypes must change this line too
REFUSED = {DataType.INT4, DataType.UINT4, DataType.FP4, DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.HF4,
           DataType.HF8}
SUPPORTED = [dt for dt in DataType if dt not in REFUSED]

SOURCE = '''import pypto.language as pl


@pl.program
class Sweep:
    @pl.function
    def main(self, a: pl.Tensor[[16, 32], pl.{D}], b: pl.Tensor[[16, 32], pl.{D}],
             f: pl.Tensor[[16, 32], pl.FP32]) -> tuple[pl.Tensor[[16, 32], pl.{D}], pl.Tensor[[16, 32], pl.{D}],
                                                      pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.{D}]]:
        mx = pl.maximum(a, b)
        total = pl.add(a, b)
        up = pl.cast(a, pl.FP32)
        down = pl.cast(f, pl.{D})
        return mx, total, up, down
'''
ANNOTATION_LINE = 7  # `def main(self, a: pl.Tensor[...]`: the first annotation naming the dtype


def test_the_refused_set_is_what_limits_refuses():
    assert UNSUPPORTED_DTYPES == REFUSED
    assert all((dtype_problem(dt) is None) == (dt not in REFUSED) for dt in DataType)


# ---------------------------------------------------------------------------------------------
# supported dtypes: the same results as NumPy on both backends, from both frontends


def _inputs(dt: DataType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(list(DataType).index(dt))
    npd = dt.to_numpy()
    if dt.is_bool:
        return rng.random(SHAPE) < 0.5, rng.random(SHAPE) < 0.5, np.where(rng.random(SHAPE) < 0.5, 0.0,
                                                                        rng.standard_normal(SHAPE)).astype(np.float32)
    if dt.is_float:
        f = (rng.standard_normal(SHAPE) * 100).astype(np.float32)  # rounds on the way to FP16 / BF16
        return rng.standard_normal(SHAPE).astype(npd), rng.standard_normal(SHAPE).astype(npd), f
    lo = -50 if dt.is_signed else 0  # sums stay in range of every integer type
    ints = [rng.integers(lo, 60, SHAPE) for _ in range(3)]
    return ints[0].astype(npd), ints[1].astype(npd), ints[2].astype(np.float32)  # f: exact in every int type


def _expected(dt: DataType, a, b, f) -> list[np.ndarray]:
    npd = dt.to_numpy()
    total = (a | b) if dt.is_bool else (a + b).astype(npd)
    return [np.maximum(a, b), total, a.astype(np.float32), (f != 0) if dt.is_bool else f.astype(npd)]


def _built(dt: DataType):
    """SOURCE's program, written with the IR builder."""
    t, f32 = TensorType(list(SHAPE), dt), TensorType(list(SHAPE), DataType.FP32)
    ib = IRBuilder()
    with ib.program("Sweep") as prog:
        with ib.function("main") as fn:
            a, b, f = fn.param("a", t), fn.param("b", t), fn.param("f", f32)
            for r in (t, t, f32, t):
                fn.return_type(r)
            mx = ib.let("mx", ib.call("tensor.maximum", [a, b]))
            total = ib.let("total", ib.call("tensor.add", [a, b]))
            up = ib.let("up", ib.call("tensor.cast", [a], {"target_type": DataType.FP32}))
            down = ib.let("down", ib.call("tensor.cast", [f], {"target_type": dt}))
            ib.return_(mx, total, up, down)
    return prog.get_result()


@pytest.mark.native
@pytest.mark.parametrize("dt", SUPPORTED, ids=lambda d: d.name)
def test_supported_dtype_runs_on_both_backends(dt: DataType, tmp_path):
    parsed = pl.parse(SOURCE.replace("{D}", dt.name))
    built = _built(dt)
    ir.assert_structural_equal(built, parsed, enable_auto_mapping=True)
    args = _inputs(dt)
    want = _expected(dt, *args)
    bad = []
    for how, prog in (("pl", parsed), ("builder", built)):  # the second compile is served from the cache
        compiled = ir.compile(prog, output_dir=tmp_path / how)
        for platform in ("cpu", "interp"):
            got = compiled(*args, config=RunConfig(platform=platform))
            for name, g, w in zip(("maximum", "add", "cast to FP32", f"cast to {dt.name}"), got, want):
                if g.dtype != w.dtype or not np.array_equal(g, w):
                    bad.append(f"{how}, {platform}, {name}: {int((g != w).sum())} of {g.size} differ "
                               f"(dtype {g.dtype}, expected {w.dtype})")
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# refused dtypes: a located error in `pl`, a named one from the IR builder


def _assert_refusal(e: Exception, dt: DataType) -> None:
    msg = str(e)
    assert f"element type pl.{dt.name} is not supported by the CPU and interpreter targets" in msg, msg
    assert "help: use pl." in msg, msg  # what to use instead


@pytest.mark.parametrize("dt", sorted(REFUSED, key=list(DataType).index), ids=lambda d: d.name)
def test_refused_dtype_at_the_annotation(dt: DataType):
    src = SOURCE.replace("{D}", dt.name)
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(src, filename="sweep.py")
    e = ei.value
    _assert_refusal(e, dt)
    line = src.splitlines()[ANNOTATION_LINE - 1]
    assert (e.span.filename, e.lineno, e.col) == ("sweep.py", ANNOTATION_LINE, line.index("pl.Tensor") + 1)
    assert f"--> sweep.py:{ANNOTATION_LINE}:{line.index('pl.Tensor') + 1}" in str(e)
    assert line.strip() in str(e)  # the source line is shown


@pytest.mark.parametrize("dt", sorted(REFUSED, key=list(DataType).index), ids=lambda d: d.name)
def test_refused_dtype_at_a_cast_and_in_pl_const(dt: DataType):
    src = ("import pypto.language as pl\n\n\n@pl.program\nclass P:\n    @pl.function\n"
           "    def main(self, f: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
           f"        low = pl.cast(f, pl.{dt.name})\n"
           "        return pl.cast(low, pl.FP32)\n")
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(src, filename="cast.py")
    _assert_refusal(ei.value, dt)
    assert (ei.value.lineno, ei.value.col) == (8, 15)
    const = src.replace(f"pl.cast(f, pl.{dt.name})", f"pl.add(f, pl.const(1, pl.{dt.name}))")
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(const, filename="const.py")
    _assert_refusal(ei.value, dt)
    assert (ei.value.lineno, ei.value.col) == (8, 25)


@pytest.mark.parametrize("dt", sorted(REFUSED, key=list(DataType).index), ids=lambda d: d.name)
def test_refused_dtype_from_the_ir_builder(dt: DataType, tmp_path):
    built = _built(dt)
    with pytest.raises(PassError) as ei:
        ir.compile(built, output_dir=tmp_path)
    _assert_refusal(ei.value, dt)
    assert str(ei.value).startswith(f"Error: cannot compile program Sweep: parameter a of function main: element "
                                    f"type pl.{dt.name}")
    assert ei.value.span.filename == __file__  # the builder call that made the parameter
    assert "fn.param(\"a\", t)" in str(ei.value)
    assert not list(tmp_path.glob("kernels/*.pto"))  # refused before any pass ran


def test_refused_dtype_in_an_eagerly_evaluated_module(tmp_path, monkeypatch):
    """Python evaluates the annotations while the class body runs; the error still points at the
    annotation in the file (not at a Python traceback line inside pypto)."""
    path = tmp_path / "kernels_int4.py"
    path.write_text(SOURCE.replace("{D}", "INT4"))
    spec = importlib.util.spec_from_file_location("kernels_int4", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "kernels_int4", mod)
    with pytest.raises(ParserTypeError) as ei:
        spec.loader.exec_module(mod)
    _assert_refusal(ei.value, DataType.INT4)
    assert (ei.value.span.filename, ei.value.lineno) == (str(path), ANNOTATION_LINE)


@pytest.mark.parametrize("dt, wide", [(DataType.INT4, np.int8), (DataType.UINT4, np.uint8),
                                      (DataType.FP4, np.float16), (DataType.FP4, ml_dtypes.bfloat16),
                                      (DataType.FP8E4M3FN, np.float16), (DataType.FP8E4M3FN, ml_dtypes.bfloat16),
                                      (DataType.FP8E5M2, np.float16), (DataType.FP8E5M2, ml_dtypes.bfloat16)],
                         ids=lambda x: getattr(x, "name", None) or np.dtype(x).name)
def test_the_advice_holds_every_value_exactly(dt: DataType, wide):
    """The refusal's advice (widen to this type) loses nothing: every bit pattern of the narrow
    type survives the round trip through the wider one."""
    assert f"pl.{DataType.from_numpy(wide).name}" in dtype_problem(dt).hint
    n, npd = 1 << dt.bits, dt.to_numpy()
    if dt.is_float:  # every bit pattern
        narrow = np.arange(n, dtype=np.uint8).view(npd)
        keep = ~np.isnan(narrow.astype(np.float32))
    else:  # every value
        narrow = np.arange(*dt.int_range[:1], dt.int_range[1] + 1).astype(npd)
        keep = np.ones(n, bool)
    assert narrow.size == n
    back = narrow.astype(wide).astype(npd)
    assert np.array_equal(back[keep].astype(np.float32), narrow[keep].astype(np.float32))
    assert np.isnan(back[~keep].astype(np.float32)).all()


@pytest.mark.parametrize("pto_type", ["i4", "ui4", "f4", "f8e4m3", "f8e5m2"])
def test_hand_written_pto_with_a_refused_type_is_an_assembly_error(pto_type, tmp_path):
    """The PTO text can spell these types; the CPU assembler names the one it cannot build (it
    once failed with `KeyError: 'i4'`)."""
    from pypto.backend.cpu.emit_common import AssemblyError
    from pypto.backend.cpu.program import assemble
    from pypto.pto import parse_module

    out = ir.compile(pl.parse(SOURCE.replace("{D}", "INT8")), output_dir=tmp_path, skip_ptoas=True)
    kernels = {p.stem: p.read_text() for p in (tmp_path / "kernels").glob("*.pto")}
    assert kernels and all("xi8" in t or "i8>" in t or ", i8" in t for t in kernels.values())
    bad = {k: parse_module(t.replace("i8", pto_type)) for k, t in kernels.items()}
    with pytest.raises(AssemblyError, match=f"element type {pto_type} is not supported by the CPU backend"):
        assemble(str(out), bad, None)
