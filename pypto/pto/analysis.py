"""What a task program (the orchestration function of a PTO module) does with its parameters.

One analysis, read by everyone who needs these facts, so that they cannot disagree:

- the compile driver writes `slots` and `written` into `signature.json` (calling reads them);
- the CPU assembler (`backend/cpu/emit_orchestration.py`) writes results into the parameter or
  extra output `slots` names, and creates `fresh_outputs` directly in their output buffer;
- calling (`backend/launch.py`, through the signature) hands an `In` parameter in `written` a
  copy, and maps the interpreter's returned values onto the extra outputs by `slots`.

Two relations between values are tracked, both keyed by value identity:

- *same value* (`same_value`): a value that is another under a new name — a `scf.for` result (and
  its carried block argument) whose every iteration yields the carried value unchanged is the
  loop's init value; a `scf.if` result both branches yield alike is that value. A returned value
  that is an entry parameter in this sense is written in place; anything else (a view of a
  parameter included) is returned through an extra output.
- *memory of* (`param_memory`): the entry parameter whose memory a value may lie in — through
  `pto.tensor_slice` / `pto.tensor_reshape` views and loop-carried or branch-joined forms of it.
  Written parameters are those some task writes (`out` / `inout` in `pto.submit`) or the program
  writes an element of (`pto.tensor_write`) through such a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .model import Block, Func, Value, walk


@dataclass(frozen=True, slots=True)
class ReturnSlot:
    """How the k-th returned value reaches the caller."""

    param: int | None  # the entry parameter it is (written in place), or None
    output: int | None  # else: index of the extra output parameter it is written into


@dataclass(frozen=True)
class TaskProgramInfo:
    """The facts above for one task program (see the module docstring)."""

    func: Func
    returned: tuple[Value, ...]  # operands of the last `func.return` (empty without one)
    slots: tuple[ReturnSlot, ...]  # per returned value
    written: frozenset[int]  # indices of entry parameters the program writes
    fresh_outputs: Mapping[int, int]  # id of a returned `pto.alloc_tensor` result -> its extra output
    _same: Mapping[int, Value]  # id(value) -> the value it is under another name (chains allowed)
    _memory: Mapping[int, int]  # id(value) -> entry parameter whose memory it may lie in

    @property
    def n_outputs(self) -> int:
        """Extra output parameters the caller passes after the entry parameters."""
        return sum(1 for s in self.slots if s.output is not None)

    def same_value(self, v: Value) -> Value:
        """The value `v` is under another name (`v` itself when it is no such alias)."""
        while id(v) in self._same:
            v = self._same[id(v)]
        return v

    def param_memory(self, v: Value) -> int | None:
        """The entry parameter whose memory `v` may lie in, or None."""
        return self._memory.get(id(v))


def analyze_task_program(func: Func) -> TaskProgramInfo:
    """Analyse the orchestration function `func` (kernels have no return slots)."""
    same = _same_values(func)
    rets = [op for op in walk(func.body) if op.name == "func.return"]
    returned = tuple(rets[-1].operands) if rets else ()
    args = {id(a): i for i, a in enumerate(func.args)}
    slots: list[ReturnSlot] = []
    n_out = 0
    for v in returned:
        while id(v) in same:
            v = same[id(v)]
        p = args.get(id(v))
        if p is not None:
            slots.append(ReturnSlot(p, None))
        else:
            slots.append(ReturnSlot(None, n_out))
            n_out += 1
    allocs = {id(op.result) for op in walk(func.body) if op.name == "pto.alloc_tensor"}
    fresh: dict[int, int] = {}
    for v, s in zip(returned, slots):
        if s.output is not None and id(v) in allocs:
            fresh.setdefault(id(v), s.output)
    memory, written = _param_memory(func)
    return TaskProgramInfo(func, returned, tuple(slots), frozenset(written), MappingProxyType(fresh),
                           MappingProxyType(same), MappingProxyType(memory))


def _same_values(func: Func) -> dict[int, Value]:
    """The *same value* relation, one step per entry (ops in pre-order: a loop is decided before
    the ops of its body are seen)."""
    roots: dict[int, Value] = {}

    def root(v: Value) -> Value:
        while id(v) in roots:
            v = roots[id(v)]
        return v

    for op in walk(func.body):
        if op.name == "scf.for" and op.results:
            body = op.regions[0]
            y = body.ops[-1] if body.ops and body.ops[-1].name == "scf.yield" else None
            for k, r in enumerate(op.results):
                init = op.operands[3 + k]
                if y is not None and k < len(y.operands) and root(y.operands[k]) is root(body.args[1 + k]):
                    roots[id(r)] = init
                    roots[id(body.args[1 + k])] = init
        elif op.name == "scf.if" and op.results and len(op.regions) == 2:
            ys = [b.ops[-1] for b in op.regions if b.ops and b.ops[-1].name == "scf.yield"]
            if len(ys) == 2:
                for k, r in enumerate(op.results):
                    a, b = root(ys[0].operands[k]), root(ys[1].operands[k])
                    if a is b:
                        roots[id(r)] = a
    return roots


def _param_memory(func: Func) -> tuple[dict[int, int], set[int]]:
    """The *memory of* relation and the written parameters, in program order (a loop's carried
    values take the parameter of its init values; an if's results that of the values its branches
    yield, the else branch's when both name one)."""
    root: dict[int, int] = {id(a): i for i, a in enumerate(func.args)}
    written: set[int] = set()

    def alias(dst: Value, src: Value) -> None:
        r = root.get(id(src))
        if r is not None:
            root[id(dst)] = r

    def visit(block: Block) -> None:
        for op in block.ops:
            n = op.name
            if n in ("pto.tensor_slice", "pto.tensor_reshape") and op.operands and op.results:
                alias(op.results[0], op.operands[0])
            elif n == "pto.submit":
                for v, d in zip(op.operands, op.attrs.get("dirs", [])):
                    if d in ("out", "inout") and id(v) in root:
                        written.add(root[id(v)])
            elif n == "pto.tensor_write" and len(op.operands) > 1 and id(op.operands[1]) in root:
                written.add(root[id(op.operands[1])])
            elif n == "scf.for":
                inits = op.operands[3:]
                for k, v in enumerate(inits):
                    if op.regions and k + 1 < len(op.regions[0].args):
                        alias(op.regions[0].args[k + 1], v)
                    if k < len(op.results):
                        alias(op.results[k], v)
            elif n == "scf.while":
                for reg in op.regions:
                    for k, v in enumerate(op.operands):
                        if k < len(reg.args):
                            alias(reg.args[k], v)
                for k, v in enumerate(op.operands):
                    if k < len(op.results):
                        alias(op.results[k], v)
            for reg in op.regions:
                visit(reg)
                last = reg.ops[-1] if reg.ops else None
                if n == "scf.if" and last is not None and last.name == "scf.yield":
                    for k, v in enumerate(last.operands):
                        if k < len(op.results):
                            alias(op.results[k], v)

    visit(func.body)
    return root, written


__all__ = ["ReturnSlot", "TaskProgramInfo", "analyze_task_program"]
