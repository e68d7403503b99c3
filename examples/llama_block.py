"""A LLaMA-style decoder block written at the tile level: twelve InCore kernels and one orchestration.

    h   = x + Wo · Attention(RoPE(Wq · RMSNorm(x)), RoPE(Wk · RMSNorm(x)), Wv · RMSNorm(x))
    out = h + Wd · (SiLU(Wg · RMSNorm(h)) * (Wu · RMSNorm(h)))

The orchestration submits one task per output tile (and per head for attention); the runtime
orders them by the regions they read and write. `python examples/llama_block.py` compiles it,
runs it on the CPU and checks it against NumPy.
"""

from __future__ import annotations

import numpy as np

import pypto.language as pl

S = 128  # tokens
D = 256  # hidden size
H = 4  # heads
HD = 64  # head dim
HALF = 32  # HD // 2
F = 512  # FFN size
T = 64  # tile rows / columns
EPS = 1e-6
SCALE = 0.125  # 1 / sqrt(HD)

FP32 = pl.FP32


def make_program():
    @pl.program
    class LlamaBlock:
        # ---- normalization -----------------------------------------------------------------
        @pl.function(type=pl.FunctionType.InCore)
        def rms_norm_attn(self, x: pl.Tensor[[T, D], FP32], g: pl.Tensor[[1, D], FP32],
                          out: pl.Out[pl.Tensor[[T, D], FP32]]) -> pl.Tensor[[T, D], FP32]:
            t = pl.load(x, [0, 0], [T, D])
            sq = pl.mul(t, t)
            ss = pl.row_sum(sq)
            ms = pl.mul(ss, 1.0 / D)
            inv = pl.rsqrt(pl.add(ms, EPS))
            n = pl.row_expand_mul(t, inv)
            gt = pl.load(g, [0, 0], [1, D])
            y = pl.col_expand_mul(n, gt)
            return pl.store(y, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def rms_norm_ffn(self, x: pl.Tensor[[T, D], FP32], g: pl.Tensor[[1, D], FP32],
                         out: pl.Out[pl.Tensor[[T, D], FP32]]) -> pl.Tensor[[T, D], FP32]:
            t = pl.load(x, [0, 0], [T, D])
            ss = pl.row_sum(pl.mul(t, t))
            inv = pl.rsqrt(pl.add(pl.mul(ss, 1.0 / D), EPS))
            y = pl.col_expand_mul(pl.row_expand_mul(t, inv), pl.load(g, [0, 0], [1, D]))
            return pl.store(y, [0, 0], out)

        # ---- projections: one [T, T] output tile, K loop over the hidden size ----------------
        @pl.function(type=pl.FunctionType.InCore)
        def q_proj(self, a: pl.Tensor[[T, D], FP32], w: pl.Tensor[[D, T], FP32],
                   out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                            pl.move(pl.load(w, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (c,) in pl.range(T, D, T, init_values=(acc,)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wr = pl.move(pl.load(w, [k, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                c2 = pl.matmul_acc(c, al, wr)
                cr = pl.yield_(c2)
            return pl.store(cr, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def k_proj(self, a: pl.Tensor[[T, D], FP32], w: pl.Tensor[[D, T], FP32],
                   out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                            pl.move(pl.load(w, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (c,) in pl.range(T, D, T, init_values=(acc,)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wr = pl.move(pl.load(w, [k, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                cr = pl.yield_(pl.matmul_acc(c, al, wr))
            return pl.store(cr, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def v_proj(self, a: pl.Tensor[[T, D], FP32], w: pl.Tensor[[D, T], FP32],
                   out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                            pl.move(pl.load(w, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (c,) in pl.range(T, D, T, init_values=(acc,)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wr = pl.move(pl.load(w, [k, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                cr = pl.yield_(pl.matmul_acc(c, al, wr))
            return pl.store(cr, [0, 0], out)

        # ---- rotary embedding of one head's [T, HD] block ----------------------------------
        @pl.function(type=pl.FunctionType.InCore)
        def rope_q(self, x: pl.Tensor[[T, HD], FP32], cos: pl.Tensor[[T, HD], FP32], sin: pl.Tensor[[T, HD], FP32],
                   out: pl.Out[pl.Tensor[[T, HD], FP32]]) -> pl.Tensor[[T, HD], FP32]:
            t = pl.load(x, [0, 0], [T, HD])
            x1 = pl.block.view(t, [T, HALF], [0, 0])
            x2 = pl.block.view(t, [T, HALF], [0, HALF])
            rot = pl.block.concat(pl.neg(x2), x1)
            y = pl.add(pl.mul(t, pl.load(cos, [0, 0], [T, HD])), pl.mul(rot, pl.load(sin, [0, 0], [T, HD])))
            return pl.store(y, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def rope_k(self, x: pl.Tensor[[T, HD], FP32], cos: pl.Tensor[[T, HD], FP32], sin: pl.Tensor[[T, HD], FP32],
                   out: pl.Out[pl.Tensor[[T, HD], FP32]]) -> pl.Tensor[[T, HD], FP32]:
            t = pl.load(x, [0, 0], [T, HD])
            rot = pl.block.concat(pl.neg(pl.block.view(t, [T, HALF], [0, HALF])), pl.block.view(t, [T, HALF], [0, 0]))
            y = pl.add(pl.mul(t, pl.load(cos, [0, 0], [T, HD])), pl.mul(rot, pl.load(sin, [0, 0], [T, HD])))
            return pl.store(y, [0, 0], out)

        # ---- attention for one head and one block of query rows -----------------------------
        @pl.function(type=pl.FunctionType.InCore)
        def attn_scores(self, q: pl.Tensor[[T, HD], FP32], k: pl.Tensor[[S, HD], FP32],
                        p: pl.Out[pl.Tensor[[T, S], FP32]]) -> pl.Tensor[[T, S], FP32]:
            ql = pl.move(pl.load(q, [0, 0], [T, HD], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            kt = pl.load(k, [0, 0], [S, HD], target_memory=pl.Mem.Mat, transpose=True)
            s = pl.move(pl.matmul(ql, pl.move(kt, target_memory=pl.Mem.Right)), target_memory=pl.Mem.Vec)
            s = pl.mul(s, SCALE)
            e = pl.exp(pl.row_expand_sub(s, pl.row_max(s)))
            pr = pl.row_expand_div(e, pl.row_sum(e))
            return pl.store(pr, [0, 0], p)

        @pl.function(type=pl.FunctionType.InCore)
        def attn_pv(self, p: pl.Tensor[[T, S], FP32], v: pl.Tensor[[S, HD], FP32],
                    out: pl.Out[pl.Tensor[[T, HD], FP32]]) -> pl.Tensor[[T, HD], FP32]:
            pl_ = pl.move(pl.load(p, [0, 0], [T, S], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            vr = pl.move(pl.load(v, [0, 0], [S, HD], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            return pl.store(pl.matmul(pl_, vr), [0, 0], out)

        # ---- output projection and FFN with residual adds ------------------------------------
        @pl.function(type=pl.FunctionType.InCore)
        def o_proj_residual(self, a: pl.Tensor[[T, D], FP32], w: pl.Tensor[[D, T], FP32],
                            res: pl.Tensor[[T, T], FP32], out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                            pl.move(pl.load(w, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (c,) in pl.range(T, D, T, init_values=(acc,)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wr = pl.move(pl.load(w, [k, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                cr = pl.yield_(pl.matmul_acc(c, al, wr))
            y = pl.add(pl.move(cr, target_memory=pl.Mem.Vec), pl.load(res, [0, 0], [T, T]))
            return pl.store(y, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def gate_up_silu(self, a: pl.Tensor[[T, D], FP32], wg: pl.Tensor[[D, T], FP32], wu: pl.Tensor[[D, T], FP32],
                         out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            a0 = pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            g0 = pl.matmul(a0, pl.move(pl.load(wg, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            u0 = pl.matmul(a0, pl.move(pl.load(wu, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (g, u) in pl.range(T, D, T, init_values=(g0, u0)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                g2 = pl.matmul_acc(g, al, pl.move(pl.load(wg, [k, 0], [T, T], target_memory=pl.Mem.Mat),
                                                  target_memory=pl.Mem.Right))
                u2 = pl.matmul_acc(u, al, pl.move(pl.load(wu, [k, 0], [T, T], target_memory=pl.Mem.Mat),
                                                  target_memory=pl.Mem.Right))
                gr, ur = pl.yield_(g2, u2)
            gv = pl.move(gr, target_memory=pl.Mem.Vec)
            silu = pl.div(gv, pl.add(pl.exp(pl.neg(gv)), 1.0))
            y = pl.mul(silu, pl.move(ur, target_memory=pl.Mem.Vec))
            return pl.store(y, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def down_proj_residual(self, a: pl.Tensor[[T, F], FP32], w: pl.Tensor[[F, T], FP32],
                               res: pl.Tensor[[T, T], FP32],
                               out: pl.Out[pl.Tensor[[T, T], FP32]]) -> pl.Tensor[[T, T], FP32]:
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                            pl.move(pl.load(w, [0, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right))
            for k, (c,) in pl.range(T, F, T, init_values=(acc,)):
                al = pl.move(pl.load(a, [0, k], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wr = pl.move(pl.load(w, [k, 0], [T, T], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                cr = pl.yield_(pl.matmul_acc(c, al, wr))
            y = pl.add(pl.move(cr, target_memory=pl.Mem.Vec), pl.load(res, [0, 0], [T, T]))
            return pl.store(y, [0, 0], out)

        # ---- the task graph --------------------------------------------------------------------
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[S, D], FP32], g_attn: pl.Tensor[[1, D], FP32], g_ffn: pl.Tensor[[1, D], FP32],
                 wq: pl.Tensor[[D, D], FP32], wk: pl.Tensor[[D, D], FP32], wv: pl.Tensor[[D, D], FP32],
                 wo: pl.Tensor[[D, D], FP32], wg: pl.Tensor[[D, F], FP32], wu: pl.Tensor[[D, F], FP32],
                 wd: pl.Tensor[[F, D], FP32], cos: pl.Tensor[[S, HD], FP32], sin: pl.Tensor[[S, HD], FP32],
                 out: pl.Out[pl.Tensor[[S, D], FP32]]) -> pl.Tensor[[S, D], FP32]:
            xn = pl.create_tensor([S, D], dtype=FP32)
            q = pl.create_tensor([S, D], dtype=FP32)
            k = pl.create_tensor([S, D], dtype=FP32)
            v = pl.create_tensor([S, D], dtype=FP32)
            qr = pl.create_tensor([S, D], dtype=FP32)
            kr = pl.create_tensor([S, D], dtype=FP32)
            p = pl.create_tensor([H * S, S], dtype=FP32)
            att = pl.create_tensor([S, D], dtype=FP32)
            h = pl.create_tensor([S, D], dtype=FP32)
            hn = pl.create_tensor([S, D], dtype=FP32)
            ff = pl.create_tensor([S, F], dtype=FP32)
            for i in pl.range(0, S, T):
                self.rms_norm_attn(pl.view(x, [T, D], [i, 0]), g_attn, pl.view(xn, [T, D], [i, 0]))
            for i in pl.range(0, S, T):
                for j in pl.range(0, D, T):
                    a = pl.view(xn, [T, D], [i, 0])
                    self.q_proj(a, pl.view(wq, [D, T], [0, j]), pl.view(q, [T, T], [i, j]))
                    self.k_proj(a, pl.view(wk, [D, T], [0, j]), pl.view(k, [T, T], [i, j]))
                    self.v_proj(a, pl.view(wv, [D, T], [0, j]), pl.view(v, [T, T], [i, j]))
            for i in pl.range(0, S, T):
                for hh in pl.range(H):
                    c0 = hh * HD
                    cs = pl.view(cos, [T, HD], [i, 0])
                    sn = pl.view(sin, [T, HD], [i, 0])
                    self.rope_q(pl.view(q, [T, HD], [i, c0]), cs, sn, pl.view(qr, [T, HD], [i, c0]))
                    self.rope_k(pl.view(k, [T, HD], [i, c0]), cs, sn, pl.view(kr, [T, HD], [i, c0]))
            for hh in pl.range(H):
                for i in pl.range(0, S, T):
                    pv = pl.view(p, [T, S], [hh * S + i, 0])
                    self.attn_scores(pl.view(qr, [T, HD], [i, hh * HD]), pl.view(kr, [S, HD], [0, hh * HD]), pv)
                    self.attn_pv(pv, pl.view(v, [S, HD], [0, hh * HD]), pl.view(att, [T, HD], [i, hh * HD]))
            for i in pl.range(0, S, T):
                for j in pl.range(0, D, T):
                    self.o_proj_residual(pl.view(att, [T, D], [i, 0]), pl.view(wo, [D, T], [0, j]),
                                             pl.view(x, [T, T], [i, j]), pl.view(h, [T, T], [i, j]))
            for i in pl.range(0, S, T):
                self.rms_norm_ffn(pl.view(h, [T, D], [i, 0]), g_ffn, pl.view(hn, [T, D], [i, 0]))
            for i in pl.range(0, S, T):
                for j in pl.range(0, F, T):
                    self.gate_up_silu(pl.view(hn, [T, D], [i, 0]), pl.view(wg, [D, T], [0, j]),
                                           pl.view(wu, [D, T], [0, j]), pl.view(ff, [T, T], [i, j]))
            for i in pl.range(0, S, T):
                for j in pl.range(0, D, T):
                    self.down_proj_residual(pl.view(ff, [T, F], [i, 0]), pl.view(wd, [F, T], [0, j]),
                                                  pl.view(h, [T, T], [i, j]), pl.view(out, [T, T], [i, j]))
            return out

    return LlamaBlock


def reference(x, g_attn, g_ffn, wq, wk, wv, wo, wg, wu, wd, cos, sin):
    def rms(t, g):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + EPS) * g

    def rope(t):
        t1, t2 = t[:, :HALF], t[:, HALF:]
        return t * cos + np.concatenate([-t2, t1], axis=1) * sin

    xn = rms(x, g_attn)
    q, k, v = xn @ wq, xn @ wk, xn @ wv
    att = np.zeros_like(x)
    for h in range(H):
        sl = slice(h * HD, (h + 1) * HD)
        s = rope(q[:, sl]) @ rope(k[:, sl]).T * SCALE
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        att[:, sl] = (e / e.sum(axis=-1, keepdims=True)) @ v[:, sl]
    h_ = x + att @ wo
    hn = rms(h_, g_ffn)
    gt = hn @ wg
    return h_ + (gt / (1 + np.exp(-gt)) * (hn @ wu)) @ wd


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)

    def w(*shape, s=0.05):
        return (rng.standard_normal(shape) * s).astype(np.float32)

    pos = np.arange(S)[:, None] / (10000 ** (np.arange(HALF) / HALF))[None, :]
    cos = np.concatenate([np.cos(pos)] * 2, axis=1).astype(np.float32)
    sin = np.concatenate([np.sin(pos)] * 2, axis=1).astype(np.float32)
    return [w(S, D, s=1.0), (1 + w(1, D)).astype(np.float32), (1 + w(1, D)).astype(np.float32), w(D, D), w(D, D),
            w(D, D), w(D, D), w(D, F), w(D, F), w(F, D), cos, sin]


if __name__ == "__main__":
    from pypto import ir

    prog = make_program()
    compiled = ir.compile(prog, output_dir="build_output/llama_block")
    args = inputs()
    out = compiled(*args)
    ref = reference(*args)
    err = float(np.abs(out - ref).max())
    print(f"LLaMA block: {len(prog.functions) - 1} kernels, max |error| vs NumPy = {err:.2e}")
    assert err < 1e-3, err
