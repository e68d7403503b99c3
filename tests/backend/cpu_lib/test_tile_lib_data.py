"""Reductions, broadcasts, fill and data-movement instructions of the C++ tile library."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.ir.enums import PadValue
from pypto.ops import OPS
from tests.programs.tile_lib import DT, Entry, TileSpec, build, garbage, rand, same_bits_or_nan, sentinel

pytestmark = pytest.mark.native

R, C, VR, VC = 16, 64, 13, 37
ENTRIES: list[Entry] = []
CASES: dict[str, dict] = {}


def add(name, tiles, body, **meta):
    ENTRIES.append(Entry(name, tuple(tiles), body))
    CASES[name] = meta


@pytest.fixture(scope="module")
def lib():
    return build(ENTRIES, "test_tile_lib_data")


def _pad_untouched(out, vr, vc):
    pad = sentinel(out.dtype, out.shape)
    mask = np.ones(out.shape, bool)
    mask[:vr, :vc] = False
    assert same_bits_or_nan(out[mask], pad[mask]), "wrote outside the destination's valid region"


# ---- reductions ----------------------------------------------------------------------------------------------
RED = {"TROWSUM": "block.row_sum", "TROWMAX": "block.row_max", "TROWMIN": "block.row_min",
       "TCOLSUM": "block.col_sum", "TCOLMAX": "block.col_max", "TCOLMIN": "block.col_min"}
RED_SHAPES = [(16, 64, 13, 37), (16, 64, 16, 64), (4, 512, 3, 300), (8, 16, 8, 5)]
for op, ref in RED.items():
    for dt in ("f32", "f16", "bf16", "i32", "i8"):
        for si, (rr, cc, vr, vc) in enumerate(RED_SHAPES):
            dshape = (rr, 1) if op.startswith("TROW") else (1, cc)
            tmp = ", t1" if si == 0 else ""
            add(f"{op}_{dt}_{si}", [TileSpec(dt, *dshape), TileSpec(dt, rr, cc)], f"pto::{op}(t0, t1{tmp})",
                kind="red", ref=ref, dt=dt, shape=(rr, cc, vr, vc))


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] == "red"])
def test_reduce(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(1)
    rr, cc, vr, vc = meta["shape"]
    npdt = DT[meta["dt"]][1]
    x = rand(npdt, (rr, cc), rng)
    row = name.startswith("TROW")
    dvalid = (vr, 1) if row else (1, vc)
    spec = lib.entries[name].tiles[0]
    out = sentinel(spec.np, (spec.rows, spec.cols))
    lib.call(name, [out, garbage(x, (vr, vc), rng)], [dvalid, (vr, vc)])
    want = np.asarray(OPS[meta["ref"]].reference(x[:vr, :vc])).astype(npdt)
    _pad_untouched(out, *dvalid)
    got = out[: dvalid[0], : dvalid[1]]
    if "SUM" in name and npdt.kind == "f":
        tol = 2e-6 * np.abs(x[:vr, :vc].astype(np.float64)).sum(axis=1 if row else 0, keepdims=True) + 1e-30
        if npdt != np.float32:
            tol = tol + np.abs(want.astype(np.float64)) * 2.0 ** -(8 if meta["dt"] == "bf16" else 10)
            if not row:  # a column sum accumulates in the narrow dtype (col_sum_ref): vr roundings
                eps = 2.0 ** -(8 if meta["dt"] == "bf16" else 11)
                tol = tol + vr * eps * np.abs(x[:vr, :vc].astype(np.float64)).sum(axis=0, keepdims=True)
        assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= tol)
    elif "SUM" in name and meta["dt"] == "bf16":
        w = want.astype(np.float64)
        tol = np.abs(w) * 2.0 ** -7 + 1e-3 * vc
        if not row:  # a column sum accumulates in bf16 (col_sum_ref): vr roundings
            tol = tol + vr * 2.0 ** -8 * np.abs(x[:vr, :vc].astype(np.float64)).sum(axis=0, keepdims=True)
        assert np.all(np.abs(got.astype(np.float64) - w) <= tol)
    else:
        assert same_bits_or_nan(got, want)


def test_rowmax_nan_propagates(lib):
    x = np.zeros((16, 64), np.float32)
    x[2, 5] = np.nan
    out = sentinel(np.dtype(np.float32), (16, 1))
    lib.call("TROWMAX_f32_0", [out, x], [(13, 1), (13, 37)])
    assert np.isnan(out[2, 0]) and not np.isnan(out[3, 0])


# ---- broadcasts ---------------------------------------------------------------------------------------------
EXPAND = {"TROWEXPANDADD": "block.row_expand_add", "TROWEXPANDSUB": "block.row_expand_sub",
          "TROWEXPANDMUL": "block.row_expand_mul", "TROWEXPANDDIV": "block.row_expand_div",
          "TCOLEXPANDADD": "block.col_expand_add", "TCOLEXPANDSUB": "block.col_expand_sub",
          "TCOLEXPANDMUL": "block.col_expand_mul", "TCOLEXPANDDIV": "block.col_expand_div"}
for op, ref in EXPAND.items():
    for dt in ("f32", "f16", "i32"):
        vshape = (R, 1) if op.startswith("TROW") else (1, C)
        add(f"{op}_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C), TileSpec(dt, *vshape)], f"pto::{op}(t0, t1, t2)",
            kind="expand", ref=ref, dt=dt)
for dt in ("f32", "bf16", "i8"):
    add(f"TROWEXPAND_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C)], "pto::TROWEXPAND(t0, t1)", kind="rowexp", dt=dt)
    add(f"TCOLEXPAND_{dt}", [TileSpec(dt, R, C), TileSpec(dt, 1, C)], "pto::TCOLEXPAND(t0, t1)", kind="colexp", dt=dt)
    add(f"TEXPANDS_{dt}", [TileSpec(dt, R, C)], "pto::TEXPANDS(t0, dv[0])", kind="expands", dt=dt)


@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"] in ("expand", "rowexp", "colexp", "expands")])
def test_broadcast(lib, name):
    meta = CASES[name]
    rng = np.random.default_rng(2)
    npdt = DT[meta["dt"]][1]
    out = sentinel(npdt, (R, C))
    a = rand(npdt, (R, C), rng)
    if meta["kind"] == "expand":
        row = name.startswith("TROW")
        v = rand(npdt, (R, 1) if row else (1, C), rng, 1, 4)
        vv = (VR, 1) if row else (1, VC)
        lib.call(name, [out, garbage(a, (VR, VC), rng), garbage(v, vv, rng)], [(VR, VC), (VR, VC), vv])
        want = OPS[meta["ref"]].reference(a[:VR, :VC], v[: vv[0], : vv[1]])
    elif meta["kind"] == "rowexp":
        lib.call(name, [out, garbage(a, (VR, 1), rng)], [(VR, VC), (VR, 1)])
        want = np.broadcast_to(a[:VR, :1], (VR, VC))
    elif meta["kind"] == "colexp":
        v = rand(npdt, (1, C), rng)
        lib.call(name, [out, garbage(v, (1, VC), rng)], [(VR, VC), (1, VC)])
        want = np.broadcast_to(v[:, :VC], (VR, VC))
    else:
        lib.call(name, [out], [(VR, VC)], dbls=[3.0])
        want = np.full((VR, VC), 3, npdt)
    _pad_untouched(out, VR, VC)
    assert same_bits_or_nan(out[:VR, :VC], np.asarray(want).astype(npdt))


# ---- fillpad -----------------------------------------------------------------------------------------------
for dt in ("f32", "f16", "bf16", "i8", "i32", "ui8"):
    add(f"TFILLPAD_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C)], "pto::TFILLPAD(t0, t1, pto::PadValue(ix[0]))",
        kind="fillpad", dt=dt)
    add(f"TFILLPAD_inplace_{dt}", [TileSpec(dt, R, C)], "pto::TFILLPAD(t0, pto::PadValue(ix[0])); ix[1] = t0.vr",
        kind="fillpad_inplace", dt=dt)


@pytest.mark.parametrize("pad", [PadValue.zero, PadValue.max, PadValue.min])
@pytest.mark.parametrize("name", [n for n, m in CASES.items() if m["kind"].startswith("fillpad")])
def test_fillpad(lib, name, pad):
    meta = CASES[name]
    npdt = DT[meta["dt"]][1]
    x = rand(npdt, (R, C), np.random.default_rng(4))
    code = {PadValue.zero: 1, PadValue.max: 2, PadValue.min: 3}[pad]
    if meta["kind"] == "fillpad":
        out = sentinel(npdt, (R, C))
        lib.call(name, [out, x], [(R, C), (VR, VC)], ints=[code])
    else:
        out = x.copy()
        lib.call(name, [out], [(VR, VC)], ints=[code, 0])
    want = OPS["block.fillpad"].reference(x, pad_value=pad, valid=(VR, VC))
    assert same_bits_or_nan(out, want)


# ---- load / store / move ---------------------------------------------------------------------------------------
GL = "pto::GTensor<float> g((float*)p[{i}] + ix[0], {{{shape}}}, {{{strides}}})"
add("TLOAD_2d", [TileSpec("f32", R, C), TileSpec("f32", 1, 1)],
    GL.format(i=1, shape="ix[1], ix[2]", strides="ix[3], ix[4]") + "; pto::TLOAD(t0, g)", kind="io")
add("TLOAD_3d", [TileSpec("f32", R, C), TileSpec("f32", 1, 1)],
    GL.format(i=1, shape="ix[1], ix[2], ix[3]", strides="ix[4], ix[5], ix[6]") + "; pto::TLOAD(t0, g)", kind="io")
add("TLOAD_T", [TileSpec("f32", R, C), TileSpec("f32", 1, 1)],
    GL.format(i=1, shape="ix[1], ix[2]", strides="ix[3], ix[4]") + "; pto::TLOAD_T(t0, g)", kind="io")
add("TSTORE_2d", [TileSpec("f32", R, C), TileSpec("f32", 1, 1)],
    GL.format(i=1, shape="ix[1], ix[2]", strides="ix[3], ix[4]") + "; pto::TSTORE(g, t0)", kind="io")
add("TSTORE_3d", [TileSpec("f32", R, C), TileSpec("f32", 1, 1)],
    GL.format(i=1, shape="ix[1], ix[2], ix[3]", strides="ix[4], ix[5], ix[6]") + "; pto::TSTORE(g, t0)", kind="io")


def test_load_store_2d(lib):
    rng = np.random.default_rng(6)
    big = rng.standard_normal((40, 100)).astype(np.float32)
    out = sentinel(np.dtype(np.float32), (R, C))
    off = 3 * 100 + 5
    lib.call("TLOAD_2d", [out, big], [(VR, VC), (1, 1)], ints=[off, VR, VC, 100, 1])
    _pad_untouched(out, VR, VC)
    np.testing.assert_array_equal(out[:VR, :VC], big[3:3 + VR, 5:5 + VC])
    # strided columns (every other element)
    out = sentinel(np.dtype(np.float32), (R, C))
    lib.call("TLOAD_2d", [out, big], [(VR, 20), (1, 1)], ints=[off, VR, 20, 100, 2])
    np.testing.assert_array_equal(out[:VR, :20], big[3:3 + VR, 5:45:2])
    # transposed load: tile[i, j] = window[j, i]
    out = sentinel(np.dtype(np.float32), (R, C))
    lib.call("TLOAD_T", [out, big], [(VR, VC), (1, 1)], ints=[off, VC, VR, 100, 1])
    _pad_untouched(out, VR, VC)
    np.testing.assert_array_equal(out[:VR, :VC], big[3:3 + VC, 5:5 + VR].T)
    # store: only the valid region lands, the rest of the tensor is untouched
    tile = rng.standard_normal((R, C)).astype(np.float32)
    dst = np.full((40, 100), 9.0, np.float32)
    lib.call("TSTORE_2d", [tile, dst], [(VR, VC), (1, 1)], ints=[off, VR, VC, 100, 1])
    want = np.full((40, 100), 9.0, np.float32)
    want[3:3 + VR, 5:5 + VC] = tile[:VR, :VC]
    np.testing.assert_array_equal(dst, want)


def test_load_store_nd(lib):
    rng = np.random.default_rng(8)
    t = rng.standard_normal((4, 6, 50)).astype(np.float32)
    out = sentinel(np.dtype(np.float32), (R, C))
    # window [1:3, 1:6, 2:40] of a [4,6,50] tensor -> rows = 2*5 = 10 (non-uniform row stride)
    off = 1 * 300 + 1 * 50 + 2
    lib.call("TLOAD_3d", [out, t], [(10, 38), (1, 1)], ints=[off, 2, 5, 38, 300, 50, 1])
    np.testing.assert_array_equal(out[:10, :38], t[1:3, 1:6, 2:40].reshape(10, 38))
    _pad_untouched(out, 10, 38)
    dst = np.zeros_like(t)
    lib.call("TSTORE_3d", [out, dst], [(10, 38), (1, 1)], ints=[off, 2, 5, 38, 300, 50, 1])
    want = np.zeros_like(t)
    want[1:3, 1:6, 2:40] = t[1:3, 1:6, 2:40]
    np.testing.assert_array_equal(dst, want)


for loc in ("Mat", "Right", "Left", "Acc"):
    add(f"TMOV_roundtrip_{loc}", [TileSpec("f32", 40, 72), TileSpec("f32", 40, 72, loc), TileSpec("f32", 40, 72)],
        "pto::TMOV(t1, t0); pto::TMOV(t2, t1)", kind="mov")
add("TMOV_roundtrip_Right_bf16", [TileSpec("bf16", 40, 72), TileSpec("bf16", 40, 72, "Right"), TileSpec("bf16", 40, 72)],
    "pto::TMOV(t1, t0); pto::TMOV(t2, t1)", kind="mov")
add("TMOV_roundtrip_Right_i8", [TileSpec("i8", 40, 72), TileSpec("i8", 40, 72, "Right"), TileSpec("i8", 40, 72)],
    "pto::TMOV(t1, t0); pto::TMOV(t2, t1)", kind="mov")
add("TMOV_cvt", [TileSpec("f32", R, C), TileSpec("f16", R, C, "Acc")], "pto::TMOV(t1, t0)", kind="mov")
add("TMOV_T", [TileSpec("f32", R, C), TileSpec("f32", C, R)], "pto::TMOV_T(t1, t0)", kind="mov")
add("TTRANS", [TileSpec("f32", R, C), TileSpec("f32", C, R)], "pto::TTRANS(t1, t0)", kind="mov")
add("TEXTRACT", [TileSpec("f32", R, C), TileSpec("f32", 8, 16)], "pto::TEXTRACT(t1, t0, ix[0], ix[1])", kind="mov")
add("TINSERT", [TileSpec("f32", 8, 16), TileSpec("f32", R, C)], "pto::TINSERT(t1, t0, ix[0], ix[1])", kind="mov")
add("TCONCAT", [TileSpec("i32", R, 32), TileSpec("i32", R, 32), TileSpec("i32", R, C)], "pto::TCONCAT(t2, t0, t1)",
    kind="mov")
add("TRESHAPE", [TileSpec("f32", R, C), TileSpec("f32", 32, 32)], "pto::TRESHAPE(t1, t0); ix[0] = t1.vr",
    kind="mov")
add("TGETSET", [TileSpec("f16", R, C)],
    "dv[1] = float(pto::TGETVAL(t0, ix[0], ix[1])); pto::TSETVAL(t0, ix[1], ix[0], dv[0])", kind="mov")


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("TMOV_roundtrip")])
def test_mov_roundtrip(lib, name):
    spec = lib.entries[name].tiles[0]
    x = rand(spec.np, (40, 72), np.random.default_rng(3))
    mid = np.zeros((40, 72), spec.np)
    out = sentinel(spec.np, (40, 72))
    lib.call(name, [x, mid, out], [(33, 61)] * 3)
    _pad_untouched(out, 33, 61)
    assert same_bits_or_nan(out[:33, :61], x[:33, :61])


def test_moves(lib):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((R, C)).astype(np.float32)
    out = sentinel(np.dtype(np.float16), (R, C))
    lib.call("TMOV_cvt", [x, out], [(VR, VC), (VR, VC)])
    _pad_untouched(out, VR, VC)
    np.testing.assert_array_equal(out[:VR, :VC], x[:VR, :VC].astype(np.float16))
    for name in ("TMOV_T", "TTRANS"):
        out = sentinel(np.dtype(np.float32), (C, R))
        lib.call(name, [x, out], [(VR, VC), (VC, VR)])
        _pad_untouched(out, VC, VR)
        np.testing.assert_array_equal(out[:VC, :VR], x[:VR, :VC].T)
    out = sentinel(np.dtype(np.float32), (8, 16))
    lib.call("TEXTRACT", [x, out], [(R, C), (5, 11)], ints=[3, 20])
    _pad_untouched(out, 5, 11)
    np.testing.assert_array_equal(out[:5, :11], x[3:8, 20:31])
    small = rng.standard_normal((8, 16)).astype(np.float32)
    big = x.copy()
    lib.call("TINSERT", [small, big], [(5, 11), (R, C)], ints=[7, 40])
    want = x.copy()
    want[7:12, 40:51] = small[:5, :11]
    np.testing.assert_array_equal(big, want)
    a, b = rand(np.dtype(np.int32), (R, 32), rng), rand(np.dtype(np.int32), (R, 32), rng)
    out = sentinel(np.dtype(np.int32), (R, C))
    lib.call("TCONCAT", [a, b, out], [(VR, 20), (VR, 30), (VR, 50)])
    _pad_untouched(out, VR, 50)
    np.testing.assert_array_equal(out[:VR, :50], OPS["block.concat"].reference(a[:VR, :20], b[:VR, :30]))
    out = np.zeros((32, 32), np.float32)
    iv = np.zeros(1, np.int32)
    lib.call("TRESHAPE", [x, out], [(R, C), (1, 1)], ints=[0])
    np.testing.assert_array_equal(out, x.reshape(32, 32))
    del iv


def test_getval_setval(lib):
    import ctypes

    h = np.arange(R * C, dtype=np.float16).reshape(R, C) / 8
    ptrs = (ctypes.c_void_p * 1)(h.ctypes.data)
    iv = (ctypes.c_int * 4)(R, C, 2, 9)
    dv = (ctypes.c_double * 2)(-2.5, 0.0)
    lib.cdll.TGETSET(ptrs, iv, dv)
    assert dv[1] == float(np.arange(R * C, dtype=np.float16).reshape(R, C)[2, 9] / 8)
    assert h[9, 2] == np.float16(-2.5)
