"""TMATMUL family of the C++ tile library (all input dtypes, ragged M/N/K, acc / bias / gemv, the
packing paths into Right), plus a representative op set, each built three ways: -march=native,
-march=x86-64-v3 (AVX2, no AVX-512) and -march=x86-64 (SSE2 only)."""

from __future__ import annotations

import numpy as np
import pytest

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

BUILDS = {"native": (), "avx2": ("-march=x86-64-v3",), "sse2": ("-march=x86-64",)}

# (M, K, N) static, (m, k, n) valid
SHAPES = [((64, 64, 64), (64, 64, 64)), ((16, 32, 48), (13, 29, 37)), ((16, 40, 40), (16, 40, 40)),
          ((1, 64, 128), (1, 64, 100)), ((32, 320, 64), (30, 301, 64)), ((128, 128, 96), (128, 128, 96)),
          ((15, 33, 33), (15, 33, 33))]
MODES = ["mm", "acc", "acc3", "bias_row", "bias_full", "load_right", "trans_b", "extract", "gemv"]


def mm_entry(dt: str, si: int, mode: str) -> Entry:
    (M, K, N), _ = SHAPES[si]
    acc = "i32" if dt == "i8" else "f32"
    tiles = [TileSpec(dt, M, K, "Mat"), TileSpec(dt, N, K, "Mat") if mode == "trans_b" else TileSpec(dt, K, N, "Mat"),
             TileSpec(dt, M, K, "Left"), TileSpec(dt, K, N, "Right"), TileSpec(acc, M, N, "Acc")]
    if mode == "extract":
        tiles[0] = TileSpec(dt, M + 8, K + 16, "Mat")
        tiles[1] = TileSpec(dt, K + 16, N + 8, "Mat")
    pack_a = "pto::TMOV(t2, t0)" if mode != "extract" else "pto::TEXTRACT(t2, t0, ix[0], ix[1])"
    pack_b = {"trans_b": "pto::TMOV_T(t3, t1)", "extract": "pto::TEXTRACT(t3, t1, ix[1], ix[2])",
              "load_right": f"pto::GTensor<{DT[dt][0]}> g(t1.data, {{t3.vr, t3.vc}}, {{{N}, 1}}); pto::TLOAD(t3, g)"}
    body = f"{pack_a}; {pack_b.get(mode, 'pto::TMOV(t3, t1)')}; "
    if mode == "mm":
        body += "pto::TMATMUL(t4, t2, t3)"
    elif mode == "gemv":
        body += "pto::TGEMV(t4, t2, t3)"
    elif mode == "acc":
        body += "pto::TMATMUL_ACC(t4, t2, t3)"
    elif mode == "acc3":
        tiles.append(TileSpec(acc, M, N, "Acc"))
        body += "pto::TMATMUL_ACC(t4, t5, t2, t3)"
    elif mode == "bias_row":
        tiles.append(TileSpec(acc, 1, N, "Bias"))
        body += "pto::TMATMUL_BIAS(t4, t2, t3, t5)"
    elif mode == "bias_full":
        tiles.append(TileSpec("f16" if acc == "f32" else "i8", M, N, "Vec"))
        body += "pto::TMATMUL_BIAS(t4, t2, t3, t5)"
    else:
        body += "pto::TMATMUL(t4, t2, t3)"
    return Entry(f"MM_{dt}_{si}_{mode}", tuple(tiles), body)


def mm_cases(full: bool):
    out = []
    for dt in ("f32", "f16", "bf16", "i8"):
        for si in range(len(SHAPES)):
            for mode in MODES:
                if mode == "gemv" and SHAPES[si][0][0] != 1:
                    continue
                if mode not in ("mm", "gemv") and si not in (1, 4):
                    continue
                if not full and (si not in (0, 1, 4) or mode not in ("mm", "acc", "bias_row")):
                    continue
                out.append((dt, si, mode))
    return out


# a representative elementwise / reduction set for the AVX2 and SSE2 builds
PORTABLE = [
    Entry("P_TEXP_f32", (TileSpec("f32", 16, 64), TileSpec("f32", 16, 64)), "pto::TEXP(t0, t1)"),
    Entry("P_TLOG_f32", (TileSpec("f32", 16, 64), TileSpec("f32", 16, 64)), "pto::TLOG(t0, t1)"),
    Entry("P_TADD_bf16_col", (TileSpec("bf16", 16, 64), TileSpec("bf16", 16, 64), TileSpec("bf16", 16, 1)),
          "pto::TADD(t0, t1, t2)"),
    Entry("P_TDIV_i32", (TileSpec("i32", 16, 64), TileSpec("i32", 16, 64), TileSpec("i32", 16, 64)), "pto::TDIV(t0, t1, t2)"),
    Entry("P_TCVT_f32_f16", (TileSpec("f16", 16, 64), TileSpec("f32", 16, 64)), "pto::TCVT(t0, t1)"),
    Entry("P_TCVT_f16_f32", (TileSpec("f32", 16, 64), TileSpec("f16", 16, 64)), "pto::TCVT(t0, t1)"),
    Entry("P_TCVT_f32_i8", (TileSpec("i8", 16, 64), TileSpec("f32", 16, 64)), "pto::TCVT(t0, t1, pto::RoundMode::ROUND)"),
    Entry("P_TROWSUM_f32", (TileSpec("f32", 16, 1), TileSpec("f32", 16, 64)), "pto::TROWSUM(t0, t1)"),
    Entry("P_TCOLMAX_f16", (TileSpec("f16", 1, 64), TileSpec("f16", 16, 64)), "pto::TCOLMAX(t0, t1)"),
    Entry("P_TSEL_f32", (TileSpec("f32", 16, 64), TileSpec("i1", 16, 64), TileSpec("f32", 16, 64), TileSpec("f32", 16, 64)),
          "pto::TSEL(t0, t1, t2, t3)"),
]


@pytest.fixture(scope="module", params=list(BUILDS))
def lib(request):
    full = request.param == "native"
    entries = [mm_entry(*c) for c in mm_cases(full)] + PORTABLE
    lib = build(entries, f"test_tile_lib_matmul_{request.param}", BUILDS[request.param])
    lib.build_name = request.param
    lib.full = full
    return lib


@pytest.mark.parametrize("case", mm_cases(True), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_matmul(lib, case):
    dt, si, mode = case
    name = f"MM_{dt}_{si}_{mode}"
    if name not in lib.entries:
        pytest.skip("reduced set in this build")
    (M, K, N), (m, k, n) = SHAPES[si]
    rng = np.random.default_rng(si * 31 + len(mode))
    npdt = DT[dt][1]
    tiles = lib.entries[name].tiles
    a = rand(npdt, (tiles[0].rows, tiles[0].cols), rng, -2, 2)
    b = rand(npdt, (tiles[1].rows, tiles[1].cols), rng, -2, 2)
    r0, c0, c1 = (8, 16, 8) if mode == "extract" else (0, 0, 0)
    a_v = a[r0:r0 + m, c0:c0 + k]
    b_v = b[:n, :k].T if mode == "trans_b" else b[c0:c0 + k, c1:c1 + n]
    a_valid = (r0 + m, c0 + k) if mode == "extract" else (m, k)
    b_valid = (n, k) if mode == "trans_b" else ((c0 + k, c1 + n) if mode == "extract" else (k, n))
    left = np.zeros((M, K), npdt)
    right = np.zeros((K, N), npdt)
    acc_np = np.dtype(np.int32) if dt == "i8" else np.dtype(np.float32)
    out = sentinel(acc_np, (M, N))
    bufs = [garbage(a, a_valid, rng), garbage(b, b_valid, rng), left, right, out]
    valid = [a_valid, b_valid, (m, k), (k, n), (m, n)]
    want = OPS["block.matmul"].reference(a_v, b_v)
    if mode == "acc":
        init = rand(acc_np, (M, N), rng)
        out[:m, :n] = init[:m, :n]
        want = want + init[:m, :n]
    elif mode == "acc3":
        init = rand(acc_np, (M, N), rng)
        bufs.append(init)
        valid.append((m, n))
        want = want + init[:m, :n]
    elif mode == "bias_row":
        bias = rand(acc_np, (1, N), rng)
        bufs.append(bias)
        valid.append((1, n))
        want = want + bias[:, :n]
    elif mode == "bias_full":
        bnp = np.dtype(np.float16) if dt != "i8" else np.dtype(np.int8)
        bias = rand(bnp, (M, N), rng)
        bufs.append(bias)
        valid.append((m, n))
        want = want + bias[:m, :n].astype(np.float64)
    lib.call(name, bufs, valid, ints=[r0, c0, c1])
    pad = sentinel(acc_np, (M, N))
    mask = np.ones((M, N), bool)
    mask[:m, :n] = False
    assert same_bits_or_nan(out[mask], pad[mask]), "matmul wrote outside the Acc valid region"
    got = out[:m, :n]
    if dt == "i8":
        np.testing.assert_array_equal(got, want.astype(np.int32))
    else:
        scale = np.abs(a_v.astype(np.float64)) @ np.abs(b_v.astype(np.float64)) + 1.0
        assert np.all(np.abs(got - want) <= 2e-6 * scale), f"max err {np.abs(got - want).max()}"


def test_portable_ops(lib):
    rng = np.random.default_rng(0)
    vr, vc = 13, 37
    x = rng.uniform(-80, 80, (16, 64)).astype(np.float32)

    def run(name, srcs, valid, out_dt, oshape=(16, 64)):
        out = sentinel(np.dtype(out_dt), oshape)
        lib.call(name, [out, *[garbage(s, v, rng) for s, v in zip(srcs, valid[1:])]], valid)
        pad = sentinel(np.dtype(out_dt), oshape)
        m = np.ones(oshape, bool)
        m[: valid[0][0], : valid[0][1]] = False
        assert same_bits_or_nan(out[m], pad[m])
        return out[: valid[0][0], : valid[0][1]]

    assert ulp_diff(run("P_TEXP_f32", [x], [(vr, vc)] * 2, np.float32), np.exp(x[:vr, :vc])).max() <= 2
    xp = np.abs(x) + 1e-3
    assert ulp_diff(run("P_TLOG_f32", [xp], [(vr, vc)] * 2, np.float32), np.log(xp[:vr, :vc])).max() <= 2
    bf = DT["bf16"][1]
    a, v = x.astype(bf), rng.standard_normal((16, 1)).astype(bf)
    got = run("P_TADD_bf16_col", [a, v], [(vr, vc), (vr, vc), (vr, 1)], bf)
    assert same_bits_or_nan(got, (a[:vr, :vc].astype(np.float32) + v[:vr].astype(np.float32)).astype(bf))
    i, j = rand(np.dtype(np.int32), (16, 64), rng), rand(np.dtype(np.int32), (16, 64), rng)
    j.flat[::4] = 0
    got = run("P_TDIV_i32", [i, j], [(vr, vc)] * 3, np.int32)
    np.testing.assert_array_equal(got, OPS["block.div"].reference(i[:vr, :vc], j[:vr, :vc]))
    got = run("P_TCVT_f32_f16", [x * 1000], [(vr, vc)] * 2, np.float16)
    np.testing.assert_array_equal(got, (x * 1000)[:vr, :vc].astype(np.float16))
    h = (x * 1e-6).astype(np.float16)
    np.testing.assert_array_equal(run("P_TCVT_f16_f32", [h], [(vr, vc)] * 2, np.float32), h[:vr, :vc].astype(np.float32))
    x2 = x * 3
    x2.flat[:4] = [0.5, -0.5, 1.5, np.nan]
    got = run("P_TCVT_f32_i8", [x2], [(vr, vc)] * 2, np.int8)
    np.testing.assert_array_equal(got, OPS["block.cast"].reference(x2[:vr, :vc], target_type=_dt("int8")))
    got = run("P_TROWSUM_f32", [x], [(vr, 1), (vr, vc)], np.float32, (16, 1))
    np.testing.assert_allclose(got, x[:vr, :vc].sum(1, keepdims=True), rtol=1e-5, atol=1e-3)
    got = run("P_TCOLMAX_f16", [h], [(1, vc), (vr, vc)], np.float16, (1, 64))
    np.testing.assert_array_equal(got, h[:vr, :vc].max(0, keepdims=True))
    msk = rng.integers(0, 2, (16, 64)).astype(bool)
    got = run("P_TSEL_f32", [msk, x, -x], [(vr, vc)] * 4, np.float32)
    np.testing.assert_array_equal(got, np.where(msk, x, -x)[:vr, :vc])


def _dt(name):
    from pypto.ir.dtype import DataType

    return DataType.from_text(name)
