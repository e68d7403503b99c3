// Task submission: validation, dependency derivation from regions, explicit edges, run lifecycle.
// Everything here runs on the submitting thread.
#pragma once

#include <algorithm>

#include "scheduler.hpp"

namespace pto {

inline const char* kind_name(int32_t k) {
    switch (k) {
        case PTO_IN: return "in";
        case PTO_OUT: return "out";
        case PTO_INOUT: return "inout";
        case PTO_SCALAR_I64: return "i64";
        case PTO_SCALAR_F64: return "f64";
        default: return "?";
    }
}

inline std::string Runtime::describe(int64_t id, int32_t kernel_id) const {
    if (kernel_id >= 0 && static_cast<size_t>(kernel_id) < kernel_names_.size() &&
        !kernel_names_[static_cast<size_t>(kernel_id)].empty()) {
        return strfmt("task %lld (kernel %d '%s')", static_cast<long long>(id), kernel_id,
                      kernel_names_[static_cast<size_t>(kernel_id)].c_str());
    }
    return strfmt("task %lld (kernel %d)", static_cast<long long>(id), kernel_id);
}

inline void Runtime::set_error(const std::string& msg) {
    std::lock_guard<std::mutex> g(err_mu_);
    if (failed_.load(std::memory_order_relaxed)) return;
    error_ = msg;
    failed_.store(true, std::memory_order_relaxed);
    cancel_.store(true, std::memory_order_relaxed);
}

inline void Runtime::fail(const std::string& msg) {
    set_error(msg.empty() ? std::string("the orchestration reported a failure") : msg);
}

inline void Runtime::grow_pool() {
    std::unique_ptr<Task[]> c(new Task[kPoolChunk]);
    for (int i = kPoolChunk - 1; i >= 0; --i) {
        c[i].free_next = local_free_;
        local_free_ = &c[i];
    }
    chunks_.push_back(std::move(c));
    pool_slots_ += kPoolChunk;
}

// A free task slot. With `window_` slots in use, wait (executing tasks) for one to be recycled;
// if none ever can be (all pending tasks wait on held ones), exceed the window.
inline Task* Runtime::alloc_slot() {
    if (!local_free_) local_free_ = shared_free_.exchange(nullptr, std::memory_order_acquire);
    if (!local_free_) {
        if (pool_slots_ < window_) {
            grow_pool();
        } else {
            help_until([&] { return shared_free_.load(std::memory_order_relaxed) != nullptr; });
            local_free_ = shared_free_.exchange(nullptr, std::memory_order_acquire);
            if (!local_free_) grow_pool();
        }
    }
    Task* t = local_free_;
    local_free_ = t->free_next;
    release_storage(t);
    return t;
}

// Give a recycled slot's pooled arrays back (the task that used them has finished).
inline void Runtime::release_storage(Task* t) {
    if (t->args_cls >= 0) arg_pool_.put(t->args, t->args_cls);
    if (t->edges_cls >= 0) edge_pool_.put(t->in_edges, t->edges_cls);
    t->args = t->inline_args;
    t->in_edges = t->inline_edges;
    t->args_cls = t->edges_cls = -1;
}

inline Task* Runtime::lookup(int64_t id) const {
    if (!track_ids_ || id < 0 || id >= static_cast<int64_t>(by_id_.size())) return nullptr;
    Task* t = by_id_[static_cast<size_t>(id)];
    return t->id == id ? t : nullptr;
}

inline bool Runtime::publish(Task* pred, Edge* e) {
    Edge* h = pred->succ_head.load(std::memory_order_acquire);
    do {
        if (h == closed_list()) return false;  // finished meanwhile: nothing to wait for
        e->next = h;
    } while (!pred->succ_head.compare_exchange_weak(h, e, std::memory_order_release, std::memory_order_acquire));
    return true;
}

// Query one access list for conflicts with region `r` of task `self`, dropping entries of finished
// tasks and, for a write, entries it covers.
inline void Runtime::scan(AccessTreap& tree, const Region& r, bool writes, int64_t self) {
    AccessPool& pool = roots_.pool();
    drop_.clear();
    tree.query(pool, r.lo, r.hi, [&](int32_t i) {
        const AccessNode& n = pool.node(i);
        if (n.id == self) return;
        if (finished(n.task, n.id)) {
            drop_.push_back(i);
        } else if (overlaps(pool.region(i), r)) {
            add_pred(n.task, self);
            if (writes && covers(r, pool.region(i))) drop_.push_back(i);
        }
    });
    for (int32_t i : drop_) tree.erase(pool, i);
}

// Record an access; sweep out finished entries whenever the list has doubled since the last sweep.
inline void Runtime::record(AccessTreap& tree, size_t& sweep_at, const Region& r, Task* t, int64_t id) {
    AccessPool& pool = roots_.pool();
    tree.insert(pool, pool.alloc(r, t, id));
    if (tree.size() < sweep_at) return;
    drop_.clear();
    tree.for_all(pool, [&](int32_t i) {
        const AccessNode& n = pool.node(i);
        if (finished(n.task, n.id)) drop_.push_back(i);
    });
    for (int32_t i : drop_) tree.erase(pool, i);
    sweep_at = std::max<size_t>(64, 2 * tree.size());
}

inline int64_t Runtime::submit(pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                               const int64_t* deps, int32_t ndeps, int32_t flags) {
    return submit_x(fn, kernel_id, args, nargs, deps, ndeps, flags, nullptr);
}

inline int64_t Runtime::submit_x(pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                                 const int64_t* deps, int32_t ndeps, int32_t flags, const Extra* x) {
    if (!in_run_ || failed()) return -1;
    const int64_t id = next_id_;
    if (!fn) {
        set_error(describe(id, kernel_id) + ": the kernel function is NULL");
        return -1;
    }
    if (nargs < 0 || nargs > PTO_MAX_ARGS || (nargs > 0 && !args)) {
        set_error(describe(id, kernel_id) + strfmt(": %d arguments (must be 0..%d, with a non-NULL array)",
                                                   nargs, PTO_MAX_ARGS));
        return -1;
    }
    if (ndeps < 0 || (ndeps > 0 && !deps) || (flags & ~PTO_SUBMIT_HOLD)) {
        set_error(describe(id, kernel_id) + strfmt(": malformed submission (ndeps %d, flags %d)", ndeps, flags));
        return -1;
    }
    if ((ndeps > 0 || (flags & PTO_SUBMIT_HOLD)) && !track_ids_) {
        set_error(describe(id, kernel_id) + ": explicit dependencies and held tasks need the direct task API");
        return -1;
    }
    if (regions_.size() < static_cast<size_t>(nargs)) {
        regions_.resize(static_cast<size_t>(nargs));
        arg_lists_.resize(static_cast<size_t>(nargs));
    }
    std::string err;
    for (int32_t i = 0; i < nargs; ++i) {
        const pto_arg& a = args[i];
        arg_lists_[i] = nullptr;
        if (a.kind == PTO_SCALAR_I64 || a.kind == PTO_SCALAR_F64) continue;
        if (a.kind < PTO_IN || a.kind > PTO_SCALAR_F64) {
            set_error(describe(id, kernel_id) + strfmt(": arg %d has kind %d (expected 0..4: in, out, inout, "
                                                       "i64, f64)", i, a.kind));
            return -1;
        }
        if (!make_region(a.t, regions_[i], err)) {
            set_error(describe(id, kernel_id) + strfmt(": arg %d (%s tensor): ", i, kind_name(a.kind)) + err);
            return -1;
        }
        if (regions_[i].empty || (x && x->untracked && x->untracked[i])) continue;
        arg_lists_[i] = roots_.find_or_add(a.t.root, a.t.root_nbytes, err);
        if (!arg_lists_[i]) {
            set_error(describe(id, kernel_id) + strfmt(": arg %d: ", i) + err);
            return -1;
        }
    }
    for (int32_t j = 0; j < ndeps; ++j) {
        const int64_t d = deps[j];
        if (d < 0 && x) continue;  // "no producer" (task_invalid / None)
        if (d < 0 || d >= id) {
            set_error(describe(id, kernel_id) +
                      (d >= id ? strfmt(": explicit dependency on task %lld, which is not earlier (a task may only "
                                        "depend on earlier tasks; this edge would close a cycle)",
                                        static_cast<long long>(d))
                               : strfmt(": explicit dependency on unknown task %lld", static_cast<long long>(d))));
            return -1;
        }
    }

    Task* t = alloc_slot();
    t->id = id;
    t->fn = fn;
    t->kernel_id = kernel_id;
    t->nargs = nargs;
    t->held = (flags & PTO_SUBMIT_HOLD) != 0;
    t->pred_cmp = x ? x->pred_cmp : 0;
    t->pred_type = x ? x->pred_type : 0;
    t->pred_bytes = x ? x->pred_bytes : 0;
    t->pred_ptr = x ? x->pred_ptr : nullptr;
    t->pred_value = x ? x->pred_value : 0;
    t->sync_blocks = x ? x->sync_blocks : 0;
    t->block_arg = x ? x->block_arg : -1;
    t->mark = id;  // never count ourselves as a predecessor
    if (nargs > kInlineArgs) t->args = arg_pool_.get(static_cast<size_t>(nargs), t->args_cls);
    if (nargs > 0) std::memcpy(t->args, args, sizeof(pto_arg) * static_cast<size_t>(nargs));
    t->succ_head.store(nullptr, std::memory_order_relaxed);
    t->state.store(kPending, std::memory_order_relaxed);

    preds_.clear();
    // a manual-scope task or a later block of a grid infers no edges; its accesses are still recorded
    const bool infer = !x || (!x->manual && !x->same_preds);
    if (x && x->same_preds) {
        for (const auto& pi : *x->same_preds) {
            if (!finished(pi.first, pi.second)) add_pred(pi.first, id);
        }
    }
    for (int32_t i = 0; i < nargs; ++i) {
        AccessList* l = arg_lists_[i];
        if (!l) continue;
        const Region& r = regions_[i];
        const bool writes = args[i].kind != PTO_IN;
        if (infer) scan(l->writers, r, writes, id);
        if (writes) {
            if (infer) scan(l->readers, r, true, id);
            record(l->writers, l->sweep_writers_at, r, t, id);
        } else {
            record(l->readers, l->sweep_readers_at, r, t, id);
        }
    }
    for (int32_t j = 0; j < ndeps; ++j) {
        if (x) {
            if (deps[j] >= 0) add_dep_group(deps[j], id);
            continue;
        }
        Task* p = lookup(deps[j]);
        if (p && !finished(p, deps[j])) add_pred(p, id);
    }

    // Publish the edges. `pending` counts the predecessors, a guard for the duration of this loop
    // (so no completion can see zero early), and the hold.
    const size_t np = preds_.size();
    if (np > kInlineEdges) t->in_edges = edge_pool_.get(np, t->edges_cls);
    t->pending.store(static_cast<int32_t>(np) + 1 + (t->held ? 1 : 0), std::memory_order_relaxed);
    int32_t dec = 1;
    const bool tracing = tracing_.load(std::memory_order_relaxed);
    for (size_t k = 0; k < np; ++k) {
        Task* p = preds_[k];
        const int64_t pid = p->id;
        Edge* e = &t->in_edges[k];
        e->succ = t;
        if (publish(p, e)) {
            ++edges_;
            if (tracing) {
                trace_edges_.push_back(pid);
                trace_edges_.push_back(id);
            }
        } else {
            ++dec;
        }
    }
    next_id_ = id + 1;
    if (track_ids_) {
        by_id_.push_back(t);
        group_first_.push_back(x && x->group_first >= 0 ? x->group_first : id);
    }
    if ((id & 63) == 0) max_live_ = std::max(max_live_, live_tasks());
    if (t->pending.fetch_sub(dec, std::memory_order_acq_rel) == dec) push_ready(t, *lanes_[nworkers_], nworkers_);
    if (nworkers_ == 0) drain_serial();
    return id;
}

inline int64_t Runtime::submit_kernel(int32_t kernel_id, const pto_arg* args, int32_t nargs) {
    if (!in_run_ || failed()) return -1;
    if (kernel_id < 0 || static_cast<size_t>(kernel_id) >= kernels_.size()) {
        set_error(strfmt("task %lld: kernel id %d is out of range (the program has %zu kernels)",
                         static_cast<long long>(next_id_), kernel_id, kernels_.size()));
        return -1;
    }
    return submit(kernels_[static_cast<size_t>(kernel_id)], kernel_id, args, nargs, nullptr, 0, 0);
}

inline int32_t Runtime::add_dep(int64_t before, int64_t after) {
    if (!in_run_ || failed()) return -1;
    const long long b = before, a = after;
    if (after < 0 || after >= next_id_ || before < 0 || before >= next_id_) {
        set_error(strfmt("add_dep(%lld, %lld): unknown task %lld", b, a,
                         (after < 0 || after >= next_id_) ? a : b));
        return -1;
    }
    if (before >= after) {
        set_error(strfmt("add_dep(%lld, %lld): task %lld may only depend on an earlier task (this edge would "
                         "close a cycle)", b, a, a));
        return -1;
    }
    Task* at = lookup(after);
    if (!at || !at->held) {
        set_error(strfmt("add_dep(%lld, %lld): task %lld is not held (submit it with PTO_SUBMIT_HOLD and add "
                         "edges before releasing it)", b, a, a));
        return -1;
    }
    Task* bt = lookup(before);
    if (!bt || finished(bt, before)) return 0;
    Edge* e = extra_edges_.alloc();
    e->succ = at;
    at->pending.fetch_add(1, std::memory_order_relaxed);  // `at` is held: pending stays > 0
    if (publish(bt, e)) {
        ++edges_;
        if (tracing_.load(std::memory_order_relaxed)) {
            trace_edges_.push_back(before);
            trace_edges_.push_back(after);
        }
    } else {
        at->pending.fetch_sub(1, std::memory_order_relaxed);
    }
    return 0;
}

inline int32_t Runtime::release(int64_t task) {
    if (!in_run_ || failed()) return -1;
    Task* t = lookup(task);
    if (!t || !t->held) {
        set_error(strfmt("release(%lld): no such held task", static_cast<long long>(task)));
        return -1;
    }
    t->held = false;
    if (t->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) push_ready(t, *lanes_[nworkers_], nworkers_);
    if (nworkers_ == 0) drain_serial();
    return 0;
}

inline void Runtime::wait_tensor(const pto_tensor* tp) {
    if (!in_run_ || failed()) return;
    if (!tp) {
        set_error("wait_tensor: the tensor is NULL");
        return;
    }
    Region r;
    std::string err;
    if (!make_region(*tp, r, err)) {
        set_error("wait_tensor: " + err);
        return;
    }
    if (r.empty) return;
    AccessList* l = roots_.find(tp->root);
    if (!l) return;
    waits_.clear();
    AccessPool& pool = roots_.pool();
    l->writers.query(pool, r.lo, r.hi, [&](int32_t i) {
        const AccessNode& n = pool.node(i);
        if (!finished(n.task, n.id) && overlaps(pool.region(i), r)) waits_.emplace_back(n.task, n.id);
    });
    for (const auto& w : waits_) {
        if (!wait_task_done(w.first, w.second)) return;
    }
}

inline void Runtime::wait_all_tasks() {
    if (!in_run_) return;
    if (!help_until([&] { return live_tasks() == 0; })) report_deadlock();
}

inline void* Runtime::alloc_tensor(int64_t nbytes) {
    if (!in_run_ || failed()) return nullptr;
    if (nbytes < 0) {
        set_error(strfmt("alloc_tensor: %lld bytes", static_cast<long long>(nbytes)));
        return nullptr;
    }
    // calloc: large buffers come as fresh zero pages without a memset.
    void* raw = std::calloc(1, static_cast<size_t>(nbytes) + 64);
    if (!raw) {
        set_error(strfmt("alloc_tensor: out of memory for %lld bytes", static_cast<long long>(nbytes)));
        return nullptr;
    }
    run_allocs_.push_back(raw);
    return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t(63));
}

inline int32_t Runtime::begin(int32_t flags, bool track_ids) {
    if (in_run_) return -1;
    in_run_ = true;
    track_ids_ = track_ids;
    next_id_ = 0;
    abandoned_ = 0;
    base_completed_ = sum_completed();
    base_steals_ = 0;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        Lane& l = *lanes_[i];
        base_lane_completed_[i] = l.completed.load(std::memory_order_acquire);
        base_steals_ += l.steals.load(std::memory_order_relaxed);
        l.trace.clear();  // workers are idle between runs
    }
    {
        std::lock_guard<std::mutex> g(err_mu_);
        error_.clear();
        failed_.store(false, std::memory_order_relaxed);
        cancel_.store(false, std::memory_order_relaxed);
    }
    edges_ = max_live_ = helped_ = 0;
    roots_.reset();
    by_id_.clear();
    group_first_.clear();
    trace_edges_.clear();
    extra_edges_.reset();
    tracing_.store((flags & PTO_RUN_TRACE) != 0, std::memory_order_relaxed);
    t0_ = now_ns();
    return 0;
}

inline int32_t Runtime::end(std::string& msg) {
    if (!in_run_) {
        msg = "no run in progress";
        return -1;
    }
    wait_all_tasks();
    for (void* p : run_allocs_) std::free(p);
    run_allocs_.clear();
    elapsed_ = now_ns() - t0_;
    for (size_t i = 0; i < lanes_.size(); ++i) {
        last_lane_counts_[i] = lanes_[i]->completed.load(std::memory_order_acquire) - base_lane_completed_[i];
    }
    steals_ = -base_steals_;
    for (const auto& l : lanes_) steals_ += l->steals.load(std::memory_order_relaxed);
    roots_seen_ = static_cast<int64_t>(roots_.size());
    in_run_ = false;
    tracing_.store(false, std::memory_order_relaxed);
    msg = error();
    return failed() ? -1 : 0;
}

inline int32_t Runtime::run_program(const pto_program* prog, const pto_arg* params, int32_t nparams,
                                    int32_t flags, std::string& msg) {
    if (in_run_) {
        msg = "a run is already in progress on this runtime";
        return -1;
    }
    if (!prog || !prog->abi_version || !prog->num_kernels || !prog->kernel || !prog->scratch_bytes ||
        !prog->run) {
        msg = "the program table is incomplete (a pto_program_* entry point is NULL)";
        return -1;
    }
    const int32_t v = prog->abi_version();
    if (v != PTO_ABI_VERSION) {
        msg = strfmt("the program was built for runtime ABI version %d, this runtime implements version %d; "
                     "rebuild the program", v, PTO_ABI_VERSION);
        return -1;
    }
    const int32_t nk = prog->num_kernels();
    if (nk < 0) {
        msg = strfmt("the program reports %d kernels", nk);
        return -1;
    }
    kernels_.assign(static_cast<size_t>(nk), nullptr);
    kernel_names_.assign(static_cast<size_t>(nk), std::string());
    for (int32_t i = 0; i < nk; ++i) {
        kernels_[static_cast<size_t>(i)] = prog->kernel(i);
        const char* name = prog->kernel_name ? prog->kernel_name(i) : nullptr;
        if (name) kernel_names_[static_cast<size_t>(i)] = name;
        if (!kernels_[static_cast<size_t>(i)]) {
            msg = strfmt("the program's kernel %d is NULL", i);
            return -1;
        }
    }
    const int64_t sb = prog->scratch_bytes();
    if (sb < 0 || !ensure_scratch(sb)) {
        msg = strfmt("cannot provide %lld bytes of scratch per worker", static_cast<long long>(sb));
        return -1;
    }
    if (nparams < 0 || (nparams > 0 && !params)) {
        msg = strfmt("%d program parameters (must be >= 0, with a non-NULL array)", nparams);
        return -1;
    }
    begin(flags, true);  // programs may name tasks (explicit deps of the task language)
    const int32_t rc = prog->run(&api_, this, params, nparams);
    if (rc != 0 && !failed()) set_error(strfmt("the program's orchestration returned %d", rc));
    return end(msg);
}

}  // namespace pto
