"""What the compiler needs to know about an op beyond its signature and type rule: its shape class
and a few typed traits. Passes, code generators and backends ask these instead of keeping lists
of op names; the family helpers (`elementwise.binary`, `unary`, the reductions, ...) set them, so a
one-line op definition stays one line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pypto.errors import InvalidType


class ShapeClass(enum.Enum):
    """How an op's result elements relate to its operands' (what tiling, fusion and the
    interpreter's operand slicing go by)."""

    ELEMENTWISE = "elementwise"  # out[i, j] from operands' [i, j] (NumPy broadcasting of size-1 axes)
    ROW_REDUCE = "row_reduce"  # [..., R, C] -> [..., R, 1]
    COL_REDUCE = "col_reduce"  # [R, C] -> [1, C]
    AXIS_REDUCE = "axis_reduce"  # over the `axis` attribute (or everything)
    ROW_EXPAND = "row_expand"  # out[i, j] = f(a[i, j], v[i, 0])
    COL_EXPAND = "col_expand"  # out[i, j] = f(a[i, j], v[0, j])
    ROW_WISE = "row_wise"  # out[i, :] = f(a[i, :]): each result row from the same operand row (scans, sorts)
    MATMUL = "matmul"  # out[m, n] = sum_k lhs[m, k] * rhs[k, n] (+ acc / bias)
    WINDOW = "window"  # moves a window between a tensor and a tile, or views a part of one
    LAYOUT = "layout"  # rearranges elements (reshape, transpose, concat, move between spaces)
    FILL = "fill"  # makes a value from a shape and a scalar (create, full, expands)
    ELEMENT = "element"  # reads or writes one element, or a size
    SYNC = "sync"  # orders pipes; computes nothing
    ALLOC = "alloc"  # declares a buffer; computes nothing


@dataclass(frozen=True)
class Traits:
    """Typed facts about an op. `shape` is required; the flags default to the cautious answer."""

    shape: ShapeClass
    # f(a, b) == f(b, a)
    commutative: bool = False
    # the result may be written into the buffer of a non-scratch operand that dies at the op (each
    # element is read before its own position is written)
    inplace_safe: bool = False
    # the task program does it itself (creates, views, reshapes a tensor, reads or writes an element,
    # asks a size): outside kernels it is never wrapped into one
    task_level: bool = False
    # the result can be operand 0's storage seen differently (a view, a reshape): when memory
    # planning gives both the same buffer, no instruction runs
    alias: bool = False
    # row i of the result depends only on row i of the operands (a kernel can be tiled over rows)
    row_local: bool = False

    def __post_init__(self):
        if not isinstance(self.shape, ShapeClass):
            raise InvalidType(f"Traits.shape must be a ShapeClass, got {self.shape!r}")


def elementwise(commutative: bool = False) -> Traits:
    return Traits(ShapeClass.ELEMENTWISE, commutative=commutative, inplace_safe=True, row_local=True)


ROW_REDUCE = Traits(ShapeClass.ROW_REDUCE, row_local=True)
COL_REDUCE = Traits(ShapeClass.COL_REDUCE)
AXIS_REDUCE = Traits(ShapeClass.AXIS_REDUCE)
ROW_EXPAND = Traits(ShapeClass.ROW_EXPAND, inplace_safe=True, row_local=True)
ROW_WISE = Traits(ShapeClass.ROW_WISE, row_local=True)
COL_EXPAND = Traits(ShapeClass.COL_EXPAND, inplace_safe=True, row_local=True)
MATMUL = Traits(ShapeClass.MATMUL)
WINDOW = Traits(ShapeClass.WINDOW)
LAYOUT = Traits(ShapeClass.LAYOUT)
FILL = Traits(ShapeClass.FILL)
ELEMENT = Traits(ShapeClass.ELEMENT)
SYNC = Traits(ShapeClass.SYNC)
ALLOC = Traits(ShapeClass.ALLOC)

__all__ = ["ALLOC", "AXIS_REDUCE", "COL_EXPAND", "COL_REDUCE", "ELEMENT", "FILL", "LAYOUT", "MATMUL", "ROW_EXPAND",
           "ROW_REDUCE", "ROW_WISE", "SYNC", "WINDOW", "ShapeClass", "Traits", "elementwise"]
