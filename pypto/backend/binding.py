"""Binding a call's arguments to a compiled program's parameters (the first step of calling).

`bind(signature, args, kwargs)` checks the arguments (positional or by name; dtypes, ranks, static
and dynamic extents; scalars' ranges), converts PyTorch CPU tensors to NumPy views (zero-copy),
allocates the outputs the caller did not pass, and separates memory the program must not see
twice: it returns a `BoundCall`, which a platform runs and `launch.unpack` turns into results.
Every failure is an `ArgumentError` naming the parameter.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.ir.dtype import DataType

from .signature import ArgumentError, Param, Signature

_TOO_HARD = getattr(np, "exceptions", np).TooHardError


@dataclass(frozen=True)
class BoundCall:
    """A call ready to run. The arrays in `values` and `outputs` are what the program reads and
    writes (the caller's own arrays where that is safe, copies or allocations elsewhere)."""

    signature: Signature
    given: tuple[Any, ...]  # the caller's objects in parameter order (None: allocated), then trailing outputs
    values: tuple[Any, ...]  # per parameter: the array the program runs on, or the scalar
    outputs: tuple[np.ndarray, ...]  # per result that is no parameter: where the program writes it
    writebacks: tuple[tuple[np.ndarray, np.ndarray], ...]  # (caller's array, contiguous copy run on)
    torch: bool  # some argument was a torch tensor: results made here are returned as torch tensors

    @property
    def trailing(self) -> tuple[Any, ...]:
        """The outputs the caller passed after the parameters (empty: `outputs` were allocated)."""
        return self.given[len(self.signature.params):]


def bind(sig: Signature, args: tuple, kwargs: dict[str, Any]) -> BoundCall:
    """Check and marshal `args` / `kwargs` for `sig` (see the module docstring)."""
    params = sig.params
    n = len(params)
    given = _arrange(sig, args, kwargs)
    binder = Binder()
    values: list[Any] = []
    torch_in = any(_is_torch(v) for v in (*args, *kwargs.values()))
    for p, v in zip(params, given[:n]):
        if p.kind == "scalar":
            values.append(_scalar(v, p))
            continue
        if v is None:
            values.append(None)
            continue
        a = _same_bits(_to_numpy(v, p), p)
        if a.ndim == 1 and len(p.shape) == 1 and isinstance(p.shape[0], int) and a.shape[0] > p.shape[0]:
            # a longer 1-D buffer than declared: its leading elements, as the public runtime (which passes
            # the buffer's address) reads them (a March test hands a [9] config to a [7] parameter)
            a = a[: p.shape[0]]
        binder.check(p, a)
        if p.dir in ("out", "inout") and not a.flags.writeable:
            raise ArgumentError(f"parameter '{p.name}' is written ({p.dir}) but the array passed is read-only")
        if p.dir == "in" and p.written:  # written by the program, declared input: work on a copy
            a = np.array(a, order="C", copy=True)
        values.append(a)
    for i, (p, v) in enumerate(zip(params, values)):
        if v is None:
            values[i] = np.zeros(binder.shape_of(p, f"output parameter '{p.name}'"), p.dtype.to_numpy())
    outputs = _outputs(sig, given[n:], binder)
    extra_given = given[n:]
    tensors = [(f"parameter '{p.name}'", v, p.dir in ("out", "inout")) for p, v in zip(params, values)
               if p.kind == "tensor"] + [(f"output {k}", o, True) for k, o in enumerate(outputs) if extra_given]
    where = [i for i, p in enumerate(params) if p.kind == "tensor"] + [n + k for k in range(len(outputs))]
    writebacks: list[tuple[np.ndarray, np.ndarray]] = []
    for t, copy in _separate_overlaps(tensors).items():  # (only read-only arguments are copied)
        values[where[t]] = copy
    for i, (p, a) in enumerate(zip(params, values)):
        if p.kind == "tensor" and not _usable(a):
            c = np.array(a, order="C", copy=True)  # (ascontiguousarray keeps a misaligned array as is)
            if p.dir in ("out", "inout"):
                writebacks.append((a, c))
            values[i] = c
    return BoundCall(sig, tuple(given), tuple(values), tuple(outputs), tuple(writebacks), torch_in)


def _outputs(sig: Signature, extra_given: list[Any], binder: Binder) -> list[np.ndarray]:
    """Where each result that is no parameter is written: the caller's trailing output (checked,
    zeroed) or a new zeroed array."""
    outputs: list[np.ndarray] = []
    k = 0
    for (pidx, _), r in zip(sig.slots, sig.returns):
        if pidx is not None or r.kind != "tensor":
            continue
        if extra_given:
            o = _same_bits(_to_numpy(extra_given[k], r), r)
            binder.check(Param(f"output {k}", "tensor", r.dtype, r.shape, "out"), o)
            if not _usable(o) or not o.flags.writeable:
                raise ArgumentError(f"output {k} must be a writeable, contiguous, aligned array")
            o.fill(0)  # a tensor the program creates starts zeroed, wherever its buffer comes from
        else:
            o = np.zeros(binder.shape_of(r, f"result {k}"), r.dtype.to_numpy())
        outputs.append(o)
        k += 1
    return outputs


def _arrange(sig: Signature, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """The arguments in parameter order (None: an output to allocate), then any trailing outputs."""
    params = sig.params
    n = len(params)
    n_new = sum(1 for s in sig.slots if s[0] is None)
    outs_idx = [i for i, p in enumerate(params) if p.dir == "out"]
    names = ", ".join(p.name for p in params)
    if kwargs:
        if len(args) > n:
            raise ArgumentError(f"{sig.entry}() takes {n} arguments ({names}); got {len(args)} positional ones and "
                                f"keywords {', '.join(kwargs)} (trailing outputs cannot be mixed with keywords)")
        given: list[Any] = [*args, *([None] * (n - len(args)))]
        index = {p.name: i for i, p in enumerate(params)}
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                raise ArgumentError(f"{sig.entry}() has no parameter '{k}'; its parameters are {names}")
            if i < len(args):
                raise ArgumentError(f"{sig.entry}() got parameter '{k}' twice (by position and by keyword)")
            given[i] = v
        missing = [params[i].name for i, v in enumerate(given) if v is None and params[i].dir != "out"]
        if missing:
            raise ArgumentError(f"{sig.entry}() is missing argument{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(m) for m in missing)}")
        return given
    given = list(args)
    if len(given) == n - len(outs_idx) and outs_idx and len(given) != n:
        it = iter(given)
        return [None if i in outs_idx else next(it) for i in range(n)]
    if len(given) not in (n, n + n_new):
        extra = f" (+ {n_new} output{'s' if n_new > 1 else ''})" if n_new else ""
        raise ArgumentError(f"{sig.entry}() takes {n} arguments ({names}){extra}, got {len(args)}")
    return given


def _is_torch(v: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def _to_numpy(v: Any, p: Param) -> np.ndarray:
    if isinstance(v, np.ndarray):
        return v
    host = getattr(v, "host_tensor", None)  # a pypto.runtime.DeviceTensor: its (host) memory
    if callable(host):
        v = host()
    if _is_torch(v):
        import torch

        if v.device.type != "cpu":
            raise ArgumentError(f"parameter '{p.name}': tensor is on {v.device}; move it to the CPU with .cpu()")
        t = v.detach()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(DataType.BF16.to_numpy())
        try:
            return t.numpy()
        except TypeError as e:
            raise ArgumentError(f"parameter '{p.name}': cannot view torch dtype {t.dtype} as an array: {e}") from None
    raise ArgumentError(f"parameter '{p.name}' is a tensor ({p.dtype.name} {_shape_str(p.shape)}); got "
                        f"{type(v).__name__}")


def _same_bits(a: np.ndarray, p: Param) -> np.ndarray:
    """A signed integer array for an unsigned parameter of the same width (or the reverse) is viewed
    as the parameter's dtype: torch has no uint32 and little uint16, so its users (and the public
    test harness) pass int32 / int16 tensors holding the same bits. Writes go to the caller's buffer."""
    want = p.dtype.numpy if a.dtype.kind in "iu" else None
    if want is not None and a.dtype != want and want.kind in "iu" and a.dtype.itemsize == want.itemsize:
        return a.view(want)
    return a


def _shape_str(shape: tuple | list) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _usable(a: np.ndarray) -> bool:
    """Can the runtime take this array as is (innermost axis contiguous, positive aligned strides)?"""
    if a.ndim == 0:
        return True
    isz = a.itemsize
    if a.strides[-1] != isz and a.shape[-1] > 1:
        return False
    return all(s >= 0 and s % isz == 0 for s in a.strides) and a.__array_interface__["data"][0] % isz == 0


class Binder:
    """Binds dynamic dimension names to sizes, checking consistency."""

    def __init__(self) -> None:
        self.dims: dict[str, tuple[int, str]] = {}

    def check(self, p: Param, a: np.ndarray) -> None:
        if a.dtype != p.dtype.to_numpy():
            raise ArgumentError(f"parameter '{p.name}' expects dtype {p.dtype.name} "
                                f"({p.dtype.to_numpy()}), got {a.dtype}")
        if a.ndim != len(p.shape):
            raise ArgumentError(f"parameter '{p.name}' expects rank {len(p.shape)} {_shape_str(p.shape)}, got shape "
                                f"{list(a.shape)}")
        for ax, (d, n) in enumerate(zip(p.shape, a.shape)):
            if isinstance(d, int):
                if d != n:
                    raise ArgumentError(f"parameter '{p.name}' expects shape {_shape_str(p.shape)}, got "
                                        f"{list(a.shape)} (axis {ax})")
            elif d != "?":
                prev = self.dims.get(d)
                if prev is not None and prev[0] != n:
                    raise ArgumentError(f"dynamic dimension '{d}' is {prev[0]} from {prev[1]} but {n} from "
                                        f"parameter '{p.name}' (axis {ax})")
                self.dims.setdefault(d, (n, f"parameter '{p.name}'"))

    def shape_of(self, p: Param, what: str) -> tuple[int, ...]:
        out = []
        for d in p.shape:
            if isinstance(d, int):
                out.append(d)
            elif d in self.dims:
                out.append(self.dims[d][0])
            else:
                raise ArgumentError(f"cannot tell the shape of {what} ({_shape_str(p.shape)}); pass it as an argument")
        return tuple(out)


def _scalar(v: Any, p: Param) -> int | float:
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if _is_torch(v) and v.dim() == 0:
        v = v.item()
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if p.dtype.is_float:
        if isinstance(v, (int, float, np.integer, np.floating)):
            try:
                return float(v)
            except OverflowError:
                raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; {v} is too large for a "
                                    f"float") from None
    elif isinstance(v, (int, np.integer)):
        v = int(v)
        if p.dtype.is_int:
            lo, hi = p.dtype.int_range
            hi = min(hi, (1 << 63) - 1)  # scalars travel as int64
            if not lo <= v <= hi:
                raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; {v} is outside its range "
                                    f"[{lo}, {hi}]")
        return v
    raise ArgumentError(f"parameter '{p.name}' is a {p.dtype.name} scalar; got {type(v).__name__} {v!r}")


def _separate_overlaps(named: list[tuple[str, np.ndarray, bool]]) -> dict[int, np.ndarray]:
    """Arguments that share memory with an argument the program writes: each read-only one is
    replaced by a copy (the program reads its inputs as they were at the call, as NumPy's `out=`
    does); two written ones that overlap are an error. Returns index -> copy."""
    copies: dict[int, np.ndarray] = {}
    for i, (ni, ai, wi) in enumerate(named):
        for j in range(i):
            nj, aj, wj = named[j]
            if not (wi or wj) or not np.may_share_memory(ai, aj):
                continue
            if wi and wj:
                try:
                    overlap = np.shares_memory(ai, aj, max_work=10_000)
                except _TOO_HARD:
                    overlap = True
                if overlap:
                    raise ArgumentError(f"{ni} and {nj} are both written by the program and overlap in memory; "
                                        f"pass separate arrays")
                continue
            k = j if wi else i
            if k not in copies:
                copies[k] = np.array(named[k][1], order="C", copy=True)
    return copies


__all__ = ["Binder", "BoundCall", "bind"]
