"""pack_args: NumPy arrays (strided views included) and numbers become pto_arg structs, zero-copy."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pypto.runtime import ArgKind, pack_args
from pypto.runtime.abi import ARG_DTYPE, PtoArg
from pypto.runtime.marshal import root_range


def addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def check_tensor(arg: PtoArg, view: np.ndarray, base: np.ndarray, kind: ArgKind) -> None:
    assert arg.kind == kind
    assert arg.t.data == addr(view)
    assert arg.t.dtype_bytes == view.itemsize
    assert arg.t.ndim == view.ndim
    assert list(arg.t.shape)[:view.ndim] == list(view.shape)
    assert list(arg.t.strides)[:view.ndim] == [s // view.itemsize for s in view.strides]
    assert arg.t.root == addr(base) and arg.t.root_nbytes == base.nbytes


BASE = np.arange(6 * 10, dtype=np.float32).reshape(6, 10)


@pytest.mark.parametrize("view", [
    BASE,
    BASE[1:4, 2:7],
    BASE[::2, ::3],
    BASE[::-1],
    BASE[:, ::-2],
    BASE.T,
    BASE[3],
    BASE[2, 5:6],
    BASE[1:1],
    BASE.reshape(-1)[7:19],
    BASE[None, 2:4, :, None],
])
def test_views_share_the_base_root(view):
    args, keep = pack_args([view], ["in"])
    check_tensor(args[0], view, BASE, ArgKind.IN)
    assert view is keep[0]


def test_scalars_and_default_kinds():
    x = np.zeros((2, 3))
    args, _ = pack_args([x, 7, -3, 2.5, np.float32(0.25), True, np.int16(-9)])
    kinds = [a.kind for a in args]
    assert kinds == [ArgKind.INOUT, ArgKind.I64, ArgKind.I64, ArgKind.F64, ArgKind.F64, ArgKind.I64, ArgKind.I64]
    assert args[1].i == 7 and args[2].i == -3 and args[5].i == 1 and args[6].i == -9
    assert args[3].f == 2.5 and args[4].f == 0.25
    args, _ = pack_args([3, 4], ["f64", "i64"])
    assert args[0].f == 3.0 and args[1].i == 4
    args, _ = pack_args([np.array(5)], ["i64"])  # a 0-d array as a scalar
    assert args[0].i == 5


def test_zero_dim_array_as_tensor():
    x = np.array(3.0)
    args, _ = pack_args([x], ["out"])
    assert args[0].t.ndim == 0 and args[0].t.data == addr(x) and args[0].t.root_nbytes == 8


def test_overlapping_separate_arrays_get_one_root():
    buf = bytearray(800)
    a = np.frombuffer(buf, dtype=np.float64, count=60)
    b = np.frombuffer(buf, dtype=np.float64, count=50, offset=400)   # a separate object, overlapping
    c = np.zeros(4)
    args, _ = pack_args([a, b, c], ["in", "out", "in"])
    assert args[0].t.root == args[1].t.root == addr(a)
    assert args[0].t.root_nbytes == args[1].t.root_nbytes == 800
    assert args[2].t.root == addr(c) and args[2].t.root_nbytes == 32


def test_root_range_follows_the_base_chain():
    x = np.zeros((4, 4))
    v = x[1:3][:, ::2][::-1]
    assert root_range(v) == (addr(x), addr(x) + x.nbytes)


def test_rejections():
    raw = np.zeros(17, dtype=np.uint8)
    misaligned = np.frombuffer(raw.data, dtype=np.float64, count=2, offset=1)
    with pytest.raises(ValueError, match="not aligned"):
        pack_args([misaligned], ["in"])
    packed = np.zeros(4, dtype=[("b", "<f8"), ("a", "<u4")])  # 12-byte records
    with pytest.raises(ValueError, match="not multiples"):
        pack_args([packed["b"]], ["in"])
    with pytest.raises(ValueError, match="at most 8"):
        pack_args([np.zeros((1,) * 9)], ["in"])
    with pytest.raises(TypeError, match="cannot be passed"):
        pack_args([np.array([object()])], ["in"])
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pack_args([ro], ["out"])
    pack_args([ro], ["in"])  # reading is fine
    with pytest.raises(TypeError, match="is in \\(a tensor\\)"):
        pack_args([3], ["in"])
    with pytest.raises(TypeError, match="got an array of shape"):
        pack_args([np.zeros(3)], ["f64"])
    with pytest.raises(TypeError, match="non-integer"):
        pack_args([2.5], ["i64"])
    with pytest.raises(OverflowError):
        pack_args([1 << 70], ["i64"])
    with pytest.raises(TypeError, match="cannot pass a str"):
        pack_args(["x"])
    with pytest.raises(ValueError, match="2 values but 1 kinds"):
        pack_args([1, 2], ["i64"])


def test_numpy_record_view_matches_ctypes():
    x = np.zeros((3, 5))
    args, _ = pack_args([x[1:, 2:], 11, 0.5], ["inout", "i64", "f64"])
    rec = np.frombuffer(args, dtype=ARG_DTYPE)
    assert rec["kind"].tolist() == [2, 3, 4]
    assert rec["shape"][0][:2].tolist() == [2, 3] and rec["strides"][0][:2].tolist() == [5, 1]
    assert ctypes.sizeof(args) == 3 * 168


def test_torch_tensors_zero_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    v = t[1:, ::2]
    args, keep = pack_args([v], ["inout"])
    assert args[0].t.data == v.data_ptr()
    assert list(args[0].t.shape)[:2] == [2, 2] and list(args[0].t.strides)[:2] == [4, 2]
    bf = torch.zeros(4, dtype=torch.bfloat16)
    args, _ = pack_args([bf], ["out"])
    assert args[0].t.dtype_bytes == 2 and args[0].t.data == bf.data_ptr()
