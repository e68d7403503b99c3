"""Shared test helpers."""

from __future__ import annotations

import pypto.language as pl
from pypto import ir


def roundtrip(node):
    """print -> parse -> print is a fixed point and the reparsed IR is structurally equal."""
    text = ir.python_print(node)
    again = pl.parse(text)
    text2 = ir.python_print(again)
    assert text2 == text, f"printer/parser round trip changed the text:\n{text}\n---\n{text2}"
    ir.assert_structural_equal(again, node, enable_auto_mapping=True)
    return again
