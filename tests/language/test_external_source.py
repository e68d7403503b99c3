"""`@pl.function(external_source=path)` (a hand-written device kernel, pypto/language/external.py): refused
where it is declared, naming the function, the file and why (docs/cross_core.md)."""

from __future__ import annotations

import pytest

import pypto.language as pl


def test_an_external_device_kernel_is_refused_where_declared(tmp_path):
    from pypto.language.external import ExternalSourceError

    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nextern "C" __global__ __aicore__ void K(__gm__ float* o) {}\n')
    with pytest.raises(NotImplementedError, match=r"is an Ascend device kernel \(__aicore__, __gm__"
                                                  r".*cannot build or call") as e:
        @pl.function(type=pl.FunctionType.AIV, external_source=src)
        def K(out: pl.InOut[pl.Tensor[[80], pl.FP32]]) -> pl.Tensor[[80], pl.FP32]: ...
    assert isinstance(e.value, ExternalSourceError) and isinstance(e.value, pl.ParserError) and "test_external_source.py" in str(e.value)
