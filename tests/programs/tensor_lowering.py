"""Lowering tensor code to kernels, and checking it: the outlining part of the pipeline
(`lower`), the contract of the kernels it makes, and a small NumPy evaluator over the op
registry's references that runs a program before and after (`same_numbers`). Shared by the
ConvertTensorToBlockOps and tiling tests."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir.evaluate import Evaluator
from pypto.ir.expr import Call, DynVar, GlobalVar
from pypto.ir.types import ScalarType, ShapedType, TensorType, TileType
from pypto.ops.registry import OPS
from pypto.passes.base import PassContext
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOps
from pypto.passes.inline_functions import InlineFunctions
from pypto.passes.outline_incore_scopes import OutlineIncoreScopes
from pypto.passes.scope_tensor_ops import ScopeTensorOps
from pypto.target import ascend910b
from tests.programs.roundtrip import roundtrip

CTX = PassContext(target=ascend910b())  # fixed Vec capacity (192 KiB): tiling decisions do not depend on the host
# ---------------------------------------------------------------------------------------------
# a NumPy evaluator for whole programs (tensor, tile and scalar code; value semantics)


class NumpyEvaluator(Evaluator):
    """Runs a program on NumPy arrays with the registry's reference semantics. Stores return new
    arrays (value semantics), which is what SSA programs mean; a store writes the tile's valid
    region, read from the tile's type."""

    def __init__(self, program):
        super().__init__(max_steps=10**6)
        self.program = program
        self.dyn: dict = {}

    def run(self, fn, args):
        saved = self.dyn
        self.dyn = {}
        for p, a in zip(fn.params, args):
            if isinstance(p.type, ShapedType):
                for d, n in zip(p.type.shape, np.shape(a)):
                    if isinstance(d, DynVar):
                        self.dyn.setdefault(d, n)
        try:
            return super().run(fn, args)
        finally:
            self.dyn = saved

    def stmt(self, s, env):
        for k, v in self.dyn.items():
            env.setdefault(k, v)
        return super().stmt(s, env)

    def expr(self, e, env):
        if not isinstance(e, Call):
            return super().expr(e, env)
        args = [self.expr(a, env) for a in e.args]
        if isinstance(e.op, GlobalVar):
            out = self.run(self.program.get_function(e.op.name), args)
            return out[0] if len(out) == 1 else out
        name, kw = e.op.name, dict(e.kwargs)
        if name in ("tensor.write", "block.write"):
            args[0][tuple(args[1])] = args[2]
            return None
        if name in ("block.store", "block.fillpad"):
            kw["valid"] = tuple(self.expr(d, env) for d in e.args[0].type.valid_shape)
        r = OPS[name].reference(*args, **kw)
        if name == "block.store":  # in place, as on the machine (an expression-statement store counts)
            np.copyto(args[2], r.astype(args[2].dtype))
            return args[2]
        t = e.type
        if isinstance(t, (TensorType, TileType)):
            return np.asarray(r).astype(t.dtype.to_numpy())
        if isinstance(t, ScalarType) and isinstance(r, (np.generic, np.ndarray)):
            return r.item()
        return r


def run_numpy(program, name, args):
    return NumpyEvaluator(program).run(program.get_function(name), args)


def random_args(fn, dims=None, seed=0):
    """Arguments for `fn`: random arrays for tensors (dynamic dims from `dims`), 3 for scalars."""
    rng = np.random.default_rng(seed)
    dims = dims or {}
    out = []
    for p in fn.params:
        t = p.type
        if isinstance(t, TensorType):
            shape = tuple(dims[d] if isinstance(d, DynVar) else d.value for d in t.shape)
            out.append(rng.uniform(-2, 2, shape).astype(t.dtype.to_numpy()))
        else:
            out.append(3 if t.dtype.is_int else 0.5)
    return out


def same_numbers(before, after, name, dims=None, seed=0, atol=1e-3):
    args = random_args(before.get_function(name), dims, seed)
    want = run_numpy(before, name, [a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = run_numpy(after, name, args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64), atol=atol,
                                   rtol=1e-3)


def lower(prog, verified, reparse: bool = True):
    """The outlining part of the pipeline: InlineFunctions .. ConvertTensorToBlockOps, each result
    verified and (unless `reparse` is off) printed -> parsed back."""
    for p in (InlineFunctions(), ScopeTensorOps(), OutlineIncoreScopes(), ConvertTensorToBlockOps()):
        prog = verified(p(prog, CTX))
        if reparse:
            roundtrip(prog)
    return prog


def assert_kernel_contract(prog):
    """Kernels hold only block/system ops (and tensor.dim); every tile has its memory space."""
    for f in prog.functions:
        if f.func_type is not pl.FunctionType.InCore:
            continue

        class V(ir.IRVisitor):
            visit_types = False

            def visit_Call(self, c):
                if not isinstance(c.op, GlobalVar):
                    assert c.op.name.split(".")[0] in ("block", "system") or c.op.name == "tensor.dim", c.op.name
                self.generic_visit(c)

            def visit_def(self, v):
                if isinstance(v.type, TileType):
                    assert v.type.memory_space is not None, v.name
                super().visit_def(v)

        V().visit(f)
