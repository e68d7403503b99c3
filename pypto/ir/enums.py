"""Enumerations used by IR nodes and types."""

from __future__ import annotations

import enum

from pypto.errors import InvalidValue


class _NamedEnum(enum.Enum):
    """Enum whose repr is its `pl.` spelling; parse from the member name."""

    @classmethod
    def parse(cls, text: str):
        t = text.split(".")[-1]
        for name, m in cls.__members__.items():  # (aliases included)
            if name == t or name.lower() == t.lower():
                return m
        raise InvalidValue(f"unknown {cls.__name__} {text!r}")


class MemorySpace(_NamedEnum):
    DDR = 0
    Vec = 1
    Mat = 2
    Left = 3
    Right = 4
    Acc = 5
    Bias = 6

    def __repr__(self) -> str:
        return f"pl.MemorySpace.{self.name}"

    @property
    def on_chip(self) -> bool:
        return self is not MemorySpace.DDR


class TensorLayout(_NamedEnum):
    ND = 0
    DN = 1
    NZ = 2

    def __repr__(self) -> str:
        return f"pl.{self.name}"


class TileLayout(_NamedEnum):
    """Box layout of a tile (TileView blayout / slayout)."""

    none_box = 0
    row_major = 1
    col_major = 2

    def __repr__(self) -> str:
        return f"pl.TileLayout.{self.name}"


class PadValue(_NamedEnum):
    null = 0
    zero = 1
    max = 2
    min = 3

    def __repr__(self) -> str:
        return f"pl.PadValue.{self.name}"


class ForKind(_NamedEnum):
    Sequential = 0
    Parallel = 1
    Unroll = 2


class LoopOrigin(_NamedEnum):
    Original = 0
    ChunkOuter = 1
    ChunkInner = 2
    ChunkRemainder = 3


class ScopeKind(_NamedEnum):
    InCore = 0
    AutoInCore = 1


class FunctionType(_NamedEnum):
    Opaque = 0
    Orchestration = 1
    InCore = 2
    # the later public names of a kernel that runs on the cube (AIC) or vector (AIV) core: on this
    # target every kernel is one task on one core, so they are InCore (aliases: they print as InCore)
    AIC = 2
    AIV = 2
    # a cube (AIC) kernel and a vector (AIV) kernel that run at the same time and exchange tiles
    # through tpush / tpop pipes (pypto/ir/groups.py, the LowerGroupFunctions pass: one two-role kernel)
    Group = 3

    def __repr__(self) -> str:
        return f"pl.FunctionType.{self.name}"


class ParamDirection(_NamedEnum):
    In = 0
    Out = 1
    InOut = 2


class PipeType(_NamedEnum):
    """Hardware pipes, in the public numbering order."""

    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7

    def __repr__(self) -> str:
        return f"pl.PipeType.{self.name}"


class CmpType(_NamedEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class CastMode(_NamedEnum):
    none = 0
    rint = 1
    round = 2
    floor = 3
    ceil = 4
    trunc = 5
    odd = 6
