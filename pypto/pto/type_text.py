"""Types as text: `print_type` and the parser of one type token (docs/pto_format.md, Types).

A type is one token (`index`, `!pto.tile_buf<loc=vec, ...>`): the tokenizer never splits inside
`<...>`. Parsed types are cached by their text, so the many repeats of a tile type in a kernel
cost one dictionary lookup each and share one object.
"""

from __future__ import annotations

from pypto.errors import Error, InvalidValue

from .model import PartitionViewT, PtoType, PtrT, ScalarT, TensorT, TensorViewT, TileBufT
from .syntax import IDENT_RE, SCALAR_NAMES, TILE_LOCS


def _dim(d: int | None) -> str:
    return "?" if d is None else str(d)


def print_type(t: PtoType) -> str:
    """The text of a type, e.g. `f32`, `!pto.tensor_view<?x?xf32>`, `!pto.tile_buf<loc=vec, ...>`."""
    if isinstance(t, ScalarT):
        return t.name
    if isinstance(t, TileBufT):
        return (f"!pto.tile_buf<loc={t.loc}, dtype={t.dtype}, rows={t.rows}, cols={t.cols}, "
                f"v_row={_dim(t.v_row)}, v_col={_dim(t.v_col)}, blayout={t.blayout}, slayout={t.slayout}, "
                f"fractal={t.fractal}, pad={t.pad}>")
    if isinstance(t, PtrT):
        return f"!pto.ptr<{t.elem}>"
    if isinstance(t, TensorViewT):
        return f"!pto.tensor_view<{'?x' * t.rank}{t.elem}>"
    if isinstance(t, PartitionViewT):
        return f"!pto.partition_tensor_view<{''.join(_dim(d) + 'x' for d in t.shape)}{t.elem}>"
    if isinstance(t, TensorT):
        return f"!pto.tensor<{''.join(_dim(d) + 'x' for d in t.shape)}{t.elem}>"
    raise InvalidValue(f"not a PTO type: {t!r}")


class BadType(Error):
    """A malformed type token; `offset` is the index of the fault inside the token."""

    def __init__(self, message: str, offset: int = 0):
        self.message, self.offset = message, offset


TYPE_CACHE: dict[str, PtoType] = {s: ScalarT(s) for s in SCALAR_NAMES}
SCALARS = dict(TYPE_CACHE)
_TILE_FIELDS = ("loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad")


def _nat(text: str, offset: int, what: str, allow_dynamic: bool = False) -> int | None:
    if allow_dynamic and text == "?":
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise BadType(f"{what} must be {'a size or ?' if allow_dynamic else 'a non-negative integer'}, "
                       f"not '{text}'", offset)
    return int(text)


def _elem(text: str, offset: int) -> str:
    if text not in SCALARS:
        raise BadType(f"unknown element type '{text}'" if text else "expected an element type (f32, i32, ...)",
                      offset)
    return text


_ELEM_SUFFIXES = sorted(SCALAR_NAMES, key=len, reverse=True)  # `bf16` before `f16`; `index` holds an x


def _shape(inner: str, offset: int) -> tuple[tuple[int | None, ...], str]:
    """`64x?xf32` -> ((64, None), "f32"); offsets in errors count from the token's start."""
    s = inner.rstrip()
    for name in _ELEM_SUFFIXES:
        if s.endswith(name):
            head = s[: len(s) - len(name)]
            if not head.strip() or head.rstrip().endswith("x"):
                break
    else:
        head, _, last = s.rpartition("x")
        head = head + "x" if head else ""
        lead = len(last) - len(last.lstrip())
        _elem(last.strip(), offset + len(head) + lead)
    elem = s[len(head):]
    dims: list[int | None] = []
    if head.strip():
        pos = offset
        for part in head.rstrip()[:-1].split("x"):
            t = part.strip()
            dims.append(_nat(t, pos + (part.find(t[:1]) if t else 0), "a dimension", allow_dynamic=True))
            pos += len(part) + 1
    return tuple(dims), elem.strip()


def _tile_buf(inner: str, offset: int) -> TileBufT:
    got: dict[str, str] = {}
    pos = offset
    where: dict[str, int] = {}
    for part in inner.split(","):
        key, eq, val = part.partition("=")
        key, val = key.strip(), val.strip()
        at = pos + len(part) - len(part.lstrip())
        if not eq or key not in _TILE_FIELDS:
            raise BadType(f"tile_buf field '{key}' is unknown (fields: {', '.join(_TILE_FIELDS)})" if eq
                           else f"expected 'field=value' in tile_buf, found '{part.strip()}'", at)
        if key in got:
            raise BadType(f"tile_buf field '{key}' is given twice", at)
        if "=" in val or len(val.split()) > 1:
            raise BadType(f"expected ',' after tile_buf field '{key}'", at)
        got[key], where[key] = val, at + len(part.lstrip()) - len(part.lstrip().partition("=")[2].lstrip())
        pos += len(part) + 1
    for req in ("loc", "dtype", "rows", "cols"):
        if req not in got:
            raise BadType(f"tile_buf needs '{req}=' (fields: {', '.join(_TILE_FIELDS)})", offset)
    if got["loc"] not in TILE_LOCS:
        raise BadType(f"tile_buf loc must be one of {', '.join(TILE_LOCS)}, not '{got['loc']}'", where["loc"])
    dtype = _elem(got["dtype"], where["dtype"])
    rows = _nat(got["rows"], where["rows"], "rows")
    cols = _nat(got["cols"], where["cols"], "cols")
    v_row = _nat(got["v_row"], where["v_row"], "v_row", True) if "v_row" in got else rows
    v_col = _nat(got["v_col"], where["v_col"], "v_col", True) if "v_col" in got else cols
    if v_row is not None and v_row > rows:  # type: ignore[operator]
        raise BadType(f"v_row={v_row} exceeds rows={rows}", where["v_row"])
    if v_col is not None and v_col > cols:  # type: ignore[operator]
        raise BadType(f"v_col={v_col} exceeds cols={cols}", where["v_col"])
    extra = {}
    for k in ("blayout", "slayout"):
        if k in got:
            if not IDENT_RE.fullmatch(got[k]):
                raise BadType(f"tile_buf {k} must be a name such as row_major, not '{got[k]}'", where[k])
            extra[k] = got[k]
    for k in ("fractal", "pad"):
        if k in got:
            extra[k] = _nat(got[k], where[k], k)
    return TileBufT(got["loc"], dtype, rows, cols, v_row, v_col, **extra)  # type: ignore[arg-type]


def _type_from_token(tok: str) -> PtoType:
    """Parse one type token (raises _BadType with an offset into the token)."""
    if tok[:1] != "!":
        raise BadType(f"unknown type '{tok}'" if IDENT_RE.fullmatch(tok) else f"expected a type, found '{tok}'")
    lt = tok.find("<")
    if lt < 0 or not tok.endswith(">"):
        raise BadType(f"expected a type, found '{tok}'")
    kind, inner, off = tok[1:lt], tok[lt + 1:-1], lt + 1
    if kind == "pto.tile_buf":
        return _tile_buf(inner, off)
    if kind == "pto.ptr":
        return PtrT(_elem(inner.strip(), off + len(inner) - len(inner.lstrip())))
    if kind in ("pto.tensor_view", "pto.partition_tensor_view", "pto.tensor"):
        dims, elem = _shape(inner, off)
        if kind == "pto.tensor":
            return TensorT(dims, elem)
        if kind == "pto.partition_tensor_view":
            return PartitionViewT(dims, elem)
        if any(d is not None for d in dims):
            raise BadType("tensor_view extents are all dynamic: write ?x?xf32", off)
        return TensorViewT(len(dims), elem)
    raise BadType(f"unknown type '!{kind}<...>' (PTO types: !pto.ptr, !pto.tensor_view, "
                   "!pto.partition_tensor_view, !pto.tile_buf, !pto.tensor)")


def cached_type(tok: str) -> PtoType:
    ty = TYPE_CACHE.get(tok)
    if ty is None:
        ty = _type_from_token(tok)
        if len(TYPE_CACHE) > 8192:
            TYPE_CACHE.clear()
            TYPE_CACHE.update(SCALARS)
        TYPE_CACHE[tok] = ty
    return ty
