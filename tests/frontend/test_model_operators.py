"""Operators of the public model directories (reference §6), written at the tensor level from
their math: the GLM-4.5 router gate (`logits = h @ W^T`, dynamic token count, cube tiles over K)
and the GLM-4.5 experts selector (sigmoid scores, top-k with a score bias, gather of the unbiased
scores, renormalise), both against torch on both backends."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto

torch = pytest.importorskip("torch")

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]
TOKENS = pypto.frontend.dynamic("TOKENS")


def glm_gate(platform: str, hidden: int, experts: int):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def gate(h: pypto.Tensor((TOKENS, hidden), pypto.DT_FP32), w: pypto.Tensor((experts, hidden), pypto.DT_FP32),
             logits: pypto.Tensor((TOKENS, experts), pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [128, 128], [experts, experts])
        logits[:] = pypto.matmul(h, w, b_trans=True)

    return gate


def glm_select_experts(platform: str, experts: int, top_k: int):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def select_experts(logits: pypto.Tensor((TOKENS, experts), pypto.DT_FP32),
                       bias: pypto.Tensor((experts,), pypto.DT_BF16),
                       weights: pypto.Tensor((TOKENS, top_k), pypto.DT_FP32),
                       ids: pypto.Tensor((TOKENS, top_k), pypto.DT_INT32)):
        b = pypto.unsqueeze(pypto.cast(bias, pypto.DT_FP32), 0)
        for t in pypto.loop(0, logits.shape[0], name="tokens", idx_name="t"):
            scores = pypto.sigmoid(logits[t:t + 1, :])
            _, top = pypto.topk(scores + b, top_k, -1)
            chosen = pypto.gather(scores, -1, top)
            weights[t:t + 1, :] = chosen / pypto.sum(chosen, -1, keepdim=True)
            ids[t:t + 1, :] = top

    return select_experts


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("tokens", [32, 100])  # (100: a ragged last block of 64 rows)
def test_glm_gate(platform, tokens):
    rng = np.random.default_rng(tokens)
    h = rng.standard_normal((tokens, 512)).astype(np.float32)
    w = rng.standard_normal((160, 512)).astype(np.float32)
    out = np.zeros((tokens, 160), np.float32)
    glm_gate(platform, 512, 160)(h, w, out)
    np.testing.assert_allclose(out, (torch.from_numpy(h) @ torch.from_numpy(w).T).numpy(), rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("tokens", [32, 37])
def test_glm_select_experts(platform, tokens):
    rng = np.random.default_rng(tokens)
    logits = rng.standard_normal((tokens, 160)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(160)).astype(ml_dtypes.bfloat16)
    weights, ids = np.zeros((tokens, 8), np.float32), np.zeros((tokens, 8), np.int32)
    glm_select_experts(platform, 160, 8)(logits, bias, weights, ids)
    scores = torch.sigmoid(torch.from_numpy(logits))
    _, want_ids = torch.topk(scores + torch.from_numpy(bias.astype(np.float32)), 8, -1)
    want = torch.gather(scores, -1, want_ids)
    want = want / want.sum(-1, keepdim=True)
    np.testing.assert_array_equal(np.sort(ids, -1), np.sort(want_ids.numpy(), -1))  # (ties aside, as sets)
    np.testing.assert_allclose(np.sort(weights, -1), np.sort(want.numpy(), -1), rtol=1e-5, atol=1e-6)
