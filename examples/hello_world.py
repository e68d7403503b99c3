"""Hello world: a tile add kernel and its orchestration, compiled to native code and run on the CPU.

    python examples/hello_world.py
"""

import numpy as np

import pypto.language as pl
from pypto import ir


@pl.program
class HelloWorld:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
                 c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        return pl.store(pl.add(ta, tb), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 128], pl.FP32],
             b: pl.Tensor[[128, 128], pl.FP32]) -> pl.Tensor[[128, 128], pl.FP32]:
        c = pl.create_tensor([128, 128], dtype=pl.FP32)
        return self.tile_add(a, b, c)


if __name__ == "__main__":
    print(ir.python_print(HelloWorld))
    compiled = ir.compile(HelloWorld, output_dir="build_output/hello_world")
    print(f"compiled to {compiled} in {compiled.timings['total_s'] * 1e3:.0f} ms:")
    for name, path in compiled.pto_files().items():
        print(f"  {name}: {path}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128), dtype=np.float32)
    b = rng.standard_normal((128, 128), dtype=np.float32)
    c = compiled(a, b)
    err = float(np.abs(c - (a + b)).max())
    print(f"ran on the CPU: max |c - (a + b)| = {err}")
    assert err == 0.0
    print(open(compiled.pto_files()["tile_add"]).read())
