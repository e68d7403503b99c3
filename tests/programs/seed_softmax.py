"""The softmax of the seed slides (seeds/002, "通过 frontend.jit 装饰器构建 PyPTO 函数"), as written
there, with the batch dimension `b` dynamic."""

import pypto

b = pypto.frontend.dynamic("b")
n1, n2, dim = 4, 8, 64


@pypto.frontend.jit()
def softmax(
    input_tensor: pypto.Tensor((b, n1, n2, dim), pypto.DT_FP32),
    ) -> (
    pypto.Tensor((b, n1, n2, dim), pypto.DT_FP32)
):
    """
    Softmax implementation with dynamic batch size support.

    This function processes input tensors in batches, applying softmax
    to each batch independently. The batch dimension is marked as dynamic,
    allowing variable batch sizes at runtime.
    """
    output_tensor = pypto.tensor((b, n1, n2, dim), pypto.DT_FP32)
    tile_b = 1 # Process one batch at a time
    b_loop = b // tile_b

    # Tiling shape setting for efficient execution
    pypto.set_vec_tile_shapes(1, 4, 1, 64)

    for idx in pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        b_offset = idx * tile_b
        b_offset_end = (idx + 1) * tile_b

        # Extract batch slice
        input_view = input_tensor[b_offset:b_offset_end, :, :, :]

        # core softmax formula
        row_max = pypto.amax(input_view, dim=-1, keepdim=True)
        sub = input_view - row_max
        exp = pypto.exp(sub)
        esum = pypto.sum(exp, dim=-1, keepdim=True)
        softmax_out = exp / esum

        # Assemble result back to output tensor
        pypto.assemble(softmax_out, [b_offset, 0, 0, 0], output_tensor)

    return output_tensor
