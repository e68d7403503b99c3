"""PyPTO: tile-based kernel programming in Python, compiled to native code.

    import pypto.language as pl
    from pypto import ir
"""

from __future__ import annotations

from . import errors
from . import ops as _ops  # noqa: F401  (registers every operator)
from .config import config
from .errors import Error
from .ir.dtype import DataType

__version__ = "0.1.0"


def __getattr__(name: str):
    # the tensor-level frontend's names (pypto.jit, pypto.Tensor, pypto.DT_FP32, pypto.loop, the ops),
    # imported on first use so `import pypto.language` stays light
    from .frontend.api import NAMES

    try:
        return NAMES[name]
    except KeyError:
        if name == "frontend":
            import importlib

            return importlib.import_module("pypto.frontend")
        raise AttributeError(f"module 'pypto' has no attribute {name!r}") from None


__all__ = ["DataType", "Error", "__version__", "config", "errors"]
