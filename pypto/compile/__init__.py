"""`pypto.compile`: `ir.compile` as a list of stages, and the compiled program it returns.

    driver.py    compile(): the stages in order, the cache short-cut, staging and publishing
    request.py   Request: the call's inputs, checked before anything is written
    stages.py    the stages and their frozen artifacts: lower -> generate -> write -> build -> report
    program.py   CompiledProgram: the output directory's path, callable, built from the artifacts
    cache.py     the compile cache (whole entries, digest-checked)
    output.py    the output directory: claimed, staged, published under a lock

Output directory layout:

    passes_dump/00_frontend.py, NN_after_<Pass>.py   (dump_passes=True) the IR before and after each pass
    passes_dump/NN_after_<Pass>.diff                 its unified diff from the previous dump (only if it changed)
    passes_dump/index.json                           per dump: pass, file, diff, changed, +/- lines, seconds
    kernels/<kernel>.pto                             one PTO module per InCore kernel
    orchestration/<entry>.pto                        the task program
    report/memory.json                               buffers per kernel and memory space
    signature.json                                   the entry's parameters and results (calling)
    kernel_config.py                                 the kernels (name, source, aic / aiv) and the task program
    lowered.py                                       the IR after the passes, as `pl` source
    native/<program>.cpp                             generated C++ (CPU target)
    compile_report.json                              timings per stage
    .pypto-output.json                               the manifest: the files a compile wrote
"""

from __future__ import annotations

from .driver import compile
from .output import OutputDirError
from .program import CompiledProgram

__all__ = ["CompiledProgram", "OutputDirError", "compile"]
