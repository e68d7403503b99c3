"""Loops and tiling settings of the tensor-level frontend (reference §1.5, §1.6).

`for i in pypto.loop(start, stop, step, name=..., idx_name=...)` records a run-time loop (a
`pl.range` of the traced function) whose index is a SymbolicScalar; a plain Python `for` runs
while tracing (unrolled). `set_vec_tile_shapes` / `set_cube_tile_shapes` are stateful, as in the
reference: each op recorded afterwards is checked against the current setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pypto.errors import InvalidValue
from pypto.ir.enums import ForKind

from .symbolic import SymbolicScalar, as_expr, simplify
from .trace import FrontendError, active, current, user_span

_GLOBAL_TILES: dict[str, Any] = {"vec": None, "cube": None}


def loop(*args: Any, name: str | None = None, idx_name: str | None = None, unroll_list: Any = None,
         submit_before_loop: bool = False, parallel: bool = False, **_ignored: Any) -> Iterator[SymbolicScalar]:
    """`loop(stop)` or `loop(start, stop, step=1)`: a run-time loop over a SymbolicScalar index."""
    if not 1 <= len(args) <= 3:
        raise FrontendError(f"pypto.loop takes (stop) or (start, stop[, step]), got {len(args)} values", user_span())
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    return _loop(start, stop, step, name, idx_name, unroll_list, parallel)


def _loop(start, stop, step, name, idx_name, unroll_list, parallel) -> Iterator[SymbolicScalar]:
    tr = current("pypto.loop")
    span = user_span()
    for what, v in (("start", start), ("stop", stop), ("step", step)):
        if not isinstance(v, (int, SymbolicScalar)) or isinstance(v, bool):
            raise FrontendError(f"pypto.loop {what} must be an int or a SymbolicScalar, got {v!r}", span)
    if isinstance(simplify(step), int) and simplify(step) <= 0:
        raise FrontendError(f"pypto.loop step must be positive, got {simplify(step)}", span)
    if idx_name is not None and idx_name in tr.loop_vars:
        raise FrontendError(f"pypto.loop idx_name {idx_name!r} is already the index of an enclosing loop", span)
    tr.loop_count += 1
    label = name or f"loop_{tr.loop_count - 1}"
    var = tr.scalar_var(idx_name or "idx")
    tr.loop_vars.append(idx_name or var.name)
    kind = ForKind.Parallel if parallel and hasattr(ForKind, "Parallel") else ForKind.Sequential
    tr.loop_ranges[var] = (as_expr(simplify(start)), as_expr(simplify(stop)))
    try:
        with tr.loop_body(var, as_expr(simplify(start)), as_expr(simplify(stop)), as_expr(simplify(step)), span):
            yield SymbolicScalar(var)
    finally:
        tr.loop_vars.pop()
        tr.loop_ranges.pop(var, None)
    del label, unroll_list, kind  # (recorded names and hints: one compiled loop either way)


def loop_unroll(start: Any, stop: Any, step: Any = 1, *, unroll_list: Any = None, name: str | None = None,
                idx_name: str | None = None, **_ignored: Any) -> Iterator[tuple[SymbolicScalar, int]]:
    """Yields `(idx, k)`: for each factor k (largest first) a loop of step `step * k` over the part
    that fits, then the rest with smaller factors; the body handles k steps at once."""
    factors = sorted({int(k) for k in (unroll_list or [])} | {1}, reverse=True)
    if any(k <= 0 for k in factors):
        raise FrontendError(f"pypto.loop_unroll: factors must be positive, got {unroll_list}", user_span())
    lo = start
    for k in factors:
        count = simplify((stop - lo) // (step * k)) if not isinstance(stop - lo, int) else (stop - lo) // (step * k)
        hi = simplify(lo + count * step * k)
        if isinstance(count, int) and count <= 0:
            continue
        for idx in _loop(lo, hi, step * k, name, idx_name, None, False):
            yield idx, k
        lo = hi


def is_loop_begin(idx: SymbolicScalar) -> SymbolicScalar:
    raise FrontendError("pypto.is_loop_begin: run-time branches (pypto.cond) are not supported yet", user_span())


def is_loop_end(idx: SymbolicScalar) -> SymbolicScalar:
    raise FrontendError("pypto.is_loop_end: run-time branches (pypto.cond) are not supported yet", user_span())


def cond(expr: Any) -> bool:
    """A branch condition: a compile-time value decides while tracing; a run-time one is refused
    (not supported yet)."""
    v = simplify(expr)
    if isinstance(v, SymbolicScalar):
        raise FrontendError("pypto.cond on a run-time value: run-time branches are not supported yet", user_span(),
                            hint="branch on values known while tracing, or compute both sides and choose with "
                                 "pypto.maximum / masks")
    return bool(v)


# ---------------------------------------------------------------------------------------------
# tile shapes

def _store(kind: str, value: Any) -> None:
    tr = active()
    if tr is not None:
        setattr(tr, f"{kind}_tile_shapes", value)
    else:
        _GLOBAL_TILES[kind] = value


def set_vec_tile_shapes(*shapes: int) -> None:
    """The tile shape of vector ops recorded from here on (one size per dim of the op's result)."""
    if len(shapes) == 1 and isinstance(shapes[0], (list, tuple)):
        shapes = tuple(shapes[0])
    if not 1 <= len(shapes) <= 5:
        raise FrontendError(f"set_vec_tile_shapes takes 1 to 5 sizes, got {len(shapes)}", user_span())
    for s in shapes:
        if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
            raise FrontendError(f"set_vec_tile_shapes: sizes must be positive ints, got {list(shapes)}", user_span())
    _store("vec", tuple(shapes))


def get_vec_tile_shapes() -> list[int]:
    tr = active()
    v = tr.vec_tile_shapes if tr is not None else _GLOBAL_TILES["vec"]
    return list(v or [])


def set_cube_tile_shapes(m: Any, k: Any, n: Any, enable_split_k: bool = False) -> None:
    """Cube tiles `[L0, L1]` per m, k, n (k may hold three entries), checked as the reference does."""
    shapes = []
    for what, v in (("m", m), ("k", k), ("n", n)):
        vals = list(v) if isinstance(v, (list, tuple)) else [v, v]
        if len(vals) == 2 and what == "k":
            vals = [vals[0], vals[1], vals[1]]
        if not all(isinstance(x, int) and x > 0 for x in vals):
            raise FrontendError(f"set_cube_tile_shapes {what}: positive ints, got {v!r}", user_span())
        if vals[0] > vals[1] or vals[1] % vals[0]:
            raise FrontendError(f"set_cube_tile_shapes {what}: L1 {vals[1]} must be a multiple of L0 {vals[0]}",
                                user_span())
        shapes.append(vals)
    _store("cube", (*shapes, bool(enable_split_k)))


def get_cube_tile_shapes() -> list[Any]:
    tr = active()
    v = tr.cube_tile_shapes if tr is not None else _GLOBAL_TILES["cube"]
    return list(v or [])


def check_vec_tile(op: str, shape: list[Any], itemsize: int) -> None:
    """The current vec tile shape fits an op's result (rank, 32-byte rows)."""
    tr = active()
    tiles = tr.vec_tile_shapes if tr is not None else None
    if tiles is None:
        return
    if len(tiles) != len(shape):
        raise FrontendError(f"{op}: set_vec_tile_shapes gave {len(tiles)} sizes {list(tiles)} but the result has rank "
                            f"{len(shape)}", user_span(), hint="set one tile size per dim before recording the op")
    if (tiles[-1] * itemsize) % 32:
        raise FrontendError(f"{op}: the tile's last dim {tiles[-1]} x {itemsize} bytes is not a multiple of 32 bytes",
                            user_span())


def reset_tile_shapes() -> None:
    _GLOBAL_TILES.update(vec=None, cube=None)


if not hasattr(ForKind, "Sequential"):  # pragma: no cover
    raise InvalidValue("ForKind.Sequential missing")

__all__ = ["cond", "get_cube_tile_shapes", "get_vec_tile_shapes", "is_loop_begin", "is_loop_end", "loop",
           "loop_unroll", "set_cube_tile_shapes", "set_vec_tile_shapes"]
