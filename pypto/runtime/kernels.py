"""Kernels for the direct task API: the built-in test kernels and any native function pointer.

Built-in kernels (compiled into the runtime library, `src/kernels.hpp`); tensors are float32 or
float64, all of one dtype per call:

    noop(...)                    nothing; any arguments (benchmarks, pure dependency structure)
    fill(out t, f64 v)           t = v
    scale_add(inout t, f64 s, f64 b)   t = t * s + b  (order-sensitive: checks hazards)
    axpy(in x, inout y, f64 s)   y += s * x          (equal shapes)
    copy(in src, out dst)        dst = src           (equal shapes)
    add(in x, in y, out z)       z = x + y           (equal shapes)
    reduce_sum(in x, inout acc)  acc.flat[0] += sum(x)
    spin(i64 ns, ...)            busy-waits ns nanoseconds; further tensor args only add dependencies
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.errors import InvalidType, InvalidValue, NotFound
from pypto.runtime.abi import ArgKind

_VARIADIC = "..."

# name -> (fixed argument kinds, variadic tail?, equal-shape tensors?)
_BUILTIN_SIGNATURES: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "noop": ((), True, False),
    "fill": (("out", "f64"), False, False),
    "scale_add": (("inout", "f64", "f64"), False, False),
    "axpy": (("in", "inout", "f64"), False, True),
    "copy": (("in", "out"), False, True),
    "add": (("in", "in", "out"), False, True),
    "reduce_sum": (("in", "inout"), False, False),
    "spin": (("i64",), True, False),
}


@dataclass(frozen=True)
class Kernel:
    """A native kernel for the direct task API.

    `fn` is the address of a `pto_kernel_fn`; `kernel_id` labels its tasks in traces. `kinds` is
    the fixed part of the signature (None: unchecked), `variadic` allows more arguments after it.
    `builtin` kernels also get their element types and shapes checked, since a mismatch would make
    them read out of bounds.
    """

    name: str
    fn: int
    kernel_id: int
    kinds: tuple[ArgKind, ...] | None = None
    variadic: bool = False
    equal_shapes: bool = False
    builtin: bool = False

    def kinds_for(self, args: tuple[Any, ...], kinds: list[ArgKind | str] | None) -> list[Any] | None:
        """The kinds of a call with `args`: given ones, else the signature's, else None (inferred)."""
        if self.kinds is not None:
            n = len(self.kinds)
            if len(args) < n or (len(args) > n and not self.variadic):
                want = f"{n}{'+' if self.variadic else ''}"
                raise InvalidType(f"kernel {self.name!r} takes {want} arguments "
                                f"({', '.join(k.name.lower() for k in self.kinds)}), got {len(args)}")
            if kinds is None:
                from pypto.runtime.marshal import infer_kind

                return list(self.kinds) + [infer_kind(v) for v in args[n:]]
        return kinds

    def check(self, resolved: list[tuple[ArgKind, Any]]) -> None:
        """Raise TypeError/ValueError if `resolved` ((kind, value) pairs) does not fit this kernel."""
        if self.kinds is None:
            return
        n = len(self.kinds)
        if len(resolved) < n or (len(resolved) > n and not self.variadic):
            want = f"{n}{'+' if self.variadic else ''}"
            raise InvalidType(f"kernel {self.name!r} takes {want} arguments "
                            f"({', '.join(k.name.lower() for k in self.kinds)}), got {len(resolved)}")
        for i, (k, want) in enumerate(zip((k for k, _ in resolved), self.kinds)):
            if k != want:
                raise InvalidType(f"kernel {self.name!r}: argument {i} must be {want.name.lower()}, "
                                f"got {k.name.lower()}")
        if not self.builtin:
            return
        arrays = [v for k, v in resolved[:n] if k.is_tensor]
        if self.name in ("noop", "spin"):
            return
        dtypes = {a.dtype for a in arrays}
        if len(dtypes) > 1 or not dtypes <= {np.dtype(np.float32), np.dtype(np.float64)}:
            raise InvalidType(f"built-in kernel {self.name!r} takes float32 or float64 arrays of one dtype, "
                            f"got {', '.join(str(d) for d in dtypes)}")
        if self.equal_shapes and len({a.shape for a in arrays}) > 1:
            raise InvalidValue(f"built-in kernel {self.name!r} needs equal shapes, got "
                             f"{', '.join(str(a.shape) for a in arrays)}")
        if self.name == "reduce_sum" and arrays[1].size == 0:
            raise InvalidValue("built-in kernel 'reduce_sum' needs a non-empty accumulator")


@functools.cache
def builtin_kernel(name: str) -> Kernel:
    """The built-in kernel `name` (see the module docstring)."""
    from pypto.runtime.native import builtin_kernels

    table = builtin_kernels()
    if name not in table or name not in _BUILTIN_SIGNATURES:
        raise NotFound(f"no built-in kernel {name!r}; available: {', '.join(sorted(table))}")
    index, fn = table[name]
    kinds, variadic, equal = _BUILTIN_SIGNATURES[name]
    return Kernel(name, fn, index, tuple(ArgKind.parse(k) for k in kinds), variadic, equal, builtin=True)


def builtin_names() -> list[str]:
    return sorted(_BUILTIN_SIGNATURES)


def as_kernel(kernel: Kernel | str) -> Kernel:
    return builtin_kernel(kernel) if isinstance(kernel, str) else kernel


__all__ = ["Kernel", "as_kernel", "builtin_kernel", "builtin_names"]
