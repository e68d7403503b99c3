"""Loops and tiling settings of the tensor-level frontend (reference §1.5, §1.6).

`for i in pypto.loop(start, stop, step, name=..., idx_name=...)` records a run-time loop (a
`pl.range` of the traced function) whose index is a SymbolicScalar; a plain Python `for` runs
while tracing (unrolled). `set_vec_tile_shapes` / `set_cube_tile_shapes` are stateful, as in the
reference: each op recorded afterwards is checked against the current setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pypto.ir.expr import Add

from .symbolic import SymbolicScalar, as_expr, build, simplify
from .tensor import Tensor
from .trace import FrontendError, active, current, user_span

_GLOBAL_TILES: dict[str, Any] = {"vec": None, "cube": None}


def loop(*args: Any, name: str | None = None, idx_name: str | None = None, unroll_list: Any = None,
         submit_before_loop: bool = False, parallel: bool = False, **_ignored: Any) -> Iterator[SymbolicScalar]:
    """`loop(stop)` or `loop(start, stop, step=1)`: a run-time loop over a SymbolicScalar index."""
    if not 1 <= len(args) <= 3:
        raise FrontendError(f"pypto.loop takes (stop) or (start, stop[, step]), got {len(args)} values", user_span())
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    if unroll_list:
        return _replicated(start, stop, step, name, idx_name, unroll_list)
    n = _nbuffer()
    if n > 1:  # vec_nbuffer_setting: n iterations per task, their ops merged into one kernel
        return _replicated(start, stop, step, name, idx_name, [n], merge=True)
    return _loop(start, stop, step, name, idx_name, unroll_list, parallel)


def _nbuffer() -> int:
    """The breadth-merge count of `pass_options["vec_nbuffer_setting"]` for all loops (an int, or
    the `-1` / `"DEFAULT"` entry of its dict); 1 when unset."""
    from .options import traced_option

    v = traced_option("pass_options", "vec_nbuffer_setting")
    if isinstance(v, dict):
        v = v.get(-1, v.get("DEFAULT", 1))
    try:
        return max(1, int(v)) if v is not None else 1
    except (TypeError, ValueError):
        return 1


def _replicated(start, stop, step, name, idx_name, unroll_list, merge: bool = False) -> Iterator[SymbolicScalar]:
    """`pypto.loop(..., unroll_list=[k, ...])`: for each factor (largest first) a loop of step
    `step * k` over the part that fits whose body is the user's body k times (indices idx, idx +
    step, ...), then the rest with the smaller factors. With `merge`, the k bodies of an iteration
    are recorded under one fusion scope (one kernel: merge_scopes.py)."""
    tr = current("pypto.loop")
    for idx, k in loop_unroll(start, stop, step, unroll_list=unroll_list, name=name, idx_name=idx_name):
        if merge and k > 1:
            tr.forced_scope = 1_000_000 + tr.loop_count  # (an id no user scope takes)
        try:
            for j in range(k):
                yield idx if j == 0 else SymbolicScalar(build(Add, idx, j * step))
        finally:
            tr.forced_scope = None


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
    var = tr.scalar_var(idx_name or "idx")
    tr.loop_vars.append(idx_name or var.name)
    tr.loop_ranges[var] = (as_expr(simplify(start)), as_expr(simplify(stop)))
    tr.loop_steps[var] = as_expr(simplify(step))
    try:
        with tr.loop_body(var, as_expr(simplify(start)), as_expr(simplify(stop)), as_expr(simplify(step)), span):
            yield SymbolicScalar(var)
    finally:
        tr.loop_vars.pop()
        tr.loop_ranges.pop(var, None)
        tr.loop_steps.pop(var, None)


def loop_unroll(start: Any, stop: Any, step: Any = 1, *, unroll_list: Any = None, name: str | None = None,
                idx_name: str | None = None, **_ignored: Any) -> Iterator[tuple[SymbolicScalar, int]]:
    """Yields `(idx, k)`: for each factor k (largest first) a loop of step `step * k` over the part
    that fits, then the rest with smaller factors; the body handles k steps at once."""
    factors = sorted({int(k) for k in (unroll_list or [])} | {1}, reverse=True)
    if any(k <= 0 for k in factors):
        raise FrontendError(f"pypto.loop_unroll: factors must be positive, got {unroll_list}", user_span())
    lo = start
    for k in factors:
        count = simplify((stop - lo) // (step * k))
        if isinstance(count, int) and count <= 0:
            continue
        hi = simplify(lo + count * step * k)
        for idx in _loop(lo, hi, step * k, name, idx_name, None, False):
            yield idx, k
        lo = hi


def _loop_of(idx: Any, what: str) -> tuple[Any, Any]:
    tr = current(what)
    v = getattr(idx, "expr", None)
    if v not in tr.loop_ranges:
        raise FrontendError(f"{what} takes the index of an enclosing pypto.loop", user_span())
    return tr.loop_ranges[v], tr.loop_steps[v]


def is_loop_begin(idx: SymbolicScalar) -> SymbolicScalar:
    """True on the first iteration of the pypto.loop whose index is `idx` (a run-time condition)."""
    (start, _), _ = _loop_of(idx, "pypto.is_loop_begin")
    return idx == SymbolicScalar(start)


def is_loop_end(idx: SymbolicScalar) -> SymbolicScalar:
    """True on the last iteration of the pypto.loop whose index is `idx`."""
    (_, stop), step = _loop_of(idx, "pypto.is_loop_end")
    return idx + SymbolicScalar(step) >= SymbolicScalar(stop)


def cond(expr: Any) -> Any:
    """A branch condition (`if pypto.cond(x):`): a value known while tracing decides at once; a
    run-time one makes the `if` a run-time branch of the kernel."""
    return simplify(expr)


class _Branch:
    """One `if` of a traced kernel (autograph.py rewrites `if` statements into its calls)."""

    def __init__(self, test: Any):
        if isinstance(test, SymbolicScalar) and test.is_concrete():
            test = test.concrete()
        self.static = not isinstance(test, SymbolicScalar)
        self.value = bool(test) if self.static else None  # (a Tensor here raises its own clear error)
        self.test = test
        self.saved: dict[str, dict[str, Any]] = {"then": {}, "else": {}}
        self.tr = None if self.static else current("a run-time if")
        self.span = user_span()
        self.before = self.then_side = self.else_side = None
        self.depth0 = self.tr.depth if self.tr is not None else 0

    def __enter__(self) -> _Branch:
        return self

    def then(self) -> bool:
        if self.static:
            return self.value
        self.before = self.tr.branch_open()
        return True

    def orelse(self) -> bool:
        if self.static:
            return not self.value
        self.then_side = self.tr.branch_close(self.before)
        self.tr.branch_open()
        return True

    def save(self, side: str, env: dict[str, Any], names: tuple[str, ...]) -> None:
        self.saved[side] = {n: env[n] for n in names if n in env}

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.static:
            return False
        if exc_type is not None:  # the trace fails: close the side left open
            while self.tr.depth > self.depth0:
                self.tr.blocks.pop()
            return False
        self.else_side = self.tr.branch_close(self.before)
        self.merged_handles: dict[str, Any] = {}
        extra = []
        for name in self.saved["then"]:
            a, b = self.saved["then"][name], self.saved["else"].get(name, _MISSING)
            if b is _MISSING:
                continue
            if isinstance(a, Tensor) and isinstance(b, Tensor):
                if a is b:
                    continue
                m = Tensor._wrap(a._value(), a._hint)
                extra.append((m, a._value(), b._value()))
                self.merged_handles[name] = m
            elif a is not b and not (type(a) is type(b) and _same(a, b)):
                raise FrontendError(f"`{name}` is assigned different values on the two sides of a run-time if; only "
                                    "tensors can differ between them", self.span)
        self.tr.emit_if(self.test.expr, self.then_side, self.else_side, self.before, extra, self.span)
        return False

    def merged(self, names: tuple[str, ...]) -> tuple[Any, ...]:
        out = []
        for n in names:
            if self.static:
                out.append(self.saved["then" if self.value else "else"][n])
            else:
                out.append(self.merged_handles.get(n, self.saved["then"][n]))
        return tuple(out)


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


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
    nbytes = itemsize
    for t in tiles:
        nbytes *= t
    cap = _vec_capacity()
    if nbytes > cap:
        raise FrontendError(f"{op}: a tile of {list(tiles)} ({nbytes} bytes) does not fit the vector memory "
                            f"({cap} bytes)", user_span(), hint="choose smaller tile shapes with set_vec_tile_shapes")


def _vec_capacity() -> int:
    from pypto.ir.enums import MemorySpace
    from pypto.target import target_for

    return target_for(None).capacity(MemorySpace.Vec)


def reset_tile_shapes() -> None:
    _GLOBAL_TILES.update(vec=None, cube=None)


__all__ = ["cond", "get_cube_tile_shapes", "get_vec_tile_shapes", "is_loop_begin", "is_loop_end", "loop",
           "loop_unroll", "set_cube_tile_shapes", "set_vec_tile_shapes"]
