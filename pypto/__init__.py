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

__all__ = ["DataType", "Error", "__version__", "config", "errors"]
