// The PyPTO task runtime library: exports the host C API of pto_runtime_host.h.
//
// Built (and cached) by pypto.runtime.native through pypto.support.native_build; the headers of
// this folder are part of the cache key. Layout:
//   common.hpp     spin lock, clock, formatting
//   region.hpp     tensor view -> byte region, overlap / containment
//   deps.hpp       per-root access lists
//   queues.hpp     ready deques, chunk arena
//   engine.hpp     Task, Lane, the Runtime class
//   scheduler.hpp  workers, execution, completion, waits, deadlock watchdog
//   submit.hpp     submission, dependency derivation, run lifecycle
//   tasks.hpp      the task language: explicit deps, untracked args, spmd grids, predicates
//   api.hpp        the services table for programs, results of a run
//   kernels.hpp    built-in test kernels
#include <cstddef>
#include <new>

#include "api.hpp"
#include "kernels.hpp"

using pto::Runtime;

static_assert(sizeof(pto_tensor) == 160, "pto_tensor layout");
static_assert(sizeof(pto_arg) == 168, "pto_arg layout");
static_assert(offsetof(pto_arg, t) == 8, "pto_arg layout");
static_assert(sizeof(pto_trace_record) == 32, "pto_trace_record layout");
static_assert(sizeof(pto_task_desc) == 40, "pto_task_desc layout");

namespace {

Runtime* as_rt(void* rt) { return static_cast<Runtime*>(rt); }

int32_t fail_with(const std::string& msg, char* err, int32_t err_len) {
    pto::copy_message(msg, err, err_len);
    return -1;
}

}  // namespace

PTO_EXPORT int32_t pto_rt_abi_version(void) { return PTO_ABI_VERSION; }

PTO_EXPORT void* pto_rt_create(int32_t num_workers, int32_t sched_mode, int64_t scratch_bytes) {
    if (num_workers < 0 || num_workers > 1024) return nullptr;
    if (sched_mode != PTO_SCHED_FIFO && sched_mode != PTO_SCHED_LOCALITY) return nullptr;
    if (scratch_bytes < 0) return nullptr;
    Runtime* rt = new (std::nothrow) Runtime(num_workers, sched_mode, scratch_bytes);
    if (!rt) return nullptr;
    std::string err;
    if (!rt->ensure_scratch(scratch_bytes) || !rt->start(err)) {
        delete rt;
        return nullptr;
    }
    return rt;
}

PTO_EXPORT void pto_rt_destroy(void* rt) { delete as_rt(rt); }

PTO_EXPORT int32_t pto_rt_num_workers(void* rt) { return rt ? as_rt(rt)->nworkers() : -1; }

PTO_EXPORT void pto_rt_set_window(void* rt, int64_t max_live_tasks) {
    if (rt) as_rt(rt)->set_window(max_live_tasks);
}

PTO_EXPORT int32_t pto_rt_run_program(void* rt, const pto_program* prog, const pto_arg* params, int32_t nparams,
                                      int32_t flags, char* err, int32_t err_len) {
    if (!rt) return fail_with("runtime handle is NULL", err, err_len);
    std::string msg;
    int32_t rc = as_rt(rt)->run_program(prog, params, nparams, flags, msg);
    if (rc != 0) return fail_with(msg, err, err_len);
    pto::copy_message("", err, err_len);
    return 0;
}

PTO_EXPORT int32_t pto_rt_begin(void* rt, int32_t flags) {
    if (!rt || as_rt(rt)->in_run()) return -1;
    as_rt(rt)->clear_kernels();
    return as_rt(rt)->begin(flags, true);
}

PTO_EXPORT int64_t pto_rt_submit(void* rt, pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                                 const int64_t* deps, int32_t ndeps, int32_t flags) {
    if (!rt) return -1;
    return as_rt(rt)->submit(fn, kernel_id, args, nargs, deps, ndeps, flags);
}

PTO_EXPORT int32_t pto_rt_add_dep(void* rt, int64_t before, int64_t after) {
    return rt ? as_rt(rt)->add_dep(before, after) : -1;
}

PTO_EXPORT int32_t pto_rt_release(void* rt, int64_t task) { return rt ? as_rt(rt)->release(task) : -1; }

PTO_EXPORT int32_t pto_rt_wait_all(void* rt, char* err, int32_t err_len) {
    if (!rt) return fail_with("runtime handle is NULL", err, err_len);
    std::string msg;
    int32_t rc = as_rt(rt)->end(msg);
    pto::copy_message(msg, err, err_len);
    return rc;
}

PTO_EXPORT int32_t pto_rt_run_graph(void* rt, const pto_task_desc* tasks, int64_t ntasks, int32_t flags, char* err,
                                    int32_t err_len) {
    if (!rt) return fail_with("runtime handle is NULL", err, err_len);
    Runtime* r = as_rt(rt);
    if (r->in_run()) return fail_with("a run is already in progress on this runtime", err, err_len);
    if (ntasks < 0 || (ntasks > 0 && !tasks)) return fail_with("malformed task array", err, err_len);
    r->clear_kernels();
    r->begin(flags, true);
    for (int64_t i = 0; i < ntasks; ++i) {
        const pto_task_desc& d = tasks[i];
        if (r->submit(d.fn, d.kernel_id, d.args, d.nargs, d.deps, d.ndeps, 0) < 0) break;
    }
    std::string msg;
    int32_t rc = r->end(msg);
    pto::copy_message(msg, err, err_len);
    return rc;
}

PTO_EXPORT int32_t pto_rt_error(void* rt, char* err, int32_t err_len) {
    if (!rt) return fail_with("runtime handle is NULL", err, err_len);
    std::string msg = as_rt(rt)->error();
    pto::copy_message(msg, err, err_len);
    return static_cast<int32_t>(msg.size());
}

PTO_EXPORT int64_t pto_rt_trace_count(void* rt) { return rt ? as_rt(rt)->trace_count() : 0; }

PTO_EXPORT int64_t pto_rt_trace_read(void* rt, pto_trace_record* out, int64_t cap) {
    return (rt && out) ? as_rt(rt)->trace_read(out, cap) : 0;
}

PTO_EXPORT int64_t pto_rt_trace_edge_count(void* rt) {
    return rt ? static_cast<int64_t>(as_rt(rt)->trace_edges().size() / 2) : 0;
}

PTO_EXPORT int64_t pto_rt_trace_edges(void* rt, int64_t* out_pairs, int64_t cap_pairs) {
    if (!rt || !out_pairs) return 0;
    const std::vector<int64_t>& e = as_rt(rt)->trace_edges();
    int64_t n = static_cast<int64_t>(e.size() / 2);
    if (n > cap_pairs) n = cap_pairs;
    std::memcpy(out_pairs, e.data(), static_cast<size_t>(n) * 2 * sizeof(int64_t));
    return n;
}

PTO_EXPORT void pto_rt_get_stats(void* rt, pto_rt_stats* out) {
    if (rt && out) as_rt(rt)->stats(out);
}

PTO_EXPORT int32_t pto_rt_lane_counts(void* rt, int64_t* out, int32_t cap) {
    return (rt && out) ? as_rt(rt)->lane_counts(out, cap) : 0;
}

PTO_EXPORT int32_t pto_rt_builtin_count(void) {
    int32_t n;
    pto::kernels::builtins(n);
    return n;
}

PTO_EXPORT const char* pto_rt_builtin_name(int32_t i) {
    int32_t n;
    const pto::kernels::Builtin* b = pto::kernels::builtins(n);
    return (i >= 0 && i < n) ? b[i].name : nullptr;
}

PTO_EXPORT pto_kernel_fn pto_rt_builtin_kernel(int32_t i) {
    int32_t n;
    const pto::kernels::Builtin* b = pto::kernels::builtins(n);
    return (i >= 0 && i < n) ? b[i].fn : nullptr;
}
