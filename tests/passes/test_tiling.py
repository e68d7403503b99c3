"""Row tiling of row-local kernels (ConvertTensorToBlockOps, pypto/passes/tiling.py)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes.base import PassError
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOps
from pypto.passes.tiling import plan_tiling
from tests.programs.roundtrip import roundtrip
from tests.programs.tensor_lowering import CTX, assert_kernel_contract, lower, same_numbers

M = pl.dynamic("M")
N = pl.dynamic("N")
VEC = CTX.target.capacity(pl.MemorySpace.Vec)  # 192 KiB: half of it (96 KiB) holds one block's tiles


def exp_add(rows):
    """A kernel of three [rows, 128] fp32 tiles (1536 bytes per row): 64 rows fill 96 KiB."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, 128], pl.FP32]) -> pl.Tensor[[rows, 128], pl.FP32]:
            y = pl.exp(x)
            z = pl.add(y, x)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[rows, 128], pl.FP32]) -> pl.Tensor[[rows, 128], pl.FP32]:
            z = self.k(x)
            return z

    return Before


def convert(prog, verified):
    after = verified(ConvertTensorToBlockOps()(prog, CTX))
    roundtrip(after)
    return after


def test_fitting_kernel_keeps_whole_tiles(verified):
    after = convert(exp_add(64), verified)
    body = ir.stmt_list(after.get_function("k").body)
    assert not any(isinstance(s, ir.ForStmt) for s in body)
    assert body[0].var.type.shape == (ir.ConstInt(64), ir.ConstInt(128))


def test_static_rows_in_whole_blocks(verified):
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4096, 128], pl.FP32],
              z_out: pl.Out[pl.Tensor[[4096, 128], pl.FP32]]) -> pl.Tensor[[4096, 128], pl.FP32]:
            for r0, (z_acc,) in pl.range(0, 4096, 64, init_values=(z_out,)):
                x_tile = pl.load(x, [r0, 0], [64, 128])
                y = pl.exp(x_tile)
                z = pl.add(y, x_tile)
                z_store = pl.store(z, [r0, 0], z_acc)
                z_res = pl.yield_(z_store)
            return z_res

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[4096, 128], pl.FP32]) -> pl.Tensor[[4096, 128], pl.FP32]:
            z_out = pl.create_tensor([4096, 128], dtype=pl.FP32)
            z = self.k(x, z_out)
            return z

    before = exp_add(4096)
    after = convert(before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(before, after, "main")


def test_static_rows_with_a_ragged_last_block(verified):
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1000, 128], pl.FP32],
              z_out: pl.Out[pl.Tensor[[1000, 128], pl.FP32]]) -> pl.Tensor[[1000, 128], pl.FP32]:
            for r0, (z_acc,) in pl.range(0, 1000, 64, init_values=(z_out,)):
                valid_rows = pl.min(64, 1000 - r0)
                x_tile = pl.load(x, [r0, 0], [64, 128], [valid_rows, 128])
                y = pl.exp(x_tile)
                z = pl.add(y, x_tile)
                z_store = pl.store(z, [r0, 0], z_acc)
                z_res = pl.yield_(z_store)
            return z_res

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[1000, 128], pl.FP32]) -> pl.Tensor[[1000, 128], pl.FP32]:
            z_out = pl.create_tensor([1000, 128], dtype=pl.FP32)
            z = self.k(x, z_out)
            return z

    before = exp_add(1000)
    after = convert(before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(before, after, "main")


def test_dynamic_rows_reductions_and_a_column_operand(verified):
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[M, 128], pl.FP32], c: pl.Tensor[[1, 128], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[M, 128], pl.FP32], pl.Tensor[[M, 1], pl.FP32]]:
            y = pl.mul(x, s)
            mx = pl.row_max(y)
            e = pl.exp(pl.sub(y, mx))
            total = pl.row_sum(e)
            w = pl.col_expand_mul(pl.row_expand_div(e, total), c)
            return w, total

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[M, 128], pl.FP32], s: pl.Scalar[pl.FP32], c: pl.Tensor[[1, 128], pl.FP32],
                          total_out: pl.Out[pl.Tensor[[M, 1], pl.FP32]], w_out: pl.Out[pl.Tensor[[M, 128], pl.FP32]],
                          ) -> tuple[pl.Tensor[[M, 1], pl.FP32], pl.Tensor[[M, 128], pl.FP32]]:
            rows = pl.tensor.dim(x, 0)
            c_tile = pl.load(c, [0, 0], [1, 128])  # the [1, N] operand: the same for every block, loaded once
            for r0, (total_acc, w_acc) in pl.range(0, rows, 16, init_values=(total_out, w_out)):
                valid_rows = pl.min(16, rows - r0)
                x_tile = pl.load(x, [r0, 0], [16, 128], [valid_rows, 128])
                y = pl.mul(x_tile, s)
                mx_tmp = pl.create_tile([16, 128], dtype=pl.FP32)
                mx = pl.row_max(y, mx_tmp)
                t0 = pl.row_expand_sub(y, mx)
                e = pl.exp(t0)
                total_tmp = pl.create_tile([16, 128], dtype=pl.FP32)
                total = pl.row_sum(e, total_tmp)
                t1 = pl.row_expand_div(e, total)
                w = pl.col_expand_mul(t1, c_tile)
                total_store = pl.store(total, [r0, 0], total_acc)
                w_store = pl.store(w, [r0, 0], w_acc)
                total_res, w_res = pl.yield_(total_store, w_store)
            return total_res, w_res

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 128], pl.FP32], c: pl.Tensor[[1, 128], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[M, 128], pl.FP32], pl.Tensor[[M, 1], pl.FP32]]:
            total_out = pl.create_tensor([M, 1], dtype=pl.FP32)
            w_out = pl.create_tensor([M, 128], dtype=pl.FP32)
            total, w = self.main_incore_0(x, s, c, total_out, w_out)
            return w, total

    # the front passes are not run here: hand over the flattened form (no call nested in a call)
    flat = _flatten(Before)
    after = lower(flat, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    assert_kernel_contract(after)
    for rows in (100, 64, 3):  # ragged, exact, less than one block
        same_numbers(flat, after, "main", dims={M: rows}, seed=rows)


def _flatten(prog):
    """The program with nested calls bound to temporaries (what FlattenCallExpr does)."""
    from pypto.passes.flatten_call_expr import FlattenCallExpr

    return FlattenCallExpr()(prog)


def test_block_size_follows_the_target_capacity():
    fn = exp_add(1 << 20).get_function("k")  # 1536 bytes per row
    assert plan_tiling(fn, VEC).rb == 64  # (96 KiB) / 1536 = 64
    assert plan_tiling(fn, 2 * VEC).rb == 128
    assert plan_tiling(fn, VEC + 4096).rb == 64  # a power of two
    small = exp_add(40).get_function("k")
    assert plan_tiling(small, VEC) is None  # fits in one block
    assert plan_tiling(small, 16 * 1536).rb == 8
    dyn = exp_add(M).get_function("k")
    plan = plan_tiling(dyn, VEC)
    assert plan.rb == 64 and plan.ragged and plan.rows is M


def test_dynamic_last_dimension_is_rejected():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def dynamic_kernel(self, a: pl.Tensor[[M, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
            b: pl.Tensor[[M, N], pl.FP32] = pl.add(a, a)
            return b

    with pytest.raises(PassError) as ei:
        ConvertTensorToBlockOps()(Before, CTX)
    msg = str(ei.value)
    assert "last dimension" in msg and "must be static" in msg and "help:" in msg


def test_a_row_that_does_not_fit_is_rejected():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[M, 65536], pl.FP32]) -> pl.Tensor[[M, 65536], pl.FP32]:
            y = pl.exp(x)
            return y

    with pytest.raises(PassError, match="one row"):
        ConvertTensorToBlockOps()(Before, CTX)


def test_kernels_that_are_not_row_local_keep_whole_tiles(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4096, 16], pl.FP32], y: pl.Tensor[[16, 4096], pl.FP32]) -> pl.Tensor[[16, 4096], pl.FP32]:
            t = pl.transpose(x, 0, 1)  # mixes rows: not row-local
            z = pl.add(t, y)
            return z

    after = convert(Before, verified)
    assert not any(isinstance(s, ir.ForStmt) for s in ir.stmt_list(after.get_function("k").body))


def test_whole_tiles_of_a_scalar_row_count_are_rejected(verified):
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
            v = pl.view(x, [n, 64], [0, 0])
            y = pl.exp(v)
            out = pl.assemble(x, y, [0, 0])  # assemble is not row-local: whole tiles, and v has n rows
            return out

    with pytest.raises(PassError, match="tile shapes must be static"):
        lower(Before, verified, reparse=False)


def test_row_count_held_in_a_scalar_is_tiled(verified):
    @pl.program
    class Before:
        @pl.function
        def main(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[1, 64], pl.FP32],
                                                                                         pl.Scalar[pl.FP32]]:
            v = pl.view(x, [n, 64], [0, 0])
            y = pl.exp(v)
            z = pl.add(y, v)
            first = pl.view(z, [1, 64], [0, 0])
            last = pl.tensor.read(z, [n - 1, 5])
            return first, last

    # a kernel parameter typed [n, 64] with n another parameter is valid IR, but `pl` cannot spell it
    # (a parameter annotation cannot name a parameter): no print -> parse check here
    after = lower(Before, verified, reparse=False)
    text = ir.python_print(after)
    # the kernel's row count is its scalar parameter n; the caller sizes the output with its own n
    assert "pl.tensor.dim(v, axis=0)" in text and "pl.tensor.create([n, 64]" in text
    for rows in (300, 40):
        same_numbers(Before, after, "main", dims={M: rows}, seed=rows)
