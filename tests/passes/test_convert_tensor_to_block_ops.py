"""ConvertTensorToBlockOps: BEFORE / EXPECTED programs in `pl`, compared structurally, and the
numbers of both sides compared with a small NumPy evaluator over the op registry's references
(tests/programs/tensor_lowering.py)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes.base import PassError
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOps
from tests.programs.roundtrip import roundtrip
from tests.programs.tensor_lowering import (
    CTX,
    assert_kernel_contract,
    lower,
    random_args,
    run_numpy,
    same_numbers,
)

M = pl.dynamic("M")


def convert(prog, verified):
    after = verified(ConvertTensorToBlockOps()(prog, CTX))
    roundtrip(after)
    return after


# ---------------------------------------------------------------------------------------------
# structure


def test_elementwise_kernel_and_its_call_site(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                          s: pl.Scalar[pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            a = pl.add(x, y)
            b = pl.mul(a, s)
            c = pl.exp(b)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            c = self.main_incore_0(x, y, s)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                          s: pl.Scalar[pl.FP32], c_out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            x_tile = pl.load(x, [0, 0], [64, 64])
            y_tile = pl.load(y, [0, 0], [64, 64])
            a = pl.add(x_tile, y_tile)
            b = pl.mul(a, s)
            c = pl.exp(b)
            c_store = pl.store(c, [0, 0], c_out)
            return c_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            c_out = pl.create_tensor([64, 64], dtype=pl.FP32)
            c = self.main_incore_0(x, y, s, c_out)
            return c

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    assert_kernel_contract(after)
    same_numbers(Before, after, "main")


def test_matmul_paths(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], bias: pl.Tensor[[32, 1], pl.FP32],
              acc_in: pl.Tensor[[32, 32], pl.FP32]) -> tuple[pl.Tensor[[32, 32], pl.FP16], pl.Tensor[[32, 32], pl.FP32],
                                                             pl.Tensor[[32, 32], pl.FP32]]:
            c = pl.matmul(a, b, out_dtype=pl.FP16, b_trans=True)
            d = pl.matmul(a, b, b_trans=True, out_dtype=pl.FP32)
            e = pl.add(d, bias)
            f = pl.matmul_acc(acc_in, a, b, b_trans=True)
            return c, e, f

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], bias: pl.Tensor[[32, 1], pl.FP32],
                 acc_in: pl.Tensor[[32, 32], pl.FP32]) -> tuple[pl.Tensor[[32, 32], pl.FP16], pl.Tensor[[32, 32], pl.FP32],
                                                                pl.Tensor[[32, 32], pl.FP32]]:
            c, e, f = self.k(a, b, bias, acc_in)
            return c, e, f

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], bias: pl.Tensor[[32, 1], pl.FP32],
              acc_in: pl.Tensor[[32, 32], pl.FP32], c_out: pl.Out[pl.Tensor[[32, 32], pl.FP16]],
              e_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]], f_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
              ) -> tuple[pl.Tensor[[32, 32], pl.FP16], pl.Tensor[[32, 32], pl.FP32], pl.Tensor[[32, 32], pl.FP32]]:
            a_mat = pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
            a_left = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
            b_mat = pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat, transpose=True)
            b_right = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
            bias_tile = pl.load(bias, [0, 0], [32, 1])
            acc_tile = pl.load(acc_in, [0, 0], [32, 32])
            acc_acc = pl.move(acc_tile, target_memory=pl.MemorySpace.Acc)
            c_acc = pl.matmul(a_left, b_right)
            c_vec = pl.move(c_acc, target_memory=pl.MemorySpace.Vec)
            c = pl.cast(c_vec, pl.FP16)
            d = pl.matmul(a_left, b_right)
            d_vec = pl.move(d, target_memory=pl.MemorySpace.Vec)
            e = pl.row_expand_add(d_vec, bias_tile)
            f = pl.block.matmul_acc(acc_acc, a_left, b_right)
            c_store = pl.store(c, [0, 0], c_out)
            e_store = pl.store(e, [0, 0], e_out)
            f_store = pl.store(f, [0, 0], f_out)  # Acc -> DDR, no detour through Vec
            return c_store, e_store, f_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], bias: pl.Tensor[[32, 1], pl.FP32],
                 acc_in: pl.Tensor[[32, 32], pl.FP32]) -> tuple[pl.Tensor[[32, 32], pl.FP16], pl.Tensor[[32, 32], pl.FP32],
                                                                pl.Tensor[[32, 32], pl.FP32]]:
            c_out = pl.create_tensor([32, 32], dtype=pl.FP16)
            e_out = pl.create_tensor([32, 32], dtype=pl.FP32)
            f_out = pl.create_tensor([32, 32], dtype=pl.FP32)
            c, e, f = self.k(a, b, bias, acc_in, c_out, e_out, f_out)
            return c, e, f

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    assert_kernel_contract(after)
    same_numbers(Before, after, "main", atol=2e-2)


def test_k_loop_with_views_and_an_acc_carried_tile(verified):
    @pl.program
    class Before:
        @pl.function
        def main(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16]) -> pl.Tensor[[32, 32], pl.FP32]:
            with pl.incore():
                a0 = pl.view(a, [32, 16], [0, 0])
                b0 = pl.view(b, [16, 32], [0, 0])
                c0 = pl.matmul(a0, b0, out_dtype=pl.FP32)  # accumulate in FP32 across the K loop
                for k, (acc,) in pl.range(1, 4, init_values=(c0,)):
                    ak = pl.view(a, [32, 16], [0, k * 16])
                    bk = pl.view(b, [16, 32], [k * 16, 0])
                    acc2 = pl.matmul_acc(acc, ak, bk)
                    res = pl.yield_(acc2)
            return res

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
                          res_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a0 = pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
            a0_left = pl.move(a0, target_memory=pl.MemorySpace.Left)
            b0 = pl.load(b, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
            b0_right = pl.move(b0, target_memory=pl.MemorySpace.Right)
            c0 = pl.matmul(a0_left, b0_right)
            for k, (acc,) in pl.range(1, 4, init_values=(c0,)):
                ak = pl.load(a, [0, k * 16], [32, 16], target_memory=pl.MemorySpace.Mat)
                ak_left = pl.move(ak, target_memory=pl.MemorySpace.Left)
                bk = pl.load(b, [k * 16, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
                bk_right = pl.move(bk, target_memory=pl.MemorySpace.Right)
                acc2 = pl.block.matmul_acc(acc, ak_left, bk_right)
                res = pl.yield_(acc2)
            res_store = pl.store(res, [0, 0], res_out)
            return res_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16]) -> pl.Tensor[[32, 32], pl.FP32]:
            res_out = pl.create_tensor([32, 32], dtype=pl.FP32)
            res = self.main_incore_0(a, b, res_out)
            return res

    after = lower(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main", atol=2e-2)


def test_reductions_and_broadcasts(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], col: pl.Tensor[[1, 64], pl.FP32],
              v: pl.Tensor[[64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1], pl.FP32]]:
            mx = pl.row_max(x)
            sh = pl.sub(x, mx)          # [16, 64] - [16, 1] -> row_expand_sub
            e = pl.exp(sh)
            s = pl.row_sum(e)
            p = pl.mul(s, e)            # [16, 1] * [16, 64] -> operands swapped, row_expand_mul
            q = pl.div(p, col)          # [16, 64] / [1, 64] -> col_expand_div
            r = pl.maximum(q, col)      # [16, 64] max [1, 64] -> col_expand_max
            t = pl.row_sum(v)           # a vector reduces as one row
            return r, t

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 64], pl.FP32], col: pl.Tensor[[1, 64], pl.FP32],
                 v: pl.Tensor[[64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1], pl.FP32]]:
            r, t = self.k(x, col, v)
            return r, t

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], col: pl.Tensor[[1, 64], pl.FP32], v: pl.Tensor[[64], pl.FP32],
              r_out: pl.Out[pl.Tensor[[16, 64], pl.FP32]], t_out: pl.Out[pl.Tensor[[1], pl.FP32]],
              ) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1], pl.FP32]]:
            x_tile = pl.load(x, [0, 0], [16, 64])
            col_tile = pl.load(col, [0, 0], [1, 64])
            v_tile = pl.load(v, [0], [64])
            mx_tmp = pl.create_tile([16, 64], dtype=pl.FP32)
            mx = pl.row_max(x_tile, mx_tmp)
            sh = pl.row_expand_sub(x_tile, mx)
            e = pl.exp(sh)
            s_tmp = pl.create_tile([16, 64], dtype=pl.FP32)
            s = pl.row_sum(e, s_tmp)
            p = pl.row_expand_mul(e, s)
            q = pl.col_expand_div(p, col_tile)
            r = pl.col_expand_max(q, col_tile)
            v_row = pl.reshape(v_tile, [1, 64])
            t_tmp = pl.create_tile([1, 64], dtype=pl.FP32)
            t1 = pl.row_sum(v_row, t_tmp)
            t = pl.reshape(t1, [1])
            r_store = pl.store(r, [0, 0], r_out)
            t_store = pl.store(t, [0], t_out)
            return r_store, t_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 64], pl.FP32], col: pl.Tensor[[1, 64], pl.FP32],
                 v: pl.Tensor[[64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1], pl.FP32]]:
            r_out = pl.create_tensor([16, 64], dtype=pl.FP32)
            t_out = pl.create_tensor([1], dtype=pl.FP32)
            r, t = self.k(x, col, v, r_out, t_out)
            return r, t

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main")


def test_assemble_into_parameters_and_locals(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[16, 64], pl.FP32],
              acc: pl.Tensor[[8, 64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32],
                                                        pl.Tensor[[8, 128], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            e = pl.exp(x)
            out2 = pl.assemble(out, e, [8, 0])      # out is written only: Out
            a = pl.add(acc, e)
            acc2 = pl.assemble(acc, a, [0, 0])      # acc is read and written: InOut
            buf = pl.create_tensor([8, 128], dtype=pl.FP32)
            buf2 = pl.assemble(buf, e, [0, 64])     # a local: zeros, then an insert
            whole = pl.create_tensor([8, 64], dtype=pl.FP32)
            whole2 = pl.assemble(whole, a, [0, 0])  # fully overwritten: no zero fill
            return out2, acc2, buf2, whole2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[16, 64], pl.FP32],
                 acc: pl.Tensor[[8, 64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32],
                                                           pl.Tensor[[8, 128], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            o, a, b, w = self.k(x, out, acc)
            return o, a, b, w

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
              acc: pl.InOut[pl.Tensor[[8, 64], pl.FP32]], buf_out: pl.Out[pl.Tensor[[8, 128], pl.FP32]],
              whole_out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]
              ) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 128], pl.FP32],
                         pl.Tensor[[8, 64], pl.FP32]]:
            x_tile = pl.load(x, [0, 0], [8, 64])
            acc_tile = pl.load(acc, [0, 0], [8, 64])
            e = pl.exp(x_tile)
            out2 = pl.store(e, [8, 0], out)
            a = pl.add(acc_tile, e)
            acc2 = pl.store(a, [0, 0], acc)
            buf = pl.block.full([8, 128], dtype=pl.FP32, value=0.0)
            buf2 = pl.block.assemble(buf, e, [0, 64])
            whole = pl.create_tile([8, 64], dtype=pl.FP32)
            whole2 = pl.block.assemble(whole, a, [0, 0])
            buf_store = pl.store(buf2, [0, 0], buf_out)
            whole_store = pl.store(whole2, [0, 0], whole_out)
            return out2, acc2, buf_store, whole_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[16, 64], pl.FP32],
                 acc: pl.Tensor[[8, 64], pl.FP32]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32],
                                                           pl.Tensor[[8, 128], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            buf_out = pl.create_tensor([8, 128], dtype=pl.FP32)
            whole_out = pl.create_tensor([8, 64], dtype=pl.FP32)
            o, a, b, w = self.k(x, out, acc, buf_out, whole_out)
            return o, a, b, w

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main")


def test_views_scalar_access_and_control_flow(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 64], pl.FP32]:
            w = pl.tensor.view(x, [4, 64], [n, 0], [2, 64])   # a window of a parameter (2 valid rows)
            f = pl.tensor.fillpad(w)
            s = pl.tensor.read(x, [n, 1])                      # one element of a parameter
            g = pl.add(f, s)
            h = pl.view(g, [2, 64], [2, 0])                    # a window of a local
            t = pl.tensor.read(h, [0, 0])                      # one element of a local
            if n == 0:
                r = pl.mul(g, t)
                y = pl.yield_(r)
            else:
                y = pl.yield_(g)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 64], pl.FP32]:
            y = self.k(x, n)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              y_out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]) -> pl.Tensor[[4, 64], pl.FP32]:
            w = pl.load(x, [n, 0], [4, 64], [2, 64])
            f = pl.block.fillpad(w)
            s_cell = pl.load(x, [n, 1], [1, 1])
            s = pl.block.read(s_cell, [0, 0])
            g = pl.add(f, s)
            h = pl.block.view(g, [2, 64], [2, 0])
            t = pl.block.read(h, [0, 0])
            if n == 0:
                r = pl.mul(g, t)
                y = pl.yield_(r)
            else:
                y = pl.yield_(g)
            y_store = pl.store(y, [0, 0], y_out)
            return y_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 64], pl.FP32]:
            y_out = pl.create_tensor([4, 64], dtype=pl.FP32)
            y = self.k(x, n, y_out)
            return y

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    # the tensor-level references know no valid regions: compare the two valid rows
    args = random_args(Before.get_function("main"), {M: 16})
    want, got = run_numpy(Before, "main", args)[0], run_numpy(after, "main", args)[0]
    np.testing.assert_allclose(got[:2], want[:2], rtol=1e-5)
    np.testing.assert_allclose(got[2:], got[2, 0])  # fillpad zeroed them: only the scalar s was added


def test_loop_storing_rows_into_a_parameter(verified):
    @pl.program
    class Before:
        @pl.function
        def par(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
            with pl.incore():
                for i, (acc,) in pl.range(8, init_values=(out,)):
                    row = pl.view(x, [1, 64], [i, 0])
                    e = pl.exp(row)
                    acc2 = pl.assemble(acc, e, [i, 0])
                    r = pl.yield_(acc2)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def par_incore_0(self, out: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
                         x: pl.Tensor[[8, 64], pl.FP32]) -> pl.Tensor[[8, 64], pl.FP32]:
            for i, (acc,) in pl.range(8, init_values=(out,)):
                row = pl.load(x, [i, 0], [1, 64])
                e = pl.exp(row)
                acc2 = pl.store(e, [i, 0], acc)
                r = pl.yield_(acc2)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def par(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
            r = self.par_incore_0(out, x)
            return r

    after = lower(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "par")


def test_scalar_writes(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[8, 64], pl.FP32],
              s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            y = pl.exp(x)
            y[0, 1] = s    # a local: block.write into its tile
            out[2, 3] = s  # a parameter: a one-element tile stored at [2, 3]
            return y, out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[8, 64], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            y, o = self.k(x, out, s)
            return y, o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]], s: pl.Scalar[pl.FP32],
              y_out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            x_tile = pl.load(x, [0, 0], [8, 64])
            y = pl.exp(x_tile)
            pl.block.write(y, [0, 1], s)
            cell = pl.create_tile([1, 1], dtype=pl.FP32)
            pl.block.write(cell, [0, 0], s)
            pl.store(cell, [2, 3], out)
            y_store = pl.store(y, [0, 0], y_out)
            return y_store, out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Tensor[[8, 64], pl.FP32],
                 s: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
            y_out = pl.create_tensor([8, 64], dtype=pl.FP32)
            y, o = self.k(x, out, s, y_out)
            return y, o

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main")


# ---------------------------------------------------------------------------------------------
# tile code written by the user


def test_user_block_kernels_pass_through():
    @pl.program
    class Matmul:
        @pl.function(type=pl.FunctionType.InCore)
        def mm(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16],
               output: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a_l1 = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            b_l1 = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            a_l0a = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
            b_l0b = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
            c_acc = pl.matmul(a_l0a, b_l0b)
            out = pl.store(c_acc, [0, 0], [32, 32], output)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16]) -> pl.Tensor[[32, 32], pl.FP32]:
            out = pl.create_tensor([32, 32], dtype=pl.FP32)
            r = self.mm(a, b, out)
            return r

    assert ConvertTensorToBlockOps()(Matmul, CTX) is Matmul

    @pl.program
    class Guide:
        @pl.function(type=pl.FunctionType.InCore)
        def compute_kernel(self, a: pl.Tensor[[64, 64], pl.FP32],
                           out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            e = pl.exp(t)
            return pl.store(e, [0, 0], out)  # a returned call

    assert ConvertTensorToBlockOps()(Guide, CTX) is Guide


def test_tile_code_outlined_from_an_opaque_function_gets_output_directions(verified):
    @pl.program
    class Before:
        @pl.function
        def main(self, y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            t = pl.load(y, [0, 0], [64, 64])
            t2 = pl.add(t, t)
            out2 = pl.store(t2, [0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, y: pl.Tensor[[64, 64], pl.FP32],
                          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(y, [0, 0], [64, 64])
            t2 = pl.add(t, t)
            out2 = pl.store(t2, [0, 0], out)
            return out2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            out2 = self.main_incore_0(y, out)
            return out2

    after = lower(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main")


def test_mixed_kernel_of_the_dispatch_example(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def dispatch(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], scalar: pl.Scalar[pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            result2 = pl.mul(a, scalar)                        # tensor level ...
            tile = pl.block.load(result2, [0, 0], [32, 64])    # ... read by tile code
            tile2 = pl.block.adds(tile, 1.0)
            r = pl.store(tile2, [32, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 scalar: pl.Scalar[pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.dispatch(a, b, scalar, out)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def dispatch(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], scalar: pl.Scalar[pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            a_tile = pl.load(a, [0, 0], [64, 64])
            result2 = pl.mul(a_tile, scalar)
            tile = pl.block.view(result2, [32, 64], [0, 0], [32, 64])
            tile2 = pl.block.adds(tile, 1.0)
            r = pl.store(tile2, [32, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 scalar: pl.Scalar[pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            r = self.dispatch(a, b, scalar, out)
            return r

    after = convert(Before, verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)
    same_numbers(Before, after, "main")


# ---------------------------------------------------------------------------------------------
# the seed guide's programs through InlineFunctions .. ConvertTensorToBlockOps


def _guide_programs():
    @pl.function
    def sum_16_elements(data: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
        init_sum: pl.Tensor[[1], pl.FP32] = pl.create_tensor([1], dtype=pl.FP32)
        for i, (running_sum,) in pl.range(16, init_values=(init_sum,)):
            chunk: pl.Tensor[[1], pl.FP32] = pl.view(data, [1], [i])
            new_sum: pl.Tensor[[1], pl.FP32] = pl.add(running_sum, chunk)
            sum_out: pl.Tensor[[1], pl.FP32] = pl.yield_(new_sum)
        return sum_out

    @pl.function
    def find_max_and_sum(data: pl.Tensor[[4, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
        init_max: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        init_sum: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        for i, (acc_max, acc_sum) in pl.range(4, init_values=(init_max, init_sum)):
            row: pl.Tensor[[1, 64], pl.FP32] = pl.view(data, [1, 64], [i, 0])
            new_max: pl.Tensor[[1, 64], pl.FP32] = pl.maximum(acc_max, row)
            new_sum: pl.Tensor[[1, 64], pl.FP32] = pl.add(acc_sum, row)
            out_max, out_sum = pl.yield_(new_max, new_sum)
        return out_sum

    @pl.function
    def conditional_update(a: pl.Tensor[[64], pl.FP32], delta: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        init: pl.Tensor[[64], pl.FP32] = pl.create_tensor([64], dtype=pl.FP32)
        for i, (prev,) in pl.range(4, init_values=(init,)):
            if i == 0:
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(a)
            else:
                updated: pl.Tensor[[64], pl.FP32] = pl.add(prev, delta)
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(updated)
            out: pl.Tensor[[64], pl.FP32] = pl.yield_(result)
        return out

    @pl.function
    def example(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result_0: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        result_1: pl.Tensor[[64], pl.FP32] = pl.add(result_0, 1.0)
        return result_1

    @pl.function
    def incore_scope(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.incore():
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    @pl.inline
    def normalize(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        return result

    @pl.function
    def softmax(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        e = pl.exp(x)
        return e

    @pl.program
    class Model:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = softmax(x)
            z: pl.Tensor[[64], pl.FP32] = normalize(y)
            return z

    progs = {f.name: ir.Program(f.name, (f,)) for f in (sum_16_elements, find_max_and_sum, conditional_update,
                                                          example, incore_scope)}
    progs["Model"] = Model
    return progs


@pytest.mark.parametrize("name", ["sum_16_elements", "find_max_and_sum", "conditional_update", "example",
                                  "incore_scope", "Model"])
def test_seed_guide_programs(name, verified):
    before = _guide_programs()[name]
    after = lower(before, verified)
    assert_kernel_contract(after)
    entry = name if name != "Model" else "main"
    assert after.get_function(entry).func_type is pl.FunctionType.Orchestration
    kernels = [f for f in after.functions if f.func_type is pl.FunctionType.InCore]
    assert kernels and all(f.name.startswith(f"{entry}_incore_") for f in kernels)
    same_numbers(before, after, entry)


def test_sum_16_elements_lowered(verified):
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def sum_16_elements_incore_0(self, running_sum: pl.Tensor[[1], pl.FP32], chunk: pl.Tensor[[1], pl.FP32],
                                     new_sum_out: pl.Out[pl.Tensor[[1], pl.FP32]]) -> pl.Tensor[[1], pl.FP32]:
            running_sum_tile = pl.load(running_sum, [0], [1])
            chunk_tile = pl.load(chunk, [0], [1])
            new_sum = pl.add(running_sum_tile, chunk_tile)
            new_sum_store = pl.store(new_sum, [0], new_sum_out)
            return new_sum_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def sum_16_elements(self, data: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
            init_sum = pl.create_tensor([1], dtype=pl.FP32)
            for i, (running_sum,) in pl.range(16, init_values=(init_sum,)):
                chunk = pl.view(data, [1], [i])
                new_sum_out = pl.create_tensor([1], dtype=pl.FP32)
                new_sum = self.sum_16_elements_incore_0(running_sum, chunk, new_sum_out)
                sum_out = pl.yield_(new_sum)
            return sum_out

    after = lower(_guide_programs()["sum_16_elements"], verified)
    ir.assert_structural_equal(after, Expected, enable_auto_mapping=True)


# ---------------------------------------------------------------------------------------------
# errors


def test_dynamic_shape_in_a_kernel_that_cannot_be_tiled():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16]) -> pl.Tensor[[32, 32], pl.FP32]:
            c = pl.matmul(a, b, a_trans=True, out_dtype=pl.FP32)  # every row of the result reads every row of a
            return c

    with pytest.raises(PassError) as ei:
        ConvertTensorToBlockOps()(Before, CTX)
    msg = str(ei.value)
    assert "tile shapes must be static" in msg and "c = pl.matmul(a, b, a_trans=True" in msg and "pl.load" in msg


def test_matmul_with_a_static_weight_is_tiled_over_rows(verified):
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16]) -> pl.Tensor[[M, 32], pl.FP32]:
            c = pl.matmul(a, b, out_dtype=pl.FP32)
            return c

    after = ConvertTensorToBlockOps()(Before, CTX)
    verified(after)
    text = ir.python_print(after)
    assert "pl.range(0, rows" in text and "valid_rows" in text
    assert "pl.block.load(b, [0, 0], [32, 32]" in text  # the weight: whole, in every block


def test_dynamic_tile_shape_of_a_creation():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 64], pl.FP32]:
            t = pl.create_tensor([n, 64], dtype=pl.FP32)
            u = pl.reshape(x, [8, 64])
            return u

    with pytest.raises(PassError, match="dynamic shape"):
        ConvertTensorToBlockOps()(Before, CTX)


def test_op_rejected_by_its_tile_form():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[4, 4, 4], pl.FP16]) -> pl.Tensor[[4, 4, 4], pl.FP16]:
            c = pl.transpose(a, 0, 2)  # a tile transposes its last two axes only
            return c

    with pytest.raises(PassError) as ei:
        ConvertTensorToBlockOps()(Before, CTX)
    assert "cannot lower to block.transpose" in str(ei.value) and "c = pl.transpose(a, 0, 2)" in str(ei.value)


def test_kernel_returning_a_scalar():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 64], pl.FP32]) -> pl.Scalar[pl.FP32]:
            s = pl.tensor.read(x, [0, 0])
            return s

    with pytest.raises(PassError, match="hand back tensors only"):
        ConvertTensorToBlockOps()(Before, CTX)
