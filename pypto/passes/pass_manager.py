"""Pipelines, strategies and the pass manager.

The whole pipeline is one list (`pipeline`), one line and one comment per step. Strategies pick
which steps run: `Default` is the full pipeline with synchronization inserted by the compiler;
`PTOAS` leaves synchronization to the PTO assembler (on the CPU target, kernels run in program
order, so it is not needed there).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pypto.ir.collector import paused_collector
from pypto.ir.function import Program
from pypto.ir.printer import python_print

from .base import IRProperty, Pass, PassContext, PassError
from .pass_diff import DiffWriter


class OptimizationStrategy(enum.Enum):
    Default = "Default"
    PTOAS = "PTOAS"
    DebugTileOptimization = "DebugTileOptimization"  # the later public name of the no-sync pipeline


class VerificationLevel(enum.Enum):
    NONE = "NONE"
    BASIC = "BASIC"  # verify the final IR (and at RunVerifier)
    ALL = "ALL"  # verify after every pass (what the test suite uses)
    ROUNDTRIP = "ROUNDTRIP"  # verify after every pass and check print -> parse -> equal


def pipeline(strategy: OptimizationStrategy = OptimizationStrategy.Default) -> list[Pass]:
    """The passes of a strategy, in order."""
    from .allocate_memory_addr import AllocateMemoryAddr
    from .auto_tile_matmul_l0 import AutoTileMatmulL0
    from .convert_tensor_to_block_ops import ConvertTensorToBlockOps
    from .convert_to_ssa import ConvertToSSA
    from .ctrl_flow_transform import CtrlFlowTransform
    from .dedup_kernels import DedupKernels
    from .flatten_call_expr import FlattenCallExpr
    from .init_memref import InitMemRef
    from .inline_functions import InlineFunctions
    from .insert_sync import InsertSync
    from .interchange_chunk_loops import InterchangeChunkLoops
    from .lower_groups import LowerGroupFunctions
    from .memory_reuse import MemoryReuse
    from .outline_incore_scopes import OutlineIncoreScopes
    from .run_verifier import RunVerifier
    from .scope_tensor_ops import ScopeTensorOps
    from .split_chunked_loops import SplitChunkedLoops
    from .unroll_loops import UnrollLoops

    steps: list[Pass] = [
        UnrollLoops(),              # expand pl.unroll loops (constant bounds) before SSA
        CtrlFlowTransform(),        # break/continue -> structured ifs and flag-guarded while loops
        ConvertToSSA(),             # one definition per variable: loop-carried values, if phis, while state
        FlattenCallExpr(),          # three-address form: no call nested in another call or condition
        SplitChunkedLoops(),        # chunk=C loops inside auto_incore -> outer x inner (+ remainder)
        InterchangeChunkLoops(),    # chunk outers on top; parallel inners become InCore scopes
        RunVerifier(),              # SSA, types and use-after-def, before lowering
        LowerGroupFunctions(),      # a Group call: one task whose cube and vector blocks run at once
        InlineFunctions(),          # calls of Opaque functions are spliced into their callers
        ScopeTensorOps(),           # tensor compute outside any InCore scope gets one (auto outlining)
        OutlineIncoreScopes(),      # InCore scopes -> InCore kernel functions + calls
        ConvertTensorToBlockOps(),  # inside kernels: tensor ops -> load / tile ops / store
        AutoTileMatmulL0(),         # matmuls on Mat (L1) operands -> L0-sized pieces
        DedupKernels(),             # isomorphic kernels share one function
        InitMemRef(),               # every tile gets a buffer (MemRef) in its memory space
        MemoryReuse(),              # tiles with disjoint lifetimes share buffers
        InsertSync(),               # set/wait flags across pipes, barriers within a pipe
        AllocateMemoryAddr(),       # addresses per space; capacity checked; memory report
    ]
    if strategy is not OptimizationStrategy.Default:
        steps = [p for p in steps if not isinstance(p, InsertSync)]
    return steps


@dataclass
class PassRecord:
    name: str
    seconds: float


@dataclass
class PassManager:
    """Runs a list of passes, tracking IR properties, verifying and dumping as asked."""

    passes: list[Pass]
    strategy: OptimizationStrategy = OptimizationStrategy.Default
    verification_level: VerificationLevel = VerificationLevel.BASIC
    # print -> parse for ROUNDTRIP verification (the driver supplies the `pl` parser: passes sit below it)
    reparse: Callable[[str], Program] | None = None
    records: list[PassRecord] = field(default_factory=list)

    @staticmethod
    def get_strategy(strategy: OptimizationStrategy = OptimizationStrategy.Default, **kw) -> PassManager:
        return PassManager(pipeline(strategy), strategy, **kw)

    def run_passes(self, program: Program, dump_ir: bool = False, output_dir: str | Path | None = None,
                   prefix: str = "", ctx: PassContext | None = None) -> Program:
        ctx = ctx or PassContext()
        dump_dir = None
        if output_dir is not None and dump_ir:
            dump_dir = Path(output_dir) / "passes_dump"
            dump_dir.mkdir(parents=True, exist_ok=True)
        # each dump's diff against the previous one, only where dumps are written (no cost otherwise)
        diffs = DiffWriter(dump_dir) if dump_dir is not None else None
        self._dump(program, dump_dir, "00_frontend", dump_ir, diffs)
        with paused_collector():  # passes rebuild trees of immutable nodes: no cycles to collect
            return self._run(program, ctx, dump_dir, dump_ir, prefix, diffs)

    def _run(self, program: Program, ctx: PassContext, dump_dir: Path | None, dump_ir: bool, prefix: str,
             diffs: DiffWriter | None = None) -> Program:
        props: set[IRProperty] = {IRProperty.TypeChecked}
        self.records = []
        _check_buildable(program)
        for i, p in enumerate(self.passes, start=1):
            missing = p.requires - props
            if missing:
                raise PassError(f"pass {p.name} needs {', '.join(sorted(m.value for m in missing))}, which no "
                                "earlier pass produced (is the pipeline out of order?)")
            t0 = time.perf_counter()
            program = p.run(program, ctx)
            self.records.append(PassRecord(p.name, time.perf_counter() - t0))
            props = (props - set(p.invalidates)) | set(p.produces)
            self._check(program, p, props)
            self._dump(program, dump_dir, f"{prefix}{i:02d}_after_{p.name}", dump_ir, diffs)
        if self.verification_level is VerificationLevel.BASIC:
            self._verify(program, "the last pass", props)
        return program

    def _check(self, program: Program, p: Pass, props: set[IRProperty]) -> None:
        lvl = self.verification_level
        if lvl in (VerificationLevel.ALL, VerificationLevel.ROUNDTRIP):
            self._verify(program, p.name, props)
        if lvl is VerificationLevel.ROUNDTRIP and self.reparse is not None:
            from pypto.ir.structural import StructuralMismatch, assert_structural_equal

            text = python_print(program)
            again = self.reparse(text)
            try:
                assert_structural_equal(again, program, enable_auto_mapping=True)
            except StructuralMismatch as e:
                raise PassError(f"the IR after {p.name} does not survive print -> parse: {e}") from None

    def _verify(self, program: Program, after: str, props: set[IRProperty]) -> None:
        from pypto.ir.verifier import DEFAULT_RULES, VerificationError, verify_or_raise

        # the SSA rules hold only once ConvertToSSA has run
        rules = list(DEFAULT_RULES) if IRProperty.SSAForm in props else [r for r in DEFAULT_RULES
                                                                        if r != "SSAVerify"]
        try:
            verify_or_raise(program, rules)
        except VerificationError as e:
            raise PassError(f"the IR after {after} is invalid:\n{e}") from None

    def _dump(self, program: Program, dump_dir: Path | None, name: str, echo: bool,
              diffs: DiffWriter | None = None) -> None:
        if not echo:
            return
        text = python_print(program)
        if dump_dir is not None:
            (dump_dir / f"{name}.py").write_text(text)
        if diffs is not None:
            diffs.add(name, text, self.records[-1].seconds if self.records and name != "00_frontend" else None)
        print(f"# ===== IR {name} =====")
        print(text)


def _check_buildable(program: Program) -> None:
    """Before any pass: what no pass can repair (element types no target stores, dimensions or sizes
    beyond int64), named by function and parameter or variable, located at its definition."""
    from pypto.ir.verifier import verify

    diags = verify(program, ["SupportedTypes"])
    if diags:
        d = diags[0]
        why = d.message.split(": ", 1)[-1]
        # the rest by place only where they repeat the first one's reason (a bad parameter's return type)
        more = "also " + "; ".join(f"{x.message.removesuffix(': ' + why)} ({x.span})" for x in diags[1:]) \
            if diags[1:] else None
        raise PassError(f"cannot compile program {program.name}: {d.message}", d.span, hint=d.hint, note=more)


__all__ = ["OptimizationStrategy", "PassManager", "PassRecord", "VerificationLevel", "pipeline"]
