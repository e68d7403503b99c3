"""Every registry tile op with a PTO instruction, run by the interpreter against the NumPy reference.

One table: each row names a registry op, the dtypes it takes, its operand kinds and its result kind.
Each row runs over fp32/fp16/bf16/int32/int8 (where the op allows) and three valid regions: the
full tile, a ragged static one and a dynamic one (valid rows from a kernel argument). The expected
result is the registry reference applied to the inputs' valid regions; everything the store must not
touch (the output outside the valid region) keeps its sentinel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from pypto.backend.interp import run_kernel
from pypto.ir.enums import CastMode, CmpType, PadValue
from pypto.ops import OPS, Level
from tests.programs import op_table as P
from tests.programs.interp_kernels import ALL, FLOATS, INTS, NP, Kernel, rand

R, C = 16, 32
VALIDS = {"full": (R, C), "ragged": (13, 29), "dynamic": (11, 27)}
N_DYN = 11
SENTINEL = 7


@dataclass
class Case:
    op: str  # registry op
    dtypes: tuple[str, ...]
    operands: tuple[str, ...]  # t [R,C] | row [R,1] | col [1,C] | pos (t, > 0) | shift | mask | s (scalar) | mode
    out: str = "t"  # t | row | col | full (whole tile valid)
    call: str | None = None  # expression; default pl.block.<name>(operands)
    ref_kw: dict = field(default_factory=dict)
    id: str = ""


def _short(op: str) -> str:
    return op.split(".", 1)[1]


CASES: list[Case] = []
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "rem"):
    CASES.append(Case(f"block.{_n}", ALL, ("t", "t")))
CASES.append(Case("block.add", ALL, ("t", "row"), id="add_row_bcast"))
CASES.append(Case("block.mul", FLOATS, ("t", "col"), id="mul_col_bcast"))
for _n in ("and_", "or_", "xor"):
    CASES.append(Case(f"block.{_n}", INTS, ("t", "t")))
for _n in ("shl", "shr"):
    CASES.append(Case(f"block.{_n}", INTS, ("t", "shift")))
for _n in ("adds", "subs", "muls", "divs", "maxs", "mins", "rems"):
    CASES.append(Case(f"block.{_n}", ALL, ("t", "s")))
for _n in ("ands", "ors", "xors", "shls", "shrs"):
    CASES.append(Case(f"block.{_n}", INTS, ("t", "s")))
CASES += [
    Case("block.lrelu", FLOATS, ("t", "s")),
    Case("block.addc", ALL, ("t", "t", "t")),
    Case("block.subc", ALL, ("t", "t", "t")),
    Case("block.addsc", ALL, ("t", "s", "t")),
    Case("block.subsc", ALL, ("t", "s", "t")),
    Case("block.prelu", FLOATS, ("t", "t")),
    Case("block.sel", ALL, ("mask", "t", "t")),
    Case("block.sels", ALL, ("t", "t", "mode")),
]
for _cmp in (CmpType.LT, CmpType.GE, CmpType.EQ):
    CASES.append(Case("block.cmp", ALL, ("t", "t"), call=f"pl.block.cmp(t0, t1, cmp_type={_cmp.value})",
                      ref_kw={"cmp_type": _cmp}, id=f"cmp_{_cmp.name}"))
    CASES.append(Case("block.cmps", ALL, ("t", "s"), call=f"pl.block.cmps(t0, s1, cmp_type={_cmp.value})",
                      ref_kw={"cmp_type": _cmp}, id=f"cmps_{_cmp.name}"))
for _n in ("exp", "neg", "abs", "relu"):
    CASES.append(Case(f"block.{_n}", FLOATS if _n == "exp" else ALL, ("t",)))
for _n in ("log", "sqrt", "rsqrt", "recip"):
    CASES.append(Case(f"block.{_n}", FLOATS, ("pos",)))
CASES.append(Case("block.not_", INTS, ("t",)))
for _n in ("row_sum", "row_max", "row_min"):
    CASES.append(Case(f"block.{_n}", ALL, ("t",), out="row"))
for _n in ("col_sum", "col_max", "col_min"):
    CASES.append(Case(f"block.{_n}", ALL, ("t",), out="col"))
CASES += [
    Case("block.sum", FLOATS, ("t",), out="row", call="pl.block.sum(t0, axis=1, keepdim=True)",
         ref_kw={"axis": 1, "keepdim": True}, id="sum_axis1"),
    Case("block.max", ALL, ("t",), out="col", call="pl.block.max(t0, axis=0, keepdim=True)",
         ref_kw={"axis": 0, "keepdim": True}, id="max_axis0"),
    Case("block.row_expand", ALL, ("t",)),
    Case("block.col_expand", ALL, ("t", "col")),
    Case("block.expands", ALL, ("t", "s")),
]
for _n in ("add", "sub", "mul", "div", "max", "min"):
    CASES.append(Case(f"block.row_expand_{_n}", ALL, ("t", "row")))
    CASES.append(Case(f"block.col_expand_{_n}", ALL, ("t", "col")))
for _pad in (PadValue.zero, PadValue.max, PadValue.min):
    CASES.append(Case("block.fillpad", ALL, ("t",), out="full",
                      call=f"pl.block.fillpad(t0, pad_value={_pad.value})", ref_kw={"pad_value": _pad},
                      id=f"fillpad_{_pad.name}"))


def _shape(kind: str) -> tuple[int, int]:
    return {"row": (R, 1), "col": (1, C)}.get(kind, (R, C))


def _valid(kind: str, vr, vc):
    return {"row": (vr, 1), "col": (1, vc), "full": (R, C)}.get(kind, (vr, vc))


def _scalar_dt(dt: str) -> str:
    return "FP32" if dt in FLOATS else "INT32"


def _scalar_value(dt: str, kind: str):
    if kind == "mode":
        return 1
    return 1.5 if dt in FLOATS else 3


def _data(kind: str, dt: str, rng) -> np.ndarray:
    shape = _shape(kind)
    if kind == "pos":
        return rand(shape, dt, rng, 0.25, 4.0)
    if kind == "shift":
        return rng.integers(0, 7, size=shape).astype(NP[dt])
    if kind == "mask":
        return rng.integers(0, 2, size=shape).astype(NP[dt])
    return rand(shape, dt, rng)


def _build(case: Case, dt: str, out_dt: str, valid: str, call: str) -> Kernel:
    vr, vc = VALIDS[valid]
    vr_text = "n" if valid == "dynamic" else vr
    k = Kernel()
    tiles = []
    for i, kind in enumerate(case.operands):
        if kind in ("s", "mode"):
            continue
        k.tensor(f"x{i}", _shape(kind), dt)
    for i, kind in enumerate(case.operands):
        if kind in ("s", "mode"):
            k.scalar(f"s{i}", _scalar_dt(dt) if kind == "s" else "INT32")
    if valid == "dynamic":
        k.scalar("n", "INDEX")
    out_kind = case.out
    k.tensor("out", _shape(out_kind), out_dt, "Out")
    for i, kind in enumerate(case.operands):
        if kind in ("s", "mode"):
            tiles.append(f"s{i}")
            continue
        k.load(f"t{i}", f"x{i}", _shape(kind), dt, valid=_valid(kind, vr_text, vc))
        tiles.append(f"t{i}")
    k.barrier()
    expr = call.format(*tiles) if "{" in call else call
    k.let("r", _shape(out_kind), out_dt, expr, valid=_valid(out_kind, vr_text, vc))
    k.barrier()
    k.store("r", [0, 0])
    return k


def _expected(case: Case, dt: str, out_dt: str, valid: str, inputs: list, out: np.ndarray) -> np.ndarray:
    vr, vc = VALIDS[valid]
    args = []
    for kind, x in zip(case.operands, inputs):
        if kind in ("s", "mode"):
            args.append(x)
        else:
            r, c = _valid(kind, vr, vc)
            args.append(x[:r, :c])
    ref = OPS[case.op].reference
    kw = dict(case.ref_kw)
    if case.op == "block.fillpad":
        x = np.zeros((R, C), dtype=inputs[0].dtype)
        x[:vr, :vc] = args[0]
        res = ref(x, valid=(vr, vc), **kw)
    elif case.op == "block.expands":
        res = ref(np.zeros((vr, vc), inputs[0].dtype), args[1])
    else:
        with np.errstate(all="ignore"):
            res = ref(*args, **kw)
    er, ec = _valid(case.out, vr, vc)
    exp = out.copy()
    with np.errstate(all="ignore"):
        exp[:er, :ec] = np.broadcast_to(np.asarray(res), (er, ec)).astype(NP[out_dt])
    return exp


def _ids(c: Case) -> str:
    return c.id or _short(c.op)


def _params():
    for c in CASES:
        for dt in c.dtypes:
            for valid in VALIDS:
                if c.out == "full" and valid == "dynamic" and c.op != "block.fillpad":
                    continue
                yield pytest.param(c, dt, valid, id=f"{_ids(c)}-{dt}-{valid}")


def _assert_same(got: np.ndarray, exp: np.ndarray, what: str) -> None:
    g, e = got.astype(np.float64), exp.astype(np.float64)
    bad = ~((g == e) | (np.isnan(g) & np.isnan(e)))
    if bad.any():
        idx = np.argwhere(bad)[:5].tolist()
        raise AssertionError(f"{what}: {bad.sum()} element(s) differ, e.g. at {idx}: "
                             f"got {[got[tuple(i)] for i in idx]}, expected {[exp[tuple(i)] for i in idx]}")


@pytest.mark.parametrize("case,dt,valid", list(_params()))
def test_op_matches_reference(case: Case, dt: str, valid: str):
    rng = np.random.default_rng(abs(hash((case.op, case.id, dt, valid))) % 2**32)
    out_dt = dt
    call = case.call or f"pl.block.{_short(case.op)}(" + ", ".join(
        "{" + str(i) + "}" for i in range(len(case.operands))) + ")"
    k = _build(case, dt, out_dt, valid, call)
    module = k.build()
    inputs = []
    for kind in case.operands:
        inputs.append(_scalar_value(dt, kind) if kind in ("s", "mode") else _data(kind, dt, rng))
    out = np.full(_shape(case.out), SENTINEL, dtype=NP[out_dt])
    args = [x for kind, x in zip(case.operands, inputs) if kind not in ("s", "mode")]
    args += [x for kind, x in zip(case.operands, inputs) if kind in ("s", "mode")]
    if valid == "dynamic":
        args.append(N_DYN)
    exp = _expected(case, dt, out_dt, valid, inputs, out)
    run_kernel(module, args + [out])
    _assert_same(out, exp, f"{case.op} on {dt} ({valid})")


CAST_PAIRS = [("FP32", "FP16"), ("FP32", "BF16"), ("FP16", "FP32"), ("BF16", "FP32"), ("FP32", "INT32"),
              ("FP16", "INT8"), ("INT32", "FP32"), ("INT8", "FP16"), ("INT32", "INT8"), ("INT8", "INT32"),
              ("BF16", "INT32")]


@pytest.mark.parametrize("mode", [CastMode.round, CastMode.rint, CastMode.floor, CastMode.ceil, CastMode.trunc])
@pytest.mark.parametrize("src,dst", CAST_PAIRS)
@pytest.mark.parametrize("valid", ["full", "ragged"])
def test_cast(src: str, dst: str, mode: CastMode, valid: str):
    rng = np.random.default_rng(5)
    case = Case("block.cast", (src,), ("t",), call=f"pl.block.cast(t0, target_type=pl.{dst}, mode={mode.value})")
    k = _build(case, src, dst, valid, case.call)
    x = rand((R, C), src, rng, -40, 40)
    if src in FLOATS:
        x[0, :4] = np.array([0.5, -0.5, 1.5, -2.5]).astype(x.dtype)  # ties for the rounding modes
    out = np.full((R, C), SENTINEL, dtype=NP[dst])
    vr, vc = VALIDS[valid]
    exp = out.copy()
    exp[:vr, :vc] = OPS["block.cast"].reference(x[:vr, :vc], target_type=_dt(dst), mode=mode)
    run_kernel(k.build(), [x, out])
    _assert_same(out, exp, f"cast {src}->{dst} ({mode.name})")


def _dt(name: str):
    from pypto.ir.dtype import DataType

    return getattr(DataType, name)


def test_full_fills_valid_region():
    k = Kernel()
    k.tensor("out", (R, C), "FP16", "Out")
    k.let("r", (R, C), "FP16", f"pl.block.full([{R}, {C}], dtype=pl.FP16, value=2.5)")
    k.barrier()
    k.store("r", [0, 0])
    out = np.zeros((R, C), np.float16)
    run_kernel(k.build(), [out])
    assert (out == 2.5).all()


# instructions exercised by other files (data movement, matmul, sync)
ELSEWHERE = {"block.load", "block.store", "block.move", "block.view", "block.assemble", "block.concat",
             "block.reshape", "block.transpose", "block.read", "block.write", "block.full", "block.cast",
             "block.matmul", "block.matmul_acc", "block.matmul_bias", "block.gemv", "block.gemv_acc",
             "block.gemv_bias", "system.sync_src", "system.sync_dst", "system.bar_v", "system.bar_m",
             "system.bar_all",
             "block.expand_clone",  # (made by the tiling pass only: tensor.expand_clone's rows and test_pl_catalogue4)
             "block.mgather", "block.mscatter",  # (whole-parameter indirect access: tests/language/test_pl_catalogue5.py)
             "block.paged_gather"}  # (pool + block table as whole parameters: tests/language/test_pl_paged_gather.py)


def test_every_instruction_is_covered():
    """This table is the fast tier's check of the interpreter; an op's definitive row is in
    tests/programs/op_table.py (run on both backends, tests/ops/test_registry_completeness.py), so a
    new op needs a row here only when the op table cannot express it."""
    table = {c.op for c in CASES} | {c.op for dt in P.DTYPES for c in P.block_cases(dt)}
    missing = sorted(n for n, op in OPS.items()
                     if op.pto and op.level is not Level.TENSOR and n not in table and n not in ELSEWHERE)
    assert not missing, f"registry ops with a PTO instruction but no interp test: {missing}"
