"""Model blocks written at the tensor level (`@pypto.frontend.jit`): LayerNorm, RMSNorm, a SwiGLU
feed-forward and multi-head attention, each a loop over blocks of rows with whole-tensor ops inside.
Used by tests/frontend/test_model_blocks.py and benchmarks/bench_frontend.py."""

from __future__ import annotations

import pypto


def layer_norm(n: int, c: int, block: int, eps: float = 1e-5, tile_rows: int | None = None):
    """`tile_rows`: set_vec_tile_shapes(tile_rows, c) — each task loops over tiles of that many rows."""
    @pypto.frontend.jit
    def layer_norm(x: pypto.Tensor((n, c), pypto.DT_FP32), gamma: pypto.Tensor((1, c), pypto.DT_FP32),
                   beta: pypto.Tensor((1, c), pypto.DT_FP32), y: pypto.Tensor((n, c), pypto.DT_FP32)):
        if tile_rows:
            pypto.set_vec_tile_shapes(tile_rows, c)
        for i in pypto.loop(0, n // block, name="rows", idx_name="i"):
            rows = x[i * block:(i + 1) * block, :]
            y[i * block:(i + 1) * block, :] = pypto.layer_norm(rows, gamma, beta, epsilon=eps)

    return layer_norm


def rms_norm(n: int, c: int, block: int, eps: float = 1e-6, tile_rows: int | None = None):
    @pypto.frontend.jit
    def rms_norm(x: pypto.Tensor((n, c), pypto.DT_FP32), gamma: pypto.Tensor((1, c), pypto.DT_FP32),
                 y: pypto.Tensor((n, c), pypto.DT_FP32)):
        if tile_rows:
            pypto.set_vec_tile_shapes(tile_rows, c)
        for i in pypto.loop(0, n // block, name="rows", idx_name="i"):
            rows = x[i * block:(i + 1) * block, :]
            y[i * block:(i + 1) * block, :] = pypto.rms_norm(rows, gamma, epsilon=eps)

    return rms_norm


def swiglu_ffn(t: int, h: int, f: int, tb: int = 64, fb: int = 128, kb: int = 256, nb: int | None = None):
    """out = (silu(x W1) * (x W3)) W2 in two stages, as an algorithm developer tiles it: the gated
    hidden activation g = silu(x W1) * (x W3) one [tb, fb] block per task, then out = g W2 one
    [tb, nb] block per task. `set_cube_tile_shapes` splits each matmul's K into blocks of `kb`, so
    the operand pieces fit the matrix unit's spaces whatever h and f are."""
    nb = nb or fb

    @pypto.frontend.jit
    def swiglu(x: pypto.Tensor((t, h), pypto.DT_FP32), w1: pypto.Tensor((h, f), pypto.DT_FP32),
               w3: pypto.Tensor((h, f), pypto.DT_FP32), w2: pypto.Tensor((f, h), pypto.DT_FP32),
               out: pypto.Tensor((t, h), pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([tb, tb], [kb, kb], [max(fb, nb), max(fb, nb)])
        g = pypto.tensor((t, f), pypto.DT_FP32)
        for i in pypto.loop(0, t // tb, name="gate_up", idx_name="i"):
            for j in pypto.loop(0, f // fb, name="gate_up_cols", idx_name="j"):
                xt = x[i * tb:(i + 1) * tb, :]
                a = pypto.matmul(xt, w1[:, j * fb:(j + 1) * fb])
                b = pypto.matmul(xt, w3[:, j * fb:(j + 1) * fb])
                g[i * tb:(i + 1) * tb, j * fb:(j + 1) * fb] = a * pypto.sigmoid(a) * b
        for i in pypto.loop(0, t // tb, name="down", idx_name="i"):
            for j in pypto.loop(0, h // nb, name="down_cols", idx_name="j"):
                out[i * tb:(i + 1) * tb, j * nb:(j + 1) * nb] = pypto.matmul(g[i * tb:(i + 1) * tb, :],
                                                                             w2[:, j * nb:(j + 1) * nb])

    return swiglu


def attention(heads: int, s: int, d: int, qb: int = 64):
    """softmax(Q K^T / sqrt(d)) V per head; Q, K, V, O are [heads * s, d] (heads stacked)."""
    scale = 1.0 / d ** 0.5

    @pypto.frontend.jit
    def attention(q: pypto.Tensor((heads * s, d), pypto.DT_FP32), k: pypto.Tensor((heads * s, d), pypto.DT_FP32),
                  v: pypto.Tensor((heads * s, d), pypto.DT_FP32), o: pypto.Tensor((heads * s, d), pypto.DT_FP32)):
        for hd in pypto.loop(0, heads, name="heads", idx_name="hd"):
            kh = k[hd * s:(hd + 1) * s, :]
            vh = v[hd * s:(hd + 1) * s, :]
            for i in pypto.loop(0, s // qb, name="queries", idx_name="i"):
                rows = hd * s + i * qb
                p = pypto.softmax(pypto.matmul(q[rows:rows + qb, :], kh, b_trans=True) * scale, dim=-1)
                o[rows:rows + qb, :] = pypto.matmul(p, vh)

    return attention


def flash_attention(s: int, d: int, qb: int = 64, kb: int = 64, platform: str = "cpu"):
    """One head of attention with an online softmax: a run-time loop over key blocks carrying the
    running max `m`, sum `l` and output `acc`; the first block initialises them (a run-time `if`
    on `pypto.is_loop_begin`), the others rescale and accumulate."""
    scale = 1.0 / d ** 0.5

    @pypto.frontend.jit(runtime_options={"platform": platform})
    def flash(q: pypto.Tensor((s, d), pypto.DT_FP32), k: pypto.Tensor((s, d), pypto.DT_FP32),
              v: pypto.Tensor((s, d), pypto.DT_FP32), o: pypto.Tensor((s, d), pypto.DT_FP32)):
        for i in pypto.loop(0, s // qb, name="queries", idx_name="i"):
            q_blk = q[i * qb:(i + 1) * qb, :]
            m = pypto.tensor((qb, 1), pypto.DT_FP32)
            l = pypto.tensor((qb, 1), pypto.DT_FP32)  # noqa: E741
            acc = pypto.tensor((qb, d), pypto.DT_FP32)
            for j in pypto.loop(0, s // kb, name="keys", idx_name="j"):
                sc = pypto.matmul(q_blk, k[j * kb:(j + 1) * kb, :], b_trans=True) * scale
                m_blk = pypto.amax(sc, -1, keepdim=True)
                if pypto.cond(pypto.is_loop_begin(j)):
                    p = pypto.exp(sc - m_blk)
                    m[:] = m_blk
                    l[:] = pypto.sum(p, -1, keepdim=True)
                    acc[:] = pypto.matmul(p, v[j * kb:(j + 1) * kb, :])
                else:
                    m_new = pypto.maximum(m, m_blk)
                    c = pypto.exp(m - m_new)
                    p = pypto.exp(sc - m_new)
                    l[:] = l * c + pypto.sum(p, -1, keepdim=True)
                    acc[:] = acc * c + pypto.matmul(p, v[j * kb:(j + 1) * kb, :])
                    m[:] = m_new
            o[i * qb:(i + 1) * qb, :] = acc / l

    return flash
