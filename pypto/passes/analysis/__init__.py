"""`pypto.passes.analysis`: what the passes (and codegen) compute about a program without changing
it.

- `var_liveness`: which variables are live where (statement-level, valid before SSA).
- `tile_liveness`: liveness and interference of tile variables; linear lifetimes.
- `buffer_sharing`: which tiles must or may share a buffer (views, copies, in-place updates).
- `pipes`: the instruction model of kernels (pipes, the buffers and tensor regions each reads and
  writes) that synchronization is planned on; `overlaps`: which of those resources overlap.
- `memory_report`: the per-kernel memory map after address allocation.

An analysis imports the IR, the op registry and the target description, never a pass.
"""
