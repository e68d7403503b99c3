"""Mistakes in the task language are refused at parse time, naming the problem and the line."""

from __future__ import annotations

import pytest

import pypto.language as pl

HEAD = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], g: pl.Tensor[[16, 16], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
'''


def parse(body: str):
    return pl.parse_program(HEAD + "".join("        " + line + "\n" for line in body.strip().splitlines()) +
                            "        return out\n")


@pytest.mark.parametrize("body, err, msg", [
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):\n    out = self.k(x, out)", pl.ParserTypeError,
     "deps= entries are task ids"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=3):\n    out = self.k(x, out)", pl.ParserTypeError,
     "deps= takes a list of task ids"),
    ("with pl.spmd(0):\n    out = self.k(x, out)", pl.ParserSyntaxError, "core_num must be > 0"),
    ("with pl.spmd(2, deps=[None]):\n    out = self.k(x, out)", pl.ParserSyntaxError, "capture form"),
    ("with pl.spmd(2, colour=1):\n    out = self.k(x, out)", pl.ParserSyntaxError, "unexpected keyword 'colour'"),
    ("out, t = pl.submit(self.k, x, out, predicate=(g[0, 0] + 1))", pl.ParserSyntaxError,
     "predicate= must be `tensor"),
    ("out, t = pl.submit(self.k, x, out, predicate=(g[0] > 0))", pl.ParserTypeError, "indexes a rank-2 tensor"),
    ("out, t = pl.submit(self.k, x, out, core_num=2)", pl.ParserSyntaxError, "unexpected keyword 'core_num'"),
    ("out, t = pl.submit(x, out)", pl.ParserTypeError, "must be self.<kernel>"),
    ("with pl.manual_scope():\n    with pl.manual_scope():\n        out = self.k(x, out)", pl.ParserSyntaxError,
     "do not nest"),
    ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[3]):\n    out = self.k(x, out)", pl.ParserSyntaxError,
     "optimizations= takes pl.split"),
    ("for i in pl.pipeline(4, stage=0):\n    out = self.k(x, out)", pl.ParserSyntaxError, "stage=F"),
    ("with pl.cluster() as c:\n    out = self.k(x, out)", pl.ParserSyntaxError, "only pl.at and pl.spmd name a task"),
    ("t = pl.system.task_dummy([None])", pl.ParserSyntaxError, "takes deps="),
])
def test_task_language_errors_name_the_line(body, err, msg):
    with pytest.raises(err, match=msg) as e:
        parse(body)
    assert e.value.span is not None and e.value.span.begin_line >= 13  # the body starts on line 13


def test_pl_submit_needs_a_program():
    src = '''
import pypto.language as pl

@pl.function
def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    y, t = pl.submit(x)
    return y
'''
    with pytest.raises(pl.ParserSyntaxError, match="only in a @pl.program"):
        pl.parse(src)


def test_accepted_hints_and_levels_do_not_change_the_program():
    prog = parse("with pl.at(pl.Level.HOST, pl.Role.Orchestrator, optimizations=[pl.split(pl.SplitMode.UP_DOWN), "
                 "pl.cross_core_slot(slot_num=4)], dumps=[x], allow_early_resolve=True, windowize=True) as t:\n"
                 "    out = self.k(x, out)\n"
                 "with pl.scope(mode=pl.ScopeMode.AUTO):\n"
                 "    out = self.k(pl.dump_tag(x), out)")
    assert prog is not None


def test_split_with_slot_num_is_deprecated():
    with pytest.warns(DeprecationWarning, match="cross_core_slot"):
        pl.split(pl.SplitMode.NONE, slot_num=2)
