"""Process-wide settings, in one object that the rest of PyPTO reads (never hidden switches).

`pypto.config.cache_dir`   where compiled kernels and runtimes are cached
`pypto.config.cxx`         the C++ compiler to use (default: $CXX, else g++, else clang++)
`pypto.config.num_workers` default number of runtime workers (default: the machine's cores)
`pypto.config.verify_every_pass`  verify the IR after every pass of ir.compile (tests do)
`pypto.config.compile_cache`      reuse earlier compiles of the same program and options
`pypto.config.output_root`        where `ir.compile(..., output_dir=None)` makes its directories
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _default_cache_dir() -> Path:
    env = os.environ.get("PYPTO_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pypto"


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Config:
    cache_dir: Path = field(default_factory=_default_cache_dir)
    cxx: str | None = field(default_factory=lambda: os.environ.get("CXX") or None)
    num_workers: int = field(default_factory=_default_workers)
    verbose: bool = False
    # run the IR verifier after every pass of ir.compile (the test suite turns this on)
    verify_every_pass: bool = False
    # serve repeated compiles of the same program text and options from the cache
    compile_cache: bool = True
    # parent of the timestamped output directories of compiles that name none
    output_root: Path = field(default_factory=lambda: Path("build_output"))


config = Config()
