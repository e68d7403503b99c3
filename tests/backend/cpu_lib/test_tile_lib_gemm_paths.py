"""The matmul code paths of the C++ tile library one by one, against NumPy: the AVX-512 asm fp32
kernel (every row-block height, ragged N/K), AMX bf16 / int8 (ragged M/N/K, K not a multiple of the
AMX step, Left tiles shorter than an AMX tile, garbage in Left's padding), the fallbacks on the AMX
pair layout (run-time refusal of the tile state, vdpbf16ps), the packers into Right (raw layout
against the README formula) and the K-loop pattern TLOAD -> TMOV -> TMATMUL_ACC."""

from __future__ import annotations

import ctypes
import platform
from pathlib import Path

import numpy as np
import pytest

from tests.programs.tile_lib import DT, Entry, TileSpec, build, rand, same_bits_or_nan, sentinel

pytestmark = pytest.mark.native

X86 = platform.machine().lower() in ("x86_64", "amd64")
NO_AMX = ("-mno-amx-tile", "-mno-amx-bf16", "-mno-amx-int8")
# name -> (flags, full case set)
BUILDS = {
    "native": ((), True),
    "amx_fallback": (("-DPTO_AMX_FORCE_FALLBACK",), False),
    "no_amx": (NO_AMX, False),
    "bf16_dot": ((*NO_AMX, "-DPTO_USE_BF16_DOT"), False),
    "bf16_dot_amx": (("-DPTO_USE_BF16_DOT", "-DPTO_AMX_FORCE_FALLBACK"), False),
}


def _cpu_has(flag: str) -> bool:
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


# (M, K, N) static, (m, k, n) valid
SHAPES = [
    ((32, 64, 64), (32, 64, 64)),      # whole AMX blocks
    ((48, 80, 64), (45, 77, 50)),      # ragged M/N/K, K tail (bf16: 2 x 32 + 13, int8: 64 + 13)
    ((13, 34, 40), (13, 33, 37)),      # Left shorter than a 16-row tile, odd K, narrow last panel
    ((16, 40, 32), (16, 40, 32)),      # static K not a multiple of the AMX step
    ((1, 128, 96), (1, 128, 90)),      # gemv
    ((64, 8, 48), (60, 8, 48)),        # K below one step
    ((40, 200, 72), (37, 193, 65)),    # several steps + tail, three panels (32 + 32 + 8)
    ((128, 256, 128), (128, 256, 128)),
    ((33, 33, 33), (33, 33, 33)),      # odd static K: bf16 / int8 fall back to the G = 1 layout
    ((16, 64, 32), (16, 0, 32)),       # K = 0
    ((30, 16, 32), (29, 5, 31)),       # asm fp32 row blocks 10 + 10 + 9, K = 5 (one step + tail)
]
MODES = ["mm", "acc", "acc3", "bias_row", "bias_full"]
DTYPES = ["f32", "bf16", "i8"]


def mm_entry(dt: str, si: int, mode: str) -> Entry:
    (M, K, N), _ = SHAPES[si]
    acc = "i32" if dt == "i8" else "f32"
    tiles = [TileSpec(dt, M, K, "Mat"), TileSpec(dt, K, N, "Mat"), TileSpec(dt, M, K, "Left"),
             TileSpec(dt, K, N, "Right"), TileSpec(acc, M, N, "Acc")]
    body = "pto::TMOV(t2, t0); pto::TMOV(t3, t1); "
    if mode == "mm":
        body += "pto::TMATMUL(t4, t2, t3)"
    elif mode == "acc":
        body += "pto::TMATMUL_ACC(t4, t2, t3)"
    elif mode == "acc3":
        tiles.append(TileSpec(acc, M, N, "Acc"))
        body += "pto::TMATMUL_ACC(t4, t5, t2, t3)"
    elif mode == "bias_row":
        tiles.append(TileSpec(acc, 1, N, "Bias"))
        body += "pto::TMATMUL_BIAS(t4, t2, t3, t5)"
    else:
        tiles.append(TileSpec("f16" if acc == "f32" else "i8", M, N, "Vec"))
        body += "pto::TMATMUL_BIAS(t4, t2, t3, t5)"
    return Entry(f"G_{dt}_{si}_{mode}", tuple(tiles), body)


def mm_cases(full: bool):
    out = []
    for dt in DTYPES:
        for si in range(len(SHAPES)):
            for mode in MODES:
                if mode != "mm" and si not in (1, 2, 6):
                    continue
                if not full and (dt == "f32" or si in (0, 7, 10) or mode in ("acc3", "bias_full")):
                    continue
                out.append((dt, si, mode))
    return out


# raw packed layout of Right (TMOV from Mat and TLOAD from a window), layout parameters G / P
PACK_SHAPES = [((40, 72), (33, 61)), ((64, 96), (64, 96)), ((34, 40), (31, 37)), ((12, 20), (12, 20)),
               ((128, 8), (100, 3))]


def pack_entries():
    out = []
    for dt in ("f32", "bf16", "i8", "f16"):
        for pi, ((K, N), _) in enumerate(PACK_SHAPES):
            lay = f"pto::RightLayout<{DT[dt][0]}, {K}, {N}>"
            tiles = (TileSpec(dt, K, N, "Mat"), TileSpec(dt, K, N, "Right"), TileSpec(dt, K, N, "Right"))
            body = (f"ix[0] = {lay}::G; ix[1] = {lay}::P; pto::TMOV(t1, t0); "
                    f"pto::GTensor<{DT[dt][0]}> g(t0.data, {{t2.vr, t2.vc}}, {{{N}, 1}}); pto::TLOAD(t2, g)")
            out.append(Entry(f"PACK_{dt}_{pi}", tiles, body))
    return out


# K loop: TLOAD a -> Mat, TLOAD b -> Mat, TMOV -> Left / Right, TMATMUL (first) / TMATMUL_ACC
LOOP = [("f32", 64, 48, 80, 32), ("bf16", 64, 48, 80, 32), ("i8", 64, 48, 160, 64), ("bf16", 48, 40, 100, 64)]


def loop_entry(dt: str, m: int, n: int, kt: int, kb: int) -> Entry:
    acc = "i32" if dt == "i8" else "f32"
    c = DT[dt][0]
    tiles = (TileSpec(dt, m, kb, "Mat"), TileSpec(dt, kb, n, "Mat"), TileSpec(dt, m, kb, "Left"),
             TileSpec(dt, kb, n, "Right"), TileSpec(acc, m, n, "Acc"), TileSpec(dt, m, kt), TileSpec(dt, kt, n))
    body = f"""for (int k0 = 0; k0 < {kt}; k0 += {kb}) {{
    const int kb = std::min({kb}, {kt} - k0);
    t0.set_valid({m}, kb); t1.set_valid(kb, {n}); t2.set_valid({m}, kb); t3.set_valid(kb, {n});
    pto::GTensor<{c}> ga(t5.data + k0, {{{m}, kb}}, {{{kt}, 1}}); pto::TLOAD(t0, ga);
    pto::GTensor<{c}> gb(t6.data + long(k0) * {n}, {{kb, {n}}}, {{{n}, 1}}); pto::TLOAD(t1, gb);
    pto::TMOV(t2, t0); pto::TMOV(t3, t1);
    if (k0 == 0) pto::TMATMUL(t4, t2, t3); else pto::TMATMUL_ACC(t4, t2, t3);
  }}"""
    return Entry(f"LOOP_{dt}_{m}_{n}_{kt}_{kb}", tiles, body)


PROBE = Entry("PROBE", (), """
#if defined(PTO_AMX_BF16)
  ix[0] = pto::amx::available() ? 1 : 0;
#else
  ix[0] = 0;
#endif
#if defined(PTO_GEMM_ASM)
  ix[1] = 1;
#else
  ix[1] = 0;
#endif
  (void)p""")


@pytest.fixture(scope="module", params=list(BUILDS))
def lib(request):
    name = request.param
    flags, full = BUILDS[name]
    if name != "native" and not X86:
        pytest.skip("x86-only build variant")
    entries = [mm_entry(*c) for c in mm_cases(full)] + [PROBE]
    if full:
        entries += pack_entries() + [loop_entry(*x) for x in LOOP]
    lib = build(entries, f"test_tile_lib_gemm_paths_{name}", flags)
    lib.build_name, lib.full = name, full
    return lib


def _probe(lib):
    iv = (ctypes.c_int * 2)(0, 0)
    fn = lib.cdll.PROBE
    fn.restype = None
    fn((ctypes.c_void_p * 1)(), iv, (ctypes.c_double * 1)())
    return iv[0], iv[1]


def test_paths_active(lib):
    """The native build on an AMX / AVX-512 machine really runs the AMX and asm paths; the fallback
    builds really do not."""
    amx, asm = _probe(lib)
    if lib.build_name == "native":
        if X86 and lib.isa == "avx512":
            assert asm == 1
        if _cpu_has("amx_bf16") and lib.isa == "avx512":
            assert amx == 1, "AMX-BF16 CPU, but the library did not enable AMX"
    elif lib.build_name in ("amx_fallback", "bf16_dot_amx"):
        assert amx == 0


@pytest.mark.parametrize("case", mm_cases(True), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_matmul_paths(lib, case):
    dt, si, mode = case
    name = f"G_{dt}_{si}_{mode}"
    if name not in lib.entries:
        pytest.skip("reduced set in this build")
    (M, K, N), (m, k, n) = SHAPES[si]
    rng = np.random.default_rng(si * 7 + len(mode) + len(dt))
    npdt = DT[dt][1]
    a = rand(npdt, (M, K), rng, -2, 2)
    b = rand(npdt, (K, N), rng, -2, 2)
    acc_np = np.dtype(np.int32) if dt == "i8" else np.dtype(np.float32)
    # Left / Right start as garbage: TMOV fills Left's valid region only, Right completely
    poison = np.iinfo(npdt).max if npdt.kind in "iu" else np.nan
    left = np.full((M, K), poison, npdt)
    right = np.full((K, N), poison, npdt)
    out = sentinel(acc_np, (M, N))
    a_g, b_g = a.copy(), b.copy()
    a_g[m:, :] = poison
    a_g[:, k:] = poison
    b_g[k:, :] = poison
    b_g[:, n:] = poison
    bufs = [a_g, b_g, left, right, out]
    valid = [(m, k), (k, n), (m, k), (k, n), (m, n)]
    a_v, b_v = a[:m, :k].astype(np.float64), b[:k, :n].astype(np.float64)
    want = a_v @ b_v
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
    lib.call(name, bufs, valid)
    pad = sentinel(acc_np, (M, N))
    mask = np.ones((M, N), bool)
    mask[:m, :n] = False
    assert same_bits_or_nan(out[mask], pad[mask]), "matmul wrote outside the Acc valid region"
    got = out[:m, :n]
    if dt == "i8":
        np.testing.assert_array_equal(got, want.astype(np.int64).astype(np.int32))
    else:
        scale = np.abs(a_v) @ np.abs(b_v) + 1.0
        err = np.abs(got - want)
        assert np.all(err <= 4e-6 * scale), f"max err {err.max()}"


def _expected_right(x: np.ndarray, kv: int, nv: int, G: int, P: int) -> np.ndarray:
    K, N = x.shape
    if K % G:
        G = 1
    out = np.zeros(K * N, x.dtype)
    for j0 in range(0, N, P):
        w = min(P, N - j0)
        base = j0 * K
        for kk in range(kv):
            for jj in range(min(w, nv - j0) if nv > j0 else 0):
                out[base + (kk // G) * (w * G) + jj * G + kk % G] = x[kk, j0 + jj]
    return out.reshape(K, N)


@pytest.mark.parametrize("dt", ["f32", "bf16", "i8", "f16"])
@pytest.mark.parametrize("pi", range(len(PACK_SHAPES)))
def test_right_packing_layout(lib, dt, pi):
    if not lib.full:
        pytest.skip("native build only")
    (K, N), (kv, nv) = PACK_SHAPES[pi]
    npdt = DT[dt][1]
    x = rand(npdt, (K, N), np.random.default_rng(pi))
    x_g = x.copy()
    poison = np.iinfo(npdt).max if npdt.kind in "iu" else np.nan
    x_g[kv:, :] = poison
    x_g[:, nv:] = poison
    r1 = np.full((K, N), poison, npdt)
    r2 = np.full((K, N), poison, npdt)
    iv = [kv, nv, kv, nv, kv, nv, 0, 0]
    ptrs = (ctypes.c_void_p * 3)(*[b.ctypes.data for b in (x_g, r1, r2)])
    ivc = (ctypes.c_int * len(iv))(*iv)
    fn = getattr(lib.cdll, f"PACK_{dt}_{pi}")
    fn.restype = None
    fn(ptrs, ivc, (ctypes.c_double * 1)())
    G, P = ivc[6], ivc[7]
    want = _expected_right(x, kv, nv, G, P)
    assert same_bits_or_nan(r1, want), f"TMOV -> Right layout mismatch (G={G}, P={P})"
    assert same_bits_or_nan(r2, want), f"TLOAD -> Right layout mismatch (G={G}, P={P})"


@pytest.mark.parametrize("spec", LOOP, ids=lambda s: "-".join(map(str, s)))
def test_k_loop_pattern(lib, spec):
    if not lib.full:
        pytest.skip("native build only")
    dt, m, n, kt, kb = spec
    npdt = DT[dt][1]
    rng = np.random.default_rng(kt)
    ga, gb = rand(npdt, (m, kt), rng, -2, 2), rand(npdt, (kt, n), rng, -2, 2)
    acc_np = np.dtype(np.int32) if dt == "i8" else np.dtype(np.float32)
    out = sentinel(acc_np, (m, n))
    bufs = [np.zeros((m, kb), npdt), np.zeros((kb, n), npdt), np.zeros((m, kb), npdt), np.zeros((kb, n), npdt), out,
            ga, gb]
    lib.call(f"LOOP_{dt}_{m}_{n}_{kt}_{kb}", bufs, [(m, kb), (kb, n), (m, kb), (kb, n), (m, n), (m, kt), (kt, n)])
    want = ga.astype(np.float64) @ gb.astype(np.float64)
    if dt == "i8":
        np.testing.assert_array_equal(out, want.astype(np.int64).astype(np.int32))
    else:
        scale = np.abs(ga.astype(np.float64)) @ np.abs(gb.astype(np.float64)) + 1.0
        assert np.all(np.abs(out - want) <= 4e-6 * scale)
