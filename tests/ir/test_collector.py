"""The cyclic collector is paused while IR is built and always turned back on, errors included."""

from __future__ import annotations

import gc

import pytest

import pypto.language as pl
from pypto.ir.collector import paused_collector
from pypto.language.errors import ParserError


def test_paused_inside_resumed_after():
    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
        with paused_collector():  # nested phases leave it to the outermost one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_resumed_after_an_error():
    with pytest.raises(ParserError):
        pl.parse("@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n    return y\n")
    assert gc.isenabled()


def test_left_off_when_the_application_turned_it_off():
    gc.disable()
    try:
        with paused_collector():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
