"""Targets are data: memory spaces with capacities and alignment, cores, pipes, data paths.

Passes read a `Target`; none hard-codes a size. This module is pure data and sits below the passes
in the layering (it reads only `pypto.ir.dtype`, `pypto.ir.enums` and `pypto.config`), so passes,
codegen and the backends all import it. `BackendType` picks the machine model planned for
and the code path; every value compiles and runs on the CPU:

| BackendType | plans for | code path |
| --- | --- | --- |
| `PTO` (default) | the CPU this runs on | PTO text -> C++ -> native |
| `CCE` | the CPU this runs on | same, kernels also written as C++ (`kernels/<name>.cpp`) |
| `Ascend910B` | Ascend 910B capacities (reference §6) | PTO text -> C++ -> native |
| `Ascend950` | Ascend 950 capacities | PTO text -> C++ -> native |
| `CPU` | the CPU this runs on | PTO text -> C++ -> native |

On the CPU target the on-chip spaces are per-worker scratch arenas sized from the machine's caches:
a kernel's live tiles stay in cache, and memory planning decides where each tile lives in the arena.
"""

from __future__ import annotations

import enum
import functools
import os
from dataclasses import dataclass, field

from pypto.errors import InvalidValue, NotFound
from pypto.ir.dtype import DataType
from pypto.ir.enums import MemorySpace, PipeType

KiB = 1024


class BackendType(enum.Enum):
    PTO = "PTO"
    CCE = "CCE"
    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"
    CPU = "CPU"


@dataclass(frozen=True)
class MemorySpec:
    space: MemorySpace
    capacity: int  # bytes per core
    alignment: int  # bytes


@dataclass(frozen=True)
class CoreSpec:
    kind: str  # "vector", "cube", "cpu"
    count: int


@dataclass(frozen=True)
class Target:
    name: str
    memory: tuple[MemorySpec, ...]
    cores: tuple[CoreSpec, ...]
    pipes: tuple[PipeType, ...]
    data_paths: frozenset[tuple[MemorySpace, MemorySpace]]
    alloc_alignment: int = 32  # address alignment used by AllocateMemoryAddr
    arch: str = "cpu"  # pto.target_arch in emitted modules
    notes: dict[str, str] = field(default_factory=dict, compare=False)

    def fingerprint(self) -> str:
        """A text that is the same for equal targets in every process (the compile cache's key):
        unlike `repr`, it does not depend on the iteration order of `data_paths`, which changes with
        Python's hash seed."""
        paths = sorted(f"{a.name}->{b.name}" for a, b in self.data_paths)
        notes = sorted(self.notes.items())
        return (f"Target({self.name!r}, memory={self.memory!r}, cores={self.cores!r}, pipes={self.pipes!r}, "
                f"data_paths={paths}, alloc_alignment={self.alloc_alignment}, arch={self.arch!r}, notes={notes})")

    def spec(self, space: MemorySpace) -> MemorySpec:
        for m in self.memory:
            if m.space is space:
                return m
        raise NotFound(f"target {self.name} has no {space.name} memory")

    def has_space(self, space: MemorySpace) -> bool:
        return any(m.space is space for m in self.memory)

    def capacity(self, space: MemorySpace) -> int:
        return self.spec(space).capacity

    def tile_bytes(self, space: MemorySpace, shape: tuple[int, ...], dtype: DataType) -> int:
        """Bytes a tile of this shape occupies in `space` (`dtype.itemsize` per element: one byte
        for BOOL and the 4-bit types, as the backends store them)."""
        n = 1
        for d in shape:
            n *= d
        return n * dtype.itemsize

    @property
    def num_cores(self) -> int:
        return sum(c.count for c in self.cores)

    def can_move(self, src: MemorySpace, dst: MemorySpace) -> bool:
        return (src, dst) in self.data_paths


_PIPES = (PipeType.MTE1, PipeType.MTE2, PipeType.MTE3, PipeType.M, PipeType.V, PipeType.S, PipeType.FIX)
D, V, MA, L, R, A, B = (MemorySpace.DDR, MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                        MemorySpace.Acc, MemorySpace.Bias)


def ascend910b() -> Target:
    """Ascend 910B (A2/A3): 24 cube + 48 vector cores per die; reference §6 capacities."""
    return Target(
        name="Ascend910B",
        memory=(MemorySpec(V, 192 * KiB, 128), MemorySpec(MA, 512 * KiB, 128), MemorySpec(L, 64 * KiB, 64),
                MemorySpec(R, 64 * KiB, 64), MemorySpec(A, 128 * KiB, 128), MemorySpec(B, 1 * KiB, 64)),
        cores=(CoreSpec("cube", 24), CoreSpec("vector", 48)),
        pipes=_PIPES,
        # (Bias: the cube's 1 KiB bias table, filled from Mat, read by matmul_bias)
        data_paths=frozenset({(D, V), (D, MA), (V, D), (MA, L), (MA, R), (A, MA), (A, D), (V, V), (MA, B)}),
        arch="a2a3",
    )


def ascend950() -> Target:
    """Ascend 950 (A5): 18 clusters of 1 cube + 2 vector cores per die, 2 dies."""
    return Target(
        name="Ascend950",
        memory=(MemorySpec(V, 248 * KiB, 128), MemorySpec(MA, 512 * KiB, 128), MemorySpec(L, 64 * KiB, 64),
                MemorySpec(R, 64 * KiB, 64), MemorySpec(A, 256 * KiB, 128), MemorySpec(B, 4 * KiB, 64)),
        cores=(CoreSpec("cube", 36), CoreSpec("vector", 72)),
        pipes=_PIPES,
        data_paths=frozenset({(D, V), (D, MA), (V, D), (MA, L), (MA, R), (A, MA), (A, D), (V, MA), (A, V),
                              (V, V), (MA, B)}),
        arch="a5",
    )


def _cache_bytes(level: int, default: int) -> int:
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for idx in sorted(os.listdir(base)):
            d = os.path.join(base, idx)
            with open(os.path.join(d, "level")) as f:
                lvl = int(f.read())
            with open(os.path.join(d, "type")) as f:
                typ = f.read().strip()
            if lvl == level and typ in ("Data", "Unified"):
                with open(os.path.join(d, "size")) as f:
                    s = f.read().strip()
                mult = {"K": KiB, "M": KiB * KiB}.get(s[-1], 1)
                return int(s.rstrip("KM")) * mult
    except (OSError, ValueError):
        pass
    return default


@functools.lru_cache(maxsize=1)
def cpu() -> Target:
    """This machine: one worker per core; on-chip spaces are scratch arenas sized from its L2.

    Vec and Mat get half of L2 each (tiles a kernel keeps live stay in cache), the matmul operand
    spaces a quarter each. Capacities are rounded down to 64 KiB and never below 128 KiB.
    """
    l2 = _cache_bytes(2, 1024 * KiB)

    def part(frac: float) -> int:
        return max(128 * KiB, int(l2 * frac) // (64 * KiB) * (64 * KiB))

    from pypto.config import config

    return Target(
        name="CPU",
        memory=(MemorySpec(V, part(0.5), 64), MemorySpec(MA, part(0.5), 64), MemorySpec(L, part(0.25), 64),
                MemorySpec(R, part(0.25), 64), MemorySpec(A, part(0.25), 64), MemorySpec(B, 16 * KiB, 64)),
        cores=(CoreSpec("cpu", config.num_workers),),
        pipes=_PIPES,
        data_paths=frozenset({(a, b) for a in (D, V, MA, L, R, A, B) for b in (D, V, MA, L, R, A, B)}),
        arch="cpu",
        notes={"l2_bytes": str(l2)},
    )


def backend_type(backend: BackendType | str) -> BackendType:
    """A BackendType from itself or its name (an error listing the names otherwise)."""
    if isinstance(backend, str):
        try:
            return BackendType[backend]
        except KeyError:
            raise InvalidValue(f"unknown backend type {backend!r}; choose one of "
                             f"{', '.join(b.name for b in BackendType)}") from None
    return backend


def target_for(backend: BackendType | str | None) -> Target:
    if backend is None:
        return cpu()
    backend = backend_type(backend)
    if backend is BackendType.Ascend910B:
        return ascend910b()
    if backend is BackendType.Ascend950:
        return ascend950()
    return cpu()


__all__ = ["BackendType", "CoreSpec", "MemorySpec", "Target", "ascend910b", "ascend950", "backend_type", "cpu", "target_for"]
