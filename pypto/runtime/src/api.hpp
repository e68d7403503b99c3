// The services table handed to programs (pto_rt_api), and the results of the last run.
#pragma once

#include "tasks.hpp"

namespace pto {

namespace api {

inline Runtime* rt_of(void* rt) { return static_cast<Runtime*>(rt); }

inline int64_t submit(void* rt, int32_t kernel_id, const pto_arg* args, int32_t nargs) {
    return rt ? rt_of(rt)->submit_kernel(kernel_id, args, nargs) : -1;
}

inline int64_t submit_ex(void* rt, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                         const pto_submit_opts* opts) {
    return rt ? rt_of(rt)->submit_ex(kernel_id, args, nargs, opts) : -1;
}

inline void* alloc_tensor(void* rt, int64_t nbytes) { return rt ? rt_of(rt)->alloc_tensor(nbytes) : nullptr; }

inline void wait_tensor(void* rt, const pto_tensor* t) {
    if (rt) rt_of(rt)->wait_tensor(t);
}

inline void wait_all(void* rt) {
    if (rt) rt_of(rt)->wait_all_tasks();
}

inline void fail(void* rt, const char* message) {
    if (rt) rt_of(rt)->fail(message ? std::string(message) : std::string());
}

inline int32_t failed(void* rt) { return rt ? (rt_of(rt)->failed() ? 1 : 0) : 1; }

}  // namespace api

inline void fill_api(pto_rt_api& a, int32_t nworkers) {
    a.abi_version = PTO_ABI_VERSION;
    a.num_workers = nworkers;
    a.submit = &api::submit;
    a.alloc_tensor = &api::alloc_tensor;
    a.wait_tensor = &api::wait_tensor;
    a.wait_all = &api::wait_all;
    a.fail = &api::fail;
    a.failed = &api::failed;
    a.submit_ex = &api::submit_ex;
}

inline int64_t Runtime::trace_count() const {
    int64_t n = 0;
    for (const auto& l : lanes_) n += static_cast<int64_t>(l->trace.size());
    return n;
}

inline int64_t Runtime::trace_read(pto_trace_record* out, int64_t cap) const {
    int64_t n = 0;
    for (const auto& l : lanes_) {
        for (const pto_trace_record& r : l->trace) {
            if (n >= cap) return n;
            out[n++] = r;
        }
    }
    return n;
}

inline void Runtime::stats(pto_rt_stats* out) const {
    out->tasks = next_id_;
    out->edges = edges_;
    out->elapsed_ns = elapsed_;
    out->max_live = max_live_;
    out->pool_slots = pool_slots_;
    out->steals = steals_;
    out->helped = helped_;
    out->roots = roots_seen_;
}

inline int32_t Runtime::lane_counts(int64_t* out, int32_t cap) const {
    int32_t n = 0;
    for (size_t i = 0; i < last_lane_counts_.size() && n < cap; ++i) out[n++] = last_lane_counts_[i];
    return n;
}

}  // namespace pto
