"""`pypto.pypto_core`: the public PyPTO's native-extension module path, for code that imports from
it (`from pypto.pypto_core.passes import MemoryPlanner`, `from pypto.pypto_core import ir`). This
package has no native core: the names resolve to its Python modules (`ir` is `pypto.ir`, `passes`
adds the public enums to `pypto.passes`, `DataType` is `pypto.ir.DataType`)."""

from __future__ import annotations

from pypto import ir
from pypto.ir.dtype import DataType

from . import passes

__all__ = ["DataType", "ir", "passes"]
