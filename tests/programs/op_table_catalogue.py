"""Op-table rows of the ops pl-head §3 added to the registry (pypto/ops/catalogue.py): appended to
`op_table.CASES` / `TCASES` when op_table is imported, so the op-table tests run them on both
backends like every other row."""

from __future__ import annotations

from pypto.ir.dtype import DataType
from pypto.ir.enums import PadValue
from pypto.ir.expr import ConstInt

from . import op_table as T
from .op_table import C, Case, R, _t, dt_of, ref

_EXP = ("ulp", 4)

CASES = [
    Case("block.row_expand_expdif", ("a", "row"), tol=_EXP),
    Case("block.col_expand_expdif", ("a", "col"), tol=_EXP),
    Case("block.tri", (), call=f"pl.block.tri(2, [{R}, {C}], dtype=pl.{{dt}})", out="full", blocks=1,
         expect=lambda args, vr, vc, dt: ref("block.tri")(2, (R, C), dtype=dt_of(dt))),
    Case("block.tri", (), id="tri_upper_valid", call=f"pl.tri(-1, [{R}, {C}], [12, 40], dtype=pl.{{dt}}, upper=True)",
         out=(12, 40), blocks=1,
         expect=lambda args, vr, vc, dt: ref("block.tri")(-1, (R, C), (12, 40), dtype=dt_of(dt), upper=True)[:12, :40]),
    Case("block.transpose_view", ("a",), blocks=1, out=(16, 16),
         call="pl.tile.transpose_view(pl.block.view({0}, [16, 16], [0, 5]))",
         expect=lambda args, vr, vc, dt: args[0][:, 5:21].T),
]
for _pad in (PadValue.zero, PadValue.max):
    # the ragged valid region of the first block ((16, 64) at M = 48; at M = 45 too) into a [32, 64] tile
    CASES.append(Case("block.fillpad_expand", (), id=f"fillpad_expand_{_pad.name}", out=(32, C), blocks=1,
                      body=(f"t = pl.load(a, [0, 0], [{R}, {C}], valid_shapes=[13, 37])",
                            f"r = pl.tile.fillpad_expand(t, [32, {C}], pad_value={_pad.value})"),
                      expect=lambda x, i0, vr, vc, vk, dt, _pad=_pad: ref("block.fillpad_expand")(
                          x["a"][:13, :37], (32, C), pad_value=_pad)))
CASES.append(Case("block.fillpad", ("a",), id="fillpad_inplace", call="pl.tile.fillpad_inplace({0}, pad_value=3)",
                  out="full", expect=lambda args, vr, vc, dt: ref("block.fillpad")(
                      T._pad_tile(args[0]), pad_value=PadValue.min, valid=(vr, vc))))

TCASES = [
    _t("tensor.row_expand_expdif", "pl.row_expand_expdif({a}, {row})", ("a", "row"), dynamic=True, tol=_EXP),
    _t("tensor.col_expand_expdif", "pl.col_expand_expdif({a}, {col})", ("a", "col"), dynamic=True, tol=_EXP),
    # tensor forms (pl-head §3.4, §3.5): `pl.<name>` on a tensor dispatches to tensor.<name>
    T.TCase("tensor.fillpad_expand", "pl.fillpad_expand(pl.view(a, [12, 32], [0, 0]), [16, 64])",
            lambda x, dt: ref("tensor.fillpad_expand")(x["a"][:12, :32], (16, 64)), ("a",)),
    T.TCase("tensor.fillpad_expand",
            "pl.fillpad_expand(pl.view(a, [16, 48], [0, 0], valid_shape=[13, 37]), [16, 64], pad_value=2)",
            lambda x, dt: ref("tensor.fillpad_expand")(x["a"][:, :48], (16, 64), pad_value=PadValue.max,
                                                       valid=(13, 37)),
            ("a",), kw={"pad_value": PadValue.max}, incore=True, id="fillpad_expand_valid"),
    *[_t(f"tensor.{n}", f"pl.{n}({{a}})", ("a",), id=f"{n}_unified", tol=("ulp", 16) if n == "col_prod" else "exact")
      for n in ("col_prod", "col_max", "col_min")],
]

_START = ConstInt(3, DataType.INT32)
PROBE_CALL = {
    "block.tri": lambda dt: ((_START, T._ints(R, C)), {"dtype": dt}),
    "block.fillpad_expand": lambda dt: ((T._tile(dt), T._ints(32, C)), {}),
    "tensor.fillpad_expand": lambda dt: ((T._tensor(dt), T._ints(32, C)), {}),
}
SHARD_FAMILIES = {"broadcast": ("row_expand_expdif", "col_expand_expdif"),
                  "memory": ("tri", "fillpad_expand"), "layout": ("transpose_view",)}


def install() -> None:
    """Append the rows, probes and shard families to op_table's tables (once)."""
    if any(c.op == "block.tri" for c in T.CASES):
        return
    T.CASES.extend(CASES)
    T.TCASES.extend(TCASES)
    T._PROBE_CALL.update(PROBE_CALL)
    for shard, fams in SHARD_FAMILIES.items():
        T.SHARDS[shard] = (*T.SHARDS[shard], *fams)
        T._SHARD_OF_FAMILY.update({f: shard for f in fams})

