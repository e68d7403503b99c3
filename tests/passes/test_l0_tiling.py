"""The L0 tile chooser (pypto/passes/l0_tiling.py): the design points of the Ascend 910B cost model
that today's public tests pin, and the invariants every choice keeps."""

from __future__ import annotations

import itertools

import pytest

from pypto.passes.l0_tiling import L0TileConfig, Stationarity, choose_l0_tile
from pypto.pypto_core.passes import l0_tile_chooser


def _a2a3(m, k, n, *, dbc=False, nbytes=2, **kw):
    return L0TileConfig(M=m, K=k, N=n, l0a_bytes=64 * 1024, l0b_bytes=64 * 1024, l0c_bytes=128 * 1024,
                        bytes_a=nbytes, bytes_b=nbytes, bytes_c=4, allow_a_stationary=True,
                        allow_b_stationary=True, allow_double_buffer_c=dbc, allow_k_boundary=True, **kw)


@pytest.mark.parametrize("m,k,n,l0_k", [(16, 128, 128, 64), (64, 192, 128, 64), (64, 384, 256, 32),
                                        (128, 384, 64, 64)])
@pytest.mark.parametrize("dbc", [False, True])
def test_fp32_k_only_split(m, k, n, l0_k, dbc):
    r = choose_l0_tile(_a2a3(m, k, n, dbc=dbc, nbytes=4))
    assert (r.m, r.n, r.k) == (m, n, l0_k)
    assert r.stationarity is Stationarity.OutputStationary and not r.double_buffer_c


@pytest.mark.parametrize("m,k,n,dbc,tile,stat", [
    (256, 128, 544, False, (256, 128, 128), Stationarity.AStationary),
    (48, 352, 96, True, (48, 32, 352), Stationarity.AStationary),
    (192, 64, 512, False, (64, 512, 64), Stationarity.BStationary),
    (64, 80, 256, True, (32, 256, 80), Stationarity.BStationary),
])
def test_operand_stationary_design_points(m, k, n, dbc, tile, stat):
    r = choose_l0_tile(_a2a3(m, k, n, dbc=dbc))
    assert ((r.m, r.n, r.k), r.stationarity, r.double_buffer_c) == (tile, stat, dbc)


def test_fits_whole_is_left_whole():
    r = choose_l0_tile(_a2a3(64, 64, 64, dbc=True))
    assert (r.m, r.n, r.k) == (64, 64, 64) and r.stationarity is Stationarity.OutputStationary


def test_gates_closed_keep_output_stationary():
    cfg = _a2a3(256, 128, 544)
    cfg.allow_a_stationary = cfg.allow_b_stationary = False
    r = choose_l0_tile(cfg)
    assert r.stationarity is Stationarity.OutputStationary and not r.double_buffer_c


def test_k_boundary_needs_the_flag():
    cfg = _a2a3(128, 688, 192)
    r = choose_l0_tile(cfg)
    assert r.k % 16 == 0 and r.k < 688
    cfg.allow_k_boundary = False
    r2 = choose_l0_tile(cfg)
    assert 688 % r2.k == 0  # divisors only: 16 (688 = 16 * 43)


@pytest.mark.parametrize("m,k,n,nbytes", list(itertools.product((16, 48, 272, 512), (32, 80, 688),
                                                                  (16, 96, 416), (2, 4))))
def test_invariants(m, k, n, nbytes):
    cfg = _a2a3(m, k, n, dbc=True, nbytes=nbytes)
    r = choose_l0_tile(cfg)
    dba = 1 if r.stationarity is Stationarity.AStationary else 2
    dbb = 1 if r.stationarity is Stationarity.BStationary else 2
    assert r.m * r.k * nbytes * dba <= cfg.l0a_bytes and r.k * r.n * nbytes * dbb <= cfg.l0b_bytes
    assert r.m * r.n * 4 * (2 if r.double_buffer_c else 1) <= cfg.l0c_bytes
    assert r.m <= m and r.n <= n and r.k <= k and r.m % 16 == 0 and r.n % 16 == 0 and r.k % 16 == 0
    if r.stationarity is not Stationarity.OutputStationary or r.double_buffer_c:
        assert r.k == k
    assert r.padded_compute_volume >= m * n * k and r.estimated_cost_cycles > 0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="M, N, K must be positive"):
        choose_l0_tile(_a2a3(0, 16, 16))
    with pytest.raises(ValueError, match="cube minimum"):
        choose_l0_tile(_a2a3(8, 16, 16))


def test_public_module_path():
    cfg = l0_tile_chooser.L0TileConfig()
    cfg.M, cfg.K, cfg.N = 64, 384, 256
    cfg.l0a_bytes = cfg.l0b_bytes = 64 * 1024
    cfg.l0c_bytes = 128 * 1024
    cfg.bytes_a = cfg.bytes_b = 4
    cfg.bytes_c = 4
    cfg.allow_k_boundary = True
    r = l0_tile_chooser.choose_l0_tile(cfg)
    assert (r.m, r.n, r.k) == (64, 256, 32)
    assert r.stationarity == l0_tile_chooser.Stationarity.OutputStationary
