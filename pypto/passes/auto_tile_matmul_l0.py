"""AutoTileMatmulL0: a static matmul whose operands live in Mat (L1) runs in L0-sized pieces.

Today's language lets `pl.matmul` / `pl.matmul_acc` / `pl.matmul_bias` read Mat tiles (the operands
move into Left / Right implicitly). On a target with L0 buffers (Left, Right, Acc) this pass picks
the pieces with the L0 tile chooser (l0_tiling.py) and writes them out as straight-line tile code:

* the whole problem fits L0: `move(a, Left)`, `move(b, Right)`, the matmul;
* a K split: per output tile, the first K block is a matmul (or the matmul_acc / matmul_bias the
  user wrote), the others matmul_acc into it; a K that the block does not divide ends with a
  narrower tail block (the boundary peel);
* an M / N grid (the result does not fit one Acc tile): allowed only when the result's one use is a
  `store`; each output tile is stored at its place (M / N that the tile does not divide end in
  narrower boundary tiles). A-stationary extracts each row block of A once, B-stationary each
  column block of B once.

Operand windows are `block.extract(src, row, col, [h, w], target_memory=Left/Right)`. A Left / Right
operand that is a `move` of a Mat tile and does not fit its L0 buffer is tiled from the Mat tile.
Dynamic shapes, partial (valid-shape) tiles and anything else are left as written.
"""

from __future__ import annotations

import dataclasses

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.op import OpError, create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, Stmt, WhileStmt, seq, stmt_list
from pypto.ir.types import TileType

from .base import IRProperty, Pass, PassContext, PassError
from .l0_tiling import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile
from .outline_utils import is_kernel

Mat, Left, Right, Acc = MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc
_MATMULS = ("block.matmul", "block.matmul_acc", "block.matmul_bias")


def l0_config(target, m: int, k: int, n: int, bytes_a: int, bytes_b: int, bytes_c: int) -> L0TileConfig:
    """The chooser's input for a matmul on `target` (A / B stationary open; one accumulator, as emitted)."""
    return L0TileConfig(M=m, K=k, N=n, l0a_bytes=target.capacity(Left), l0b_bytes=target.capacity(Right),
                        l0c_bytes=target.capacity(Acc), bytes_a=bytes_a, bytes_b=bytes_b, bytes_c=bytes_c,
                        allow_a_stationary=True, allow_b_stationary=True, allow_k_boundary=True)


class AutoTileMatmulL0(Pass):
    """Split Mat-operand matmuls into L0 pieces (module docstring)."""

    name = "AutoTileMatmulL0"
    requires = frozenset({IRProperty.IncoreBlockOps})
    produces = frozenset()
    invalidates = frozenset()

    def run(self, program: Program, ctx: PassContext) -> Program:
        target = ctx.target
        if not all(target.has_space(sp) for sp in (Mat, Left, Right, Acc)):
            return program
        out, changed = [], False
        for f in program.functions:
            g = _Kernel(f, target).rewrite() if is_kernel(f) and f.body is not None else f
            changed |= g is not f
            out.append(g)
        return program.with_functions(out) if changed else program


def _static(t) -> tuple[int, ...] | None:
    if not isinstance(t, TileType):
        return None
    s = t.static_shape()
    if s is None or len(s) != 2:
        return None
    v = t.valid_shape
    if any(not isinstance(d, ConstInt) or d.value != x for d, x in zip(v, s)):
        return None  # partial tiles keep their valid-shape handling
    return tuple(int(x) for x in s)


class _Kernel:
    def __init__(self, fn: Function, target) -> None:
        self.fn, self.target = fn, target
        self.defs: dict[Var, Expr] = {}
        self.uses: dict[Var, int] = {}
        self.n = 0
        self.bypassed: set[Var] = set()  # whole Left / Right moves the tiled code no longer reads
        self.later: dict[Var, Var | None] = {}  # statements a Mat-scratch grid replaced: dropped / renamed

    def rewrite(self) -> Function:
        _collect(self.fn.body, self.defs, self.uses)
        body = self.block(self.fn.body)
        if body is self.fn.body:
            return self.fn
        if self.bypassed:  # an unused whole move would still take its (too large) L0 buffer
            uses: dict[Var, int] = {}
            _collect(body, {}, uses)
            dead = {v for v in self.bypassed if not uses.get(v)}
            body = _drop(body, dead)
        return dataclasses.replace(self.fn, body=body)

    def block(self, body: Stmt) -> Stmt:
        stmts = stmt_list(body)
        out: list[Stmt] = []
        changed = False
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, AssignStmt) and s.var in self.later:
                rep = self.later[s.var]
                if rep is not None:
                    out.append(AssignStmt(s.var, rep, span=s.span))
                changed = True
                i += 1
                continue
            new = self.nested(s)
            if new is s and isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op_name in _MATMULS:
                nxt = stmts[i + 1] if i + 1 < len(stmts) else None
                repl, took_next = self.matmul(s, nxt)
                if repl is not None:
                    out.extend(repl)
                    changed = True
                    i += 2 if took_next else 1
                    continue
            changed |= new is not s
            out.append(new)
            i += 1
        return seq(out, span=body.span) if changed else body

    def nested(self, s: Stmt) -> Stmt:
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            b = self.block(s.body)
            return s if b is s.body else dataclasses.replace(s, body=b)
        if isinstance(s, IfStmt):
            t = self.block(s.then_body)
            e = self.block(s.else_body) if s.else_body is not None else None
            if t is s.then_body and e is s.else_body:
                return s
            return dataclasses.replace(s, then_body=t, else_body=e)
        return s

    # -----------------------------------------------------------------------------------------
    def source(self, e: Expr, space: MemorySpace) -> Var | None:
        """The Mat tile an operand is read from: itself, or the Mat tile a Left / Right move copies."""
        if not isinstance(e, Var) or not isinstance(e.type, TileType):
            return None
        if e.type.memory_space is Mat:
            return e
        if e.type.memory_space is space:
            d = self.defs.get(e)
            if (isinstance(d, Call) and d.op_name == "block.move" and not d.kwarg("transpose")
                    and isinstance(d.args[0], Var) and isinstance(d.args[0].type, TileType)
                    and d.args[0].type.memory_space is Mat):
                return d.args[0]
        return None

    def matmul(self, s: AssignStmt, nxt: Stmt | None) -> tuple[list[Stmt] | None, bool]:
        c: Call = s.value  # type: ignore[assignment]
        name = c.op_name
        acc = c.args[0] if name == "block.matmul_acc" else None
        a, b = (c.args[1], c.args[2]) if acc is not None else (c.args[0], c.args[1])
        bias = c.args[2] if name == "block.matmul_bias" else None
        a_src, b_src = self.source(a, Left), self.source(b, Right)
        sa, sb = _static(getattr(a, "type", None)), _static(getattr(b, "type", None))
        in_mat = any(isinstance(x, Var) and x.type.memory_space is Mat for x in (a, b))
        if a_src is None or b_src is None or sa is None or sb is None:
            if in_mat:  # not tileable: the operands still go through L0 whole
                return self.whole(s, a, b, acc, bias, name), False
            return None, False
        M, K = sa
        N = sb[1]
        if bias is not None and bias.type.static_shape() is not None and int(bias.type.static_shape()[0]) != 1:
            return (self.whole(s, a, b, acc, bias, name), False) if in_mat else (None, False)
        try:
            choice = choose_l0_tile(l0_config(self.target, M, K, N, a.type.dtype.itemsize, b.type.dtype.itemsize,
                                              s.var.type.dtype.itemsize))
        except ValueError:
            return (self.whole(s, a, b, acc, bias, name), False) if in_mat else (None, False)
        if (choice.m, choice.n, choice.k) == (M, N, K):
            if not in_mat:
                return None, False  # already L0-sized and in L0
            return self.whole(s, a, b, acc, bias, name), False
        store = self.sole_store(s.var, nxt)
        scratch = self.scratch_use(s.var) if store is None and acc is None else None
        if (choice.m, choice.n) != (M, N) and scratch is not None:
            self.bypassed |= {x for x, src in ((a, a_src), (b, b_src)) if x is not src}
            return self.emit_scratch(s, scratch, choice, a_src, b_src, bias, (M, K, N)), False
        if (choice.m, choice.n) != (M, N) and (store is None or acc is not None):
            # an M / N grid needs a store to place its tiles; otherwise split K only, if that fits
            choice = self.k_only(M, K, N, a, b, s)
            if choice is None:
                return (self.whole(s, a, b, acc, bias, name), False) if in_mat else (None, False)
        self.bypassed |= {x for x, src in ((a, a_src), (b, b_src)) if x is not src}
        return self.emit(s, store, choice, a_src, b_src, acc, bias, (M, K, N))

    def sole_call(self, v: Var) -> tuple[Var, Call] | None:
        """The assignment that is `v`'s one use."""
        if self.uses.get(v, 0) != 1:
            return None
        found = [(w, d) for w, d in self.defs.items() if isinstance(d, Call) and any(x is v for x in d.args)]
        return found[0] if len(found) == 1 else None

    def scratch_use(self, v: Var) -> tuple[list[Var], Call, Var] | None:
        """When the result's one use is a cast (after a move into Vec, as the tensor form lowers) whose one
        use is a move into Mat or Left: (the dropped vars, the cast, the move's var). The device writes each
        output tile, downcast by FIXPIPE, into an L1 scratch tile."""
        use = self.sole_call(v)
        dropped = []
        if use is not None and use[1].op_name == "block.move" and use[1].kwarg("target_memory") is MemorySpace.Vec \
                and not use[1].kwarg("transpose"):
            dropped.append(use[0])
            use = self.sole_call(use[0])
        if use is None or use[1].op_name != "block.cast":
            return None
        cv, cast = use
        mv = self.sole_call(cv)
        if mv is None or mv[1].op_name != "block.move" or mv[1].kwarg("target_memory") not in (Mat, Left) \
                or mv[1].kwarg("transpose"):
            return None
        return [*dropped, cv], cast, mv[0]

    def emit_scratch(self, s: AssignStmt, scratch: tuple[Var, Call, Var], ch: L0TileResult, a: Var, b: Var,
                     bias, mkn: tuple[int, int, int]) -> list[Stmt]:
        """The M / N grid of a result kept on chip: each output tile is cast and inserted into a Mat tile
        (the later cast and move statements are dropped; the Mat variable becomes the scratch)."""
        dropped, cast, mv = scratch
        M, _, N = mkn
        span = s.span
        out: list[Stmt] = []
        buf = self.let(out, "scratch", self.call("block.create_tile", [[M, N]],
                                                 {"dtype": cast.type.dtype, "target_memory": Mat}, span), span)
        for i in range(0, M, ch.m):
            for j in range(0, N, ch.n):
                h, w = min(ch.m, M - i), min(ch.n, N - j)
                body, _ = self.emit(s, None, L0TileResult(m=h, n=w, k=ch.k), a, b, None, bias, mkn, window=(i, j))
                last = body.pop()  # `s.var = <the tile's last K step>`: a tile-sized variable instead
                out.extend(body)
                tile = self.let(out, s.var.name, last.value, span)
                part = self.let(out, "part", self.call("block.cast", [tile], dict(cast.kwargs), span), span)
                buf = self.let(out, "scratch", self.call("block.assemble", [buf, part, [i, j]], {}, span), span)
        for v in dropped:
            self.later[v] = None
        # the move now reads the scratch (a Left move of it is tiled from it like any Mat operand)
        self.later[mv] = buf if mv.type.memory_space is Mat else self.call(
            "block.move", [buf], {"target_memory": mv.type.memory_space}, span)
        self.defs[mv] = self.later[mv]
        return out

    def k_only(self, M, K, N, a, b, s) -> L0TileResult | None:
        cap = self.target.capacity(Acc) // s.var.type.dtype.itemsize
        if M * N > cap:
            return None
        ia, ib = a.type.dtype.itemsize, b.type.dtype.itemsize
        kmax = min(self.target.capacity(Left) // (2 * ia * M), self.target.capacity(Right) // (2 * ib * N))
        k = kmax // 16 * 16
        if k < 16 or K % 16:
            return None
        return L0TileResult(m=M, n=N, k=min(k, K))

    def sole_store(self, v: Var, nxt: Stmt | None) -> Stmt | None:
        """The statement right after the matmul when it is the result's only use: a store of the whole
        result (`x = store(c, offs, t)`, or `return store(c, offs, t)`)."""
        call = _store_call(nxt)
        if (self.uses.get(v, 0) == 1 and call is not None and call.args[0] is v and len(call.args) == 3
                and isinstance(call.args[1], MakeTuple)):
            return nxt
        return None

    # -----------------------------------------------------------------------------------------
    def call(self, name: str, args: list, kwargs: dict, span) -> Call:
        args = [MakeTuple(tuple(ConstInt(d) for d in x)) if isinstance(x, (list, tuple)) else x for x in args]
        try:
            return create_op_call(name, args, kwargs, span)
        except OpError as e:
            raise PassError(f"AutoTileMatmulL0: cannot build {name}: {e.message}", span, hint=e.hint) from None

    def let(self, out: list, hint: str, value: Call, span) -> Var:
        self.n += 1
        v = Var(f"{hint}_l0_{self.n}", value.type, span=span)
        out.append(AssignStmt(v, value, span=span))
        return v

    def whole(self, s: AssignStmt, a, b, acc, bias, name) -> list[Stmt]:
        out: list[Stmt] = []
        if a.type.memory_space is not Left:
            a = self.let(out, "lhs", self.call("block.move", [a], {"target_memory": Left}, s.span), s.span)
        if b.type.memory_space is not Right:
            b = self.let(out, "rhs", self.call("block.move", [b], {"target_memory": Right}, s.span), s.span)
        args = [acc, a, b] if acc is not None else [a, b] + ([bias] if bias is not None else [])
        out.append(AssignStmt(s.var, self.call(name, args, dict(s.value.kwargs), s.span), span=s.span))
        return out

    def emit(self, s: AssignStmt, store: Stmt | None, ch: L0TileResult, a: Var, b: Var, acc, bias,
             mkn: tuple[int, int, int], window: tuple[int, int] | None = None) -> tuple[list[Stmt], bool]:
        M, K, N = mkn
        span = s.span
        out: list[Stmt] = []
        rows = [(i, min(ch.m, M - i)) for i in range(0, M, ch.m)]
        cols = [(j, min(ch.n, N - j)) for j in range(0, N, ch.n)]
        if window is not None:  # one output tile [ch.m, ch.n] at `window`
            rows, cols = [(window[0], ch.m)], [(window[1], ch.n)]
        kbs = [(k0, min(ch.k, K - k0)) for k0 in range(0, K, ch.k)]
        a_cache: dict[tuple, Var] = {}
        b_cache: dict[tuple, Var] = {}
        keep_a = ch.stationarity is Stationarity.AStationary
        keep_b = ch.stationarity is Stationarity.BStationary

        def piece(src, cache, keep, r, c, h, w, space, hint):
            key = (r, c, h, w)
            if keep and key in cache:
                return cache[key]
            v = self.let(out, hint, self.call("block.extract", [src, ConstInt(r), ConstInt(c), [h, w]],
                                              {"target_memory": space}, span), span)
            if keep:
                cache[key] = v
            return v

        order = [(r, c) for c in cols for r in rows] if keep_b else [(r, c) for r in rows for c in cols]
        st = _store_call(store)
        tensor = st.args[2] if st is not None else None
        base = st.args[1].elements if st is not None else ()
        last = len(order) - 1
        for t, ((i, h), (j, w)) in enumerate(order):
            cur = acc
            for kb, (k0, kw) in enumerate(kbs):
                ta = piece(a, a_cache, keep_a, i, k0, h, kw, Left, "lhs")
                tb = piece(b, b_cache, keep_b, k0, j, kw, w, Right, "rhs")
                if cur is not None:
                    value = self.call("block.matmul_acc", [cur, ta, tb], {}, span)
                elif bias is not None:
                    bw = bias if (j, w) == (0, N) else self.let(out, "bias", self.call(
                        "block.extract", [bias, ConstInt(0), ConstInt(j), [1, w]], {}, span), span)
                    value = self.call("block.matmul_bias", [ta, tb, bw], {}, span)
                else:
                    value = self.call("block.matmul", [ta, tb], {}, span)
                if store is None and kb == len(kbs) - 1:
                    out.append(AssignStmt(s.var, value, span=span))
                    cur = s.var
                else:
                    cur = self.let(out, s.var.name, value, span)
            if store is not None:
                offs = [_add(base[0], i), _add(base[1], j)]
                value = self.call("block.store", [cur, MakeTuple(tuple(offs)), tensor], {}, store.span)
                if t == last and isinstance(store, AssignStmt):
                    out.append(AssignStmt(store.var, value, span=store.span))
                elif t == last:  # `return store(...)`: the last store's tensor is returned
                    res = self.let(out, "stored", value, store.span)
                    out.append(dataclasses.replace(store, values=(res, *store.values[1:])))
                else:
                    tensor = self.let(out, store.var.name if isinstance(store, AssignStmt) else "stored", value,
                                      store.span)
        return out, store is not None


def _drop(body: Stmt, dead: set[Var]) -> Stmt:
    """The body without the definitions of `dead` (pure moves), in nested bodies too."""
    out = []
    for s in stmt_list(body):
        if isinstance(s, AssignStmt) and s.var in dead:
            continue
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            s = dataclasses.replace(s, body=_drop(s.body, dead))
        elif isinstance(s, IfStmt):
            s = dataclasses.replace(s, then_body=_drop(s.then_body, dead),
                                    else_body=_drop(s.else_body, dead) if s.else_body is not None else None)
        out.append(s)
    return seq(out, span=body.span)


def _store_call(s: Stmt | None) -> Call | None:
    if isinstance(s, AssignStmt):
        c = s.value
    elif isinstance(s, ReturnStmt) and len(s.values) == 1:
        c = s.values[0]
    else:
        return None
    return c if isinstance(c, Call) and c.op_name == "block.store" else None


def _add(e: Expr, v: int) -> Expr:
    if v == 0:
        return e
    if isinstance(e, ConstInt):
        return ConstInt(e.value + v)
    from pypto.ir.dtype import DataType
    from pypto.ir.expr import Add
    return Add(e, ConstInt(v), DataType.INDEX)


def _collect(body: Stmt | None, defs: dict, uses: dict) -> None:
    """Definitions (by AssignStmt) and the number of uses of every variable in a body."""
    from pypto.ir.visitor import IRVisitor

    class V(IRVisitor):
        def visit_AssignStmt(self, st):
            defs[st.var] = st.value
            self.visit(st.value)

        def visit_Var(self, var):
            uses[var] = uses.get(var, 0) + 1

    V().visit(body)


__all__ = ["AutoTileMatmulL0", "l0_config"]
