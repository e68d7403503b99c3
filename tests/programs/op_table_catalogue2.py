"""Op-table rows of the second part of the pl-head §3.1-3.6 catalogue (pypto/ops/catalogue2.py): appended
to `op_table.CASES` / `TCASES` when op_table is imported, so the op-table tests run them on both
backends like every other row."""

from __future__ import annotations

from . import op_table as T
from .op_table import C, Case, R, _t, ref

_PART = ("part_add", "part_mul", "part_max", "part_min")

CASES = [Case(f"block.{n}", ("a", "b")) for n in _PART]  # equal valid regions: the plain op
for _n in _PART:
    # the second operand ragged inside the first: the op over (9, 21), the first operand elsewhere
    CASES.append(Case(f"block.{_n}", (), id=f"{_n}_ragged", out=(R, C), blocks=1,
                      body=(f"t = pl.load(a, [0, 0], [{R}, {C}])",
                            f"u = pl.load(b, [0, 0], [{R}, {C}], valid_shapes=[9, 21])",
                            f"r = pl.tile.{_n}(t, u)"),
                      expect=lambda x, i0, vr, vc, vk, dt, _n=_n: ref(f"block.{_n}")(
                          x["a"][:R, :C], x["b"][:R, :C], valid_b=(9, 21))))
CASES.append(Case("block.get_subblock_idx", ("a",), call="pl.block.adds({0}, pl.tile.get_subblock_idx())",
                  expect=lambda args, vr, vc, dt: ref("block.adds")(args[0], ref("block.get_subblock_idx")())))

TCASES = [_t(f"tensor.{n}", f"pl.{n}({{a}}, {{b}})", ("a", "b"), dynamic=True) for n in _PART]

SHARD_FAMILIES = {"compare": _PART, "memory": ("get_subblock_idx",)}


def install() -> None:
    """Append the rows and shard families to op_table's tables (once)."""
    if any(c.op == "block.part_add" for c in T.CASES):
        return
    T.CASES.extend(CASES)
    T.TCASES.extend(TCASES)
    T._PROBE_CALL["block.get_subblock_idx"] = lambda dt: ((), {})  # (no operands: a scalar query)
    T._SAME_DTYPE.add("block.get_subblock_idx")  # the row's result is adds' (the input dtype)
    for shard, fams in SHARD_FAMILIES.items():
        T.SHARDS[shard] = (*T.SHARDS[shard], *fams)
        T._SHARD_OF_FAMILY.update({f: shard for f in fams})
