"""Shared fixtures of the runtime tests.

Every test runs under a hang guard: faulthandler dumps all thread stacks and exits the process if a
test takes longer than GUARD_SECONDS, so a scheduler bug shows up as a failure, never a stuck CI.
"""

from __future__ import annotations

import faulthandler
import os
import resource

import numpy as np
import pytest

from pypto.runtime import Runtime

GUARD_SECONDS = 120

WORKER_MODES = [(1, "fifo"), (1, "locality"), (2, "fifo"), (2, "locality"), (4, "fifo"), (4, "locality")]


@pytest.fixture(autouse=True)
def hang_guard():
    faulthandler.dump_traceback_later(GUARD_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


_CACHE: dict[tuple[int, str], Runtime] = {}


def get_runtime(num_workers: int, mode: str = "fifo") -> Runtime:
    """A runtime shared by the tests of this session (creating threads for every test is slow)."""
    key = (num_workers, mode)
    rt = _CACHE.get(key)
    if rt is None:
        rt = _CACHE[key] = Runtime(num_workers=num_workers, mode=mode)
    return rt


@pytest.fixture
def serial() -> Runtime:
    """The reference: no worker threads, every task runs at submission, in order."""
    return get_runtime(0)


@pytest.fixture
def runtimes():
    """`runtimes(num_workers, mode)`: a shared runtime."""
    return get_runtime


@pytest.fixture(params=WORKER_MODES, ids=[f"{n}w-{m}" for n, m in WORKER_MODES])
def parallel(request) -> Runtime:
    """Each threaded configuration: 1, 2 and 4 workers, fifo and locality."""
    return get_runtime(*request.param)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the peak is good enough once warm
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.fixture
def rss_bytes():
    """`rss_bytes()`: the resident set size of this process now."""
    return _rss_bytes
