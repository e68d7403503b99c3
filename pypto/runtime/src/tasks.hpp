// The task language's submissions (api->submit_ex): explicit dependencies on task ids, untracked
// arguments, manual scopes, spmd grids (blocks sharing one set of predecessors), dispatch
// predicates, and grids whose blocks must meet at a barrier (run at once on threads of their own).
#pragma once

#include <cstring>
#include <exception>

#include "submit.hpp"

namespace pto {

namespace detail {

inline void no_work(const pto_arg*, int32_t, char*) {}

template <class T>
inline double load_as(const void* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<double>(v);
}

// The predicate element as a double (exact for the 32-bit and smaller ints upstream tests use).
inline double pred_element(const Task* t) {
    const void* p = t->pred_ptr;
    switch (t->pred_type) {
        case PTO_PRED_FLOAT:
            return t->pred_bytes == 8 ? load_as<double>(p) : load_as<float>(p);
        case PTO_PRED_UINT:
            switch (t->pred_bytes) {
                case 1: return load_as<uint8_t>(p);
                case 2: return load_as<uint16_t>(p);
                case 4: return load_as<uint32_t>(p);
                default: return load_as<uint64_t>(p);
            }
        default:
            switch (t->pred_bytes) {
                case 1: return load_as<int8_t>(p);
                case 2: return load_as<int16_t>(p);
                case 4: return load_as<int32_t>(p);
                default: return load_as<int64_t>(p);
            }
    }
}

inline bool pred_holds(const Task* t) {
    const double a = pred_element(t), b = t->pred_value;
    switch (t->pred_cmp) {
        case PTO_PRED_EQ: return a == b;
        case PTO_PRED_NE: return a != b;
        case PTO_PRED_GT: return a > b;
        case PTO_PRED_LT: return a < b;
        case PTO_PRED_GE: return a >= b;
        case PTO_PRED_LE: return a <= b;
        default: return true;
    }
}

}  // namespace detail

// Runs the task's kernel unless its predicate is false; returns whether it ran.
inline bool Runtime::run_task_body(Task* t, Lane& me) {
    if (t->pred_cmp && !detail::pred_holds(t)) return false;
    if (t->sync_blocks > 1) {
        run_sync_blocks(t, me);
    } else {
        t->fn(t->args, t->nargs, me.scratch);
    }
    return true;
}

// A grid whose blocks rendezvous: every block runs at the same time (this lane runs block 0, a
// thread of its own with its own scratch arena runs each other block), sharing one barrier.
inline void Runtime::run_sync_blocks(Task* t, Lane& me) {
    const int32_t n = t->sync_blocks, ba = t->block_arg;
    pto_barrier bar{n, 0, 0, 0};
    std::vector<std::vector<pto_arg>> args(static_cast<size_t>(n),
                                           std::vector<pto_arg>(t->args, t->args + t->nargs));
    for (int32_t b = 0; b < n; ++b) {
        pto_arg* a = args[static_cast<size_t>(b)].data();
        a[ba].i = b;
        a[ba + 1].i = n;
        a[ba + 2].i = static_cast<int64_t>(reinterpret_cast<intptr_t>(&bar));
    }
    const int64_t sb = me.scratch_bytes;
    std::vector<std::thread> threads;
    try {
        for (int32_t b = 1; b < n; ++b) {
            threads.emplace_back([&, b] {
                char* scratch = static_cast<char*>(std::aligned_alloc(64, static_cast<size_t>((sb + 63) / 64 * 64 + 64)));
                if (!scratch) {
                    fail("spmd grid: out of memory for a block's scratch arena");
                    std::abort();  // the other blocks would wait at the barrier forever
                }
                t->fn(args[static_cast<size_t>(b)].data(), t->nargs, scratch);
                std::free(scratch);
            });
        }
    } catch (const std::exception& e) {
        fail(strfmt("spmd grid of %d blocks with a barrier: cannot start a thread per block (%s)", n, e.what()));
        std::abort();  // blocks already started wait at the barrier for the missing ones
    }
    t->fn(args[0].data(), t->nargs, me.scratch);
    for (auto& th : threads) th.join();
}

// An explicit dependency on task `d`: on every block of its grid.
inline void Runtime::add_dep_group(int64_t d, int64_t self) {
    if (d < 0 || d >= static_cast<int64_t>(group_first_.size())) return;
    for (int64_t k = group_first_[static_cast<size_t>(d)]; k <= d; ++k) {
        Task* p = lookup(k);
        if (p && !finished(p, k)) add_pred(p, self);
    }
}

inline int64_t Runtime::submit_ex(int32_t kernel_id, const pto_arg* args, int32_t nargs, const pto_submit_opts* o) {
    if (!in_run_ || failed()) return -1;
    if (!o) return submit_kernel(kernel_id, args, nargs);
    pto_kernel_fn fn = &detail::no_work;
    if (kernel_id != -1) {
        if (kernel_id < 0 || static_cast<size_t>(kernel_id) >= kernels_.size()) {
            set_error(strfmt("task %lld: kernel id %d is out of range (the program has %zu kernels)",
                             static_cast<long long>(next_id_), kernel_id, kernels_.size()));
            return -1;
        }
        fn = kernels_[static_cast<size_t>(kernel_id)];
    }
    const int32_t nb = o->nblocks < 1 ? 1 : o->nblocks;
    if (o->ndeps < 0 || (o->ndeps > 0 && !o->deps) || nargs < 0 || nargs + 1 > PTO_MAX_ARGS ||
        (nb > 1 && (o->block_arg < 0 || o->block_arg + 2 >= nargs)) || (o->flags & ~(PTO_TASK_MANUAL | PTO_TASK_SYNC))) {
        set_error(describe(next_id_, kernel_id) +
                  strfmt(": malformed task submission (ndeps %d, nargs %d, blocks %d, block_arg %d, flags %d)",
                         o->ndeps, nargs, nb, o->block_arg, o->flags));
        return -1;
    }
    if (o->pred_cmp < 0 || o->pred_cmp > PTO_PRED_LE || (o->pred_cmp && !o->pred.data)) {
        set_error(describe(next_id_, kernel_id) + strfmt(": malformed predicate (comparison %d)", o->pred_cmp));
        return -1;
    }
    // the arguments, the predicate element appended as an input (so its producer orders the task)
    std::vector<pto_arg> a(args, args + nargs);
    std::vector<uint8_t> untracked(static_cast<size_t>(nargs) + 1, 0);
    if (o->untracked) std::memcpy(untracked.data(), o->untracked, static_cast<size_t>(nargs));
    Extra x;
    x.manual = (o->flags & PTO_TASK_MANUAL) != 0;
    if (o->pred_cmp) {
        a.push_back(pto_arg_tensor(PTO_IN, o->pred));
        x.pred_cmp = o->pred_cmp;
        x.pred_type = o->pred_type;
        x.pred_bytes = o->pred.dtype_bytes;
        x.pred_ptr = o->pred.data;
        x.pred_value = o->pred_value;
    }
    x.untracked = untracked.data();
    x.block_arg = o->block_arg;
    const int32_t na = static_cast<int32_t>(a.size());
    if (o->block_arg >= 0 && o->block_arg + 2 < nargs) {
        a[static_cast<size_t>(o->block_arg) + 1].i = nb;
        a[static_cast<size_t>(o->block_arg) + 2].i = 0;
    }
    if (nb == 1 || (o->flags & PTO_TASK_SYNC)) {
        // one task (a grid that must meet runs all its blocks inside it, see run_sync_blocks)
        if (o->block_arg >= 0 && o->block_arg < nargs) a[static_cast<size_t>(o->block_arg)].i = 0;
        x.sync_blocks = nb > 1 ? nb : 0;
        return submit_x(fn, kernel_id, a.data(), na, o->deps, o->ndeps, 0, &x);
    }
    // independent blocks: block 0 derives the dependencies, the others share them
    std::vector<std::pair<Task*, int64_t>> first;
    int64_t id = -1;
    for (int32_t b = 0; b < nb; ++b) {
        a[static_cast<size_t>(o->block_arg)].i = b;
        id = submit_x(fn, kernel_id, a.data(), na, b == 0 ? o->deps : nullptr, b == 0 ? o->ndeps : 0, 0, &x);
        if (id < 0) return id;
        if (b == 0) {
            for (Task* p : preds_) first.emplace_back(p, p->id);
            x.same_preds = &first;
            x.group_first = id;
        }
    }
    return id;
}

}  // namespace pto
