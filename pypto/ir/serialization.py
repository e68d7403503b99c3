"""A versioned, self-checking file format for IR: any node (Program, Function, Stmt, Expr, Type).

Container (all integers little-endian)::

    magic    8 bytes   b"PYPTO-IR"
    version  u16       FORMAT_VERSION (readers reject other versions)
    flags    u16       bit 0: payload is zlib-compressed
    length   u64       payload length in bytes
    crc32    u32       CRC-32 of the payload as stored
    payload  JSON (UTF-8), see below

Payload: ``{"classes": [[name, [field, ...]], ...], "files": [filename, ...],
"spans": [[file, begin_line, begin_col, end_line, end_col], ...], "nodes": [[class, v, ...], ...],
"root": v}``. Nodes are written in post-order, each exactly once; every later occurrence is a
reference to its index, so objects shared in the IR (a Var at its definition and at every use, a
MemRef referenced from many types) are shared again after loading. A value ``v`` is a JSON
null/bool/int/float/string, or a tagged list:

    ["n", i]            node i of the node table (always an earlier entry)
    ["t", v, ...]       a tuple
    ["s", i]            span i of the span table
    ["d", code]         a DataType, by its code
    ["e", enum, name]   a member of an enum of `pypto.ir.enums`, by class and member name
    ["o", name]         a registered operator, resolved with `pypto.ir.op.get_op` on load

Fields are stored by name per class, so a reader can fill fields added later from their
defaults. Anything malformed raises `DeserializationError` (a ValueError), never a bare
KeyError or IndexError.
"""

from __future__ import annotations

import enum
import json
import os
import struct
import sys
import tempfile
import zlib
from typing import Any

from pypto.errors import Error

from . import enums as _enums
from . import expr as _expr  # noqa: F401  (node classes must be defined before the registry is built)
from . import function as _function  # noqa: F401
from . import stmt as _stmt  # noqa: F401
from . import types as _types  # noqa: F401
from .dtype import DataType, dtype_from_code
from .expr import Op
from .node import Node, node_fields
from .span import UNKNOWN_SPAN, Span

MAGIC = b"PYPTO-IR"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sHHQI")
_FLAG_ZLIB = 1


class SerializationError(Error, TypeError):
    """The object (or a value inside it) has no representation in the file format."""


class DeserializationError(Error, ValueError):
    """The bytes are not a readable IR file: bad magic, unknown version, truncated, corrupt,
    unknown node type, dangling reference or malformed value."""


# ---------------------------------------------------------------------------------------------
# registries


_NODE_CLASSES: dict[str, type] = {}


def _all_subclasses(cls: type) -> list[type]:
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        for s in c.__subclasses__():
            out.append(s)
            todo.append(s)
    return out


def _refresh_node_classes() -> None:
    """Name -> class for every Node subclass; IR-core classes win over same-named ones elsewhere."""
    table: dict[str, type] = {}
    for c in _all_subclasses(Node):
        if not hasattr(c, "__dataclass_fields__") or issubclass(c, Op):
            continue
        # `dataclass(slots=True)` replaces a class with a new one; only the module's own counts
        if getattr(sys.modules.get(c.__module__), c.__qualname__, None) is not c:
            continue
        prev = table.get(c.__name__)
        if prev is None or (not prev.__module__.startswith("pypto.ir.") and c.__module__.startswith("pypto.ir.")):
            table[c.__name__] = c
    _NODE_CLASSES.clear()
    _NODE_CLASSES.update(table)


def _node_class(name: str) -> type | None:
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        _refresh_node_classes()
        cls = _NODE_CLASSES.get(name)
    return cls


_ENUMS: dict[str, type[enum.Enum]] = {
    name: obj for name, obj in vars(_enums).items()
    if isinstance(obj, type) and issubclass(obj, enum.Enum) and obj.__module__ == _enums.__name__
    and not name.startswith("_")
}


# ---------------------------------------------------------------------------------------------
# writing


class _Writer:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}  # id(node) -> index in the node table
        self.keep: list[Node] = []  # keeps visited nodes alive so their id() stays unique
        self.nodes: list[list[Any]] = []
        self.classes: list[list[Any]] = []
        self.class_index: dict[type, int] = {}
        self.files: list[str] = []
        self.file_index: dict[str, int] = {}
        self.spans: list[list[int]] = []
        self.span_index: dict[Span, int] = {}

    # -- the node table, built in post-order without recursion (deep expressions are fine)
    def add_tree(self, root: Node) -> None:
        in_progress: set[int] = set()
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            key = id(node)
            if key in self.ids:
                continue
            if expanded:
                in_progress.discard(key)
                self._emit(node)
                continue
            if key in in_progress:
                raise SerializationError(f"the IR contains a cycle through {type(node).__name__}")
            in_progress.add(key)
            stack.append((node, True))
            children: list[Node] = []
            for name, _ in node_fields(type(node)):
                _collect_nodes(getattr(node, name), children)
            for c in reversed(children):
                if id(c) not in self.ids:
                    stack.append((c, False))

    def _emit(self, node: Node) -> None:
        cls = type(node)
        ci = self.class_index.get(cls)
        if ci is None:
            if _node_class(cls.__name__) is not cls:
                raise SerializationError(f"node class {cls.__module__}.{cls.__qualname__} is not a "
                                         f"registered IR node class")
            ci = len(self.classes)
            self.class_index[cls] = ci
            self.classes.append([cls.__name__, [n for n, _ in node_fields(cls)]])
        row: list[Any] = [ci]
        for name, _ in node_fields(cls):
            row.append(self.value(getattr(node, name), cls, name))
        self.ids[id(node)] = len(self.nodes)
        self.keep.append(node)
        self.nodes.append(row)

    def value(self, v: Any, cls: type, field: str) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, enum.Enum):
            return v
        if isinstance(v, Op):
            return ["o", v.name]
        if isinstance(v, Node):
            return ["n", self.ids[id(v)]]
        if isinstance(v, tuple):
            return ["t", *(self.value(x, cls, field) for x in v)]
        if isinstance(v, DataType):
            return ["d", v.code]
        if isinstance(v, enum.Enum):
            ecls = type(v)
            if _ENUMS.get(ecls.__name__) is not ecls:
                raise SerializationError(f"{cls.__name__}.{field}: enum {ecls.__name__} is not an IR enum")
            return ["e", ecls.__name__, v.name]
        if isinstance(v, Span):
            return ["s", self.span(v)]
        raise SerializationError(f"{cls.__name__}.{field}: cannot serialize a {type(v).__name__} ({v!r})")

    def span(self, s: Span) -> int:
        got = self.span_index.get(s)
        if got is None:
            fi = self.file_index.get(s.filename)
            if fi is None:
                fi = self.file_index[s.filename] = len(self.files)
                self.files.append(s.filename)
            got = self.span_index[s] = len(self.spans)
            self.spans.append([fi, s.begin_line, s.begin_col, s.end_line, s.end_col])
        return got


def _collect_nodes(v: Any, out: list[Node]) -> None:
    if isinstance(v, Node):
        if not isinstance(v, Op):
            out.append(v)
    elif isinstance(v, tuple):
        for x in v:
            _collect_nodes(x, out)


def serialize(node: Node, *, compress: bool = False) -> bytes:
    """The IR file bytes for `node` (see the module docstring for the layout)."""
    if not isinstance(node, Node) or isinstance(node, Op):
        raise SerializationError(f"serialize() takes an IR node, got {type(node).__name__}")
    w = _Writer()
    w.add_tree(node)
    doc = {"classes": w.classes, "files": w.files, "spans": w.spans, "nodes": w.nodes,
           "root": w.value(node, type(node), "<root>")}
    payload = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode("utf-8")
    flags = 0
    if compress:
        payload = zlib.compress(payload, 6)
        flags |= _FLAG_ZLIB
    return _HEADER.pack(MAGIC, FORMAT_VERSION, flags, len(payload), zlib.crc32(payload)) + payload


def serialize_to_file(node: Node, path: str | os.PathLike, *, compress: bool = False) -> None:
    """Write `serialize(node)` to `path` atomically (a reader never sees half a file)."""
    data = serialize(node, compress=compress)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".pypto-ir-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------------
# reading


class _Reader:
    def __init__(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            raise DeserializationError("payload is not a JSON object")
        for key in ("classes", "files", "spans", "nodes", "root"):
            if key not in doc:
                raise DeserializationError(f"payload lacks the {key!r} table")
        self.doc = doc
        self.files = _expect_list(doc["files"], "files")
        for f in self.files:
            if not isinstance(f, str):
                raise DeserializationError("file table entries must be strings")
        self.spans: list[Span] = [self._span(i, s) for i, s in enumerate(_expect_list(doc["spans"], "spans"))]
        self.classes = [self._class(i, c) for i, c in enumerate(_expect_list(doc["classes"], "classes"))]
        self.nodes: list[Any] = []
        self.where = ""

    def _span(self, i: int, s: Any) -> Span:
        if not (isinstance(s, list) and len(s) == 5 and all(_is_int(x) for x in s)):
            raise DeserializationError(f"span #{i} is malformed: {s!r}")
        fi = s[0]
        if not 0 <= fi < len(self.files):
            raise DeserializationError(f"span #{i} refers to missing file #{fi}")
        span = Span(self.files[fi], s[1], s[2], s[3], s[4])
        return UNKNOWN_SPAN if span == UNKNOWN_SPAN else span

    def _class(self, i: int, c: Any) -> tuple[type, list[str]]:
        if not (isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], list)
                and all(isinstance(f, str) for f in c[1])):
            raise DeserializationError(f"class entry #{i} is malformed: {c!r}")
        name, fields = c
        cls = _node_class(name)
        if cls is None:
            raise DeserializationError(f"unknown node type {name!r} (written by a newer PyPTO?)")
        known = {n for n, _ in node_fields(cls)}
        extra = [f for f in fields if f not in known]
        if extra:
            raise DeserializationError(f"node type {name} has no field(s) {', '.join(extra)} in this PyPTO")
        return cls, fields

    def read(self) -> Any:
        for i, row in enumerate(_expect_list(self.doc["nodes"], "nodes")):
            self.nodes.append(self._node(i, row))
        self.where = "root"
        return self.value(self.doc["root"])

    def _node(self, i: int, row: Any) -> Node:
        if not (isinstance(row, list) and row and _is_int(row[0]) and 0 <= row[0] < len(self.classes)):
            raise DeserializationError(f"node #{i} is malformed (no valid class index)")
        cls, fields = self.classes[row[0]]
        if len(row) != len(fields) + 1:
            raise DeserializationError(f"node #{i} ({cls.__name__}) has {len(row) - 1} values for "
                                       f"{len(fields)} fields")
        kw = {}
        for f, v in zip(fields, row[1:]):
            self.where = f"node #{i} ({cls.__name__}.{f})"
            kw[f] = self.value(v)
        try:
            return cls(**kw)
        except Exception as e:  # a node's own checks reject the values (corrupt or hand-edited file)
            raise DeserializationError(f"node #{i} ({cls.__name__}) cannot be rebuilt: {e}") from None

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if not (isinstance(v, list) and v and isinstance(v[0], str)):
            raise DeserializationError(f"{self.where}: malformed value {v!r}")
        tag = v[0]
        if tag == "t":
            return tuple(self.value(x) for x in v[1:])
        if tag == "n":
            i = self._index(v, len(self.nodes), "node")
            return self.nodes[i]
        if tag == "s":
            return self.spans[self._index(v, len(self.spans), "span")]
        if tag == "d":
            if len(v) != 2 or not _is_int(v[1]):
                raise DeserializationError(f"{self.where}: malformed data type {v!r}")
            try:
                return dtype_from_code(v[1])
            except ValueError as e:
                raise DeserializationError(f"{self.where}: {e}") from None
        if tag == "e":
            return self._enum(v)
        if tag == "o":
            return self._op(v)
        raise DeserializationError(f"{self.where}: unknown value tag {tag!r}")

    def _index(self, v: list, n: int, what: str) -> int:
        if len(v) != 2 or not _is_int(v[1]):
            raise DeserializationError(f"{self.where}: malformed {what} reference {v!r}")
        i = v[1]
        if not 0 <= i < n:
            raise DeserializationError(f"{self.where}: dangling {what} reference #{i} "
                                       f"(only {n} defined before this point)")
        return i

    def _enum(self, v: list) -> enum.Enum:
        if len(v) != 3 or not isinstance(v[1], str) or not isinstance(v[2], str):
            raise DeserializationError(f"{self.where}: malformed enum value {v!r}")
        ecls = _ENUMS.get(v[1])
        if ecls is None:
            raise DeserializationError(f"{self.where}: unknown enum type {v[1]!r}")
        try:
            return ecls[v[2]]
        except KeyError:
            raise DeserializationError(f"{self.where}: {v[1]} has no member {v[2]!r}") from None

    def _op(self, v: list) -> Op:
        if len(v) != 2 or not isinstance(v[1], str):
            raise DeserializationError(f"{self.where}: malformed operator {v!r}")
        # operators are registered when the `pypto` package is imported (it imports pypto.ops)
        from .op import OpError, get_op

        try:
            return get_op(v[1])
        except OpError:
            raise DeserializationError(f"{self.where}: unknown operator {v[1]!r}") from None


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _expect_list(v: Any, what: str) -> list:
    if not isinstance(v, list):
        raise DeserializationError(f"the {what} table is not a list")
    return v


def deserialize(data: bytes | bytearray | memoryview) -> Any:
    """The node stored by `serialize` (shared objects are shared again)."""
    data = bytes(data)
    if len(data) < _HEADER.size:
        if data[:len(MAGIC)] != MAGIC[:len(data)]:
            raise DeserializationError("not a PyPTO IR file (bad magic)")
        raise DeserializationError(f"truncated IR file: {len(data)} bytes, the header alone is {_HEADER.size}")
    magic, version, flags, length, crc = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise DeserializationError("not a PyPTO IR file (bad magic)")
    if version != FORMAT_VERSION:
        raise DeserializationError(f"unsupported IR format version {version} (this PyPTO reads version "
                                   f"{FORMAT_VERSION})")
    if flags & ~_FLAG_ZLIB:
        raise DeserializationError(f"unknown format flags {flags:#x}")
    payload = data[_HEADER.size:]
    if len(payload) != length:
        what = "truncated" if len(payload) < length else "trailing bytes in"
        raise DeserializationError(f"{what} IR file: header says {length} payload bytes, found {len(payload)}")
    if zlib.crc32(payload) != crc:
        raise DeserializationError("corrupt IR file: checksum mismatch")
    try:
        if flags & _FLAG_ZLIB:
            payload = zlib.decompress(payload)
        doc = json.loads(payload.decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError) as e:
        raise DeserializationError(f"corrupt IR file: {e}") from None
    try:
        return _Reader(doc).read()
    except RecursionError:
        raise DeserializationError("corrupt IR file: values nested too deeply") from None


def deserialize_from_file(path: str | os.PathLike) -> Any:
    with open(os.fspath(path), "rb") as f:
        return deserialize(f.read())


__all__ = [
    "FORMAT_VERSION", "MAGIC", "DeserializationError", "SerializationError", "deserialize",
    "deserialize_from_file", "serialize", "serialize_to_file",
]
