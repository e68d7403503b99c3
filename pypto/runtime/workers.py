"""The public PyPTO's worker API on the CPU: `ChipWorker` (a session on one "device"), its
`DeviceTensor`s and `RegistrationHandle`s, and `benchmark(...)`.

On the CPU the device is this process: device memory is host memory (a `DeviceTensor` owns a
torch tensor, `data_ptr` is its address), copies are `memmove`, and running a compiled program on
a worker is calling it (the native runtime). `benchmark` times the native runs as "device" time
(the runtime's own elapsed time per run) and the whole call as host time.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import InvalidState, InvalidValue


@dataclass(frozen=True)
class DeviceTensor:
    """A tensor in "device" memory: here, host memory owned by `buffer` (a torch tensor)."""

    data_ptr: int
    shape: tuple
    torch_dtype: Any
    buffer: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.data_ptr, int) or self.data_ptr <= 0:
            raise InvalidValue(f"DeviceTensor.data_ptr must be an int > 0, got {self.data_ptr!r}")
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def nbytes(self) -> int:
        import torch

        n = 1
        for d in self.shape:
            n *= d
        return n * torch.empty((), dtype=self.torch_dtype).element_size()

    def host_tensor(self) -> Any:
        """The memory a run reads and writes (binding takes a DeviceTensor through this)."""
        if self.buffer is None:
            raise InvalidValue("this DeviceTensor has no buffer (it was not allocated by a ChipWorker)")
        return self.buffer


StackedDeviceTensor = DeviceTensor  # (one worker: a [B, ...] tensor lives in one buffer)


class RegistrationHandle:
    """A compiled program registered with a worker: callable, `unregister()`, a context manager."""

    def __init__(self, worker: ChipWorker, compiled: Any):
        self.worker, self.compiled, self.registered = worker, compiled, True
        compiled.load()  # (registration builds and loads the native program once)

    def __call__(self, *args: Any, config: Any = None) -> Any:
        if not self.registered:
            raise InvalidState("this RegistrationHandle was unregistered")
        return self.worker.run(self.compiled, *args, config=config)

    def unregister(self) -> None:
        self.registered = False

    def __enter__(self) -> RegistrationHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()


class ChipWorker:
    """One (platform, device_id, runtime) session; a context manager. On the CPU it owns the
    tensors it allocates (freed on close) and runs programs in this process."""

    def __init__(self, config: Any = None, *, level: int = 2, runtime: str = "tensormap_and_ringbuffer",
                 enable_sdma: bool = False, auto_init: bool | None = None):
        from .run_config import RunConfig

        self.config = config if config is not None else RunConfig()
        self.level, self.runtime = level, runtime
        self.initialized = False
        self._owned: dict[int, Any] = {}
        self._loaded: dict[int, Any] = {}  # id(compiled) -> compiled: the callables this worker has loaded
        if auto_init or auto_init is None:
            self.init()

    platform = property(lambda self: self.config.platform)
    device_id = property(lambda self: self.config.device_id)

    def init(self) -> None:
        self.initialized = True

    def close(self) -> None:
        self._owned.clear()
        self._loaded.clear()
        self.initialized = False

    @property
    def aicpu_dlopen_count(self) -> int:
        """How many distinct compiled programs this worker has loaded (the CPU's counterpart of the
        device's callable dlopens): `register` and the first `run` of a program load it once."""
        return len(self._loaded)

    def _load(self, compiled: Any) -> None:
        if id(compiled) not in self._loaded:
            load = getattr(compiled, "load", None)
            if load is not None:
                load()
            self._loaded[id(compiled)] = compiled  # (kept alive, so the id is not reused)

    def __enter__(self) -> ChipWorker:
        if not self.initialized:
            self.init()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        self._load(compiled)
        return compiled(*args, config=config if config is not None else self.config)

    def register(self, compiled: Any) -> RegistrationHandle:
        self._load(compiled)
        return RegistrationHandle(self, compiled)

    def alloc_tensor(self, shape: Any, torch_dtype: Any, *, init: Any = None, worker_id: int = 0) -> DeviceTensor:
        import torch

        buf = torch.zeros(tuple(shape), dtype=torch_dtype)
        if init is not None:
            buf.copy_(torch.as_tensor(init, dtype=torch_dtype).reshape(buf.shape))
        self._owned[buf.data_ptr()] = buf
        return DeviceTensor(buf.data_ptr(), tuple(shape), torch_dtype, buffer=buf)

    def free_tensor(self, t: DeviceTensor) -> None:
        self._owned.pop(t.data_ptr, None)

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        buf = ctypes.create_string_buffer(int(nbytes))
        ptr = ctypes.addressof(buf)
        self._owned[ptr] = buf
        return ptr

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        self._owned.pop(ptr, None)

    def copy_to(self, dst_ptr: int, src_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        ctypes.memmove(dst_ptr, src_ptr, nbytes)

    def copy_from(self, dst_ptr: int, src_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        ctypes.memmove(dst_ptr, src_ptr, nbytes)


Worker = ChipWorker


@dataclass
class BenchmarkStats:
    """Per-round times of `benchmark(...)`: device = the native runtime's elapsed time of a run,
    host = the whole call (binding, dispatch, copy back)."""

    device_wall_us: list[float]
    host_wall_us: list[float]
    rounds: int
    warmup: int
    invocations: int = 1
    rounds_dispatches: list[int] = field(default_factory=list)

    def _dev(self) -> list[float]:
        return self.device_wall_us or [0.0]

    device_us_min = property(lambda self: min(self._dev()))
    device_us_max = property(lambda self: max(self._dev()))
    device_us_mean = property(lambda self: statistics.fmean(self._dev()))
    device_us_median = property(lambda self: statistics.median(self._dev()))
    device_us_stdev = property(lambda self: statistics.pstdev(self._dev()))
    samples = property(lambda self: len(self.device_wall_us))
    all_zero_device = property(lambda self: all(v == 0 for v in self.device_wall_us))

    def per_round(self, metric: str = "device_wall_us") -> list[float]:
        return list(getattr(self, metric))

    def format_tree(self) -> str:
        return (f"benchmark: {self.rounds} rounds (+{self.warmup} warmup)\n"
                f"  device us: min {self.device_us_min:.1f}  median {self.device_us_median:.1f}  "
                f"mean {self.device_us_mean:.1f}  max {self.device_us_max:.1f}\n"
                f"  host us:   median {statistics.median(self.host_wall_us or [0.0]):.1f}")

    format_mean_tree = format_tree

    def print_tree(self) -> None:
        print(self.format_tree())

    print_mean_tree = print_tree


def benchmark(compiled: Any, args: Any, *, rounds: int = 100, warmup: int = 3, platform: str | None = None,
              device_id: int | None = None, config: Any = None, persistent: bool = False,
              reset_persistent_windows: Any = None) -> BenchmarkStats:
    """Run `compiled(*args)` `warmup + rounds` times; time each round (see BenchmarkStats)."""
    from .run_config import RunConfig

    if rounds < 1 or warmup < 0:
        raise InvalidValue(f"benchmark needs rounds >= 1 and warmup >= 0, got {rounds}, {warmup}")
    cfg = config if config is not None else RunConfig()
    changes = {k: v for k, v in (("platform", platform), ("device_id", device_id)) if v is not None}
    if changes:
        cfg = cfg.replace(**changes)
    args = tuple(args)
    compiled.load()
    for _ in range(warmup):
        compiled(*args, config=cfg)
    dev, host = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        compiled(*args, config=cfg)
        host.append((time.perf_counter() - t0) * 1e6)
        run = getattr(compiled, "last_run", None)
        stats = getattr(run, "stats", None)
        dev.append(stats.elapsed_ns / 1e3 if stats is not None else host[-1])
    return BenchmarkStats(dev, host, rounds, warmup, 1, [1] * rounds)


__all__ = ["BenchmarkStats", "ChipWorker", "DeviceTensor", "RegistrationHandle", "StackedDeviceTensor", "Worker",
           "benchmark"]
