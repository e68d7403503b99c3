"""The task program's analysis (`pypto.pto.analysis`): return slots, fresh outputs, written
parameters, read from PTO text."""

from __future__ import annotations

from pypto.pto.analysis import ReturnSlot, analyze_task_program
from pypto.pto.parser import parse_module

TASKS = """
module attributes {pto.target_arch = "cpu"} {
  func.func @main(%a: !pto.tensor<32x16xf32>, %b: !pto.tensor<32x16xf32>, %c: !pto.tensor<32x16xf32>, %s: f32) -> (!pto.tensor<32x16xf32>, !pto.tensor<16x16xf32>, !pto.tensor<32x16xf32>, !pto.tensor<32x16xf32>) attributes {pto.kind = #pto.kind<orchestration>, pto.param_dirs = ["in", "in", "inout", "scalar"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %fresh = pto.alloc_tensor shape = [%c32, %c16] : !pto.tensor<32x16xf32>
    %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %c) -> (!pto.tensor<32x16xf32>) {
      %w = pto.tensor_slice %acc, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor<32x16xf32> -> !pto.tensor<16x16xf32>
      %v = pto.tensor_slice %a, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor<32x16xf32> -> !pto.tensor<16x16xf32>
      pto.submit @k(%v, %w) {dirs = ["in", "out"]} : (!pto.tensor<16x16xf32>, !pto.tensor<16x16xf32>)
      scf.yield %acc : !pto.tensor<32x16xf32>
    }
    %view = pto.tensor_slice %r, offsets = [%c16, %c0], sizes = [%c16, %c16] : !pto.tensor<32x16xf32> -> !pto.tensor<16x16xf32>
    pto.tensor_write %s, %b[%c0, %c0] : f32, !pto.tensor<32x16xf32>
    func.return %r, %view, %fresh, %a : !pto.tensor<32x16xf32>, !pto.tensor<16x16xf32>, !pto.tensor<32x16xf32>, !pto.tensor<32x16xf32>
  }
}
"""


def test_slots_written_and_fresh_outputs():
    func = parse_module(TASKS).funcs[0]
    info = analyze_task_program(func)
    # %r is %c carried through unchanged: written in place; a view of it is not %c: an extra output
    assert info.slots == (ReturnSlot(2, None), ReturnSlot(None, 0), ReturnSlot(None, 1), ReturnSlot(0, None))
    assert info.n_outputs == 2
    fresh = next(op.result for op in func.body.ops if op.name == "pto.alloc_tensor")
    assert dict(info.fresh_outputs) == {id(fresh): 1}  # created in its output buffer
    # a task writes %c (through a slice of its loop-carried form); the program writes an element of %b
    assert info.written == frozenset({1, 2})
    view = info.returned[1]
    assert info.param_memory(view) == 2 and info.same_value(view) is view
    assert info.same_value(info.returned[0]) is func.args[2]


def test_no_return():
    text = """
module attributes {pto.target_arch = "cpu"} {
  func.func @main(%a: !pto.tensor<16x16xf32>) attributes {pto.kind = #pto.kind<orchestration>, pto.param_dirs = ["inout"]} {
    pto.submit @k(%a) {dirs = ["inout"]} : (!pto.tensor<16x16xf32>)
    func.return
  }
}
"""
    info = analyze_task_program(parse_module(text).funcs[0])
    assert info.slots == () and info.returned == () and not info.fresh_outputs and info.n_outputs == 0
    assert info.written == frozenset({0})
