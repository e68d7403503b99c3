"""Programs, program generators and harnesses that several test modules share.

Test modules import from here and never from each other (a test module is collected by pytest,
so importing one runs its module-level code a second time and couples unrelated tests).

| module | what it holds | used by |
| --- | --- | --- |
| `axpy` | `Axpy` (dynamic rows, one task per row block), its inputs and check | calling, CLI, runtime lifecycle (and its subprocesses) |
| `op_table` | the op table: a row per way of calling each registry op, the `pl` programs built from it, references and tolerances | backend/test_ops_e2e.py |
| `interp_kernels` | `Kernel` (post-pipeline kernels from `pl` text) and the kernels/programs several interpreter tests run | backend/interp |
| `loop_programs` | loops over run-time bounds (task program, kernel, break, chunked) and Python's answer | backend/test_loop_bounds.py (and its subprocess) |
| `tile_lib` | the C++ tile-library harness: a table of entries -> one translation unit -> ctypes calls | backend/cpu_lib |
| `differential` | random program descriptions (kernels, orchestrations, tensor level) and the run-everywhere check | differential |
| `random_programs` | hypothesis strategies: `pl` program texts, non-SSA scalar functions | language, passes |
| `tensor_lowering` | the outlining part of the pipeline, the kernel contract, a NumPy evaluator of whole programs | passes (ConvertTensorToBlockOps, tiling) |
| `sync_checker` | an independent checker of synchronized kernels and a random kernel generator | passes/test_insert_sync.py |
| `toolkit_sample` | a scalar `pl` function with a loop holding an if (the IR toolkit's tests) | ir (walk, names, rewrite, variables, evaluate), passes/analysis |
| `roundtrip` | `roundtrip`: print -> parse -> print is a fixed point and the IR is structurally equal | language, passes |
"""
