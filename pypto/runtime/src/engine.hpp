// The runtime object: task slots, lanes (workers + the orchestrating thread), run state.
//
// Concurrency model
// - One *submitting* thread per run (the caller of begin/submit/wait, which also runs the program's
//   orchestration). It owns the access lists, the slot free list it pops from, the id table and
//   the trace edges. It is lane `nworkers` ("orchestrator") when it executes tasks while waiting.
// - `nworkers` worker threads take ready tasks. Lane i has a deque (locality mode), a scratch
//   arena, a trace buffer and owner-written counters (completed / made ready) that others only
//   read, so the hot path has no shared read-modify-write counter.
// - Edges: a predecessor's successor list is a lock-free stack of Edge nodes. The completing worker
//   swaps it with the CLOSED marker and walks it; the submitter pushes with CAS and treats CLOSED
//   as "already finished". An edge node lives in its successor's slot, which cannot be recycled
//   before every predecessor has walked past it.
// - A slot is recycled (pushed on the free stack) after its task finished; stale references to it
//   (access-list entries, the id table) are recognised because the slot's id changed.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "deps.hpp"
#include "pto_runtime_host.h"
#include "queues.hpp"

namespace pto {

constexpr int kPoolChunk = 256;  // task slots per pool chunk

enum TaskState : int32_t { kFree = 0, kPending = 1, kReady = 2, kRunning = 3, kDone = 4 };

struct Edge {
    Task* succ;
    Edge* next;
};

inline Edge* closed_list() { return reinterpret_cast<Edge*>(static_cast<uintptr_t>(1)); }

constexpr int kInlineArgs = 4;    // arguments stored in the slot itself
constexpr int kInlineEdges = 4;   // incoming edges stored in the slot itself

struct Task {
    // Written by the submitting thread while the task is not yet visible to workers.
    int64_t id = -1;
    pto_kernel_fn fn = nullptr;
    int32_t kernel_id = 0;
    int32_t nargs = 0;
    bool held = false;
    // Task-language options (tasks.hpp): a dispatch predicate, and a grid whose blocks must meet.
    int32_t pred_cmp = 0;         // 0: none (pto_pred_cmp)
    int32_t pred_type = 0;
    int32_t pred_bytes = 0;
    int32_t sync_blocks = 0;      // > 1: run that many blocks at once (args[block_arg] = index)
    int32_t block_arg = -1;
    const void* pred_ptr = nullptr;
    double pred_value = 0;
    int64_t mark = -1;            // dedupe stamp while collecting predecessors
    pto_arg* args = inline_args;  // inline_args, or an array of the submitter's pool
    Edge* in_edges = inline_edges;  // edge nodes naming this task as successor (same storage rule)
    int8_t args_cls = -1;         // size class of a pooled args array (-1: inline)
    int8_t edges_cls = -1;
    pto_arg inline_args[kInlineArgs];
    Edge inline_edges[kInlineEdges];
    // Shared with the workers.
    alignas(64) std::atomic<int32_t> pending{0};  // unfinished predecessors + guards
    std::atomic<int32_t> state{kFree};
    std::atomic<Edge*> succ_head{nullptr};
    Task* free_next = nullptr;    // link in the free stack
};

struct alignas(64) Lane {
    RingDeque<Task*> deque;                   // locality mode: owner works LIFO, thieves FIFO
    char* scratch = nullptr;
    int64_t scratch_bytes = 0;
    std::vector<pto_trace_record> trace;      // this lane's executed tasks (tracing on)
    alignas(64) std::atomic<int64_t> completed{0};   // tasks finished on this lane (cumulative)
    std::atomic<int64_t> made_ready{0};              // tasks this lane made ready (cumulative)
    std::atomic<int64_t> steals{0};
    uint32_t rng = 0x9e3779b9u;
    std::thread thread;

    ~Lane() { std::free(scratch); }
};

// Fills the services table handed to programs (defined in api.hpp).
void fill_api(pto_rt_api& api, int32_t nworkers);

class Runtime {
  public:
    Runtime(int32_t nworkers, int32_t mode, int64_t scratch_bytes);
    ~Runtime();
    bool start(std::string& err);

    // --- runs (submitting thread) ---
    int32_t begin(int32_t flags, bool track_ids);
    int32_t end(std::string& msg);
    int64_t submit(pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                   const int64_t* deps, int32_t ndeps, int32_t flags);
    int64_t submit_kernel(int32_t kernel_id, const pto_arg* args, int32_t nargs);  // program kernels
    int64_t submit_ex(int32_t kernel_id, const pto_arg* args, int32_t nargs, const pto_submit_opts* o);
    int32_t add_dep(int64_t before, int64_t after);
    int32_t release(int64_t task);
    void wait_tensor(const pto_tensor* t);
    void wait_all_tasks();
    void* alloc_tensor(int64_t nbytes);
    void fail(const std::string& msg);
    bool failed() const { return failed_.load(std::memory_order_relaxed); }
    std::string error() {
        std::lock_guard<std::mutex> g(err_mu_);
        return error_;
    }
    int32_t run_program(const pto_program* prog, const pto_arg* params, int32_t nparams, int32_t flags,
                        std::string& msg);
    bool in_run() const { return in_run_; }
    bool ensure_scratch(int64_t bytes);

    // --- results of the last run ---
    int64_t trace_count() const;
    int64_t trace_read(pto_trace_record* out, int64_t cap) const;
    const std::vector<int64_t>& trace_edges() const { return trace_edges_; }
    void stats(pto_rt_stats* out) const;
    int32_t lane_counts(int64_t* out, int32_t cap) const;

    int32_t nworkers() const { return nworkers_; }
    void set_window(int64_t w) { window_ = w < 64 ? 64 : w; }

    void clear_kernels() {
        kernels_.clear();
        kernel_names_.clear();
    }

  private:
    // scheduler.hpp
    void worker_main(int lane);
    bool find_task(Lane& me, int lane, Task*& out);
    Task* execute(Task* t, Lane& me, int lane);
    Task* finish(Task* t, Lane& me, int lane);
    void push_ready(Task* t, Lane& me, int lane);
    void wake_workers(int64_t n);
    void sleep_until_work();
    bool has_work() const;
    bool run_one();
    template <class Pred>
    bool help_until(Pred pred);
    int64_t sum_completed() const;
    int64_t active_tasks() const;
    int64_t live_tasks() const;
    bool wait_task_done(Task* t, int64_t id);
    void report_deadlock();
    void recover_slots();
    void drain_serial();

    // submit.hpp
    Task* alloc_slot();
    void release_storage(Task* t);
    void grow_pool();
    bool finished(const Task* t, int64_t id) const {
        return t->id != id || t->state.load(std::memory_order_acquire) == kDone;
    }
    void add_pred(Task* p, int64_t self) {
        if (p->mark != self) {
            p->mark = self;
            preds_.push_back(p);
        }
    }
    // tasks.hpp
    struct Extra {                      // what submit_ex adds to a submission
        const uint8_t* untracked = nullptr;
        bool manual = false;
        const std::vector<std::pair<Task*, int64_t>>* same_preds = nullptr;  // a later block: the first block's predecessors
        int64_t group_first = -1;       // the first block of the grid this task belongs to
        int32_t pred_cmp = 0, pred_type = 0, pred_bytes = 0, sync_blocks = 0, block_arg = -1;
        const void* pred_ptr = nullptr;
        double pred_value = 0;
    };
    bool run_task_body(Task* t, Lane& me);
    void run_sync_blocks(Task* t, Lane& me);
    void add_dep_group(int64_t d, int64_t self);
    int64_t submit_x(pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args, int32_t nargs, const int64_t* deps,
                     int32_t ndeps, int32_t flags, const Extra* x);
    void scan(AccessTreap& tree, const Region& r, bool writes, int64_t self);
    void record(AccessTreap& tree, size_t& sweep_at, const Region& r, Task* t, int64_t id);
    Task* lookup(int64_t id) const;
    bool publish(Task* pred, Edge* e);
    void set_error(const std::string& msg);
    std::string describe(int64_t id, int32_t kernel_id) const;

    // configuration
    int32_t nworkers_;
    int32_t mode_;
    int64_t window_ = 16384;

    // threads and queues
    std::vector<std::unique_ptr<Lane>> lanes_;   // nworkers_ + 1 (the last: orchestrator)
    RingDeque<Task*> global_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> cancel_{false};
    std::atomic<bool> tracing_{false};
    std::mutex sleep_mu_;
    std::condition_variable sleep_cv_;
    std::atomic<int32_t> sleepers_{0};
    std::mutex orch_mu_;
    std::condition_variable orch_cv_;
    std::atomic<int32_t> orch_waiting_{0};
    bool started_ = false;
    pto_rt_api api_;   // the services table handed to programs (see program.hpp)

    // task slots
    std::vector<std::unique_ptr<Task[]>> chunks_;
    int64_t pool_slots_ = 0;
    Task* local_free_ = nullptr;
    std::atomic<Task*> shared_free_{nullptr};

    // the current run (submitting thread)
    bool in_run_ = false;
    bool track_ids_ = false;
    int64_t next_id_ = 0;
    int64_t base_completed_ = 0;
    int64_t abandoned_ = 0;
    int64_t t0_ = 0;
    int64_t elapsed_ = 0;
    int64_t edges_ = 0;
    int64_t max_live_ = 0;
    int64_t helped_ = 0;
    int64_t base_steals_ = 0;
    int64_t steals_ = 0;
    int64_t roots_seen_ = 0;
    std::vector<int64_t> base_lane_completed_;
    std::vector<int64_t> last_lane_counts_;
    std::atomic<bool> failed_{false};
    std::mutex err_mu_;
    std::string error_;
    RootTable roots_;
    std::vector<Task*> by_id_;
    std::vector<int64_t> group_first_;   // per task id: the first block of its spmd grid
    std::vector<Task*> preds_;
    std::vector<Region> regions_;
    std::vector<AccessList*> arg_lists_;
    std::vector<std::pair<Task*, int64_t>> waits_;
    std::vector<int32_t> drop_;
    SizeClassPool<pto_arg> arg_pool_;
    SizeClassPool<Edge> edge_pool_;
    std::vector<int64_t> trace_edges_;   // (pred id, succ id) pairs
    ChunkArena<Edge> extra_edges_;        // add_dep edges
    std::vector<void*> run_allocs_;
    std::vector<pto_kernel_fn> kernels_;
    std::vector<std::string> kernel_names_;
};

}  // namespace pto
