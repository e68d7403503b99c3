"""The PyPTO MPMD task runtime.

Compiled programs submit *tasks* (kernel calls with tensor and scalar arguments) to a native
runtime, which derives dependencies from the tensor regions tasks read and write (RAW, WAR, WAW;
no global barriers) and runs ready tasks on N worker threads. The hot path (submission,
dependency tracking, scheduling, execution) is C++ (`src/`); this package builds it, marshals
arguments and exposes runs, traces and stats. It knows nothing of the IR: the ABI between compiled
programs and the runtime is `include/pto_runtime.h` (see README.md).

    from pypto.runtime import Runtime, TaskGraph
    g = TaskGraph()
    g.add("scale_add", x[:8], 2.0, 1.0)
    result = Runtime(num_workers=2).run_graph(g, trace=True)
    result.trace.to_chrome_json("trace.json")
"""

from pypto.runtime.abi import ABI_VERSION, ArgKind, SchedMode, include_dir
from pypto.runtime.defaults import default_runtime
from pypto.runtime.errors import TaskGraphError
from pypto.runtime.graph import TaskGraph
from pypto.runtime.kernels import Kernel, builtin_kernel, builtin_names
from pypto.runtime.marshal import pack_args
from pypto.runtime.program import ProgramHandle

# the public PyPTO's pypto.runtime names (its RunResult is pypto.runtime.runner.RunResult here:
# pypto.runtime.RunResult is this runtime's result of a run)
from pypto.runtime.public import (
    DistributedRunHandle,
    DistributedWorker,
    ScalarSpec,
    TensorSpec,
    TraceInvocation,
    TraceSpan,
    compile_program,
    configure_log,
    ensure_pto_isa_root,
    execute_compiled,
    log_level,
    pto_isa_include_dir,
    run,
)
from pypto.runtime.run_config import RunConfig
from pypto.runtime.runtime import (
    DEFAULT_SCRATCH_BYTES,
    DirectSession,
    RunResult,
    RunStats,
    Runtime,
)
from pypto.runtime.trace import TaskRecord, Trace
from pypto.runtime.workers import (
    BenchmarkStats,
    ChipWorker,
    DeviceTensor,
    RegistrationHandle,
    StackedDeviceTensor,
    Worker,
    benchmark,
)

__all__ = [
    "BenchmarkStats", "ChipWorker", "DeviceTensor", "DistributedRunHandle", "DistributedWorker", "RegistrationHandle",
    "ScalarSpec", "StackedDeviceTensor", "TensorSpec", "TraceInvocation", "TraceSpan", "Worker", "benchmark",
    "compile_program", "configure_log", "ensure_pto_isa_root", "execute_compiled", "log_level",
    "pto_isa_include_dir", "run",
    "ABI_VERSION",
    "DEFAULT_SCRATCH_BYTES",
    "ArgKind",
    "DirectSession",
    "Kernel",
    "ProgramHandle",
    "RunConfig",
    "RunResult",
    "RunStats",
    "Runtime",
    "SchedMode",
    "TaskGraph",
    "TaskGraphError",
    "TaskRecord",
    "Trace",
    "builtin_kernel",
    "builtin_names",
    "default_runtime",
    "include_dir",
    "pack_args",
]
