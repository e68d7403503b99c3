"""The tensor level, as in the seed slides: the softmax written with `@pypto.frontend.jit` over
whole tensors, with a dynamic batch; then a LayerNorm whose tiles are chosen with
`set_vec_tile_shapes`. Each is traced into a `pl` program, compiled for this CPU and checked
against NumPy; the graphs of the softmax are written next to its build.

    python examples/tensor_level.py
"""

import numpy as np

import pypto

b = pypto.frontend.dynamic("b")  # the batch: any size, one compiled program
n1, n2, dim = 4, 8, 64


@pypto.frontend.jit()
def softmax(input_tensor: pypto.Tensor((b, n1, n2, dim), pypto.DT_FP32)) -> pypto.Tensor((b, n1, n2, dim),
                                                                                         pypto.DT_FP32):
    output_tensor = pypto.tensor((b, n1, n2, dim), pypto.DT_FP32)
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for idx in pypto.loop(0, b, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        x = input_tensor[idx:idx + 1, :, :, :]
        e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
        pypto.assemble(e / pypto.sum(e, dim=-1, keepdim=True), [idx, 0, 0, 0], output_tensor)
    return output_tensor


@pypto.frontend.jit
def layer_norm(x: pypto.Tensor((pypto.DYNAMIC, 256), pypto.DT_FP32), gamma: pypto.Tensor((1, 256), pypto.DT_FP32),
               beta: pypto.Tensor((1, 256), pypto.DT_FP32), y: pypto.Tensor((pypto.DYNAMIC, 256), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 256)  # each task loops over single rows
    n = x.shape[0]
    for i in pypto.loop(0, pypto.ceildiv(n, 32), name="rows", idx_name="i"):
        y[i * 32:(i + 1) * 32, :] = pypto.layer_norm(x[i * 32:(i + 1) * 32, :], gamma, beta)


def main() -> None:
    rng = np.random.default_rng(0)
    for batch in (1, 5):
        x = rng.standard_normal((batch, n1, n2, dim)).astype(np.float32)
        e = np.exp(x - x.max(-1, keepdims=True))
        err = np.abs(softmax(x) - e / e.sum(-1, keepdims=True)).max()
        print(f"softmax, batch {batch}: max error vs NumPy {err:.1e}")
    paths = softmax.dump_graphs(x)
    print(f"softmax graphs (tensor, tile, block, execution): {paths[0].parent}")

    x = rng.standard_normal((96, 256)).astype(np.float32)
    gamma, beta = np.ones((1, 256), np.float32), np.zeros((1, 256), np.float32)
    y = np.zeros_like(x)
    layer_norm(x, gamma, beta, y)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    print(f"layer norm, 96 rows: max error vs NumPy {np.abs(y - (x - mu) / np.sqrt(var + 1e-5)).max():.1e}")


if __name__ == "__main__":
    main()
