"""The four graph levels of a tensor-level kernel (tensor, tile, block, execution) as printed IR
and JSON, `compile_stage` stopping after an earlier stage, and the dumps of a compiled kernel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pypto
from pypto.config import config

M = pypto.frontend.dynamic("M")


def _kernel(stage=None):
    opts = {"host_options": {"compile_stage": stage}} if stage is not None else {}

    def scaled_softmax(x: pypto.Tensor((M, 64), pypto.DT_FP32), out: pypto.Tensor((M, 64), pypto.DT_FP32)):
        for i in pypto.loop(0, pypto.ceildiv(M, 16)):
            v = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, M - i * 16), 64])
            out[i * 16:, :] = pypto.softmax(v * 2.0, dim=-1)  # <- softmax line

    return pypto.frontend.jit(scaled_softmax, runtime_options={"platform": "interp"}, **opts)


@pytest.mark.parametrize("stage, levels", [(pypto.CompStage.TENSOR_GRAPH, ["tensor"]),
                                           (pypto.CompStage.TILE_GRAPH, ["tensor", "tile"])])
def test_compile_stage_stops_and_writes_the_graphs(stage, levels, capsys):
    x = np.zeros((37, 64), np.float32)
    out = np.full_like(x, 7)
    assert _kernel(stage)(x, out) is None
    assert (out == 7).all()  # nothing ran
    where = Path(config.output_root) / f"scaled_softmax_stage{int(stage)}"
    assert str(where) in capsys.readouterr().err
    for level in levels:
        text = (where / f"{level}_graph.py").read_text()
        graph = json.loads((where / f"{level}_graph.json").read_text())
        assert graph["level"] == level and graph["functions"]
        ops = [n["op"] for f in graph["functions"] for n in f["nodes"]]
        if level == "tensor":
            assert "pl.tensor.row_max(" in text and "tensor.row_max" in ops
            node = next(n for f in graph["functions"] for n in f["nodes"] if n["op"] == "tensor.row_max")
            assert node["source"].endswith(f"test_graphs.py:{_line('# <- softmax line')}")
            assert node["scope"] and node["scope"][0].startswith("for ")
        else:
            assert "block.row_max" in ops and "block.load" in ops  # expanded into tiles


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, ln in enumerate(f, start=1) if marker in ln and "def _line" not in ln
                    and "endswith" not in ln)


@pytest.mark.native
def test_dump_graphs_of_a_compiled_kernel(tmp_path):
    kernel = pypto.frontend.jit(_kernel().fn)
    x = np.random.default_rng(0).standard_normal((37, 64)).astype(np.float32)
    paths = kernel.dump_graphs(x, np.zeros_like(x), out_dir=tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"{lv}_graph.{ext}" for lv in pypto.frontend.graphs.LEVELS
                                                   for ext in ("py", "json"))
    block = json.loads((tmp_path / "block_graph.json").read_text())
    assert len(block["functions"]) == 1 and block["functions"][0]["type"] == "InCore"  # one fused kernel
    execution = json.loads((tmp_path / "execution_graph.json").read_text())
    calls = [n for f in execution["functions"] for n in f["nodes"] if n["op"].startswith("scaled_softmax")]
    assert calls and calls[0]["scope"][0].startswith("for ")  # one task per loop iteration


def test_semantic_labels_appear_in_the_tensor_graph():
    def labelled(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        a = pypto.exp(x)
        pypto.set_semantic_label("attn")
        b = a * 2.0
        pypto.set_semantic_label("")
        return b + 1.0

    try:
        k = pypto.frontend.jit(labelled, runtime_options={"platform": "interp"},
                               host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
        assert k(np.zeros((16, 64), np.float32)) is None
    finally:
        pypto.reset_options()
    graph = json.loads((Path(config.output_root) / "labelled_stage1" / "tensor_graph.json").read_text())
    labels = {n["op"]: n["label"] for f in graph["functions"] for n in f["nodes"]}
    assert labels == {"tensor.exp": None, "tensor.mul_scalar": "attn", "tensor.add_scalar": None}
