"""Op-table rows of today's gather / scatter / sort forms (pypto/ops/gather_scatter.py, routed by
pypto/ops/gather_routes.py): appended to `op_table.CASES` / `TCASES` when op_table is imported,
so the op-table tests run them on both backends. Every row is written with the public spelling
(`pl.tile.gather(src, idx, tmp)`, `pl.mrgsort(x, block_len=n)`, ...), so the routing is tested too."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.expr import ConstInt

from . import op_table as T
from .op_table import Case, TCase, ref

_I = "pl.block.cast({1}, target_type=pl.INT32)"  # INT32 indices 0..7 from `shift`
_F = ("FP32",)  # the sorts take FP32 here (FP16 needs 16-bit indices)
_CMP = ("FP32", "FP16", "INT32", "INT16")  # (the compare gather's source dtypes)
_CMP_KW = {"cmp_mode": 4, "offset": 3, "out_cols": 16}


def _i(x):
    return x.astype("int32")


CASES = [
    Case("block.gather_flat", ("a", "shift"), blocks=1, call=f"pl.tile.gather({{0}}, pl.block.muls({_I}, 37), {_I})",
         expect=lambda args, vr, vc, dt: ref("block.gather_flat")(args[0], _i(args[1]) * 37)),
    Case("block.gather_mask", ("a",), id="gather_mask_bitcast", dtypes=_F, blocks=1,
         call="pl.gather_mask({0}, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)",
         kw={"mask_pattern": 2, "output_dtype": DataType.INT32}, out=(16, 32),
         expect=lambda args, vr, vc, dt: args[0][:, 1::2].copy().view("int32")),
    Case("block.scatter_mask", ("a", "b"), blocks=1, out="full", kw={"mask_pattern": 2},
         call="pl.tile.scatter_mask({0}, pl.block.view({1}, [16, 32], [0, 0]), mask_pattern=2)",
         expect=lambda args, vr, vc, dt: ref("block.scatter_mask")(args[0], args[1][:, :32], mask_pattern=2)),
    Case("block.scatter_update", ("a", "shift", "b"), blocks=1, out="full",
         call=f"pl.tile.scatter_update({{0}}, -2, pl.block.view({_I}, [1, 8], [0, 0]), "
              "pl.block.view({2}, [8, 64], [0, 0]))",
         expect=lambda args, vr, vc, dt: ref("block.scatter_update")(args[0], _i(args[1][:1, :8]), args[2][:8])),
    Case("block.sort32_idx", ("a", "shift"), dtypes=_F, blocks=1, out=(16, 64),
         call=f"pl.tile.sort32(pl.block.view({{0}}, [16, 32], [0, 0]), pl.block.view({_I}, [16, 32], [0, 0]))",
         expect=lambda args, vr, vc, dt: ref("block.sort32_idx")(args[0][:, :32], _i(args[1][:, :32]))),
    Case("block.mrgsort_runs", ("a",), dtypes=_F, blocks=1, out="full", call="pl.tile.mrgsort({0}, block_len=4)",
         expect=lambda args, vr, vc, dt: ref("block.mrgsort_runs")(args[0], 4)),
    # the compare form's pair, one op each (gather_compare.py): matches of x > 0 in each row of a
    Case("block.gather_compare", ("a",), dtypes=_CMP, blocks=1, out=(16, 16), kw=_CMP_KW,
         call="pl.tile.gather_compare({0}, 0, {0}, cmp_mode='gt', offset=3, out_cols=16)[0]",
         expect=lambda args, vr, vc, dt: ref("block.gather_compare")(args[0], 0, **_CMP_KW)),
    Case("block.gather_count", ("a",), dtypes=_CMP, blocks=1, out=(1, 16), kw={"cmp_mode": 4},
         call="pl.tile.gather_compare({0}, 0, {0}, cmp_mode=4, out_cols=16)[1]",
         expect=lambda args, vr, vc, dt: ref("block.gather_count")(args[0], 0, cmp_mode=4)),
    # 32-byte blocks at byte offsets 32 * shift, read as INT32 (8 per offset column)
    Case("block.gatherb", ("a", "shift"), blocks=1, out=(16, 64), kw={"output_dtype": DataType.INT32},
         call=f"pl.gatherb({{0}}, pl.block.muls(pl.block.view({_I}, [16, 8], [0, 0]), 32), output_dtype=pl.INT32)",
         expect=lambda args, vr, vc, dt: ref("block.gatherb")(args[0], _i(args[1][:, :8]) * 32,
                                                              output_dtype=DataType.INT32)),
    # HEAD's flat tile scatter (not INT32 data: there the 3-tile call is our row scatter)
    Case("block.scatter_flat", ("a", "b", "shift"), blocks=1, out="full", dtypes=("FP32", "FP16", "BF16", "INT8"),
         call=f"pl.tile.scatter({{0}}, {{1}}, pl.block.muls({_I.replace('{1}', '{2}')}, 37))",
         expect=lambda args, vr, vc, dt: ref("block.scatter_flat")(args[0], args[1], _i(args[2]) * 37)),
    Case("block.mrgsort_lists", ("a", "b"), dtypes=_F, blocks=1, out=(16, 64),
         call="pl.mrgsort(pl.block.view({0}, [16, 32], [0, 0]), pl.block.view({1}, [16, 32], [0, 0]))",
         expect=lambda args, vr, vc, dt: ref("block.mrgsort_lists")(args[0][:, :32], args[1][:, :32])),
]

TCASES = [
    TCase("tensor.gather", "pl.gather({a}, dim=-1, index=pl.cast({shift}, pl.INT16))",
          lambda x, dt: ref("tensor.gather")(x["a"], _i(x["shift"])), ("a", "idx"), id="gather_dim_form"),
    TCase("tensor.scatter", "pl.scatter({a}, dim=-1, index=pl.cast({shift}, pl.INT32), src={b})",
          lambda x, dt: ref("tensor.scatter")(x["a"], _i(x["shift"]), x["b"]), ("a", "idx", "a"),
          id="scatter_dim_form"),
    TCase("tensor.scatter_mask", "pl.scatter(pl.view(b, [16, 32], [0, 0]), mask_pattern=2, dst={a})",
          lambda x, dt: ref("tensor.scatter_mask")(x["a"], x["b"][:16, :32], mask_pattern=2), ("a", "a"),
          kw={"mask_pattern": 2}),
    TCase("tensor.scatter_update", "pl.scatter_update({a}, pl.cast(pl.view(shift, [1, 8], [0, 0]), pl.INT32), "
          "pl.view(b, [8, 64], [0, 0]))",
          lambda x, dt: ref("tensor.scatter_update")(x["a"], _i(x["shift"][:1, :8]), x["b"][:8]), ("a", "idx", "a")),
    TCase("tensor.sort32_idx", "pl.sort32(pl.view(a, [16, 32], [0, 0]), "
          "pl.cast(pl.view(shift, [16, 32], [0, 0]), pl.INT32))",
          lambda x, dt: ref("tensor.sort32_idx")(x["a"][:16, :32], _i(x["shift"][:16, :32])), ("a", "idx"),
          dtypes=_F),
    TCase("tensor.mrgsort_runs", "pl.mrgsort({a}, block_len=8)", lambda x, dt: ref("tensor.mrgsort_runs")(x["a"], 8),
          ("a", "mode"), dtypes=_F, dynamic=True),
    TCase("tensor.gather_compare", "pl.gather({a}, kvalue=0, cmp_mode='ge', out_cols=8)[0]",
          lambda x, dt: ref("tensor.gather_compare")(x["a"], 0, cmp_mode=5, out_cols=8), ("a",),
          kw={"cmp_mode": 5, "out_cols": 8}, dtypes=_CMP),
    TCase("tensor.gather_count", "pl.gather({a}, kvalue=0, cmp_mode='lt', out_cols=8)[1]",
          lambda x, dt: ref("tensor.gather_count")(x["a"], 0, cmp_mode=2), ("a",), kw={"cmp_mode": 2},
          dtypes=_CMP),
    TCase("tensor.mrgsort_lists", "pl.mrgsort(pl.view(a, [16, 32], [0, 0]), pl.view(b, [16, 32], [0, 0]))",
          lambda x, dt: ref("tensor.mrgsort_lists")(x["a"][:16, :32], x["b"][:16, :32]), ("a", "a"), dtypes=_F),
]

_IX = DataType.INT32
PROBE_CALL = {
    "block.gather_flat": lambda dt: ((T._tile(dt), T._tile(_IX), T._tile(_IX)), {}),
    "block.gather_compare": lambda dt: ((T._tile(dt), ConstInt(0, _IX)), {"out_cols": 16}),
    "tensor.gather_compare": lambda dt: ((T._tensor(dt), ConstInt(0, _IX)), {"out_cols": 8}),
    "block.gather_count": lambda dt: ((T._tile(dt), ConstInt(0, _IX)), {}),
    "tensor.gather_count": lambda dt: ((T._tensor(dt), ConstInt(0, _IX)), {}),
    "block.gatherb": lambda dt: ((T._tile(dt), T._tile(_IX, (16, 8))), {"output_dtype": DataType.INT32}),
    "block.scatter_flat": lambda dt: ((T._tile(dt), T._tile(dt), T._tile(_IX)), {}),
    "block.scatter_mask": lambda dt: ((T._tile(dt), T._tile(dt, (16, 32))), {"mask_pattern": 2}),
    "tensor.scatter_mask": lambda dt: ((T._tensor(dt), T._tensor(dt, (16, 32))), {"mask_pattern": 2}),
    "block.scatter_update": lambda dt: ((T._tile(dt), T._tile(_IX, (1, 8)), T._tile(dt, (8, 64))), {}),
    "tensor.scatter_update": lambda dt: ((T._tensor(dt), T._tensor(_IX, (1, 8)), T._tensor(dt, (8, 64))), {}),
    "block.sort32_idx": lambda dt: ((T._tile(dt, (16, 32)), T._tile(_IX, (16, 32))), {}),
    "tensor.sort32_idx": lambda dt: ((T._tensor(dt, (16, 32)), T._tensor(_IX, (16, 32))), {}),
    "block.mrgsort_runs": lambda dt: ((T._tile(dt), ConstInt(4, _IX)), {}),
    "tensor.mrgsort_runs": lambda dt: ((T._tensor(dt), ConstInt(4, _IX)), {}),
    "block.mrgsort_lists": lambda dt: ((T._tile(dt, (16, 32)), T._tile(dt, (16, 32))), {}),
    "tensor.mrgsort_lists": lambda dt: ((T._tensor(dt, (16, 32)), T._tensor(dt, (16, 32))), {}),
}
SHARD_FAMILIES = {"indexing": ("gather_flat", "scatter_mask", "scatter_update", "gather_compare", "gather_count",
                               "gatherb", "scatter_flat"),
                  "order": ("sort32_idx", "mrgsort_runs", "mrgsort_lists")}


def install() -> None:
    """Append the rows, probes and shard families to op_table's tables (once)."""
    if any(c.op == "block.gather_flat" for c in T.CASES):
        return
    T.CASES.extend(CASES)
    T.TCASES.extend(TCASES)
    T._PROBE_CALL.update(PROBE_CALL)
    for shard, fams in SHARD_FAMILIES.items():
        T.SHARDS[shard] = (*T.SHARDS[shard], *fams)
        T._SHARD_OF_FAMILY.update({f: shard for f in fams})
