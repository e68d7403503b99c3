"""Fuzz: mutated `pl` sources either parse or raise a ParserError -- never a bare Python exception."""

from __future__ import annotations

import io
import tokenize

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir

M = pl.dynamic("M")  # dynamic dims the texts may use
N = pl.dynamic("N")

SEEDS = []


def _seed_texts():
    if SEEDS:
        return SEEDS

    @pl.program
    class A:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            for i, (acc,) in pl.range(n, init_values=(t,)):
                if i < 2:
                    r = pl.yield_(pl.add(acc, t))
                else:
                    r = pl.yield_(pl.exp(acc))
                o = pl.yield_(r)
            return pl.store(pl.row_expand_sub(o, pl.row_max(o)), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            c = pl.create_tensor([64, 64], dtype=pl.FP32)
            for (x,) in pl.while_(init_values=(0,)):
                pl.cond(x < 3)
                y = pl.yield_(x + 1)
            return self.k(a, y, c)

    SEEDS.append(ir.python_print(A))
    return SEEDS


def _tokens(text):
    return [t for t in tokenize.generate_tokens(io.StringIO(text).readline)]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(_seed_texts()))
    toks = _tokens(text)
    lines = text.splitlines(keepends=True)
    kind = draw(st.sampled_from(["drop_token", "dup_token", "swap_tokens", "drop_line", "dup_line", "replace_token"]))
    if kind in ("drop_line", "dup_line"):
        i = draw(st.integers(0, len(lines) - 1))
        lines = lines[:i] + ([lines[i]] * 2 if kind == "dup_line" else []) + lines[i + 1:]
        return "".join(lines)
    idx = [i for i, t in enumerate(toks) if t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP, tokenize.STRING)]
    i = draw(st.sampled_from(idx))
    t = toks[i]
    row, col = t.start
    line = lines[row - 1]
    if t.start[0] != t.end[0]:
        return text
    new = {"drop_token": "", "dup_token": t.string * 2, "swap_tokens": t.string[::-1],
           "replace_token": draw(st.sampled_from(["x", "0", "pl", "(", ")", "[", "]", ",", ":", "1.5", "pl.FP16",
                                                  "pl.block", "self", "None", "'s'", "-", "*", "pl.yield_"]))}[kind]
    lines[row - 1] = line[:col] + new + line[t.end[1]:]
    return "".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated())
def test_mutated_sources_give_parser_errors_only(text):
    try:
        pl.parse(text)
    except pl.ParserError as e:
        assert str(e).startswith("Error: ")
