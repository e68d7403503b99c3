"""The tile library's fast paths, each built several ways (-march=native, x86-64-v3 = AVX2,
x86-64 = SSE2, skylake-avx512 = AVX-512 without BF16, native with the deferred stream fence, native
without streaming stores):

- streaming (non-temporal) TSTORE: exactly the window is written, for odd sizes, alignments, row
  strides, strided columns (fallback), N-d windows and every StoreMode;
- max / min / relu with NaN propagation (maxps + NaN masks) and NumPy's signed-zero results;
- row / column max / min reductions (NaN recorded off the dependency chain) and the row sums;
- fp32 <-> bf16 conversion (vcvtne2ps2bf16 with the subnormal fix-up, the shift back): round to
  nearest even incl. ties, overflow to inf, subnormals, quiet NaNs with the scalar rule's bits;
- exp after the polynomial change: <= 1 ulp on a dense sweep."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.programs.tile_lib import DT, Entry, TileSpec, build, sentinel, ulp_diff

pytestmark = pytest.mark.native

BUILDS = {"native": (), "avx2": ("-march=x86-64-v3",), "sse2": ("-march=x86-64",),
          "skx": ("-march=skylake-avx512",),  # AVX-512 without AVX512-BF16: integer bf16 rounding
          "defer": ("-DPTO_STREAM_DEFER_FENCE",), "nostream": ("-DPTO_NO_STREAM_STORES",)}
ENTRIES: list[Entry] = []
META: dict[str, dict] = {}


def add(name: str, tiles, body: str, **meta) -> None:
    ENTRIES.append(Entry(name, tuple(tiles), body))
    META[name] = meta


@pytest.fixture(scope="module", params=list(BUILDS))
def lib(request):
    lib = build(ENTRIES, f"test_tile_lib_fastpaths_{request.param}", BUILDS[request.param])
    lib.build_name = request.param
    return lib


BF16 = np.dtype(ml_dtypes.bfloat16)

# ---- streaming TSTORE ------------------------------------------------------------------------------------
ST_SHAPES = [(1, 4096), (4, 1000), (16, 300), (3, 777), (2, 40)]
ST_DTYPES = ("f32", "bf16", "i8", "i64")
for dt in ST_DTYPES:
    ct = DT[dt][0]
    for r, c in ST_SHAPES:
        add(f"ST_{dt}_{r}x{c}", [TileSpec(dt, r, c), TileSpec(dt, 1, 1)],
            f"pto::GTensor<{ct}> g(({ct}*)p[1] + ix[0], {{ix[1], ix[2]}}, {{ix[3], ix[4]}}); "
            f"if (ix[5] < 0) pto::TSTORE(g, t0); else pto::TSTORE(g, t0, pto::StoreMode(ix[5]))", kind="st", dt=dt)
add("ST3_f32", [TileSpec("f32", 12, 256), TileSpec("f32", 1, 1)],
    "pto::GTensor<float> g((float*)p[1] + ix[0], {ix[1], ix[2], ix[3]}, {ix[4], ix[5], ix[6]}); "
    "pto::TSTORE(g, t0, pto::StoreMode(ix[7]))", kind="st3")
# read-modify-write of one window (TLOAD, then TSTORE of the same window: Auto keeps it cached)
add("ST_rmw_f32", [TileSpec("f32", 4, 2048), TileSpec("f32", 1, 1)],
    "pto::GTensor<float> g((float*)p[1] + ix[0], {ix[1], ix[2]}, {ix[3], 1}); "
    "for (int k = 0; k < ix[4]; ++k) { pto::TLOAD(t0, g); pto::TADDS(t0, t0, 1.0); pto::TSTORE(g, t0); }", kind="rmw")


def _st_cases(r: int, c: int):
    """(vr, vc, offset, row stride, col stride) windows of a [r, c] tile."""
    out = [(r, c, 0, c, 1), (r, c, 1, c, 1), (r, c, 7, c, 1), (r, c, 33, c, 1),   # whole tile, back to back
           (r, max(1, c - 3), 3, c + 9, 1),                                      # ragged columns, gaps
           (max(1, r - 1), c, 5, 2 * c + 1, 1),                                   # row gaps, odd offset
           (r, max(1, c // 2), 2, c, 2),                                          # strided columns: plain stores
           (1, 1, 0, c, 1), (1, min(c, 17), 11, c, 1), (r, 64, 16, 64, 1), (r, 64, 15, 100, 1)]
    return [x for x in out if x[1] <= c]


@pytest.mark.parametrize("mode", [-1, 0, 1, 2], ids=["default", "auto", "cached", "stream"])
@pytest.mark.parametrize("name", [n for n, m in META.items() if m["kind"] == "st"])
def test_stream_store_windows(lib, name, mode):
    meta = META[name]
    npdt = DT[meta["dt"]][1]
    r, c = lib.entries[name].tiles[0].rows, lib.entries[name].tiles[0].cols
    rng = np.random.default_rng(len(name) + mode)
    for vr, vc, off, rs, cs in _st_cases(r, c):
        tile = (rng.standard_normal((r, c)) * 50).astype(np.float32).astype(npdt)
        n = off + (vr - 1) * rs + (vc - 1) * cs + 1 + 70
        dst = sentinel(npdt, (n,))
        lib.call(name, [tile, dst], [(vr, vc), (1, 1)], ints=[off, vr, vc, rs, cs, mode])
        want = sentinel(npdt, (n,))
        for i in range(vr):
            want[off + i * rs: off + i * rs + (vc - 1) * cs + 1: cs] = tile[i, :vc]
        assert np.array_equal(dst.view(np.uint8), want.view(np.uint8)), (vr, vc, off, rs, cs)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_stream_store_nd(lib, mode):
    rng = np.random.default_rng(40 + mode)
    t = sentinel(np.dtype(np.float32), (3, 7, 300))
    tile = rng.standard_normal((12, 256)).astype(np.float32)
    # window [0:2, 1:7, 3:259] of a [3, 7, 300] tensor: rows = 2 * 6 = 12, row stride not uniform
    off = 1 * 300 + 3
    lib.call("ST3_f32", [tile, t], [(12, 256), (1, 1)], ints=[off, 2, 6, 256, 2100, 300, 1, mode])
    want = sentinel(np.dtype(np.float32), (3, 7, 300))
    want[0:2, 1:7, 3:259] = tile.reshape(2, 6, 256)
    assert np.array_equal(t, want)


def test_stream_store_read_modify_write(lib):
    x = np.arange(20000, dtype=np.float32)
    want = x.copy()
    want[13:13 + 4 * 2048].reshape(4, 2048)[:, :] += 3
    lib.call("ST_rmw_f32", [np.zeros((4, 2048), np.float32), x], [(4, 2048), (1, 1)], ints=[13, 4, 2048, 2048, 3])
    assert np.array_equal(x, want)


# ---- max / min / relu with NaN --------------------------------------------------------------------------
R, C = 16, 64
VR, VC = 13, 37
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-40, -1e-40, 3.5, -3.5],
                   np.float32)
for dt in ("f32", "f16", "bf16"):
    for op in ("TMAX", "TMIN"):
        add(f"{op}_{dt}", [TileSpec(dt, R, C)] * 3, f"pto::{op}(t0, t1, t2)", kind="bin", dt=dt, op=op)
        add(f"{op}S_{dt}", [TileSpec(dt, R, C)] * 2, f"pto::{op}S(t0, t1, dv[0])", kind="bins", dt=dt, op=op)
    add(f"TRELU_{dt}", [TileSpec(dt, R, C)] * 2, "pto::TRELU(t0, t1)", kind="relu", dt=dt)
    add(f"TROWEXPANDMAX_{dt}", [TileSpec(dt, R, C), TileSpec(dt, R, C), TileSpec(dt, R, 1)],
        "pto::TROWEXPANDMAX(t0, t1, t2)", kind="rowexp", dt=dt)
add("FUSED_relu_add", [TileSpec("f32", R, C)] * 3,
    "pto::vmap(t0, [](auto a, auto b) { return pto::op::Relu{}(pto::op::Add{}(a, b)); }, t1, t2)", kind="fused")


def _pairs(rng, shape):
    """a, b with every combination of the special values, plus random values."""
    a = rng.uniform(-4, 4, shape).astype(np.float32)
    b = rng.uniform(-4, 4, shape).astype(np.float32)
    k = len(SPECIAL)
    ia, ib = np.meshgrid(np.arange(k), np.arange(k))
    a.flat[: k * k] = SPECIAL[ia.ravel()]
    b.flat[: k * k] = SPECIAL[ib.ravel()]
    a.flat[200:300:3] = b.flat[200:300:3]  # equal operands
    return a, b


def _same(got, want) -> bool:
    """Bit-exact except that any NaN matches any NaN (zero signs must match)."""
    g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
    both_nan = np.isnan(g) & np.isnan(w)
    return bool(np.all(both_nan | ((g == w) & (np.signbit(g) == np.signbit(w)))))


def _check(out, want, vr, vc, npdt):
    pad = np.ones(out.shape, bool)
    pad[:vr, :vc] = False
    assert np.array_equal(out[pad].view(np.uint8), sentinel(npdt, out.shape)[pad].view(np.uint8)), "wrote padding"
    assert _same(out[:vr, :vc].astype(np.float32), np.asarray(want).astype(npdt).astype(np.float32))


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("name", [n for n, m in META.items() if m["kind"] in ("bin", "bins", "relu", "rowexp")])
def test_nan_max_min_relu(lib, name, full):
    meta = META[name]
    npdt = DT[meta["dt"]][1]
    vr, vc = (R, C) if full else (VR, VC)
    rng = np.random.default_rng(3)
    a, b = _pairs(rng, (R, C))
    a, b = a.astype(npdt), b.astype(npdt)
    out = sentinel(npdt, (R, C))
    af, bf = a.astype(np.float32), b.astype(np.float32)
    if meta["kind"] == "bin":
        lib.call(name, [out, a, b], [(vr, vc)] * 3)
        f = np.maximum if meta["op"] == "TMAX" else np.minimum
        want = f(af[:vr, :vc], bf[:vr, :vc])
        _check(out, want, vr, vc, npdt)
    elif meta["kind"] == "bins":
        f = np.maximum if meta["op"] == "TMAX" else np.minimum
        for s in (0.0, -0.0, 1.5, -np.inf, np.nan):
            out = sentinel(npdt, (R, C))
            lib.call(name, [out, a], [(vr, vc)] * 2, dbls=[s])
            _check(out, f(af[:vr, :vc], np.float32(np.float32(s).astype(npdt))), vr, vc, npdt)
    elif meta["kind"] == "relu":
        lib.call(name, [out, a], [(vr, vc)] * 2)
        _check(out, np.maximum(af[:vr, :vc], np.float32(0)), vr, vc, npdt)
    else:
        v = b[:, :1].copy()
        v[::3] = np.nan
        v[1::5] = -0.0
        lib.call(name, [out, a, v], [(vr, vc), (vr, vc), (vr, 1)])
        _check(out, np.maximum(af[:vr, :vc], v[:vr].astype(np.float32)), vr, vc, npdt)


def test_relu_payloads_and_fused(lib):
    bits = np.array([0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFFA00001, 0x7F800001, 0x80000000, 0x00000000, 0x80000001,
                     0x00000001, 0xFF800000, 0x7F800000, 0xBF800000], np.uint32)
    x = np.resize(bits, (R, C)).view(np.float32)
    out = sentinel(np.dtype(np.float32), (R, C))
    lib.call("TRELU_f32", [out, x], [(R, C), (R, C)])
    want = np.maximum(x, np.float32(0))
    assert _same(out, want)
    # a quiet NaN keeps its payload and sign (signalling NaNs come back quiet)
    qn = np.isnan(x) & ((x.view(np.uint32) & 0x00400000) != 0)
    assert np.array_equal(out.view(np.uint32)[qn], x.view(np.uint32)[qn])
    y = np.resize(np.array([1.0, -2.0, np.nan, -0.5], np.float32), (R, C))
    out = sentinel(np.dtype(np.float32), (R, C))
    lib.call("FUSED_relu_add", [out, x, y], [(VR, VC)] * 3)
    _check(out, np.maximum(x[:VR, :VC] + y[:VR, :VC], np.float32(0)), VR, VC, np.dtype(np.float32))


# ---- reductions ---------------------------------------------------------------------------------------------
RED_LENS = [1, 5, 15, 16, 17, 31, 33, 100, 127, 128, 129, 255, 300, 513, 1000, 4095, 4096]
for dt in ("f32", "bf16", "f16"):
    for op in ("TROWMAX", "TROWMIN", "TROWSUM"):
        add(f"{op}_{dt}", [TileSpec(dt, 8, 1), TileSpec(dt, 8, 4096)], f"pto::{op}(t0, t1)", kind="rowred", dt=dt, op=op)
    for op in ("TCOLMAX", "TCOLMIN", "TCOLSUM"):
        add(f"{op}_{dt}", [TileSpec(dt, 1, 200), TileSpec(dt, 40, 200)], f"pto::{op}(t0, t1)", kind="colred", dt=dt,
            op=op)
for dt in ("i32", "i8"):
    for op in ("TROWMAX", "TROWSUM"):
        add(f"{op}_{dt}", [TileSpec(dt, 8, 1), TileSpec(dt, 8, 4096)], f"pto::{op}(t0, t1)", kind="rowred", dt=dt, op=op)


@pytest.mark.parametrize("name", [n for n, m in META.items() if m["kind"] == "rowred"])
def test_row_reductions(lib, name):
    meta = META[name]
    npdt = DT[meta["dt"]][1]
    rng = np.random.default_rng(9)
    is_f = meta["dt"] not in ("i32", "i8")
    for n in RED_LENS:
        if is_f:
            x = rng.uniform(-100, 100, (8, 4096)).astype(np.float32).astype(npdt)
            x[:, n:] = np.nan  # padding must not be read
            if meta["op"] != "TROWSUM":
                # row 1: NaN first; 2: NaN last; 3: NaN in the middle; 4: two NaNs; 5: infinities; 6: a -inf only
                x[1, 0] = np.nan
                x[2, n - 1] = np.nan
                x[3, n // 2] = np.nan
                x[4, [0, n - 1]] = np.nan
                x[5, n // 3] = np.inf
                x[5, (2 * n) // 3] = -np.inf
                x[6, :n] = -np.inf
        else:
            x = rng.integers(-100, 100, (8, 4096)).astype(npdt)
            x[:, n:] = np.iinfo(npdt).max
        out = sentinel(npdt, (8, 1))
        lib.call(name, [out, x], [(8, 1), (8, n)])
        xv = x[:, :n].astype(np.float64) if is_f else x[:, :n]
        if meta["op"] == "TROWSUM":
            if is_f:
                tol = 2e-6 * np.abs(xv).sum(axis=1) + (np.abs(xv.sum(axis=1)) * 2.0 ** -7 if npdt != np.float32 else 0)
                assert np.all(np.abs(out[:, 0].astype(np.float64) - xv.sum(axis=1)) <= tol + 1e-30), n
            else:
                assert np.array_equal(out[:, 0], x[:, :n].sum(axis=1, dtype=np.int64).astype(npdt)), n
        else:
            f = np.max if meta["op"] == "TROWMAX" else np.min
            want = f(xv, axis=1)
            got = out[:, 0].astype(np.float64) if is_f else out[:, 0]
            assert np.array_equal(np.isnan(got), np.isnan(want)) if is_f else True, n
            ok = np.isnan(want) if is_f else np.zeros(8, bool)
            assert np.array_equal(got[~ok], want[~ok]), (n, got, want)


@pytest.mark.parametrize("name", [n for n, m in META.items() if m["kind"] == "colred"])
def test_col_reductions(lib, name):
    meta = META[name]
    npdt = DT[meta["dt"]][1]
    rng = np.random.default_rng(10)
    for vr, vc in ((40, 200), (1, 200), (37, 131), (3, 64), (40, 7)):
        x = rng.uniform(-100, 100, (40, 200)).astype(np.float32).astype(npdt)
        x[vr:, :] = np.nan
        x[:, vc:] = np.nan
        if meta["op"] != "TCOLSUM":
            x[0, 3] = np.nan
            x[vr - 1, 5] = np.nan
            x[vr // 2, vc - 1] = np.nan
            x[:vr, 1] = -np.inf
            x[vr // 2, 2] = np.inf
        out = sentinel(npdt, (1, 200))
        lib.call(name, [out, x], [(1, vc), (vr, vc)])
        xv = x[:vr, :vc].astype(np.float64)
        pad = np.ones(200, bool)
        pad[:vc] = False
        assert np.array_equal(out[0, pad].view(np.uint16 if npdt.itemsize == 2 else np.uint32),
                              sentinel(npdt, (200,))[pad].view(np.uint16 if npdt.itemsize == 2 else np.uint32))
        got = out[0, :vc].astype(np.float64)
        if meta["op"] == "TCOLSUM":
            # fp16 / bf16 columns accumulate in their own dtype (the hardware's precision, col_sum_ref):
            # each of the vr adds rounds by at most half an ulp of a partial sum <= sum |x|
            eps = 0.0 if npdt == np.float32 else 2.0 ** -(8 if meta["dt"] == "bf16" else 11)
            tol = 2e-6 * np.abs(xv).sum(axis=0) + vr * eps * np.abs(xv).sum(axis=0)
            assert np.all(np.abs(got - xv.sum(axis=0)) <= tol + 1e-30)
        else:
            want = (np.max if meta["op"] == "TCOLMAX" else np.min)(xv, axis=0)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            assert np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


# ---- bf16 conversions ----------------------------------------------------------------------------------------
for r, c in ((16, 64), (1, 4096), (5, 37)):
    add(f"CVT_f32_bf16_{r}x{c}", [TileSpec("bf16", r, c), TileSpec("f32", r, c)], "pto::TCVT(t0, t1, pto::RoundMode(0))",
        kind="f2b")
add("CVT_bf16_f32", [TileSpec("f32", 256, 256), TileSpec("bf16", 256, 256)], "pto::TCVT(t0, t1)", kind="b2f")
add("ADD_bf16", [TileSpec("bf16", 16, 64), TileSpec("f32", 16, 64), TileSpec("f32", 16, 64)], "pto::TADD(t0, t1, t2)",
    kind="f2b_ew")
add("ROUND_bf16", [TileSpec("f32", 16, 64), TileSpec("f32", 16, 64)],
    "pto::vmap(t0, [](auto a) { return pto::op::Round<pto::bf16>{}(a); }, t1)", kind="f2b_ew")


def bf16_bits_ref(x: np.ndarray) -> np.ndarray:
    """The library's rule: round to nearest even; NaN -> (bits >> 16) | 0x40 (quiet, sign and top payload kept)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rn = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    qn = (u >> 16) | 0x40
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, qn, rn).astype(np.uint16)


def _bf16_inputs(rng, n: int, rep: int = 0) -> np.ndarray:
    """Random bit patterns over every exponent, plus ties, near-ties, overflow, subnormals, NaNs."""
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    special = []
    for hi in (0x0000, 0x0001, 0x007F, 0x0080, 0x3F80, 0x3F81, 0x4049, 0x7F7F, 0x7F7E, 0x7F80, 0x7FC0, 0x7F81):
        for lo in (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234, 0xC000):
            special += [(hi << 16) | lo, ((hi | 0x8000) << 16) | lo]
    special = np.roll(np.array(special, np.uint32), -rep * n)  # small tiles see other specials each rep
    k = min(n, special.size)
    u[:k] = special[:k]
    # scatter subnormals through the array (one in many 32-element chunks, and in tails)
    u[k // 2::97] = rng.integers(1, 0x00800000, u[k // 2::97].size, dtype=np.uint32)
    return u.view(np.float32)


@pytest.mark.parametrize("name", [n for n, m in META.items() if m["kind"] in ("f2b", "f2b_ew")])
def test_f32_to_bf16(lib, name):
    spec = lib.entries[name].tiles
    r, c = spec[0].rows, spec[0].cols
    rng = np.random.default_rng(77)
    for rep in range(6):
        x = _bf16_inputs(rng, r * c, rep).reshape(r, c)
        valid = [(r, c), (max(1, r - 1), max(1, c - 5)), (r, max(1, c // 2 + 3)), (1, 1), (r, c), (r, c)][rep]
        if name.startswith("ROUND"):
            out = sentinel(np.dtype(np.float32), (r, c))
            lib.call(name, [out, x], [valid, valid])
            got = out[: valid[0], : valid[1]].view(np.uint32) >> 16
            assert np.all((out[: valid[0], : valid[1]].view(np.uint32) & 0xFFFF) == 0)
        else:
            out = sentinel(BF16, (r, c))
            if name.startswith("ADD"):
                lib.call(name, [out, x, np.zeros_like(x)], [valid] * 3)
            else:
                lib.call(name, [out, x], [valid, valid])
            pad = np.ones((r, c), bool)
            pad[: valid[0], : valid[1]] = False
            assert np.array_equal(out[pad].view(np.uint16), sentinel(BF16, (r, c))[pad].view(np.uint16))
            got = out[: valid[0], : valid[1]].view(np.uint16)
        xv = x[: valid[0], : valid[1]]
        want = bf16_bits_ref(xv)
        if name.startswith("ADD"):
            # x + 0: the sum quiets signalling NaNs and turns -0 into +0 before rounding
            want = bf16_bits_ref(xv + np.float32(0))
            nan = np.isnan(xv)
            assert np.all(np.isnan(out[: valid[0], : valid[1]].astype(np.float32)[nan]))
            got, want = got[~nan], want[~nan]
        assert np.array_equal(got.astype(np.uint16), want), np.flatnonzero(got != want)[:5]
        # the same as ml_dtypes (round to nearest even, subnormals kept) wherever x is not NaN
        fin = ~np.isnan(xv)
        if not name.startswith("ADD"):
            assert np.array_equal(got[fin].astype(np.uint16), xv[fin].astype(BF16).view(np.uint16))


def test_bf16_to_f32_all_patterns(lib):
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(BF16).reshape(256, 256)
    out = sentinel(np.dtype(np.float32), (256, 256))
    lib.call("CVT_bf16_f32", [out, x], [(256, 256), (256, 256)])
    assert np.array_equal(out.view(np.uint32), x.view(np.uint16).astype(np.uint32) << 16)
    out = sentinel(np.dtype(np.float32), (256, 256))
    lib.call("CVT_bf16_f32", [out, x], [(255, 251), (255, 251)])
    assert np.array_equal(out[:255, :251].view(np.uint32), x[:255, :251].view(np.uint16).astype(np.uint32) << 16)
    assert np.all(out[255] == np.float32(-1234.5)) and np.all(out[:, 251:] == np.float32(-1234.5))


# ---- exp ----------------------------------------------------------------------------------------------------
add("EXP_f32", [TileSpec("f32", 256, 256)] * 2, "pto::TEXP(t0, t1)", kind="exp")


def test_exp_dense(lib):
    """Every 64th float in [-104, 89] (and its neighbours): <= 1 ulp of the float64 exp (<= 2 off AVX-512)."""
    pos = np.arange(0, np.float32(89).view(np.uint32) + 1, 61, dtype=np.uint32)
    neg = np.arange(0, np.float32(104).view(np.uint32) + 1, 61, dtype=np.uint32) | np.uint32(0x80000000)
    xs = np.concatenate([pos, neg]).view(np.float32)
    lim = 1.0 if lib.build_name not in ("avx2", "sse2") else 2.0
    for i in range(0, xs.size, 65536):
        chunk = np.resize(xs[i:i + 65536], 65536).reshape(256, 256)
        out = np.empty_like(chunk)
        lib.call("EXP_f32", [out, chunk], [(256, 256)] * 2)
        with np.errstate(over="ignore", under="ignore"):
            want = np.exp(chunk.astype(np.float64))
        assert ulp_diff(out, want).max() <= lim
