"""ir_utils: statement lists, variable analysis, def-use, substitution and cloning, names, liveness,
the statement rewriter and the reference evaluator."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtype import DataType
from pypto.ir.expr import Add, ConstInt, IterArg, Var, scalar_type
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, ForStmt, IfStmt, SeqStmts, WhileStmt, YieldStmt
from pypto.passes.ir_utils import (
    EvalError,
    Liveness,
    NameGen,
    StmtRewriter,
    assigned_vars,
    base_name,
    body_stmts,
    clone_fresh,
    contains_stmt,
    def_use,
    defined_vars,
    evaluate,
    expr_vars,
    flatten_stmts,
    free_vars,
    has_call,
    last_stmt,
    make_body,
    make_else,
    split_yield,
    stmt_binders,
    substitute,
    used_vars,
    walk_stmts,
    zero_of,
)

IDX = DataType.INDEX
T = scalar_type(IDX)
M = pl.dynamic("M")


@pl.function
def sample(x: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
    acc = x
    for i in pl.range(n):
        t = acc + i
        if t > 10:
            acc = t - 10
        else:
            acc = t
    u = acc * 2
    return u


def _vars(fn):
    return {v.name: v for v in defined_vars(fn)}


# ---------------------------------------------------------------------------------------------
# statement lists


def test_flatten_make_body_and_else():
    a, b = (AssignStmt(Var(n, T), ConstInt(1)) for n in "ab")
    nested = SeqStmts((a, SeqStmts((b,)), SeqStmts(())))
    assert flatten_stmts([nested, None]) == [a, b]
    assert body_stmts(nested) == [a, b] and body_stmts(None) == []
    assert make_body([a]) is a
    assert isinstance(make_body([nested]), SeqStmts) and make_body([nested]).stmts == (a, b)
    assert make_body([]) == make_body([]) or isinstance(make_body([]), SeqStmts)
    assert make_else([]) is None and make_else([SeqStmts(())]) is None and make_else([a]) is a


def test_split_yield_last_stmt_walk_and_binders():
    loop = ir.stmt_list(sample.body)[1]
    assert isinstance(loop, ForStmt)
    assert last_stmt(sample.body).__class__.__name__ == "ReturnStmt"
    y = YieldStmt((ConstInt(1),))
    a = AssignStmt(Var("a", T), ConstInt(2))
    assert split_yield(make_body([a, y])) == ([a], y)
    assert split_yield(a) == ([a], None)
    kinds = [type(s).__name__ for s in walk_stmts(sample)]
    assert kinds == ["AssignStmt", "ForStmt", "AssignStmt", "IfStmt", "AssignStmt", "AssignStmt", "AssignStmt",
                     "ReturnStmt"]
    assert [type(s).__name__ for s in walk_stmts(sample.body, into_loops=False)] == [
        "AssignStmt", "ForStmt", "AssignStmt", "ReturnStmt"]
    assert stmt_binders(loop) == [loop.loop_var]
    assert contains_stmt(sample.body, IfStmt) and not contains_stmt(sample.body, IfStmt, into_loops=False)


# ---------------------------------------------------------------------------------------------
# variables


def test_used_defined_free_assigned_vars():
    v = _vars(sample)
    assert [x.name for x in defined_vars(sample)] == ["x", "n", "acc", "i", "t", "u"]
    assert [x.name for x in used_vars(sample.body)] == ["x", "n", "acc", "i", "t", "u"]
    loop = ir.stmt_list(sample.body)[1]
    assert free_vars(loop) == [v["n"]]  # acc is bound inside (non-SSA): what it reads first is live-in
    assert Liveness(loop).live_in == {v["n"], v["acc"]}
    assert assigned_vars(loop.body) == [v["t"], v["acc"]]
    assert expr_vars(Add(v["x"], Add(v["n"], ConstInt(1), IDX), IDX)) == {v["x"], v["n"]}


def test_free_vars_of_types_skip_dynamic_dims():
    @pl.function
    def f(a: pl.Tensor[[M, 16], pl.FP32], k: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 16], pl.FP32]:
        b = pl.create_tensor([k, 16], dtype=pl.FP32)
        c = pl.add(a, a)
        return c

    body = f.body
    assert set(free_vars(body)) == {f.params[0], f.params[1]}
    assert M in used_vars(body, types=True) and M not in free_vars(body, types=True)


def test_has_call():
    a = Var("a", ir.TensorType([4], DataType.FP32))
    c = ir.create_op_call("tensor.dim", [a], {"axis": 0})
    assert has_call(c) and has_call(Add(c, ConstInt(1), IDX)) and not has_call(Add(Var("q", T), ConstInt(1), IDX))


def test_def_use():
    du = def_use(sample)
    v = _vars(sample)
    assert du.num_defs(v["acc"]) == 3 and du.multiply_defined() == [v["acc"]]
    assert du.defs[v["x"]] == [sample]
    users = du.users(v["t"])
    assert [type(s).__name__ for s in users] == ["IfStmt", "AssignStmt", "AssignStmt"]
    assert du.num_defs(v["u"]) == 1 and len(du.users(v["u"])) == 1


# ---------------------------------------------------------------------------------------------
# substitution, cloning, names


def test_substitute_uses_definitions_and_types():
    k = Var("k", T)
    t = Var("t", ir.TensorType([k, 16], DataType.FP32))
    s = make_body([AssignStmt(t, ir.create_op_call("tensor.create", [ir.MakeTuple((k, ConstInt(16)))],
                                                   {"dtype": DataType.FP32})),
                   ir.ReturnStmt((t,))])
    out = substitute(s, {k: ConstInt(8)})
    new_t = out.stmts[0].var
    assert new_t is not t and new_t.type.shape[0] == ConstInt(8)
    assert out.stmts[1].values[0] is new_t  # uses follow the re-created variable
    k2 = Var("k2", T)
    renamed = substitute(AssignStmt(k, ConstInt(1)), {k: k2})
    assert renamed.var is k2  # Var -> Var renames the binding site too
    assert substitute(s, {}) is s
    untyped = substitute(s, {k: ConstInt(8)}, types=False)
    assert untyped.stmts[0].var is t


def test_clone_fresh_keeps_requested_vars():
    loop = ir.stmt_list(sample.body)[1]
    v = _vars(sample)
    copy, vm = clone_fresh(loop, {v["n"]: ConstInt(3)}, keep=[v["acc"]])
    assert copy.loop_var is not loop.loop_var and copy.stop == ConstInt(3)
    assert v["acc"] not in vm and v["t"] in vm and vm[v["t"]] is not v["t"]
    assert set(assigned_vars(copy.body)) == {vm[v["t"]], v["acc"]}
    renamed, _ = clone_fresh(loop, rename=lambda x: x.name + "_c")
    assert {x.name for x in defined_vars(renamed)} >= {"i_c", "t_c", "acc_c"}
    ia = IterArg("ia", T, v["x"])
    w = WhileStmt(ir.Lt(ia, ConstInt(3), DataType.BOOL), (ia,), YieldStmt((Add(ia, ConstInt(1), IDX),)),
                  (Var("r", T),))
    wc, wm = clone_fresh(w, {v["x"]: ConstInt(0)})
    assert isinstance(wc.iter_args[0], IterArg) and wc.iter_args[0].init_value == ConstInt(0)
    assert wc.condition.lhs is wc.iter_args[0]


def test_names():
    g = NameGen(["x", "x__ssa_v1"])
    assert g.fresh("x") == "x__ssa_v2"
    assert g.fresh("x__ssa_v2") == "x__ssa_v3"  # versions of versions stay flat
    assert g.fresh("exp", "tmp") == "exp__tmp_v1"
    assert g.unique("x") == "x_1" and g.unique("y") == "y"
    assert base_name("a__tmp_v3__ssa_v2") == "a" and base_name("__ssa_v1") == "__ssa_v1"
    g2 = NameGen.for_node(sample)
    assert "acc" in g2.taken and g2.fresh("acc") == "acc__ssa_v1"
    v = g2.fresh_var(_vars(sample)["acc"])
    assert v.name == "acc__ssa_v2" and v.type == T


def test_zero_of():
    assert zero_of(T) == ConstInt(0, IDX)
    assert zero_of(scalar_type(DataType.FP16)) == ir.ConstFloat(0.0, DataType.FP16)
    assert zero_of(scalar_type(DataType.BOOL)) == ir.ConstBool(False)
    assert zero_of(ir.TensorType([4], DataType.FP32)) is None


# ---------------------------------------------------------------------------------------------
# liveness


def test_liveness():
    live = Liveness(sample)
    v = _vars(sample)
    stmts = ir.stmt_list(sample.body)
    loop = stmts[1]
    assert live.live_in == {v["x"], v["n"]}
    assert live.after(stmts[0]) == {v["acc"], v["n"]}
    assert live.head(loop) == {v["acc"]}  # read by the next iteration and after the loop
    assert live.body_in(loop) == {v["acc"], v["i"]}
    if_ = ir.stmt_list(loop.body)[1]
    assert live.after(if_) == {v["acc"]}
    assert live.after(stmts[2]) == {v["u"]}


def test_liveness_while_condition_and_local_values():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        junk = 0
        while k < n:
            tmp = k * 2
            junk = tmp
            k = k + 1
        return k

    live = Liveness(f)
    loop = ir.stmt_list(f.body)[2]
    names = {x.name for x in live.head(loop)}
    assert names == {"k", "n"}  # junk and tmp are not needed at the head


# ---------------------------------------------------------------------------------------------
# rewriter


def test_stmt_rewriter_expands_and_deletes():
    class DropIfs(StmtRewriter):
        def rewrite(self, s):
            if isinstance(s, IfStmt):
                return body_stmts(s.then_body)  # keep the then branch in place
            return self.recurse(s)

    out = DropIfs().rewrite_body(sample.body)
    assert not contains_stmt(out, IfStmt)
    loop = ir.stmt_list(out)[1]
    assert [type(s).__name__ for s in ir.stmt_list(loop.body)] == ["AssignStmt", "AssignStmt"]
    assert StmtRewriter().rewrite_body(sample.body) is sample.body  # nothing changed: same object


# ---------------------------------------------------------------------------------------------
# evaluator


def test_evaluate_loops_ifs_whiles_and_yields():
    assert evaluate(sample, [3, 4]) == (18,)  # acc: 3, 4, 6, 9
    assert evaluate(sample, [8, 4]) == (2 * (8 + 0 + 1 - 10 + 2 + 3),)

    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]:
        for i, (s,) in pl.range(n, init_values=(0,)):
            if i % 2 == 0:
                r = pl.yield_(s + i)
            else:
                r = pl.yield_(s)
            s2 = pl.yield_(r)
        for (k,) in pl.while_(init_values=(1,)):
            pl.cond(k < 100)
            k2 = pl.yield_(k * 3)
        return s2, k2

    assert evaluate(f, [7]) == (0 + 2 + 4 + 6, 243)
    assert evaluate(ir.Program("p", (f,)), [0]) == (0, 243)


def test_evaluate_break_continue_with_iter_args():
    x, i, r = Var("x", T), Var("i", T), Var("r", T)
    acc = IterArg("acc", T, x)
    body = make_body([
        IfStmt(ir.Eq(i, ConstInt(2), DataType.BOOL), ContinueStmt()),  # keeps acc
        IfStmt(ir.Eq(i, ConstInt(5), DataType.BOOL), BreakStmt()),  # leaves with acc
        YieldStmt((Add(acc, i, IDX),)),
    ])
    loop = ForStmt(i, ConstInt(0), ConstInt(10), ConstInt(1), (acc,), body, (r,))
    fn = ir.Function("f", (x,), (), (T,), make_body([loop, ir.ReturnStmt((r,))]))
    assert evaluate(fn, [100]) == (100 + 0 + 1 + 3 + 4,)


def test_evaluate_errors_and_calls():
    @pl.function
    def loop_forever(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = 0
        while k < n:
            k = k + 0
        return k

    with pytest.raises(EvalError, match="step limit"):
        evaluate(loop_forever, [1], max_steps=50)
    with pytest.raises(EvalError, match="takes 1 arguments"):
        evaluate(loop_forever, [1, 2])

    @pl.function
    def uses_call(a: pl.Tensor[[8], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        d = pl.tensor.dim(a, 0) * 2
        return d

    with pytest.raises(EvalError, match="no call handler"):
        evaluate(uses_call, [None])
    assert evaluate(uses_call, [None], calls=lambda c, args: 8) == (16,)
    x = Var("x", T)
    bad = ir.Function("f", (), (), (T,), ir.ReturnStmt((x,)))
    with pytest.raises(EvalError, match="read before it is defined"):
        evaluate(bad, [])


def test_evaluate_scalar_semantics():
    @pl.function
    def f(a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX],
                                                                    pl.Scalar[pl.FP32], pl.Scalar[pl.BOOL]]:
        q = a // b
        m = a % b
        fd = a / b
        c = (a < b) and not (a == b)
        return q, m, fd, c

    assert evaluate(f, [-7, 2]) == (-4, 1, -3.5, True)
