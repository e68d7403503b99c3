"""Model blocks written at the tensor level (tests/programs/tensor_blocks.py) on the CPU backend,
against PyTorch: LayerNorm, RMSNorm, a SwiGLU feed-forward and multi-head attention."""

from __future__ import annotations

import numpy as np
import pytest

from tests.programs import tensor_blocks as B

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.native
F = torch.nn.functional


def _rand(*shape, scale=1.0, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def test_layer_norm_and_rms_norm():
    n, c = 96, 256
    x, g, b = _rand(n, c), 1 + _rand(1, c, scale=0.1, seed=1), _rand(1, c, scale=0.1, seed=2)
    y = np.zeros_like(x)
    B.layer_norm(n, c, 32)(x, g, b, y)
    want = F.layer_norm(torch.from_numpy(x), (c,), torch.from_numpy(g[0]), torch.from_numpy(b[0]), 1e-5)
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-5, atol=1e-5)
    B.rms_norm(n, c, 32)(x, g, y)
    tx = torch.from_numpy(x)
    want = tx * torch.rsqrt(tx.pow(2).mean(-1, keepdim=True) + 1e-6) * torch.from_numpy(g[0])
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-5, atol=1e-5)


def test_swiglu_ffn():
    t, h, f = 128, 128, 256
    x, w1, w3, w2 = _rand(t, h), _rand(h, f, scale=0.1, seed=1), _rand(h, f, scale=0.1, seed=2), \
        _rand(f, h, scale=0.1, seed=3)
    out = np.zeros((t, h), np.float32)
    B.swiglu_ffn(t, h, f, tb=64, fb=128, kb=64, nb=64)(x, w1, w3, w2, out)  # K split in 2 and 4 pieces
    tx = torch.from_numpy(x)
    want = (F.silu(tx @ torch.from_numpy(w1)) * (tx @ torch.from_numpy(w3))) @ torch.from_numpy(w2)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-4)


def test_attention():
    heads, s, d = 2, 128, 64
    q, k, v = (_rand(heads * s, d, seed=i) for i in range(3))
    o = np.zeros_like(q)
    B.attention(heads, s, d, qb=64)(q, k, v, o)
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a).view(heads, s, d) for a in (q, k, v)))
    np.testing.assert_allclose(o, want.reshape(heads * s, d).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_flash_attention_with_a_run_time_branch(platform):
    s, d = 256, 64
    q, k, v = (_rand(s, d, seed=10 + i) for i in range(3))
    o = np.zeros_like(q)
    B.flash_attention(s, d, platform=platform)(q, k, v, o)
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a)[None] for a in (q, k, v)))[0]
    np.testing.assert_allclose(o, want.numpy(), rtol=1e-4, atol=1e-5)
