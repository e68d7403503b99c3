"""pl.random (pl-head §3.1): a counter-based random tile / tensor, Philox-4x32 (64-bit key, 128-bit
counter), 7 or 10 rounds. The device's bit layout is hardware-defined (A5), so this is the
documented CPU convention (docs/pl_ops.md): element j of the row-major flattened result is word
j % 4 of Philox(key, counter + j // 4) (a 128-bit add); INT32 is the same bits. Same seeds, same bits."""

from __future__ import annotations

import numpy as np

from pypto.ir.dtype import DataType
from pypto.ir.enums import PipeType
from pypto.ir.types import TensorType

from .registry import arg, attr, define
from .traits import ShapeClass, Traits
from .typing import OpError, dims, static_dim, static_dims, tile_result

_M0, _M1, _W0, _W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
_MASK = 0xFFFFFFFF


def philox(key0: int, key1: int, counter: tuple[int, int, int, int], n: int, rounds: int = 10) -> np.ndarray:
    """n uint32 words: word j is lane j % 4 of Philox4x32-rounds(key, counter + j // 4)."""
    blocks = (n + 3) // 4
    base = sum((int(c) & _MASK) << (32 * i) for i, c in enumerate(counter))
    ctr = [(base + b) % (1 << 128) for b in range(blocks)]
    x = [np.array([(c >> (32 * i)) & _MASK for c in ctr], np.uint64) for i in range(4)]
    k0, k1 = int(key0) & _MASK, int(key1) & _MASK
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
        p0, p1 = x[0] * np.uint64(_M0), x[2] * np.uint64(_M1)
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & np.uint64(_MASK), p1 >> np.uint64(32), p1 & np.uint64(_MASK)
        x = [hi1 ^ x[1] ^ np.uint64(k0), lo1, hi0 ^ x[3] ^ np.uint64(k1), lo0]
    return np.stack(x, axis=1).reshape(-1)[:n].astype(np.uint32)


def random_ref(key0, key1, c0, c1, c2, c3, shape, valid_shape=None, *, dtype=DataType.UINT32, rounds=10):
    shape = tuple(int(d) for d in shape)
    words = philox(key0, key1, (c0, c1, c2, c3), int(np.prod(shape)), rounds).reshape(shape)
    return words.view(np.int32) if dtype is DataType.INT32 else words


def _rule(level: str):
    name = f"{level}.random"

    def infer(args, kw):
        if kw["dtype"] not in (DataType.UINT32, DataType.INT32):
            raise OpError(f"{name}: dtype must be UINT32 or INT32, got {kw['dtype'].name}")
        if kw["rounds"] not in (7, 10):
            raise OpError(f"{name}: rounds must be 7 or 10, got {kw['rounds']}")
        if level == "tensor":
            return TensorType(dims(name, args[6], "shape"), kw["dtype"])
        shape = static_dims(name, args[6], "shape")
        valid = dims(name, args[7], "valid_shape") if len(args) > 7 and args[7] is not None else None
        if valid is not None and len(valid) != len(shape):
            raise OpError(f"{name}: valid_shape needs {len(shape)} entries, got {len(valid)}")
        if valid is not None and any(static_dim(v) is not None and static_dim(v) > s for v, s in zip(valid, shape)):
            raise OpError(f"{name}: valid_shape {[static_dim(v) for v in valid]} exceeds the shape {list(shape)}")
        return tile_result(shape, kw["dtype"], valid_shape=valid)
    return infer


_SEEDS = [arg(n, "scalar") for n in ("key0", "key1", "c0", "c1", "c2", "c3")]
_ATTRS = [attr("dtype", "dtype", DataType.UINT32), attr("rounds", "int", 10)]
_block_random = define("block.random", [*_SEEDS, arg("shape", "shape"), arg("valid_shape", "shape", optional=True),
                                        *_ATTRS],
                       _rule("block"), traits=Traits(ShapeClass.FILL), reference=random_ref, pto="trandom",
                       pipe=PipeType.V, dsl=("pl.block.random",), pto_attrs=("rounds",),
                       doc="a counter-based random tile (Philox-4x32; the CPU's word order, docs/pl_ops.md)")
define("tensor.random", [*_SEEDS, arg("shape", "shape"), *_ATTRS], _rule("tensor"), traits=Traits(ShapeClass.FILL),
       reference=random_ref, tile_form=_block_random, dsl=("pl.tensor.random", "pl.random"),
       doc="a counter-based random tensor (lowered to block.random inside kernels)")
