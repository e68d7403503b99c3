"""Serialization: round trips keep structure, spans and object sharing; bad input is rejected."""

import json
import math
import struct
import zlib

import pytest

import pypto.ops  # noqa: F401  (registers operators)
from pypto.ir import expr as E
from pypto.ir.builder import IRBuilder, as_expr
from pypto.ir.dtype import DataType
from pypto.ir.enums import (
    CastMode,
    CmpType,
    ForKind,
    FunctionType,
    LoopOrigin,
    MemorySpace,
    PadValue,
    ParamDirection,
    PipeType,
    ScopeKind,
    TensorLayout,
    TileLayout,
)
from pypto.ir.expr import (
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynVar,
    GlobalVar,
    IterArg,
    MakeTuple,
    TupleGetItem,
    Var,
    make_memref,
)
from pypto.ir.function import Function, Program
from pypto.ir.node import Node, node_fields
from pypto.ir.op import get_op
from pypto.ir.serialization import (
    FORMAT_VERSION,
    MAGIC,
    DeserializationError,
    SerializationError,
    deserialize,
    deserialize_from_file,
    serialize,
    serialize_to_file,
)
from pypto.ir.span import Span
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.structural import assert_structural_equal, structural_equal
from pypto.ir.types import MemRefType, ScalarType, TensorType, TileType, TileView, TupleType, UnknownType

FP32, INDEX = DataType.FP32, DataType.INDEX
HEADER = struct.Struct("<8sHHQI")


def _pairs(a, b, seen):
    """Walk two same-shaped trees in parallel, yielding (original, loaded) node pairs."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, Node):
            assert type(x) is type(y)
            key = (id(x), id(y))
            if key in seen:
                continue
            seen.add(key)
            yield x, y
            if isinstance(x, E.Op):
                continue
            for name, _ in node_fields(type(x)):
                stack.append((getattr(x, name), getattr(y, name)))
        elif isinstance(x, tuple):  # (Program.functions is a tuple subclass)
            assert type(y) is type(x) and len(x) == len(y)
            stack.extend(zip(x, y))
        else:
            assert type(x) is type(y) and (x == y or (x != x and y != y)), (x, y)


def roundtrip(node, compress=False):
    data = serialize(node, compress=compress)
    assert data[:8] == MAGIC
    back = deserialize(data)
    assert structural_equal(back, node, enable_auto_mapping=True)
    assert_structural_equal(back, node, enable_auto_mapping=True)
    # sharing is preserved exactly: same original object <=> same loaded object
    fwd, rev = {}, {}
    for x, y in _pairs(node, back, set()):
        assert fwd.setdefault(id(x), id(y)) == id(y), f"{type(x).__name__} was shared, now is not"
        assert rev.setdefault(id(y), id(x)) == id(x), f"{type(x).__name__} was distinct, now shared"
        if isinstance(x, E.Op):
            assert x is y
        if hasattr(x, "span") and isinstance(x.span, Span):
            assert x.span == y.span
        if isinstance(x, Var):
            assert x.name == y.name
    return back


def T(*shape, dt=FP32, **kw):
    return TensorType(list(shape), dt, **kw)


# ---------------------------------------------------------------------------------------------
# programs


def sum_loop():
    ib = IRBuilder()
    with ib.function("sum") as f:
        data = f.param("data", T(16))
        f.return_type(T(1))
        init = ib.let("init", ib.call("tensor.create", [[1]], {"dtype": FP32}))
        with ib.for_loop("i", 0, 16) as loop:
            acc = loop.iter_arg("acc", init)
            chunk = ib.let("chunk", ib.call("tensor.view", [data, [1], [loop.var]]))
            ib.yield_(ib.let("s", ib.call("tensor.add", [acc, chunk])))
        ib.return_(loop.output())
    return f.get_result()


def kernel_program():
    ib = IRBuilder()
    with ib.program("Hello") as p:
        with ib.function("kernel", type=FunctionType.InCore) as k:
            a = k.param("a", T(64, 64))
            c = k.param("c", T(64, 64), direction=ParamDirection.Out)
            k.return_type(T(64, 64))
            ta = ib.let("ta", ib.call("block.load", [a, [0, 0], [64, 64]], {"target_memory": MemorySpace.Vec}))
            tb = ib.let("tb", ib.call("block.exp", [ta]))
            tc = ib.let("tc", ib.call("block.add", [ta, tb]))
            ib.return_(ib.let("o", ib.call("block.store", [tc, [0, 0], c])))
        kern = k.get_result()
        with ib.function("main", type=FunctionType.Orchestration) as m:
            a = m.param("a", T(64, 64))
            m.return_type(T(64, 64))
            c = ib.let("c", ib.call("tensor.create", [[64, 64]], {"dtype": FP32}))
            with ib.if_stmt(E.Lt(as_expr(1), as_expr(2), DataType.BOOL)) as br:
                r = br.return_var("r", T(64, 64))
                ib.yield_(ib.let("r1", ib.call(kern, [a, c])))
                with br.else_():
                    ib.yield_(c)
            with ib.while_loop() as w:
                x = w.iter_arg("x", 0)
                w.cond(E.Lt(x, as_expr(10), DataType.BOOL))
                with ib.scope(ScopeKind.AutoInCore):
                    ib.eval(ib.call("system.bar_all", []))
                ib.yield_(E.Add(x, as_expr(1), INDEX))
            with ib.for_loop("j", 0, 4, kind=ForKind.Parallel, chunk=2, origin=LoopOrigin.ChunkOuter):
                ib.emit(ContinueStmt())
            with ib.for_loop("k", 0, 4):
                ib.break_()
            ib.return_(r)
    return p.get_result()


def test_roundtrip_loop_with_iter_args():
    fn = sum_loop()
    back = roundtrip(fn)
    loop = back.body.stmts[1]
    assert loop.iter_args[0].init_value is back.body.stmts[0].var  # def and use are one object
    assert back.body.stmts[2].values[0] is loop.return_vars[0]


def test_roundtrip_program_if_while_scope_parallel():
    prog = kernel_program()
    back = roundtrip(prog)
    assert isinstance(back, Program) and back.function_names == ["kernel", "main"]
    kern = back.get_function("kernel")
    load = kern.body.stmts[0].value
    assert load.op is get_op("block.load")
    assert load.kwarg("target_memory") is MemorySpace.Vec
    main = back.get_function("main")
    call = main.body.stmts[1].then_body.stmts[0].value
    assert call.op == GlobalVar("kernel")
    par = main.body.stmts[3]
    assert par.kind is ForKind.Parallel and par.chunk == 2 and par.origin is LoopOrigin.ChunkOuter


def test_roundtrip_compressed_and_files(tmp_path):
    prog = kernel_program()
    roundtrip(prog, compress=True)
    path = tmp_path / "prog.pir"
    serialize_to_file(prog, path)
    assert structural_equal(deserialize_from_file(path), prog, enable_auto_mapping=True)
    assert [p.name for p in tmp_path.iterdir()] == ["prog.pir"]  # no temporary left behind
    serialize_to_file(sum_loop(), str(path), compress=True)
    assert structural_equal(deserialize_from_file(str(path)), sum_loop(), enable_auto_mapping=True)


def test_memrefs_tileviews_and_dynamic_dims_stay_shared():
    M = DynVar("M", ScalarType(INDEX))
    N = DynVar("N", ScalarType(INDEX))
    mem = make_memref(MemorySpace.Vec, 0, 16384, 3)
    ddr = make_memref(MemorySpace.DDR, -1, 0, 0)
    view = TileView(valid_shape=(M, 64), blayout=TileLayout.col_major, slayout=TileLayout.row_major,
                    fractal=1024, pad=PadValue.max)
    tt = TileType([64, 64], DataType.FP16, MemorySpace.Vec, mem, view)
    x = Var("x", T(M, E.Add(N, as_expr(1), INDEX), layout=TensorLayout.DN, memref=ddr))
    t1 = Var("t1", tt)
    t2 = Var("t2", TileType([64, 64], DataType.FP16, MemorySpace.Vec, mem))
    alloc = Call(get_op("block.alloc"), (), (("memory_space", MemorySpace.Vec), ("addr", 0), ("size", 16384),
                                             ("id", 3)), MemRefType())
    body = SeqStmts((
        AssignStmt(mem, alloc),
        AssignStmt(t1, Call(get_op("block.load"), (x, MakeTuple((as_expr(0), as_expr(0))),
                                                   MakeTuple((as_expr(64), as_expr(64))),
                                                   MakeTuple((M, as_expr(64)))), (), tt)),
        AssignStmt(t2, Call(get_op("block.exp"), (t1,), (), t2.type)),
        ReturnStmt((t2,)),
    ))
    fn = Function("k", (x,), (), (t2.type,), body, FunctionType.InCore)
    back = roundtrip(fn)
    bx = back.params[0]
    assert bx.type.shape[0] is back.body.stmts[1].value.args[3].elements[0]  # the same DynVar M
    bmem = back.body.stmts[0].var
    assert bmem.memory_space is MemorySpace.Vec and bmem.addr == 0 and bmem.size == 16384 and bmem.id == 3
    assert back.body.stmts[1].var.type.memref is bmem and back.body.stmts[2].var.type.memref is bmem
    assert back.body.stmts[1].var.type.tile_view == TileView((back.params[0].type.shape[0], 64),
                                                             TileLayout.col_major, TileLayout.row_major, 1024,
                                                             PadValue.max)
    assert bx.type.layout is TensorLayout.DN and bx.type.memref.memory_space is MemorySpace.DDR


@pytest.mark.parametrize("dt", list(DataType))
def test_every_dtype(dt):
    v = Var("v", TileType([4, 8], dt, MemorySpace.Vec))
    back = roundtrip(AssignStmt(Var("w", ScalarType(dt)), E.Cast(ConstInt(1, dt), dt)))
    assert back.var.type.dtype is dt
    assert roundtrip(v.type).dtype is dt
    assert roundtrip(Call(get_op("block.cast"), (v,), (("target_type", dt), ("mode", CastMode.round)),
                          v.type)).kwarg("target_type") is dt


def test_every_kind_of_constant_and_expression():
    x = Var("x", ScalarType(INDEX))
    y = Var("y", ScalarType(FP32))
    consts = [ConstInt(0), ConstInt(-(2 ** 63)), ConstInt(2 ** 70, DataType.UINT64), ConstInt(7, DataType.INT8),
              ConstFloat(1.5), ConstFloat(-0.0, DataType.FP16), ConstFloat(math.inf), ConstFloat(-math.inf),
              ConstFloat(math.nan, DataType.BF16), ConstFloat(1e-300), ConstBool(True), ConstBool(False)]
    exprs = [cls(x, ConstInt(2), INDEX) for cls in E.BINARY_EXPRS] + [cls(y, FP32) for cls in E.UNARY_EXPRS]
    tup = MakeTuple((x, y, MakeTuple(())))
    exprs += [tup, TupleGetItem(tup, 1)]
    back = roundtrip(EvalStmt(MakeTuple(tuple(consts + exprs))))
    vals = back.expr.elements
    assert vals[2].value == 2 ** 70 and vals[2].dtype is DataType.UINT64
    assert math.copysign(1.0, vals[5].value) == -1.0
    assert math.isinf(vals[6].value) and math.isnan(vals[8].value)
    assert type(vals[4].value) is float and type(vals[0].value) is int and vals[10].value is True


def test_all_statement_kinds_and_types():
    i = Var("i", ScalarType(INDEX))
    ia = IterArg("a", ScalarType(INDEX), ConstInt(0))
    rv = Var("a_out", ScalarType(INDEX))
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,),
                   SeqStmts((IfStmt(ConstBool(True), BreakStmt(), ContinueStmt()), YieldStmt((ia,)))),
                   (rv,), ForKind.Unroll, None, "leading_full", LoopOrigin.ChunkRemainder)
    w = WhileStmt(ConstBool(False), (), SeqStmts(()), ())
    s = SeqStmts((loop, w, ScopeStmt(ScopeKind.InCore, EvalStmt(rv)), ReturnStmt(())))
    back = roundtrip(s)
    assert back.stmts[0].iter_args[0].init_value == ConstInt(0)
    for t in [UnknownType(), MemRefType(), TupleType((ScalarType(INDEX), T(2, 3), TupleType(()))), T()]:
        assert roundtrip(t) == t


def test_call_kwargs_of_every_kind():
    x = Var("x", T(4))
    kw = (("i", 3), ("f", 2.5), ("b", False), ("s", "leading_full"), ("n", None), ("dt", DataType.BF16),
          ("ms", MemorySpace.Acc), ("pipe", PipeType.MTE2), ("cmp", CmpType.GE), ("cast", CastMode.odd),
          ("pad", PadValue.zero), ("lay", TensorLayout.NZ), ("tl", TileLayout.none_box),
          ("fk", ForKind.Parallel), ("sk", ScopeKind.AutoInCore), ("ft", FunctionType.InCore),
          ("pd", ParamDirection.InOut), ("lo", LoopOrigin.ChunkInner))
    c = Call(GlobalVar("f"), (x,), kw, T(4))
    back = roundtrip(c)
    assert back.kwargs == kw
    assert back.kwarg("b") is False and back.kwarg("i") == 3 and type(back.kwarg("f")) is float


def test_spans_names_and_unicode_survive():
    sp = Span("/tmp/some file — ü.py", 12, 4, 12, 30)
    v = Var("变量", ScalarType(INDEX), span=sp)
    back = roundtrip(AssignStmt(v, ConstInt(1, span=Span("b.py", 3, 0)), span=sp))
    assert back.span == sp and back.var.span == sp and back.var.name == "变量"
    assert back.value.span == Span("b.py", 3, 0)


def test_deep_expression_chain():
    x = Var("x", ScalarType(INDEX))
    e = x
    for k in range(5000):
        e = E.Add(e, ConstInt(k), INDEX)
    back = deserialize(serialize(EvalStmt(e)))
    n, cur = 0, back.expr
    while isinstance(cur, E.Add):
        cur, n = cur.lhs, n + 1
    assert n == 5000 and isinstance(cur, Var)


def test_serialized_form_is_deterministic_and_compact():
    a, b = serialize(kernel_program()), serialize(kernel_program())
    assert a == b
    x = Var("x", T(64, 64))
    stmts = tuple(AssignStmt(Var(f"y{k}", T(64, 64)), Call(get_op("tensor.add"), (x, x), (), x.type))
                  for k in range(200))
    data = serialize(SeqStmts(stmts))
    assert len(data) < 200 * 400
    payload = json.loads(data[HEADER.size:])
    assert payload["classes"][0][0] in {"ConstInt", "Var", "TensorType"}  # each class described once


# ---------------------------------------------------------------------------------------------
# bad input


def _with_payload(doc, version=FORMAT_VERSION, flags=0):
    payload = json.dumps(doc).encode()
    return HEADER.pack(MAGIC, version, flags, len(payload), zlib.crc32(payload)) + payload


def test_version_mismatch():
    data = bytearray(serialize(sum_loop()))
    struct.pack_into("<H", data, 8, FORMAT_VERSION + 1)
    with pytest.raises(DeserializationError, match=f"version {FORMAT_VERSION + 1}"):
        deserialize(bytes(data))


@pytest.mark.parametrize("cut", [0, 3, 10, HEADER.size, HEADER.size + 5, -1])
def test_truncated(cut):
    data = serialize(sum_loop())
    with pytest.raises(DeserializationError, match="truncated|magic"):
        deserialize(data[:cut])


def test_bad_magic_corrupt_bytes_and_trailing_garbage():
    data = serialize(sum_loop())
    with pytest.raises(DeserializationError, match="magic"):
        deserialize(b"NOTPYPTO" + data[8:])
    flipped = bytearray(data)
    flipped[HEADER.size + 20] ^= 0x55
    with pytest.raises(DeserializationError, match="checksum"):
        deserialize(bytes(flipped))
    with pytest.raises(DeserializationError, match="trailing"):
        deserialize(data + b"x")
    with pytest.raises(DeserializationError, match="flags"):
        deserialize(_with_payload({}, flags=8))
    with pytest.raises(DeserializationError, match="corrupt"):
        deserialize(HEADER.pack(MAGIC, FORMAT_VERSION, 0, 3, zlib.crc32(b"{{{")) + b"{{{")


def _doc(node):
    return json.loads(serialize(node)[HEADER.size:])


def test_unknown_node_type_and_field():
    doc = _doc(sum_loop())
    doc["classes"][0][0] = "NoSuchNode"
    with pytest.raises(DeserializationError, match="unknown node type 'NoSuchNode'"):
        deserialize(_with_payload(doc))
    doc = _doc(sum_loop())
    doc["classes"][0][1].append("extra_field")
    with pytest.raises(DeserializationError, match="no field"):
        deserialize(_with_payload(doc))


def test_dangling_and_malformed_references():
    doc = _doc(sum_loop())
    doc["root"] = ["n", len(doc["nodes"]) + 5]
    with pytest.raises(DeserializationError, match="dangling node reference"):
        deserialize(_with_payload(doc))
    doc = _doc(sum_loop())
    # make the first node that references another point forward (to itself)
    for i, row in enumerate(doc["nodes"]):
        for j, v in enumerate(row[1:], 1):
            if isinstance(v, list) and v[0] == "n":
                row[j] = ["n", i]
                break
        else:
            continue
        break
    with pytest.raises(DeserializationError, match="dangling"):
        deserialize(_with_payload(doc))
    for bad_root, msg in [(["s", 99], "dangling span"), (["d", 999], "data type code"), (["e", "Nope", "x"], "enum"),
                          (["e", "MemorySpace", "Nope"], "no member"), (["o", "no.such_op"], "unknown operator"),
                          (["q", 1], "unknown value tag"), ({"a": 1}, "malformed value"), (["n"], "malformed")]:
        doc = _doc(sum_loop())
        doc["root"] = bad_root
        with pytest.raises(DeserializationError, match=msg):
            deserialize(_with_payload(doc))


def test_malformed_tables():
    for mutate, msg in [
        (lambda d: d.pop("nodes"), "lacks"),
        (lambda d: d.__setitem__("spans", [[0, 1]]), "span #0"),
        (lambda d: d.__setitem__("spans", [[7, 1, 1, 1, 1]]), "missing file"),
        (lambda d: d["nodes"].__setitem__(0, ["x"]), "node #0"),
        (lambda d: d["nodes"][0].append(1), "values for"),
        (lambda d: d.__setitem__("classes", [["Var"]]), "class entry"),
        (lambda d: d.__setitem__("files", [3]), "file table"),
        (lambda d: d.__setitem__("nodes", {}), "not a list"),
    ]:
        doc = _doc(sum_loop())
        mutate(doc)
        with pytest.raises(DeserializationError, match=msg):
            deserialize(_with_payload(doc))
    with pytest.raises(DeserializationError, match="JSON object"):
        deserialize(_with_payload([1, 2]))


def test_field_type_errors_on_rebuild_are_reported():
    doc = _doc(Program("P", (Function("f", (), (), (), SeqStmts(())),)))
    fn = len(doc["nodes"]) - 2
    doc["nodes"][-1][-2] = ["t", ["n", fn], ["n", fn]]  # the same function twice: Program rejects it
    with pytest.raises(DeserializationError, match="cannot be rebuilt.*duplicate"):
        deserialize(_with_payload(doc))
    doc["nodes"][-1][-2] = ["t", ["n", 0]]  # a statement where a function belongs
    with pytest.raises(DeserializationError, match="cannot be rebuilt"):
        deserialize(_with_payload(doc))


def test_missing_fields_take_their_defaults():
    doc = _doc(ForStmt(Var("i", ScalarType(INDEX)), ConstInt(0), ConstInt(2), ConstInt(1), (), SeqStmts(())))
    (ci,) = [k for k, c in enumerate(doc["classes"]) if c[0] == "ForStmt"]
    names = doc["classes"][ci][1]
    drop = names.index("chunk_policy")
    names.pop(drop)
    for row in doc["nodes"]:
        if row[0] == ci:
            row.pop(drop + 1)
    back = deserialize(_with_payload(doc))
    assert back.chunk_policy == "leading_full"


def test_unserializable_values():
    with pytest.raises(SerializationError):
        serialize(Call(GlobalVar("f"), (), (("obj", object()),), UnknownType()))
    with pytest.raises(SerializationError):
        serialize(Call(GlobalVar("f"), (), (("lst", [1, 2]),), UnknownType()))
    with pytest.raises(SerializationError, match="IR node"):
        serialize(42)
    assert issubclass(DeserializationError, ValueError)


def test_dynamic_dim_shared_across_functions():
    M = DynVar("M", ScalarType(INDEX))
    fns = []
    for name in ("f", "g"):
        a = Var("a", T(M, 8))
        fns.append(Function(name, (a,), (), (a.type,), ReturnStmt((a,))))
    back = roundtrip(Program("P", tuple(fns)))
    f, g = back.functions
    assert f.params[0].type.shape[0] is g.params[0].type.shape[0]
    assert isinstance(f.params[0].type.shape[0], DynVar)
