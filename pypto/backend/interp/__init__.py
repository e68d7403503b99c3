"""`interp`: PTO modules executed instruction by instruction in NumPy, with a pipe hazard checker.

The interpreter runs the same `pto.model.Module` objects the CPU backend assembles. It is the
golden reference for the native target and the checker of pipe synchronization:

    from pypto.backend.interp import run_program, run_kernel, HazardError, InterpError

    outs = run_program(res.kernels, res.orchestration, res.entry, [a, b])  # a CodegenResult's parts
    run_kernel(res.kernels["k"], [a, out])        # one kernel; its runtime index args are derived

Semantics (docs/pto_format.md):

- Tensors are NumPy arrays; kernels see them through tensor views and partitions (views, written in
  place). A load fills the partition's extent of the tile; a store writes exactly the partition,
  from the tile's valid region.
- Tiles live in one byte arena per memory space, at their `pto.alloc_tile` address; a tile value is
  a typed `rows x cols` row-major view there, so tiles at one address alias. Its valid extents are
  the type's, or the `valid_row` / `valid_col` operands evaluated at allocation. Before each kernel
  run the arenas are poisoned (0x5A bytes; all-ones, i.e. NaN, under float tiles), so reading
  uninitialised data or padding shows up in results.
- Tile instructions apply the op registry's reference functions to valid regions (tile_ops.py).
- `pto.submit` runs its kernel at once (program order is a valid schedule).

Hazard checking (`check_hazards=True`, the default) follows docs/sync_model.md: pipes run
concurrently, barriers and set/wait flags order them, and every conflicting pair of accesses
(tile buffers, DDR elements) must be ordered; otherwise `HazardError` names both instructions, the
conflict and the buffer. A `wait_flag` without an earlier matching `set_flag` is a deadlock.

**Pass `check_hazards=False` for programs compiled without InsertSync** (the `PTOAS` strategy leaves
synchronization to the assembler, so its kernels carry no flags or barriers and every pipe overlap
would be reported). Results are the same either way: execution is sequential.

Malformed modules (unknown instructions, operands of the wrong kind or type, windows out of range,
undefined values) raise `InterpError`, located at the op and function.
"""

from __future__ import annotations

from .errors import HazardError, InterpError
from .kernel import KernelStats, run_kernel
from .program import run_program

__all__ = ["HazardError", "InterpError", "KernelStats", "run_kernel", "run_program"]
