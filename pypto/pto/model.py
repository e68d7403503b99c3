"""The PTO module model: what `.pto` files hold, as objects.

A module is MLIR-shaped text: `module attributes {...} { func.func @name(...) { ops } }`. Kernels use
PTO tile instructions in destination-passing style (`pto.tadd ins(...) outs(...)`), tile buffers
allocated at addresses (`pto.alloc_tile addr = %c0 : !pto.tile_buf<...>`), tensor views and
partitions for DDR access, and `arith` / `scf` for scalars and control flow. The orchestration
(task program) uses the same syntax with a few task-level ops (`pto.alloc_tensor`,
`pto.tensor_slice`, `pto.submit`, `pto.tensor_read`, ...).

This package knows nothing of the IR: the code generator builds these objects, the printer
writes them, the parser reads them back, and backends consume them. See docs/pto_format.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.errors import InvalidValue

# ---------------------------------------------------------------------------------------------
# types


@dataclass(frozen=True)
class ScalarT:
    """`index`, `i1`, `i8`, `i16`, `i32`, `i64`, `ui8`..`ui64`, `f16`, `bf16`, `f32`, `f8e4m3`, ..."""

    name: str


@dataclass(frozen=True)
class PtrT:
    """`!pto.ptr<f32>`: a kernel's tensor argument (base address; shape/strides come as index args)."""

    elem: str


@dataclass(frozen=True)
class TensorViewT:
    """`!pto.tensor_view<?x?xf32>`: a DDR tensor seen through shape and strides."""

    rank: int
    elem: str


@dataclass(frozen=True)
class PartitionViewT:
    """`!pto.partition_tensor_view<64x?xf32>`: a window of a tensor view (None = dynamic extent)."""

    shape: tuple[int | None, ...]
    elem: str


@dataclass(frozen=True)
class TileBufT:
    """`!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=64, v_col=?, blayout=row_major,
    slayout=none_box, fractal=512, pad=0>`: an on-chip tile (None valid extent = dynamic)."""

    loc: str  # vec, mat, left, right, acc, bias
    dtype: str
    rows: int
    cols: int
    v_row: int | None
    v_col: int | None
    blayout: str = "row_major"
    slayout: str = "none_box"
    fractal: int = 512
    pad: int = 0


@dataclass(frozen=True)
class TensorT:
    """`!pto.tensor<64x?xf32>`: a runtime tensor in the orchestration (None = dynamic extent)."""

    shape: tuple[int | None, ...]
    elem: str


PtoType = ScalarT | PtrT | TensorViewT | PartitionViewT | TileBufT | TensorT

INDEX = ScalarT("index")
I1 = ScalarT("i1")
I64 = ScalarT("i64")  # a task id (pto.submit result)


# ---------------------------------------------------------------------------------------------
# values and operations


@dataclass(eq=False)
class Value:
    """An SSA value. Names are printed as `%name`; identity is the object."""

    name: str
    type: PtoType

    def __repr__(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class Sym:
    """A symbol reference attribute `@name` (a kernel in `pto.submit`)."""

    name: str


@dataclass(frozen=True)
class EnumAttr:
    """An opaque enum attribute, printed `#pto<cmp lt>` / `#pto.layout<nd>` (dialect, kind, value)."""

    dialect: str  # "pto" or "pto.layout", "pto.kernel_kind", ...
    value: str  # "cmp lt", "round_mode ROUND", "nd", "vector"


Attr = Any  # int | float | bool | str | Sym | EnumAttr | PtoType | list[Attr]


@dataclass(eq=False)
class Block:
    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)


@dataclass(eq=False)
class Op:
    """One operation.

    `operands` are the plain operands (arith, scf, views); `ins` / `outs` are the destination-passing
    operand groups of PTO instructions; `regions` hold nested blocks (scf.for body, scf.if then/else,
    scf.while before/after). How each op's syntax maps onto these fields is in docs/pto_format.md
    ("Ops as objects"); `operand_groups` names the parts of `operands`.

    `loc` is the `(line, col)` the parser read the op at (None for ops built in code); it plays no
    part in equivalence.
    """

    name: str
    results: list[Value] = field(default_factory=list)
    operands: list[Value] = field(default_factory=list)
    ins: list[Value] = field(default_factory=list)
    outs: list[Value] = field(default_factory=list)
    attrs: dict[str, Attr] = field(default_factory=dict)
    regions: list[Block] = field(default_factory=list)
    loc: tuple[int, int] | None = field(default=None, repr=False)

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, self.name
        return self.results[0]

    def __repr__(self) -> str:
        return f"Op({self.name})"


@dataclass(eq=False)
class Func:
    name: str
    args: list[Value]
    body: Block
    results: list[PtoType] = field(default_factory=list)
    attrs: dict[str, Attr] = field(default_factory=dict)
    loc: tuple[int, int] | None = field(default=None, repr=False)  # where the parser read `func.func`

    @property
    def kind(self) -> str:
        """"kernel" or "orchestration" (from the `pto.kind` attribute)."""
        k = self.attrs.get("pto.kind")
        return k.value if isinstance(k, EnumAttr) else "kernel"


@dataclass(eq=False)
class Module:
    funcs: list[Func]
    attrs: dict[str, Attr] = field(default_factory=dict)

    def get(self, name: str) -> Func | None:
        for f in self.funcs:
            if f.name == name:
                return f
        return None


def operand_groups(op: Op) -> dict[str, list[Value]]:
    """The named parts of `op.operands` for ops whose syntax has several operand lists.

    `scf.for`: lb, ub, step, inits; `pto.make_tensor_view`: source, shape, strides;
    `pto.partition_view` / `pto.tensor_slice`: source, offsets, sizes; `pto.alloc_tile`: addr,
    valid_row, valid_col (present as the type says: `valid_row` iff `v_row` is dynamic);
    `pto.tensor_reshape`: source, shape; `pto.alloc_tensor`: shape; `pto.tgetval` /
    `pto.tensor_read`: source, indices; `pto.tensor_write`: value, dest, indices; `scf.condition`:
    cond, args. Any other op: {"operands": op.operands}. Raises ValueError when the operand count does
    not fit the op (a malformed op built in code).
    """
    o, n = op.operands, op.name
    if n == "scf.for":
        _need(op, len(o) >= 3, "lb, ub, step and inits")
        return {"lb": o[:1], "ub": o[1:2], "step": o[2:3], "inits": o[3:]}
    if n in ("pto.make_tensor_view", "pto.partition_view", "pto.tensor_slice"):
        _need(op, len(o) % 2 == 1, "a source and two lists of equal length")
        k = (len(o) - 1) // 2
        a, b = ("shape", "strides") if n == "pto.make_tensor_view" else ("offsets", "sizes")
        return {"source": o[:1], a: o[1:1 + k], b: o[1 + k:]}
    if n == "pto.alloc_tile":
        t = op.results[0].type if len(op.results) == 1 else None
        _need(op, isinstance(t, TileBufT), "one !pto.tile_buf result")
        dyn_r, dyn_c = t.v_row is None, t.v_col is None
        n_addr = len(o) - dyn_r - dyn_c
        _need(op, n_addr in (0, 1), "[addr] then valid_row / valid_col for the dynamic extents")
        rest = o[n_addr:]
        return {"addr": o[:n_addr], "valid_row": rest[:dyn_r], "valid_col": rest[dyn_r:]}
    if n == "pto.tensor_reshape":
        _need(op, len(o) >= 1, "a source")
        return {"source": o[:1], "shape": o[1:]}
    if n == "pto.alloc_tensor":
        return {"shape": list(o)}
    if n in ("pto.tgetval", "pto.tensor_read"):
        _need(op, len(o) >= 1, "a source")
        return {"source": o[:1], "indices": o[1:]}
    if n == "pto.tensor_write":
        _need(op, len(o) >= 2, "a value and a destination")
        return {"value": o[:1], "dest": o[1:2], "indices": o[2:]}
    if n == "scf.condition":
        _need(op, len(o) >= 1, "a condition")
        return {"cond": o[:1], "args": o[1:]}
    return {"operands": list(o)}


def _need(op: Op, ok: bool, what: str) -> None:
    if not ok:
        raise InvalidValue(f"{op.name} with {len(op.operands)} operand(s) and {len(op.results)} result(s): "
                         f"expected {what}")


def walk(block: Block):
    """Every op in a block, depth first, regions included."""
    for op in block.ops:
        yield op
        for r in op.regions:
            yield from walk(r)


__all__ = [
    "I1", "INDEX", "Attr", "Block", "EnumAttr", "Func", "Module", "Op", "PartitionViewT", "PtoType", "PtrT",
    "ScalarT", "Sym", "TensorT", "TensorViewT", "TileBufT", "Value", "operand_groups", "walk",
]
