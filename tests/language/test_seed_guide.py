"""Every code block of the seed language guide (004), completed into a full program where it is a
fragment: it parses, prints, and the print parses back to the same IR."""

import pytest

import pypto.language as pl
from pypto import ir
from tests.programs.roundtrip import roundtrip

M = pl.dynamic("M")
N = pl.dynamic("N")


def test_container_types_and_layouts():
    @pl.function
    def types_demo(
        x: pl.Tensor[[64, 128], pl.FP32],
        y: pl.Tensor[[256], pl.FP16],
        z: pl.Tensor[[64, 128], pl.FP16, pl.NZ],
        s: pl.Scalar[pl.FP32],
        idx: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        return x

    assert types_demo.params[2].type.layout is pl.NZ
    assert types_demo.params[3].type == ir.ScalarType(pl.FP32)
    roundtrip(types_demo)


def test_tile_annotation():
    @pl.function(type=pl.FunctionType.InCore)
    def tile_demo(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [0, 0], [64, 64])
        r = pl.store(t, [0, 0], [64, 64], out)
        return r

    roundtrip(tile_demo)


def test_dynamic_shapes():
    @pl.function
    def dynamic_kernel(
        a: pl.Tensor[[M, N], pl.FP32],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        b: pl.Tensor[[M, N], pl.FP32] = pl.add(a, a)
        return b

    t = dynamic_kernel.params[0].type
    assert isinstance(t.shape[0], ir.DynVar) and t.shape[0] is M
    text = ir.python_print(dynamic_kernel)
    assert 'M = pl.dynamic("M")' in text
    roundtrip(dynamic_kernel)


def test_parameter_directions():
    @pl.function
    def kernel(
        input_a: pl.Tensor[[64], pl.FP32],
        output_b: pl.Out[pl.Tensor[[64], pl.FP32]],
        accum_c: pl.InOut[pl.Tensor[[64], pl.FP32]],
    ) -> pl.Tensor[[64], pl.FP32]:
        r: pl.Tensor[[64], pl.FP32] = pl.add(input_a, accum_c)
        return r

    assert [d.name for d in kernel.param_directions] == ["In", "Out", "InOut"]
    roundtrip(kernel)


def test_dispatch_model():
    @pl.function(type=pl.FunctionType.InCore)
    def dispatch(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 scalar: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        result = pl.add(a, b)
        result2 = pl.mul(a, scalar)
        tile = pl.block.load(result2, [0, 0], [64, 64])
        tile = pl.block.adds(tile, 1.0)
        t2 = pl.add(tile, tile)
        t3 = pl.mul(t2, scalar)
        r = pl.store(t3, [0, 0], out)
        return r

    calls = [s.value.op.name for s in dispatch.body.stmts if isinstance(s, ir.AssignStmt)]
    assert calls == ["tensor.add", "tensor.mul_scalar", "block.load", "block.adds", "block.add", "block.muls",
                     "block.store"]
    roundtrip(dispatch)


def test_python_operators():
    @pl.function
    def ops(a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        c = a + b
        c = a - b
        c = a * b
        c = a / b
        k = n + 1
        for i in pl.range(n):
            if i == 0:
                c = c + a
            if i != 0:
                c = c - a
            if i < k:
                c = c * b
            if i > 2:
                c = c / b
        return c

    roundtrip(ops)


def test_unified_operations():
    @pl.function
    def unified(a: pl.Tensor[[16, 8], pl.FP32], b: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[16, 1], pl.FP32]:
        c = pl.add(a, a)
        c = pl.add(a, 1.0)
        h = pl.cast(a, pl.FP16)
        r = pl.reshape(a, [8, 16])
        t = pl.transpose(a, 0, 1)
        m = pl.matmul(a, b)
        s = pl.row_sum(c)
        mx = pl.row_max(c)
        return s

    ops = [s.value.op.name for s in unified.body.stmts if isinstance(s, ir.AssignStmt)]
    assert ops == ["tensor.add", "tensor.add_scalar", "tensor.cast", "tensor.reshape", "tensor.transpose",
                   "tensor.matmul", "tensor.row_sum", "tensor.row_max"]
    roundtrip(unified)


def test_non_ssa_and_ssa_styles():
    @pl.function
    def example(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        result: pl.Tensor[[64], pl.FP32] = pl.add(result, 1.0)  # reassignment is fine
        return result

    @pl.function
    def example_ssa(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result_0: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        result_1: pl.Tensor[[64], pl.FP32] = pl.add(result_0, 1.0)
        return result_1

    # non-SSA keeps one variable assigned twice
    a0, a1 = example.body.stmts[0], example.body.stmts[1]
    assert a0.var is a1.var
    roundtrip(example)
    roundtrip(example_ssa)


def test_strict_ssa_rejects_reassignment():
    with pytest.raises(pl.SSAViolationError) as ei:
        @pl.function(strict_ssa=True)
        def example(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
            result: pl.Tensor[[64], pl.FP32] = pl.add(result, 1.0)  # error: SSAViolationError
            return result

    assert "result" in str(ei.value)
    assert "Previous definition" in str(ei.value)


def test_range_forms():
    @pl.function
    def loops(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = x
        for i in pl.range(10):
            y = pl.add(y, x)
        for i in pl.range(2, 10):
            y = pl.add(y, x)
        for i in pl.range(0, 100, 4):
            y = pl.add(y, x)
        return y

    loops_ = [s for s in loops.body.stmts if isinstance(s, ir.ForStmt)]
    assert [(f.start.value, f.stop.value, f.step.value) for f in loops_] == [(0, 10, 1), (2, 10, 1), (0, 100, 4)]
    roundtrip(loops)


def test_sum_16_elements():
    @pl.function
    def sum_16_elements(data: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
        init_sum: pl.Tensor[[1], pl.FP32] = pl.create_tensor([1], dtype=pl.FP32)

        for i, (running_sum,) in pl.range(16, init_values=(init_sum,)):
            chunk: pl.Tensor[[1], pl.FP32] = pl.view(data, [1], [i])
            new_sum: pl.Tensor[[1], pl.FP32] = pl.add(running_sum, chunk)
            sum_out: pl.Tensor[[1], pl.FP32] = pl.yield_(new_sum)

        return sum_out

    loop = sum_16_elements.body.stmts[1]
    assert isinstance(loop, ir.ForStmt) and len(loop.iter_args) == 1 and len(loop.return_vars) == 1
    roundtrip(sum_16_elements)


def test_find_max_and_sum():
    @pl.function
    def find_max_and_sum(
        data: pl.Tensor[[4, 64], pl.FP32],
    ) -> pl.Tensor[[1, 64], pl.FP32]:
        init_max: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)
        init_sum: pl.Tensor[[1, 64], pl.FP32] = pl.create_tensor([1, 64], dtype=pl.FP32)

        for i, (acc_max, acc_sum) in pl.range(4, init_values=(init_max, init_sum)):
            row: pl.Tensor[[1, 64], pl.FP32] = pl.view(data, [1, 64], [i, 0])
            new_max: pl.Tensor[[1, 64], pl.FP32] = pl.maximum(acc_max, row)
            new_sum: pl.Tensor[[1, 64], pl.FP32] = pl.add(acc_sum, row)
            out_max, out_sum = pl.yield_(new_max, new_sum)

        return out_sum

    roundtrip(find_max_and_sum)


def test_parallel_loop():
    num_blocks = 8

    @pl.function
    def par(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        for i in pl.parallel(0, num_blocks):
            row = pl.view(x, [1, 64], [i, 0])
            out = pl.assemble(out, pl.exp(row), [i, 0])
        return out

    loop = par.body.stmts[0]
    assert loop.kind is ir.ForKind.Parallel and loop.stop.value == 8
    roundtrip(par)


def test_while_loop():
    @pl.function
    def count(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for (x,) in pl.while_(init_values=(0,)):
            pl.cond(x < 10)
            new_x = x + 1
            x_out = pl.yield_(new_x)
        return x_out

    w = count.body.stmts[0]
    assert isinstance(w, ir.WhileStmt) and len(w.iter_args) == 1
    roundtrip(count)


def test_conditional_update():
    @pl.function
    def conditional_update(
        a: pl.Tensor[[64], pl.FP32],
        delta: pl.Tensor[[64], pl.FP32],
    ) -> pl.Tensor[[64], pl.FP32]:
        init: pl.Tensor[[64], pl.FP32] = pl.create_tensor([64], dtype=pl.FP32)

        for i, (prev,) in pl.range(4, init_values=(init,)):
            if i == 0:
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(a)
            else:
                updated: pl.Tensor[[64], pl.FP32] = pl.add(prev, delta)
                result: pl.Tensor[[64], pl.FP32] = pl.yield_(updated)
            out: pl.Tensor[[64], pl.FP32] = pl.yield_(result)

        return out

    loop = conditional_update.body.stmts[1]
    if_ = ir.stmt_list(loop.body)[0]
    assert isinstance(if_, ir.IfStmt) and len(if_.return_vars) == 1
    roundtrip(conditional_update)


def test_function_types():
    @pl.function(type=pl.FunctionType.InCore)
    def compute_kernel(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        return pl.store(pl.exp(t), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def task_graph(a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.create_tensor([64, 64], dtype=pl.FP32)
        return out

    assert compute_kernel.func_type is pl.FunctionType.InCore
    assert task_graph.func_type is pl.FunctionType.Orchestration
    roundtrip(compute_kernel)
    roundtrip(task_graph)


def test_program_with_self_calls():
    @pl.program
    class MyProgram:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [64, 64])
            return pl.store(pl.add(t, t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            out = pl.create_tensor([64, 64], dtype=pl.FP32)
            result = self.kernel(x, out)   # cross-function call
            return result

    assert isinstance(MyProgram, ir.Program)
    assert MyProgram.name == "MyProgram" and MyProgram.function_names == ["kernel", "main"]
    roundtrip(MyProgram)


def test_inline_function():
    @pl.inline
    def normalize(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
        return result

    @pl.program
    class MyProgram:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = normalize(x)  # body inlined here
            return y

    assert MyProgram.function_names == ["main"]
    ops = [s.value.op.name for s in MyProgram.get_function("main").body.stmts if isinstance(s, ir.AssignStmt)
           and isinstance(s.value, ir.Call)]
    assert ops == ["tensor.mul_scalar"]
    roundtrip(MyProgram)


def test_external_function_call():
    @pl.function
    def softmax(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        e = pl.exp(x)
        return e

    @pl.program
    class Model:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = softmax(x)  # external function
            return y

    assert Model.function_names == ["main", "softmax"]
    roundtrip(Model)


def test_incore_scope():
    @pl.function
    def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.incore():
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    assert isinstance(f.body.stmts[0], ir.ScopeStmt)
    roundtrip(f)


def test_memory_movement_and_matmul_pattern():
    @pl.program
    class Matmul:
        @pl.function(type=pl.FunctionType.InCore)
        def mm(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16],
               output: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a_l1 = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            b_l1 = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            a_l0a = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
            b_l0b = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
            c_acc = pl.matmul(a_l0a, b_l0b)                     # result -> Acc
            out = pl.store(c_acc, [0, 0], [32, 32], output)      # Acc -> DDR
            return out

        @pl.function(type=pl.FunctionType.InCore)
        def vec(self, tensor: pl.Tensor[[64, 64], pl.FP32], output: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            tile = pl.load(tensor, [0, 0], [64, 64])                                   # DDR -> Vec
            out = pl.store(tile, [0, 0], [64, 64], output)                             # Tile -> DDR
            return out

    mm = Matmul.get_function("mm")
    types = {s.var.name: s.var.type for s in mm.body.stmts if isinstance(s, ir.AssignStmt)}
    assert types["a_l1"].memory_space is pl.MemorySpace.Mat
    assert types["a_l0a"].memory_space is pl.MemorySpace.Left
    assert types["b_l0b"].memory_space is pl.MemorySpace.Right
    assert types["c_acc"].memory_space is pl.MemorySpace.Acc and types["c_acc"].dtype is pl.FP32
    roundtrip(Matmul)


def test_store_both_eras():
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [64, 64])
        o = pl.store(t, [0, 0], [64, 64], o)         # seed form
        o = pl.store(t, [0, 0], o)                   # later form
        o = pl.store(t, offsets=[0, 0], output_tensor=o)  # keywords
        o = pl.tile.store(t, [0, 0], o)              # later namespace
        return o

    stores = [s.value for s in k.body.stmts if isinstance(s, ir.AssignStmt) and s.value.op.name == "block.store"]
    assert len(stores) == 4
    assert all(len(c.args) == 3 for c in stores)
    roundtrip(k)
