// Workers, ready queues, task execution and completion, and the orchestrating thread's waits
// (which execute ready tasks instead of idling, and detect deadlocks).
#pragma once

#include <algorithm>

#include "engine.hpp"

namespace pto {

constexpr int kSpinIters = 4000;   // idle polls (with pause) before yielding
constexpr int kYieldIters = 64;    // idle polls with sched_yield before sleeping

inline Runtime::Runtime(int32_t nworkers, int32_t mode, int64_t scratch_bytes)
    : nworkers_(nworkers), mode_(mode) {
    for (int i = 0; i <= nworkers; ++i) {
        lanes_.emplace_back(new Lane());
        lanes_.back()->rng += 7919u * static_cast<uint32_t>(i);
    }
    base_lane_completed_.assign(lanes_.size(), 0);
    last_lane_counts_.assign(lanes_.size(), 0);
    fill_api(api_, nworkers);
    ensure_scratch(scratch_bytes);
}

inline bool Runtime::start(std::string& err) {
    try {
        for (int i = 0; i < nworkers_; ++i) lanes_[i]->thread = std::thread(&Runtime::worker_main, this, i);
    } catch (const std::exception& e) {
        err = strfmt("cannot start worker threads: %s", e.what());
        return false;
    }
    started_ = true;
    return true;
}

inline Runtime::~Runtime() {
    if (in_run_) {
        std::string msg;
        end(msg);
    }
    {
        std::lock_guard<std::mutex> g(sleep_mu_);
        stop_.store(true, std::memory_order_release);
    }
    sleep_cv_.notify_all();
    for (auto& l : lanes_) {
        if (l->thread.joinable()) l->thread.join();
    }
}

// Grow every lane's scratch arena to `bytes` (64-byte aligned). Only while no task is running.
inline bool Runtime::ensure_scratch(int64_t bytes) {
    if (bytes < 64) bytes = 64;
    bytes = (bytes + 63) & ~int64_t(63);
    for (auto& l : lanes_) {
        if (l->scratch_bytes >= bytes) continue;
        void* p = std::aligned_alloc(64, static_cast<size_t>(bytes));
        if (!p) return false;
        std::free(l->scratch);
        l->scratch = static_cast<char*>(p);
        l->scratch_bytes = bytes;
    }
    return true;
}

inline void Runtime::worker_main(int lane) {
    Lane& me = *lanes_[lane];
    int idle = 0;
    for (;;) {
        Task* t;
        if (find_task(me, lane, t)) {
            idle = 0;
            while (t) t = execute(t, me, lane);
            continue;
        }
        if (stop_.load(std::memory_order_acquire)) return;
        if (++idle < kSpinIters) {
            cpu_relax();
        } else if (idle < kSpinIters + kYieldIters) {
            std::this_thread::yield();
        } else {
            sleep_until_work();
            idle = 0;
        }
    }
}

inline bool Runtime::find_task(Lane& me, int lane, Task*& out) {
    if (mode_ == PTO_SCHED_LOCALITY && me.deque.pop_back(out)) return true;
    if (global_.pop_front(out)) return true;
    if (mode_ == PTO_SCHED_LOCALITY) {
        const int n = static_cast<int>(lanes_.size());
        me.rng = me.rng * 1664525u + 1013904223u;
        const int start = static_cast<int>((me.rng >> 8) % static_cast<uint32_t>(n));
        for (int k = 0; k < n; ++k) {
            const int v = (start + k) % n;
            if (v != lane && lanes_[v]->deque.pop_front(out)) {
                me.steals.store(me.steals.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
                return true;
            }
        }
    }
    return false;
}

// Run `t` on lane `lane`; returns the task to run next on this lane (locality mode), or nullptr.
inline Task* Runtime::execute(Task* t, Lane& me, int lane) {
    t->state.store(kRunning, std::memory_order_relaxed);
    if (!cancel_.load(std::memory_order_relaxed)) {
        if (tracing_.load(std::memory_order_relaxed)) {
            const int64_t s = now_ns();
            const bool ran = run_task_body(t, me);
            const int64_t e = now_ns();
            if (ran) me.trace.push_back(pto_trace_record{t->id, t->kernel_id, lane, s - t0_, e - t0_});
        } else {
            run_task_body(t, me);
        }
    }
    return finish(t, me, lane);
}

// Release the successors of a finished task, recycle its slot. In locality mode the first newly
// ready successor is returned to run next on this lane, the others go to this lane's deque; in fifo
// mode they all go to the global queue, in submission order.
inline Task* Runtime::finish(Task* t, Lane& me, int lane) {
    (void)lane;
    Edge* h = t->succ_head.exchange(closed_list(), std::memory_order_acq_rel);
    Edge* rev = nullptr;  // the list is newest-first; walk it in submission order
    while (h) {
        Edge* nx = h->next;
        h->next = rev;
        rev = h;
        h = nx;
    }
    Task* keep = nullptr;
    int64_t pushed = 0;
    for (Edge* e = rev; e;) {
        Edge* nx = e->next;  // read before the decrement: the successor may run and be recycled
        Task* s = e->succ;
        if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            me.made_ready.store(me.made_ready.load(std::memory_order_relaxed) + 1, std::memory_order_release);
            if (mode_ == PTO_SCHED_LOCALITY && !keep) {
                keep = s;
            } else {
                s->state.store(kReady, std::memory_order_relaxed);
                if (mode_ == PTO_SCHED_LOCALITY) {
                    me.deque.push_back(s);
                } else {
                    global_.push_back(s);
                }
                ++pushed;
            }
        }
        e = nx;
    }
    t->state.store(kDone, std::memory_order_release);
    Task* head = shared_free_.load(std::memory_order_relaxed);
    do {
        t->free_next = head;
    } while (!shared_free_.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
    // `t` may be reused from here on.
    me.completed.store(me.completed.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    if (pushed) wake_workers(pushed);
    if (orch_waiting_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> g(orch_mu_);
        orch_cv_.notify_one();
    }
    return keep;
}

// A task became ready on the submitting thread.
inline void Runtime::push_ready(Task* t, Lane& me, int lane) {
    (void)lane;
    me.made_ready.store(me.made_ready.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    t->state.store(kReady, std::memory_order_relaxed);
    global_.push_back(t);
    wake_workers(1);
}

inline void Runtime::wake_workers(int64_t n) {
    if (nworkers_ == 0) return;
    // Pairs with the sleeper's increment of `sleepers_` before it re-checks the queues.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const int32_t s = sleepers_.load(std::memory_order_relaxed);
    if (s == 0) return;
    std::lock_guard<std::mutex> g(sleep_mu_);
    if (n >= s) {
        sleep_cv_.notify_all();
    } else {
        for (int64_t i = 0; i < n; ++i) sleep_cv_.notify_one();
    }
}

inline void Runtime::sleep_until_work() {
    std::unique_lock<std::mutex> lk(sleep_mu_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in wake_workers
    while (!stop_.load(std::memory_order_acquire) && !has_work()) sleep_cv_.wait(lk);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

inline bool Runtime::has_work() const {
    if (!global_.empty_approx()) return true;
    if (mode_ == PTO_SCHED_LOCALITY) {
        for (const auto& l : lanes_)
            if (!l->deque.empty_approx()) return true;
    }
    return false;
}

// The orchestrating thread executes one ready task (and its locality continuations).
inline bool Runtime::run_one() {
    Lane& me = *lanes_[nworkers_];
    Task* t;
    if (!find_task(me, nworkers_, t)) return false;
    while (t) {
        t = execute(t, me, nworkers_);
        ++helped_;
    }
    return true;
}

inline void Runtime::drain_serial() {
    while (run_one()) {
    }
}

inline int64_t Runtime::sum_completed() const {
    int64_t s = 0;
    for (const auto& l : lanes_) s += l->completed.load(std::memory_order_acquire);
    return s;
}

// Tasks ready or running. Completions are read before "made ready" counts, and every task is
// counted as made ready before it can be popped, so this never under-counts.
inline int64_t Runtime::active_tasks() const {
    int64_t done = sum_completed();
    int64_t made = 0;
    for (const auto& l : lanes_) made += l->made_ready.load(std::memory_order_acquire);
    return made - done;
}

inline int64_t Runtime::live_tasks() const {
    return next_id_ - (sum_completed() - base_completed_) - abandoned_;
}

// Execute ready tasks until pred() holds. Returns false if pred() can never hold because no task
// is ready or running (everything pending waits on a held task): a deadlock, or, for a full task
// window, the sign that it must grow.
template <class Pred>
bool Runtime::help_until(Pred pred) {
    int idle = 0, stalls = 0;
    for (;;) {
        if (pred()) return true;
        if (run_one()) {
            idle = stalls = 0;
            continue;
        }
        if (active_tasks() == 0) {
            if (pred()) return true;
            if (++stalls >= 3) return false;
            std::this_thread::yield();
            continue;
        }
        stalls = 0;
        if (++idle < kSpinIters) {
            cpu_relax();
        } else if (idle < kSpinIters + kYieldIters) {
            std::this_thread::yield();
        } else {
            std::unique_lock<std::mutex> lk(orch_mu_);
            orch_waiting_.store(1, std::memory_order_seq_cst);
            std::atomic_thread_fence(std::memory_order_seq_cst);  // before re-reading the counters
            if (!pred() && !has_work()) orch_cv_.wait_for(lk, std::chrono::milliseconds(2));
            orch_waiting_.store(0, std::memory_order_relaxed);
            idle = kSpinIters;  // after a wake-up: poll with yields, then sleep again
        }
    }
}

inline bool Runtime::wait_task_done(Task* t, int64_t id) {
    if (help_until([&] { return finished(t, id); })) return true;
    report_deadlock();
    return false;
}

// Called when tasks are pending but none is ready or running: name some, then reclaim every slot
// (nothing is queued or executing, so no other thread can touch one).
inline void Runtime::report_deadlock() {
    std::vector<Task*> stuck;
    for (auto& c : chunks_) {
        for (int i = 0; i < kPoolChunk; ++i) {
            if (c[i].state.load(std::memory_order_acquire) == kPending) stuck.push_back(&c[i]);
        }
    }
    std::sort(stuck.begin(), stuck.end(), [](const Task* a, const Task* b) { return a->id < b->id; });
    std::string list;
    for (size_t k = 0; k < stuck.size() && k < 8; ++k) {
        const Task& t = *stuck[k];
        if (!list.empty()) list += "; ";
        list += describe(t.id, t.kernel_id);
        if (t.held) {
            list += " is held (submitted with PTO_SUBMIT_HOLD, never released)";
        } else {
            list += strfmt(" waits for %d unfinished predecessor(s)", t.pending.load(std::memory_order_relaxed));
        }
    }
    set_error(strfmt("deadlock: %zu task(s) are pending but none is ready or running: ", stuck.size()) + list +
              (stuck.size() > 8 ? "; ..." : ""));
    recover_slots();
}

inline void Runtime::recover_slots() {
    int64_t abandoned = 0;
    shared_free_.store(nullptr, std::memory_order_relaxed);
    local_free_ = nullptr;
    for (auto& c : chunks_) {
        for (int i = kPoolChunk - 1; i >= 0; --i) {
            Task& t = c[i];
            if (t.state.load(std::memory_order_relaxed) == kPending) ++abandoned;
            t.state.store(kDone, std::memory_order_relaxed);
            t.id = -1;
            t.free_next = local_free_;
            local_free_ = &t;
        }
    }
    abandoned_ += abandoned;
}

}  // namespace pto
