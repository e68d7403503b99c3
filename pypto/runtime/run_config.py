"""`RunConfig`: how to run a compiled program (platform, workers, scheduling, tracing, checks).

Code written against the public PyPTO passes one of these to the run / compile helpers. It is
plain data, free of IR imports. Unknown fields raise a TypeError that lists the valid ones.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from dataclasses import dataclass, fields
from typing import Any

from pypto.errors import InvalidType, InvalidValue

_SCHED_MODES = ("fifo", "locality")


@dataclass
class RunConfig:
    platform: str = "cpu"              # target platform ("cpu" here; other names are for other backends)
    device_id: int = 0
    rtol: float = 1e-5                 # tolerances when comparing against a golden reference
    atol: float = 1e-5
    num_workers: int | None = None     # None: pypto.config.num_workers
    sched_mode: str = "fifo"           # "fifo" or "locality"
    enable_trace: bool = False         # record a per-task trace
    enable_chip_swimlane: bool = False  # the device's swimlane profile (accepted; the CPU trace is enable_trace)
    trace_path: str | os.PathLike[str] | None = None   # where to write the Chrome trace JSON
    warmup: int = 0                    # untimed runs before the timed ones (cpu; each one writes the outputs)
    repeat: int = 1                    # timed runs; their seconds are in compiled.last_times

    def __post_init__(self) -> None:
        if not isinstance(self.platform, str) or not self.platform:
            raise InvalidValue(f"RunConfig.platform must be a non-empty string, got {self.platform!r}")
        if not isinstance(self.device_id, int) or self.device_id < 0:
            raise InvalidValue(f"RunConfig.device_id must be an int >= 0, got {self.device_id!r}")
        for name in ("rtol", "atol"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or v < 0:
                raise InvalidValue(f"RunConfig.{name} must be a number >= 0, got {v!r}")
        if self.num_workers is not None and (not isinstance(self.num_workers, int) or self.num_workers < 0):
            raise InvalidValue(f"RunConfig.num_workers must be None or an int >= 0, got {self.num_workers!r}")
        if self.sched_mode not in _SCHED_MODES:
            raise InvalidValue(f"RunConfig.sched_mode must be one of {_SCHED_MODES}, got {self.sched_mode!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise InvalidValue(f"RunConfig.warmup must be an int >= 0, got {self.warmup!r}")
        if not isinstance(self.repeat, int) or self.repeat < 1:
            raise InvalidValue(f"RunConfig.repeat must be an int >= 1, got {self.repeat!r}")
        if self.trace_path is not None:
            self.enable_trace = True

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed (unknown fields raise TypeError)."""
        _check_fields(changes)
        return dataclasses.replace(self, **changes)


_FIELDS = tuple(f.name for f in fields(RunConfig))
_generated_init = RunConfig.__init__


def _check_fields(kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(kwargs) - set(_FIELDS))
    if unknown:
        raise InvalidType(f"RunConfig has no field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                        f"valid fields: {', '.join(_FIELDS)}")


def _init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    _check_fields(kwargs)
    if len(args) > len(_FIELDS):
        raise InvalidType(f"RunConfig takes at most {len(_FIELDS)} positional arguments ({', '.join(_FIELDS)})")
    _generated_init(self, *args, **kwargs)


_init.__doc__ = _generated_init.__doc__
_init.__signature__ = inspect.signature(_generated_init)  # type: ignore[attr-defined]
RunConfig.__init__ = _init  # type: ignore[method-assign]

__all__ = ["RunConfig"]
