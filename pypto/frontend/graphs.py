"""The four graph levels of a tensor-level kernel, each as printed IR and as JSON:

- **tensor**: the traced program (whole-tensor ops, `pl.range` loops, views, assembles);
- **tile**: after the pipeline has scoped the ops into kernels, outlined them and expanded them
  into tile ops (`ConvertTensorToBlockOps`: tile shapes, valid shapes of tails);
- **block**: the kernels after memory planning and synchronisation (one per fused group);
- **execution**: the task program that calls them (what the MPMD runtime runs).

JSON: per function its nodes (one per operation: op, result, type, the user's source line, the
loops and ifs around it) and edges (value from producer to consumer), which graph viewers draw.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.printer import python_print, type_str
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.variables import used_vars


class CompStage(enum.IntEnum):
    """Where compilation stops (`host_options={"compile_stage": ...}`), as in the reference."""

    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


LEVELS = ("tensor", "tile", "block", "execution")


def tile_graph(program: Program) -> Program:
    """The program after the pipeline's passes up to the tensor-to-tile expansion."""
    from pypto.passes.base import PassContext
    from pypto.passes.pass_manager import PassManager

    pm = PassManager.get_strategy()
    names = [p.name for p in pm.passes]
    stop = names.index("ConvertTensorToBlockOps") + 1 if "ConvertTensorToBlockOps" in names else len(names)
    pm.passes = pm.passes[:stop]
    return pm.run_passes(program, ctx=PassContext())


def levels(tensor: Program, compiled_program: Program | None = None) -> dict[str, Program]:
    """The graph levels available: tensor and tile always; block and execution from a compiled
    (fully lowered) program."""
    out = {"tensor": tensor, "tile": tile_graph(tensor)}
    if compiled_program is not None:
        kernels = tuple(f for f in compiled_program.functions if f.func_type is FunctionType.InCore)
        tasks = tuple(f for f in compiled_program.functions if f.func_type is not FunctionType.InCore)
        out["block"] = Program(f"{tensor.name}_block", kernels) if kernels else None
        out["execution"] = Program(f"{tensor.name}_execution", tasks) if tasks else None
    return {k: v for k, v in out.items() if v is not None}


def function_graph(fn: Function, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """Nodes and edges of one function (see the module docstring); `labels`: value name -> the
    semantic label it was recorded under (the tensor level)."""
    nodes: list[dict[str, Any]] = []
    producer: dict[Var, int] = {p: -1 for p in fn.params}
    edges: list[dict[str, Any]] = []

    def visit(s: Stmt | None, scope: list[str]) -> None:
        if s is None:
            return
        if isinstance(s, SeqStmts):
            for t in s.stmts:
                visit(t, scope)
            return
        if isinstance(s, ForStmt):
            visit(s.body, scope + [f"for {s.loop_var.name}"])
            for r in s.return_vars:
                producer[r] = -1
            return
        if isinstance(s, WhileStmt):
            visit(s.body, scope + ["while"])
            return
        if isinstance(s, IfStmt):
            visit(s.then_body, scope + ["if"])
            visit(s.else_body, scope + ["else"])
            for r in s.return_vars:
                producer[r] = -1
            return
        value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
        if not isinstance(value, Call):
            if isinstance(s, AssignStmt):
                producer[s.var] = -1
            return
        k = len(nodes)
        span = s.span
        nodes.append({"id": k, "op": getattr(value.op, "name", str(value.op)),
                      "result": s.var.name if isinstance(s, AssignStmt) else None,
                      "type": type_str(value.type) if value.type is not None else None,
                      "source": f"{span.filename}:{span.begin_line}" if span.is_known else None,
                      "label": (labels or {}).get(s.var.name) if isinstance(s, AssignStmt) else None,
                      "scope": list(scope)})
        for v in used_vars(value):
            src = producer.get(v)
            if src is not None and src >= 0:
                edges.append({"from": src, "to": k, "value": v.name})
        if isinstance(s, AssignStmt):
            producer[s.var] = k

    visit(fn.body, [])
    return {"name": fn.name, "type": fn.func_type.name, "params": [p.name for p in fn.params], "nodes": nodes,
            "edges": edges}


def program_graph(level: str, program: Program, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"level": level, "program": program.name,
            "functions": [function_graph(f, labels) for f in program.functions]}


def dump(graphs: dict[str, Program], out_dir: str | Path, labels: dict[str, str] | None = None) -> list[Path]:
    """Write `<level>_graph.py` (printed IR) and `<level>_graph.json` for each level; their paths.
    `labels` (semantic labels of the tensor level's values) go into the tensor graph's nodes."""
    from pypto.support.files import atomic_write, make_dirs

    out = Path(out_dir)
    make_dirs(out)
    paths = []
    for level, prog in graphs.items():
        py, js = out / f"{level}_graph.py", out / f"{level}_graph.json"
        atomic_write(py, python_print(prog))
        atomic_write(js, json.dumps(program_graph(level, prog, labels if level == "tensor" else None), indent=1))
        paths += [py, js]
    return paths


__all__ = ["CompStage", "LEVELS", "dump", "function_graph", "levels", "program_graph", "tile_graph"]
