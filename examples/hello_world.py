"""Hello world: a tile add kernel and its orchestration, printed as IR."""

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
