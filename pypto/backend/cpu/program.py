"""Assemble a program's PTO modules into one C++ translation unit, build it, load it.

The unit holds every kernel (a C++ function over the tile library), the task program
(`pto_program_run`) and the `pto_program_*` exports of the runtime ABI. It is built with the
host's vector extensions (`-march=native`, detected per machine by the build cache).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pypto.pto.analysis import ReturnSlot
from pypto.pto.model import Func, Module
from pypto.runtime.abi import include_dir as runtime_include_dir
from pypto.support.native_build import BuildResult, build_and_load

from .emit_common import AssemblyError
from .emit_kernel import KernelEmitter, SpaceLayout
from .emit_orchestration import OrchestrationEmitter, static_param_shapes
from .lowering import instruction_source

HERE = Path(__file__).resolve().parent
TILE_LIB = HERE / "include"
GLUE = HERE / "glue"
# -fwrapv: integer arithmetic wraps (IR semantics); -ffp-contract=off: a fused a*b+c rounds twice,
# exactly as the separate instructions do (the interpreter and the NumPy references agree bit for bit)
EXTRA_FLAGS = ("-fwrapv", "-ffp-contract=off")


@dataclass
class AssembledProgram:
    name: str
    source: str
    kernel_names: list[str]
    layout: SpaceLayout
    entry: str | None
    slots: list[ReturnSlot] = field(default_factory=list)
    per_kernel: dict[str, str] = field(default_factory=dict)  # kernel -> its C++ function


# A kernel cannot fail its run (it returns nothing), so the first kernel error of a run is kept here
# and `Runtime.run_program` raises it once the run is over (see ProgramHandle.take_kernel_error).
_KERNEL_ERROR = [
    "std::atomic<int> g_kerr{0};  // 0 none, 1 being written, 2 set",
    "char g_kerr_msg[768];",
    "__attribute__((format(printf, 1, 2), cold)) void kfail(const char* fmt, ...) {",
    "  int none = 0;",
    "  if (!g_kerr.compare_exchange_strong(none, 1)) return;",
    "  va_list ap; va_start(ap, fmt); std::vsnprintf(g_kerr_msg, sizeof g_kerr_msg, fmt, ap); va_end(ap);",
    "  g_kerr.store(2, std::memory_order_release);",
    "}",
]


def assemble(name: str, kernels: dict[str, Module], orchestration: Module | None) -> AssembledProgram:
    kfuncs: list[Func] = []
    for kname in sorted(kernels):
        mod = kernels[kname]
        if len(mod.funcs) != 1:
            raise AssemblyError(f"kernel module {kname} must hold exactly one function")
        kfuncs.append(mod.funcs[0])
    layout = SpaceLayout.of(kfuncs)
    ids = {f.name: i for i, f in enumerate(kfuncs)}
    parts = ["#define PTO_STREAM_DEFER_FENCE 1  // each kernel fences its streaming stores once, at its end",
             '#include "pto/pto.hpp"', instruction_source(), '#include "pto_glue.hpp"', '#include "pto_pipes.hpp"', "#include <atomic>",
             "#include <cstdarg>", "",
             "namespace {", "", *_KERNEL_ERROR, ""]
    per_kernel = {}
    for i, f in enumerate(kfuncs):
        text = KernelEmitter(f, layout, f"kernel_{i}").emit()
        per_kernel[f.name] = text
        parts += [text, ""]
    parts.append(f"const pto_kernel_fn kKernels[] = {{{', '.join(f'kernel_{i}' for i in range(len(kfuncs)))}"
                 f"{'' if kfuncs else 'nullptr'}}};")
    names = ", ".join(json.dumps(f.name) for f in kfuncs)
    parts.append(f"const char* const kNames[] = {{{names if kfuncs else 'nullptr'}}};")
    parts += ["", "}  // namespace", ""]
    entry, slots = None, []
    if orchestration is not None:
        if len(orchestration.funcs) != 1:
            raise AssemblyError("the orchestration module must hold exactly one function")
        of = orchestration.funcs[0]
        entry = of.name
        em = OrchestrationEmitter(of, ids, {f.name: static_param_shapes(f) for f in kfuncs})
        body = em.emit()
        slots = em.slots
        parts += [f"// task program {of.name}",
                  "PTO_EXPORT int32_t pto_program_run(const pto_rt_api* api, void* rt, const pto_arg* params, "
                  "int32_t nparams) {", body, "}", ""]
    else:
        parts += ["PTO_EXPORT int32_t pto_program_run(const pto_rt_api* api, void* rt, const pto_arg*, int32_t) {",
                  '  api->fail(rt, "this program has no orchestration function"); return 1;', "}", ""]
    n = len(kfuncs)
    parts += [
        "PTO_EXPORT int32_t pto_program_abi_version(void) { return PTO_ABI_VERSION; }",
        f"PTO_EXPORT int32_t pto_program_num_kernels(void) {{ return {n}; }}",
        f"PTO_EXPORT const char* pto_program_kernel_name(int32_t i) {{ return i >= 0 && i < {n} ? kNames[i] : "
        "nullptr; }",
        f"PTO_EXPORT pto_kernel_fn pto_program_kernel(int32_t i) {{ return i >= 0 && i < {n} ? kKernels[i] : "
        "nullptr; }",
        f"PTO_EXPORT int64_t pto_program_scratch_bytes(void) {{ return {layout.total}; }}",
        "PTO_EXPORT const char* pto_program_kernel_error(void) {",
        "  return g_kerr.load(std::memory_order_acquire) == 2 ? g_kerr_msg : nullptr; }",
        "PTO_EXPORT void pto_program_clear_kernel_error(void) { g_kerr.store(0, std::memory_order_release); }",
        "",
    ]
    return AssembledProgram(name, "\n".join(parts), [f.name for f in kfuncs], layout, entry, slots, per_kernel)


@dataclass
class NativeProgram:
    assembled: AssembledProgram
    build: BuildResult
    handle: object  # pypto.runtime.ProgramHandle


def build(asm: AssembledProgram, keep_source_in: Path | None = None) -> NativeProgram:
    from pypto.runtime import ProgramHandle

    lib, res = build_and_load(asm.source, f"pto_{_safe(asm.name)}",
                              include_dirs=(TILE_LIB, GLUE, runtime_include_dir()),
                              extra_flags=EXTRA_FLAGS, keep_source_in=keep_source_in)
    return NativeProgram(asm, res, ProgramHandle(lib))


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "program"


__all__ = ["AssembledProgram", "NativeProgram", "assemble", "build"]
