#!/usr/bin/env python3
"""Numeric check of the public Qwen3-32B decode layer example (`examples/models/qwen3_jit`), run
unchanged, against a torch golden written here from what its kernels compute.

The example's own `__main__` only lowers the layer (its reference lives in another repository),
so tools/run_public_examples.py runs this as an extra entry: it imports the example's
`qwen3_decode` from the extracted examples (on PYTHONPATH), runs it on random data with
`RunConfig()`, and compares the three tensors it writes (`out`, and the RoPE-rotated rows of
`k_cache` / `v_cache`) with the golden. The layer's attention output is a fresh tensor the example
does not fill yet (zero-filled here), so the golden's output projection adds nothing.
Prints one line per tensor and exits 1 on a mismatch.
"""

from __future__ import annotations

import sys
import time

import torch
from examples.models.qwen3_jit import config as C  # (from the extracted public examples)
from examples.models.qwen3_jit.qwen3_decode import qwen3_decode

from pypto.runtime import RunConfig

BF = torch.bfloat16


def _rms(x: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + C.EPS) * gamma


def golden(hidden, w_in, wk, wv, seq_lens, cos, sin, k_cache, v_cache, w_post, w_gate, w_up, w_down):
    normed = _rms(hidden.float(), w_in).to(BF)
    k, v = normed.float() @ wk.float(), normed.float() @ wv.float()
    k_ref, v_ref = k_cache.clone(), v_cache.clone()
    half, dim = C.HALF_DIM, C.HEAD_DIM
    for b in range(C.BATCH):
        pos = int(seq_lens[b]) - 1
        for h in range(C.NUM_KV_HEADS):
            row = (b * C.NUM_KV_HEADS + h) * C.MAX_SEQ + pos
            lo, hi = k[b, h * dim:h * dim + half], k[b, h * dim + half:(h + 1) * dim]
            k_ref[row, :half] = (lo * cos[pos, :half] - hi * sin[pos, :half]).to(BF)
            k_ref[row, half:] = (hi * cos[pos, half:] + lo * sin[pos, half:]).to(BF)
            v_ref[row] = v[b, h * dim:(h + 1) * dim].to(BF)
    resid1 = hidden.float()  # + attn_out @ wo, with attn_out zero
    post = _rms(resid1, w_post).to(BF)
    gate, up = post.float() @ w_gate.float(), post.float() @ w_up.float()
    mlp = (gate * torch.sigmoid(gate) * up).to(BF)
    return (mlp.float() @ w_down.float() + resid1).to(BF), k_ref, v_ref


def main() -> int:
    torch.manual_seed(0)

    def weight(*shape: int) -> torch.Tensor:
        return (torch.randn(*shape) * 0.02).to(BF)

    hidden = torch.randn(C.BATCH, C.HIDDEN).to(BF)
    w_in = 1 + 0.1 * torch.randn(1, C.HIDDEN)
    wq, wk, wv = weight(C.HIDDEN, C.HIDDEN), weight(C.HIDDEN, C.KV_HIDDEN), weight(C.HIDDEN, C.KV_HIDDEN)
    seq_lens = torch.randint(1, C.MAX_SEQ, (C.BATCH,), dtype=torch.int32)
    angle = torch.randn(C.MAX_SEQ, C.HEAD_DIM)
    cos, sin = torch.cos(angle), torch.sin(angle)
    k_cache = torch.zeros(C.CACHE_ROWS, C.HEAD_DIM, dtype=BF)
    v_cache = torch.zeros_like(k_cache)
    wo = weight(C.HIDDEN, C.HIDDEN)
    w_post = 1 + 0.1 * torch.randn(1, C.HIDDEN)
    w_gate, w_up, w_down = weight(C.HIDDEN, C.INTERMEDIATE), weight(C.HIDDEN, C.INTERMEDIATE), weight(C.INTERMEDIATE, C.HIDDEN)
    out = torch.zeros(C.BATCH, C.HIDDEN, dtype=BF)
    want = golden(hidden, w_in, wk, wv, seq_lens, cos, sin, k_cache, v_cache, w_post, w_gate, w_up, w_down)

    start = time.monotonic()
    qwen3_decode(hidden, w_in, wq, wk, wv, seq_lens, cos, sin, k_cache, v_cache, wo, w_post, w_gate, w_up, w_down,
                 out, config=RunConfig())
    print(f"qwen3_decode ran in {time.monotonic() - start:.1f}s")
    ok = True
    for name, got, ref in zip(("out", "k_cache", "v_cache"), (out, k_cache, v_cache), want):
        diff = (got.float() - ref.float()).abs().max().item()
        good = torch.allclose(got.float(), ref.float(), rtol=2e-2, atol=2e-2)
        ok &= good
        print(f"{name}: max abs diff {diff:.4g} ({'matches' if good else 'MISMATCH'})")
    print("OK: matches the golden" if ok else "FAILED: mismatch")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
