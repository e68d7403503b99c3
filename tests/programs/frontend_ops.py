"""The op tables of the tensor-level frontend tests (tests/frontend/test_ops_interp.py runs each row
on the interpreter, test_ops_cpu.py all of them in one kernel on the CPU backend)."""

from __future__ import annotations

import numpy as np

import pypto

M = pypto.frontend.dynamic("M")
ROWS = 37  # not a multiple of any row block


def inputs(rows: int = ROWS, cols: int = 64):
    rng = np.random.default_rng(rows * 7 + cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.standard_normal((rows, cols)).astype(np.float32)
    pos = (np.abs(x) + 0.25).astype(np.float32)
    row = rng.standard_normal((rows, 1)).astype(np.float32)
    return x, y, pos, row


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY = [
    ("exp", pypto.exp, np.exp, "x"),
    ("log", pypto.log, np.log, "pos"),
    ("sqrt", pypto.sqrt, np.sqrt, "pos"),
    ("rsqrt", pypto.rsqrt, lambda v: 1 / np.sqrt(v), "pos"),
    ("reciprocal", pypto.reciprocal, lambda v: 1 / v, "pos"),
    ("neg", pypto.neg, np.negative, "x"),
    ("abs", pypto.abs, np.abs, "x"),
    ("relu", pypto.relu, lambda v: np.maximum(v, 0), "x"),
    ("sigmoid", pypto.sigmoid, _sigmoid, "x"),
    ("softplus", pypto.softplus, lambda v: np.logaddexp(0, v), "x"),
    ("clip", lambda t: pypto.clip(t, -0.5, 0.5), lambda v: np.clip(v, -0.5, 0.5), "x"),
    ("scalar_left_sub", lambda t: 2.0 - t, lambda v: 2.0 - v, "x"),
    ("scalar_left_div", lambda t: 2.0 / t, lambda v: 2.0 / v, "pos"),
    ("scalar_mul_add", lambda t: 3 * t + 1.5, lambda v: 3 * v + 1.5, "x"),
    ("softmax", lambda t: pypto.softmax(t, -1), lambda v: np.exp(v - v.max(-1, keepdims=True))
     / np.exp(v - v.max(-1, keepdims=True)).sum(-1, keepdims=True), "x"),
    ("rms_norm", pypto.rms_norm, lambda v: v / np.sqrt((v * v).mean(-1, keepdims=True) + 1e-6), "x"),
    ("layer_norm", pypto.layer_norm, lambda v: (v - v.mean(-1, keepdims=True))
     / np.sqrt(v.var(-1, keepdims=True) + 1e-5), "x"),
    ("neg_op", lambda t: -t, np.negative, "x"),
    ("tanh", pypto.tanh, np.tanh, "x"), ("sin", pypto.sin, np.sin, "x"), ("cos", pypto.cos, np.cos, "x"),
    ("exp2", pypto.exp2, np.exp2, "x"), ("expm1", pypto.expm1, np.expm1, "x"), ("log2", pypto.log2, np.log2, "pos"),
    ("log10", pypto.log10, np.log10, "pos"), ("log1p", pypto.log1p, np.log1p, "pos"),
    ("floor", pypto.floor, np.floor, "x"), ("ceil", pypto.ceil, np.ceil, "x"), ("trunc", pypto.trunc, np.trunc, "x"),
    ("round", pypto.round, np.rint, "x"), ("round2", lambda t: pypto.round(t * 3.0, 2), lambda v: np.round(v * 3, 2),
                                           "x"),
    ("max_scalar", lambda t: pypto.maximum(t, 0.25), lambda v: np.maximum(v, 0.25), "x"),
]


BINARY = [
    ("add", pypto.add, np.add), ("sub", pypto.sub, np.subtract), ("mul", pypto.mul, np.multiply),
    ("div", pypto.div, np.divide), ("maximum", pypto.maximum, np.maximum), ("minimum", pypto.minimum, np.minimum),
    ("op_add", lambda a, b: a + b, np.add), ("op_sub", lambda a, b: a - b, np.subtract),
    ("op_mul", lambda a, b: a * b, np.multiply), ("op_div", lambda a, b: a / b, np.divide),
    ("chain", lambda a, b: pypto.exp(a - b) * 0.5 + a, lambda a, b: np.exp(a - b) * 0.5 + a),
]
