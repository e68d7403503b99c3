"""Elementwise, scalar, ternary, unary, compare/select and convert instructions of the C++ tile
library against the op registry's NumPy reference semantics, on ragged valid regions."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.ir.dtype import DataType
from pypto.ir.enums import CastMode, CmpType
from pypto.ops import OPS
from tests.programs.tile_lib import (
    DT,
    Entry,
    TileSpec,
    build,
    garbage,
    rand,
    same_bits_or_nan,
    sentinel,
    ulp_diff,
)

pytestmark = pytest.mark.native

R, C = 16, 64          # static tile shape
VR, VC = 13, 37        # ragged valid region
ENTRIES: list[Entry] = []
CASES: dict[str, dict] = {}


def add(name: str, tiles: list[TileSpec], body: str, **meta) -> str:
    ENTRIES.append(Entry(name, tuple(tiles), body))
    CASES[name] = meta
    return name


def bshape(kind: str, vr: int, vc: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return {"full": ((R, C), (vr, vc)), "row": ((1, C), (1, vc)), "col": ((R, 1), (vr, 1)),
            "one": ((1, 1), (1, 1))}[kind]


BINARY = {"TADD": "block.add", "TSUB": "block.sub", "TMUL": "block.mul", "TDIV": "block.div",
          "TMAX": "block.maximum", "TMIN": "block.minimum", "TREM": "block.rem"}
BITWISE = {"TAND": "block.and_", "TOR": "block.or_", "TXOR": "block.xor", "TSHL": "block.shl", "TSHR": "block.shr"}

BIN_CASES = []
for op, ref in BINARY.items():
    for dt in ("f32", "f16", "bf16", "i32", "i8"):
        for kind in ("full", "row", "col", "one"):
            if kind != "full" and dt in ("f16", "i8") and op not in ("TADD", "TDIV"):
                continue
            BIN_CASES.append((op, ref, dt, dt, dt, kind))
for op, ref in BITWISE.items():
    for dt in ("i32", "i8", "ui16"):
        BIN_CASES.append((op, ref, dt, dt, dt, "full"))
    BIN_CASES.append((op, ref, "i32", "i32", "i32", "col"))
# mixed dtypes: compute in the promoted type, store as dst
BIN_CASES += [("TADD", "block.add", "f32", "i32", "f32", "full"), ("TMUL", "block.mul", "f32", "f16", "f32", "row"),
              ("TADD", "block.add", "i32", "i8", "i32", "full"), ("TSUB", "block.sub", "f16", "bf16", "f32", "full")]

for op, ref, dd, da, db, kind in BIN_CASES:
    (br, bc), _ = bshape(kind, VR, VC)
    for full in (False, True):
        if full and kind not in ("full", "one"):
            continue
        name = f"{op}_{dd}_{da}_{db}_{kind}{'_full' if full else ''}"
        add(name, [TileSpec(dd, R, C), TileSpec(da, R, C), TileSpec(db, br, bc)], f"pto::{op}(t0, t1, t2)",
            kind="binary", ref=ref, dts=(dd, da, db), bkind=kind, full=full)


def _binary_inputs(meta, rng):
    dd, da, db = meta["dts"]
    vr, vc = (R, C) if meta["full"] else (VR, VC)
    (br, bc), bvalid = bshape(meta["bkind"], vr, vc)
    a = rand(DT[da][1], (R, C), rng)
    b = rand(DT[db][1], (br, bc), rng)
    op = meta["ref"]
    if op in ("block.div", "block.rem") and DT[db][1].kind in "iu":
        b.flat[::5] = 0
        if DT[db][1].kind == "i":
            b.flat[1::7] = -1
    if op in ("block.shl", "block.shr"):
        b = rng.integers(-2, np.iinfo(DT[db][1]).bits + 3, (br, bc)).astype(DT[db][1])
    if op == "block.div" and DT[db][1].kind == "f":
        b.flat[::9] = 0
    return (vr, vc), a, b, bvalid


@pytest.fixture(scope="module")
def lib():
    return build(ENTRIES, "test_tile_lib_elementwise")


def _run(lib, name, dst_spec, srcs, valid, ints=(), dbls=(), rng=None):
    """Call with garbage in source padding and a sentinel in dst padding; return dst."""
    out = sentinel(dst_spec.np, (dst_spec.rows, dst_spec.cols))
    bufs = [out] + [garbage(s, v, rng) if rng is not None else s for s, v in zip(srcs, valid[1:])]
    lib.call(name, bufs, valid, ints, dbls)
    return out


def _check_region(out, want, vr, vc, dst_np, exact=True, ulps=0.0):
    pad = sentinel(out.dtype, out.shape)
    mask = np.ones(out.shape, bool)
    mask[:vr, :vc] = False
    assert same_bits_or_nan(out[mask], pad[mask]), "wrote outside the destination's valid region"
    got = out[:vr, :vc]
    want = np.asarray(want)
    if exact:
        w = want.astype(dst_np) if not (want.dtype.kind == "f" and dst_np.kind in "iu") else want
        assert same_bits_or_nan(got, w), f"mismatch:\n{got}\n!=\n{w}"
    else:
        d = ulp_diff(got, want)
        assert float(d.max()) <= ulps, f"max ulp error {d.max()} > {ulps}"


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] == "binary"])
def test_binary(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(hash(name) % 2**32)
    (vr, vc), a, b, bvalid = _binary_inputs(meta, rng)
    spec = lib.entries[name].tiles
    out = _run(lib, name, spec[0], [a, b], [(vr, vc), (vr, vc), bvalid], rng=rng)
    want = OPS[meta["ref"]].reference(a[:vr, :vc], b[: bvalid[0], : bvalid[1]])
    _check_region(out, np.broadcast_to(want, (vr, vc)), vr, vc, spec[0].np)


# ---- tile x scalar -------------------------------------------------------------------------------------
SCALAR = {"TADDS": "block.adds", "TSUBS": "block.subs", "TMULS": "block.muls", "TDIVS": "block.divs",
          "TMAXS": "block.maxs", "TMINS": "block.mins", "TREMS": "block.rems", "TLRELU": "block.lrelu"}
SCALAR_INT = {"TANDS": "block.ands", "TORS": "block.ors", "TXORS": "block.xors", "TSHLS": "block.shls",
              "TSHRS": "block.shrs"}
for op, ref in SCALAR.items():
    for dt in ("f32", "f16", "bf16", "i32", "i8"):
        if op == "TLRELU" and dt in ("i32", "i8"):
            continue
        add(f"{op}_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C)],
            f"pto::{op}(t0, t1, {'dv[0]' if DT[dt][1].kind == 'f' or dt == 'bf16' else '(long long)ix[0]'})",
            kind="scalar", ref=ref, dt=dt)
for op, ref in SCALAR_INT.items():
    for dt in ("i32", "i8", "ui8"):
        add(f"{op}_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C)], f"pto::{op}(t0, t1, (long long)ix[0])",
            kind="scalar", ref=ref, dt=dt)


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] == "scalar"])
def test_scalar(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(7)
    npdt = DT[meta["dt"]][1]
    a = rand(npdt, (R, C), rng)
    is_f = npdt.kind == "f" or meta["dt"] == "bf16"
    s = 0.37 if is_f else 3
    if meta["ref"] in ("block.divs", "block.rems") and is_f:
        s = -1.75
    out = _run(lib, name, lib.entries[name].tiles[0], [a], [(VR, VC), (VR, VC)], ints=[int(s)], dbls=[float(s)], rng=rng)
    want = OPS[meta["ref"]].reference(a[:VR, :VC], s)
    _check_region(out, want, VR, VC, npdt)


# ---- unary -----------------------------------------------------------------------------------------------
UNARY = {"TEXP": "block.exp", "TLOG": "block.log", "TSQRT": "block.sqrt", "TRSQRT": "block.rsqrt",
         "TRECIP": "block.recip", "TNEG": "block.neg", "TABS": "block.abs", "TRELU": "block.relu",
         "TNOT": "block.not_"}
for op, ref in UNARY.items():
    dts = ("i32", "i8", "i1") if op == "TNOT" else (
        ("f32", "f16", "bf16") if op in ("TEXP", "TLOG", "TSQRT", "TRSQRT", "TRECIP") else ("f32", "f16", "bf16", "i32", "i8"))
    for dt in dts:
        for full in (False, True):
            add(f"{op}_{dt}{'_full' if full else ''}", [TileSpec(dt, R, C), TileSpec(dt, R, C)], f"pto::{op}(t0, t1)",
                kind="unary", ref=ref, dt=dt, full=full)


def _unary_input(ref, npdt, rng, shape):
    if ref == "block.exp":
        x = rng.uniform(-110, 95, shape)
        x.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.7]
    elif ref in ("block.log", "block.sqrt", "block.rsqrt"):
        x = np.exp(rng.uniform(-90, 88, shape))
        x.flat[:8] = [0.0, -0.0, -1.0, np.inf, np.nan, 1.0, 1e-45, 3e-39]
    elif ref == "block.recip":
        x = rng.uniform(-5, 5, shape)
        x.flat[:3] = [0.0, -0.0, np.inf]
    else:
        return rand(npdt, shape, rng)
    return x.astype(np.float32).astype(npdt)


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] == "unary"])
def test_unary(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(11)
    npdt = DT[meta["dt"]][1]
    vr, vc = (R, C) if meta["full"] else (VR, VC)
    x = _unary_input(meta["ref"], npdt, rng, (R, C))
    out = _run(lib, name, lib.entries[name].tiles[0], [x], [(vr, vc), (vr, vc)], rng=rng)
    with np.errstate(all="ignore"):
        want = OPS[meta["ref"]].reference(x[:vr, :vc])
    approx = meta["ref"] in ("block.exp", "block.log")
    _check_region(out, want, vr, vc, npdt, exact=not approx, ulps=2.0 if meta["dt"] == "f32" else 1.0)


def test_exp_log_accuracy_dense(lib):
    """exp / log over a dense sweep of the fp32 range: <= 2 ulp against NumPy."""
    rng = np.random.default_rng(3)
    for name, ref, lo, hi in (("TEXP_f32_full", "block.exp", -103.0, 88.7), ("TLOG_f32_full", "block.log", None, None)):
        for _ in range(20):
            if lo is not None:
                x = rng.uniform(lo, hi, (R, C)).astype(np.float32)
            else:
                x = (rng.uniform(0, 1, (R, C)) * 10.0 ** rng.integers(-44, 38, (R, C))).astype(np.float32)
                x.flat[:4] = [1.0, np.nextafter(np.float32(1), np.float32(2)), np.float32(0.99999994), 1e-45]
            out = _run(lib, name, lib.entries[name].tiles[0], [x], [(R, C), (R, C)])
            want = OPS[ref].reference(x)
            assert ulp_diff(out, want).max() <= 2.0


# ---- ternary / compare / select -------------------------------------------------------------------------------
for op, ref in (("TADDC", "block.addc"), ("TSUBC", "block.subc")):
    for dt in ("f32", "i32", "f16"):
        add(f"{op}_{dt}", [TileSpec(dt, R, C)] * 4, f"pto::{op}(t0, t1, t2, t3)", kind="ternary", ref=ref, dt=dt)
for op, ref in (("TADDSC", "block.addsc"), ("TSUBSC", "block.subsc")):
    for dt in ("f32", "i32", "bf16"):
        sc = "dv[0]" if dt != "i32" else "(long long)ix[0]"
        add(f"{op}_{dt}", [TileSpec(dt, R, C)] * 3, f"pto::{op}(t0, t1, {sc}, t2)", kind="ternary_s", ref=ref, dt=dt)
for dt in ("f32", "f16"):
    add(f"TPRELU_{dt}", [TileSpec(dt, R, C)] * 3, "pto::TPRELU(t0, t1, t2)", kind="prelu", dt=dt, bkind="full")
    add(f"TPRELU_{dt}_col", [TileSpec(dt, R, C), TileSpec(dt, R, C), TileSpec(dt, R, 1)], "pto::TPRELU(t0, t1, t2, t2)",
        kind="prelu", dt=dt, bkind="col")


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] in ("ternary", "ternary_s", "prelu")])
def test_ternary(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(5)
    npdt = DT[meta["dt"]][1]
    if meta["kind"] == "ternary":
        a, b, c = (rand(npdt, (R, C), rng) for _ in range(3))
        out = _run(lib, name, lib.entries[name].tiles[0], [a, b, c], [(VR, VC)] * 4, rng=rng)
        want = OPS[meta["ref"]].reference(a[:VR, :VC], b[:VR, :VC], c[:VR, :VC])
    elif meta["kind"] == "ternary_s":
        a, c = rand(npdt, (R, C), rng), rand(npdt, (R, C), rng)
        s = 2.25 if npdt.kind == "f" or meta["dt"] == "bf16" else 5
        out = _run(lib, name, lib.entries[name].tiles[0], [a, c], [(VR, VC)] * 3, ints=[int(s)], dbls=[float(s)], rng=rng)
        want = OPS[meta["ref"]].reference(a[:VR, :VC], s, c[:VR, :VC])
    else:
        x = rand(npdt, (R, C), rng)
        (sr, sc), sv = bshape(meta["bkind"], VR, VC)
        s = rand(npdt, (sr, sc), rng, 0, 1)
        out = _run(lib, name, lib.entries[name].tiles[0], [x, s], [(VR, VC), (VR, VC), sv], rng=rng)
        want = OPS["block.prelu"].reference(x[:VR, :VC], s[: sv[0], : sv[1]])
    _check_region(out, want, VR, VC, npdt)


for dt, ddt in (("f32", "f32"), ("i32", "i32"), ("f16", "i1"), ("i8", "i1"), ("bf16", "bf16")):
    add(f"TCMP_{dt}_{ddt}", [TileSpec(ddt, R, C), TileSpec(dt, R, C), TileSpec(dt, R, C)],
        "pto::TCMP(t0, t1, t2, pto::CmpMode(ix[0]))", kind="cmp", dt=dt, ddt=ddt)
    add(f"TCMPS_{dt}_{ddt}", [TileSpec(ddt, R, C), TileSpec(dt, R, C)],
        f"pto::TCMPS(t0, t1, {'(long long)ix[1]' if dt in ('i32', 'i8') else 'dv[0]'}, pto::CmpMode(ix[0]))",
        kind="cmps", dt=dt, ddt=ddt)


@pytest.mark.parametrize("mode", list(CmpType))
@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] in ("cmp", "cmps")])
def test_compare(lib, name, mode):
    meta = CASES[name]
    rng = np.random.default_rng(9)
    npdt, ddt = DT[meta["dt"]][1], DT[meta["ddt"]][1]
    a = rand(npdt, (R, C), rng, -2, 2)
    if meta["kind"] == "cmp":
        b = rand(npdt, (R, C), rng, -2, 2)
        b.flat[::3] = a.flat[::3]
        out = _run(lib, name, lib.entries[name].tiles[0], [a, b], [(VR, VC)] * 3, ints=[mode.value], rng=rng)
        want = OPS["block.cmp"].reference(a[:VR, :VC], b[:VR, :VC], cmp_type=mode)
    else:
        s = 1 if npdt.kind in "iu" else 0.5
        a.flat[::4] = s
        out = _run(lib, name, lib.entries[name].tiles[0], [a], [(VR, VC)] * 2, ints=[mode.value, int(s)], dbls=[s],
                   rng=rng)
        want = OPS["block.cmps"].reference(a[:VR, :VC], s, cmp_type=mode)
    _check_region(out, np.asarray(want).astype(np.float32).astype(ddt), VR, VC, ddt)


for mdt, dt in (("i1", "f32"), ("f32", "f32"), ("i8", "i32"), ("i32", "f16"), ("ui8", "bf16")):
    add(f"TSEL_{mdt}_{dt}", [TileSpec(dt, R, C), TileSpec(mdt, R, C), TileSpec(dt, R, C), TileSpec(dt, R, C)],
        "pto::TSEL(t0, t1, t2, t3)", kind="sel", mdt=mdt, dt=dt)
add("TSELS_f32", [TileSpec("f32", R, C)] * 3, "pto::TSELS(t0, t1, t2, ix[0])", kind="sels", dt="f32")


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] in ("sel", "sels")])
def test_select(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(13)
    npdt = DT[meta["dt"]][1]
    a, b = rand(npdt, (R, C), rng), rand(npdt, (R, C), rng)
    if meta["kind"] == "sel":
        m = rand(DT[meta["mdt"]][1], (R, C), rng, -1, 1)
        if m.dtype.kind == "f":
            m.flat[::3] = 0.0
            m.flat[1::7] = 0.25
        out = _run(lib, name, lib.entries[name].tiles[0], [m, a, b], [(VR, VC)] * 4, rng=rng)
        _check_region(out, OPS["block.sel"].reference(m[:VR, :VC], a[:VR, :VC], b[:VR, :VC]), VR, VC, npdt)
    else:
        for mode in (0, 1):
            out = _run(lib, name, lib.entries[name].tiles[0], [a, b], [(VR, VC)] * 3, ints=[mode], rng=rng)
            _check_region(out, OPS["block.sels"].reference(a[:VR, :VC], b[:VR, :VC], mode), VR, VC, npdt)


# ---- convert ----------------------------------------------------------------------------------------------
CVT = [("f32", "f16"), ("f32", "bf16"), ("f32", "i32"), ("f32", "i8"), ("f32", "i16"), ("f32", "ui8"), ("f32", "i64"),
       ("f32", "ui32"), ("f32", "i1"), ("f16", "f32"), ("bf16", "f32"), ("f16", "bf16"), ("i32", "f32"), ("i8", "i32"),
       ("i32", "i8"), ("i32", "ui16"), ("f16", "i8"), ("bf16", "i32"), ("i64", "f32"), ("ui8", "f16"), ("i1", "f32"),
       ("i32", "bf16"), ("f32", "f32")]
for s, d in CVT:
    add(f"TCVT_{s}_{d}", [TileSpec(d, R, C), TileSpec(s, R, C)], "pto::TCVT(t0, t1, pto::RoundMode(ix[0]))",
        kind="cvt", s=s, d=d)


@pytest.mark.parametrize("mode", list(CastMode))
@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] == "cvt"])
def test_convert(lib, name, mode):
    meta = CASES[name]
    rng = np.random.default_rng(17)
    s_np, d_np = DT[meta["s"]][1], DT[meta["d"]][1]
    if s_np.kind == "f" or meta["s"] == "bf16":
        x = rng.uniform(-300, 300, (R, C))
        x.flat[:12] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, np.nan, 1e10, -1e10, 127.5, -128.5, 0.49999997]
        x = x.astype(np.float32).astype(s_np)
    else:
        x = rand(s_np, (R, C), rng, -200, 200)
    out = _run(lib, name, lib.entries[name].tiles[0], [x], [(VR, VC)] * 2, ints=[mode.value], rng=rng)
    with np.errstate(all="ignore"):
        want = OPS["block.cast"].reference(x[:VR, :VC], target_type=DataType.from_text(_pto_to_dtype(meta["d"])),
                                           mode=mode)
    want = np.asarray(want)
    if d_np.kind in "iu" and (s_np.kind == "f" or meta["s"] == "bf16"):
        # saturation at the exact integer bounds (the reference clips in float32, which can round
        # INT32_MAX up to 2^31 and then wrap): compare where the value is safely in range
        info = np.iinfo(d_np)
        xv = x[:VR, :VC].astype(np.float64)
        sat_hi, sat_lo = xv >= float(info.max) + 1, xv <= float(info.min) - 1
        want = np.where(sat_hi, info.max, np.where(sat_lo, info.min, want)).astype(d_np)
        want = np.where(np.isnan(xv), 0, want).astype(d_np)
    _check_region(out, want, VR, VC, d_np)


def _pto_to_dtype(name: str) -> str:
    return {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
            "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64", "i1": "bool"}[name]


# ---- fused loop (functor API) ----------------------------------------------------------------------------------
add("FUSED_softmax_like", [TileSpec("f32", R, C), TileSpec("f32", R, C), TileSpec("f32", R, 1), TileSpec("bf16", R, C)],
    "pto::vloop<float>(t0.vr, t0.vc, false, [&](const auto& cur) {"
    " auto x = pto::op::Exp{}(pto::op::Sub{}(cur.load(t1), cur.load(pto::ColBcast(t2))));"
    " cur.store(t3, x); cur.store(t0, pto::op::MulS<float>{0.5f}(pto::op::Round<pto::bf16>{}(x))); })",
    kind="fused")
add("FUSED_vmap", [TileSpec("f32", R, C), TileSpec("f32", R, C), TileSpec("f32", 1, C)],
    "pto::vmap(t0, [](auto a, auto b) { return pto::op::Relu{}(pto::op::Add{}(a, b)); }, t1, t2)", kind="fused")


def test_fused_loops(lib):
    rng = np.random.default_rng(21)
    x, m = rand(np.dtype(np.float32), (R, C), rng), rand(np.dtype(np.float32), (R, 1), rng)
    out = sentinel(np.dtype(np.float32), (R, C))
    mid = sentinel(DT["bf16"][1], (R, C))
    lib.call("FUSED_softmax_like", [out, x, m, mid], [(VR, VC), (VR, VC), (VR, 1), (VR, VC)])
    e = OPS["block.exp"].reference(x[:VR, :VC] - m[:VR])
    _check_region(mid, e.astype(DT["bf16"][1]), VR, VC, DT["bf16"][1], exact=False, ulps=1.0)
    np.testing.assert_array_equal(out[:VR, :VC], mid[:VR, :VC].astype(np.float32) * np.float32(0.5))
    b = rand(np.dtype(np.float32), (1, C), rng)
    out = sentinel(np.dtype(np.float32), (R, C))
    lib.call("FUSED_vmap", [out, x, b], [(VR, VC), (VR, VC), (1, VC)])
    _check_region(out, np.maximum(x[:VR, :VC] + b[:, :VC], 0), VR, VC, np.dtype(np.float32))
