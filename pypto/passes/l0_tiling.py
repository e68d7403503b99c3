"""The L0 tile chooser: which [m, k] x [k, n] -> [m, n] pieces a matmul on Mat (L1) operands runs in
on a target with small L0A / L0B / L0C buffers (Left / Right / Acc), and in which loop order.

`choose_l0_tile(cfg)` scores every legal aligned tile (m, n, k) under a roofline model of one cube
core and returns the cheapest design point (docs/compiler_pipeline.md, "Matmul L0 tiling on Ascend
targets"). In short, for a design point with `T = ceil(M/m) * ceil(N/n)` output tiles:

* mad   = T * (kblocks * mad_head + passes * ceil(m/16) * kfrac * ceil(n/16)), kfrac counting the
          cube K-fractals of every K block (the ragged last block at its own width);
* drain = T * (drain_fixed + m * (max(drain_row, bytes_c * n / bw_drain) + penalty * (odd(N1) - 1)));
* load  = operand bytes moved L1 -> L0 over the two bandwidths; the pinned (stationary) operand is
          moved once, a streamed one once per tile of the other axis;
* wall  = max(load, mad) + drain, or with two ping-ponged accumulators (dbC)
          max(max(load, mad), drain) + min(...) / T.

A moving operand is double-buffered (half its L0 budget), a pinned one single-buffered; dbC halves
the L0C budget. Output-stationary with one accumulator is always scored; the other regimes (A- or
B-stationary, which need k == K; dbC, which also needs two full tiles on the inner axis) are opened by
the `allow_*` flags, scored only when the baseline really tiles, and win only when strictly cheaper.
Ties prefer less padded work, fewer K blocks, less load, a larger m*n, a larger k.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from pypto.errors import InvalidValue


class Stationarity(enum.Enum):
    """Which operand stays resident across the L0 loops."""

    OutputStationary = 0  # the accumulator; both operands stream (the only choice when k < K)
    AStationary = 1  # the left operand, once per row block (k == K)
    BStationary = 2  # the right operand, once per column block (k == K)


@dataclass
class L0TileConfig:
    """The problem, the L0 capacities, the tile alignment and the cost-model constants. The defaults of
    the constants describe an Ascend 910B cube core (bytes / cycle, cycles)."""

    M: int = 0
    N: int = 0
    K: int = 0
    l0a_bytes: int = 0
    l0b_bytes: int = 0
    l0c_bytes: int = 0
    bytes_a: int = 2
    bytes_b: int = 2
    bytes_c: int = 4
    min_m: int = 16
    min_n: int = 16
    min_k: int = 16
    align_m: int = 16
    align_n: int = 16
    align_k: int = 16
    l0c_align_m: int = 16  # physical row granularity of one accumulator
    box_align_m: int = 1  # physical boxing of the operand window before it enters L0
    box_align_n: int = 1
    max_n: int = 0  # 0: unbounded
    max_n_pipelined: int = 0
    max_n_nested_pipelined: int = 0
    allow_a_stationary: bool = False
    allow_b_stationary: bool = False
    allow_double_buffer_c: bool = False
    c_read: bool = False  # the matmul also reads its accumulator (matmul_acc)
    bw_a: float = 129.7
    bw_b: float = 85.4
    bw_drain: float = 118.0
    drain_fixed_cycles: float = 164.0
    drain_row_cycles: float = 4.45
    drain_penalty_cycles: float = 2.6
    drain_c0_bytes: int = 32
    mad_head: int = 21
    mad_k_fractal_bytes: int = 32
    mad_fp32_passes: int = 2
    allow_padding: bool = False  # tiles larger than the problem (pad up to the cube minimum)
    allow_k_boundary: bool = False  # a k that does not divide K (the ragged last block is peeled)


@dataclass
class L0TileResult:
    m: int = 0
    n: int = 0
    k: int = 0
    estimated_traffic_bytes: int = 0
    estimated_cost_cycles: int = 0
    padded_compute_volume: int = 0
    stationarity: Stationarity = Stationarity.OutputStationary
    os_holds_a: bool = True  # full-K output-stationary: the operand kept across the inner sweep
    double_buffer_c: bool = False
    perf_hint: str = ""


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _up(x: int, a: int) -> int:
    return _cdiv(x, a) * a


def _odd(x: int) -> int:
    while x > 0 and x % 2 == 0:
        x //= 2
    return x


class _Model:
    """The cost of one (m, n, k) under one regime (stationarity, dbC)."""

    def __init__(self, cfg: L0TileConfig) -> None:
        self.c = cfg

    def held(self, m: int, n: int) -> tuple[float, float]:
        """Load cycles with A kept (B streamed once per row block) and with B kept."""
        c = self.c
        a_once = c.bytes_a * c.M * c.K / c.bw_a
        b_once = c.bytes_b * c.K * c.N / c.bw_b
        return a_once + b_once * _cdiv(c.M, m), a_once * _cdiv(c.N, n) + b_once

    def holds_a(self, m: int, n: int) -> bool:
        ha, hb = self.held(m, n)
        return ha <= hb

    def load(self, m: int, n: int, k: int, stat: Stationarity) -> float:
        c = self.c
        ha, hb = self.held(m, n)
        if stat is Stationarity.AStationary:
            return ha
        if stat is Stationarity.BStationary:
            return hb
        if k >= c.K:
            return ha if ha <= hb else hb
        return c.bytes_a * c.M * c.K * _cdiv(c.N, n) / c.bw_a + c.bytes_b * c.K * c.N * _cdiv(c.M, m) / c.bw_b

    def traffic(self, m: int, n: int, k: int, stat: Stationarity) -> int:
        c = self.c
        a, b = c.bytes_a * c.M * c.K, c.bytes_b * c.K * c.N
        a_streamed, b_streamed = a * _cdiv(c.N, n), b * _cdiv(c.M, m)
        if stat is Stationarity.AStationary or (stat is Stationarity.OutputStationary and k >= c.K
                                                 and self.holds_a(m, n)):
            ab = a + b_streamed
        elif stat is Stationarity.BStationary or k >= c.K:
            ab = a_streamed + b
        else:
            ab = a_streamed + b_streamed
        return ab + (2 if c.c_read else 1) * c.bytes_c * c.M * c.N

    def mad(self, m: int, n: int, k: int) -> int:
        c = self.c
        kt = max(1, c.mad_k_fractal_bytes // c.bytes_a)
        passes = max(1, c.mad_fp32_passes) if c.bytes_a == 4 else max(1, c.bytes_a // 2)
        full, tail = divmod(c.K, k)
        kfrac = full * _cdiv(k, kt) + (_cdiv(tail, kt) if tail else 0)
        per_tile = (full + (1 if tail else 0)) * c.mad_head + passes * _cdiv(m, c.align_m) * kfrac * _cdiv(n, c.align_n)
        return _cdiv(c.M, m) * _cdiv(c.N, n) * per_tile

    def drain(self, m: int, n: int) -> float:
        c = self.c
        n1 = _cdiv(n, max(1, c.drain_c0_bytes // c.bytes_c))
        per_row = max(c.drain_row_cycles, c.bytes_c * n / c.bw_drain) + c.drain_penalty_cycles * (_odd(n1) - 1)
        return _cdiv(c.M, m) * _cdiv(c.N, n) * (c.drain_fixed_cycles + m * per_row)

    def wall(self, m: int, n: int, k: int, stat: Stationarity, dbc: bool) -> int:
        compute = max(self.load(m, n, k, stat), float(self.mad(m, n, k)))
        drain = self.drain(m, n)
        if dbc:
            tiles = _cdiv(self.c.M, m) * _cdiv(self.c.N, n)
            w = max(compute, drain) + min(compute, drain) / tiles
        else:
            w = compute + drain
        return int(math.floor(w + 0.5))


@dataclass
class _Cand:
    m: int
    n: int
    k: int
    stat: Stationarity
    dbc: bool
    wall: int
    padded: int
    load: float

    def key(self, K: int) -> tuple:
        return (self.wall, self.padded, _cdiv(K, self.k), self.load, -self.m * self.n, -self.k)


def _acc_elems(cfg: L0TileConfig, m: int, n: int) -> int:
    return _up(_up(m, cfg.box_align_m), cfg.l0c_align_m) * _up(n, cfg.box_align_n)


def _validate(cfg: L0TileConfig) -> None:
    def need(ok: bool, msg: str) -> None:
        if not ok:
            raise InvalidValue(f"choose_l0_tile: {msg}")
    need(cfg.M > 0 and cfg.N > 0 and cfg.K > 0, f"M, N, K must be positive (got {cfg.M}, {cfg.N}, {cfg.K})")
    need(min(cfg.l0a_bytes, cfg.l0b_bytes, cfg.l0c_bytes) > 0, "the L0 capacities must be positive")
    need(min(cfg.bytes_a, cfg.bytes_b, cfg.bytes_c) > 0, "the element sizes must be positive")
    need(min(cfg.min_m, cfg.min_n, cfg.min_k) > 0, "the minimum tile dimensions must be positive")
    need(min(cfg.align_m, cfg.align_n, cfg.align_k, cfg.l0c_align_m, cfg.box_align_m, cfg.box_align_n) > 0,
         "the alignments must be positive")
    need(cfg.max_n == 0 or cfg.max_n >= cfg.min_n, f"max_n must be 0 or at least min_n (got {cfg.max_n})")
    need(min(cfg.bw_a, cfg.bw_b, cfg.bw_drain) > 0, "the bandwidths must be positive")
    if not cfg.allow_padding:
        need(cfg.M >= cfg.min_m and cfg.N >= cfg.min_n and cfg.K >= cfg.min_k,
             f"M={cfg.M}, N={cfg.N}, K={cfg.K} must each reach the cube minimum "
             f"({cfg.min_m}, {cfg.min_n}, {cfg.min_k}) unless allow_padding is set")


def _legal_ks(cfg: L0TileConfig, m: int, n: int, a_elems: int, b_elems: int) -> list[int]:
    cap = min(a_elems // _up(m, cfg.box_align_m), b_elems // _up(n, cfg.box_align_n))
    k_problem = max(_up(cfg.K, cfg.align_k), cfg.min_k) if cfg.allow_padding else cfg.K
    hi = min(cap, k_problem) // cfg.align_k * cfg.align_k
    ragged_ok = cfg.allow_padding or (cfg.allow_k_boundary and cfg.K % cfg.align_k == 0)
    return [k for k in range(cfg.min_k, hi + 1, cfg.align_k) if ragged_ok or cfg.K % k == 0]


def _best(cfg: L0TileConfig, model: _Model, stat: Stationarity, dbc: bool) -> _Cand | None:
    a_elems = cfg.l0a_bytes // (cfg.bytes_a * (1 if stat is Stationarity.AStationary else 2))
    b_elems = cfg.l0b_bytes // (cfg.bytes_b * (1 if stat is Stationarity.BStationary else 2))
    c_elems = cfg.l0c_bytes // (cfg.bytes_c * (2 if dbc else 1))
    full_k_only = stat is not Stationarity.OutputStationary or dbc
    m_hi = _up(cfg.M, cfg.align_m) if cfg.allow_padding else cfg.M
    n_hi = _up(cfg.N, cfg.align_n) if cfg.allow_padding else cfg.N
    if cfg.max_n:
        n_hi = min(n_hi, cfg.max_n)
    best: _Cand | None = None
    for m in range(cfg.min_m, m_hi + 1, cfg.align_m):
        for n in range(cfg.min_n, n_hi + 1, cfg.align_n):
            if _acc_elems(cfg, m, n) > c_elems:
                break
            if dbc:  # the moving inner loop needs two full tiles to ping-pong
                rows_outer = stat is Stationarity.AStationary or (stat is Stationarity.OutputStationary
                                                                   and model.holds_a(m, n))
                if (cfg.N // n if rows_outer else cfg.M // m) < 2:
                    continue
            for k in _legal_ks(cfg, m, n, a_elems, b_elems):
                if (full_k_only and k != cfg.K) or not _n_bound_ok(cfg, model, m, n, k, stat):
                    continue
                cand = _Cand(m, n, k, stat, dbc, model.wall(m, n, k, stat, dbc),
                             _cdiv(cfg.M, m) * m * _cdiv(cfg.N, n) * n * _cdiv(cfg.K, k) * k,
                             model.load(m, n, k, stat))
                if best is None or cand.key(cfg.K) < best.key(cfg.K):
                    best = cand
    return best


def _n_bound_ok(cfg: L0TileConfig, model: _Model, m: int, n: int, k: int, stat: Stationarity) -> bool:
    """The extra N caps of a full-K output grid whose N-sized resource is replicated per pipeline stage
    (once under one pipeline level, twice under two)."""
    if k != cfg.K or (m == cfg.M and n == cfg.N):
        return True
    os_ = stat is Stationarity.OutputStationary
    if cfg.max_n_pipelined and (os_ or stat is Stationarity.AStationary) and n > cfg.max_n_pipelined:
        return False
    return not (cfg.max_n_nested_pipelined and os_ and model.holds_a(m, n) and n > cfg.max_n_nested_pipelined)


def choose_l0_tile(cfg: L0TileConfig) -> L0TileResult:
    """The cheapest legal L0 design point for `cfg` (module docstring). Raises ValueError for invalid
    inputs or capacities too small for the minimum tile."""
    _validate(cfg)
    model = _Model(cfg)
    base = _best(cfg, model, Stationarity.OutputStationary, False)
    if base is None:
        raise InvalidValue(f"choose_l0_tile: no legal (m, n, k) tile for M={cfg.M}, N={cfg.N}, K={cfg.K} within "
                         f"L0A {cfg.l0a_bytes} / L0B {cfg.l0b_bytes} / L0C {cfg.l0c_bytes} bytes")
    best = base
    # a problem that fits whole stays whole; richer regimes only when the baseline really tiles
    if (base.m, base.n, base.k) != (cfg.M, cfg.N, cfg.K):
        stats = [Stationarity.OutputStationary]
        if cfg.allow_a_stationary:
            stats.append(Stationarity.AStationary)
        if cfg.allow_b_stationary:
            stats.append(Stationarity.BStationary)
        for stat in stats:
            for dbc in ((False, True) if cfg.allow_double_buffer_c else (False,)):
                if stat is Stationarity.OutputStationary and not dbc:
                    continue
                cand = _best(cfg, model, stat, dbc)
                if cand is not None and cand.wall < best.wall:  # strictly cheaper only
                    best = cand
    hint = ""
    if cfg.M < cfg.min_m or cfg.N < cfg.min_n or cfg.K < cfg.min_k:
        hint = (f"matmul (M={cfg.M}, N={cfg.N}, K={cfg.K}) is below the cube minimum tile; padded to "
                f"({best.m}, {best.n}, {best.k})")
    return L0TileResult(best.m, best.n, best.k, model.traffic(best.m, best.n, best.k, best.stat), best.wall,
                        best.padded, best.stat, model.holds_a(best.m, best.n), best.dbc, hint)


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "choose_l0_tile"]
