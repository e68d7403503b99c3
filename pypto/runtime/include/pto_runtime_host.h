/*
 * pto_runtime_host.h -- the host-side C API of the PyPTO task runtime library.
 *
 * The runtime library (built from pypto/runtime/src by pypto.runtime.native) exports these
 * functions; Python calls them through ctypes. Compiled programs never call them: they only see
 * the `pto_rt_api` table of pto_runtime.h.
 *
 * Lifecycle: create -> (run_program | begin, submit..., wait_all | run_graph)* -> destroy.
 * One run at a time per runtime; the calls of a run come from one thread. Every function that
 * can fail returns a negative value (or nonzero status) and, where it takes `err`/`err_len`,
 * writes a NUL-terminated message there (truncated to err_len bytes).
 */
#ifndef PTO_RUNTIME_HOST_H
#define PTO_RUNTIME_HOST_H

#include "pto_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scheduling modes (pto_rt_create). */
enum pto_sched_mode {
    PTO_SCHED_FIFO = 0,      /* one global ready queue, first ready first run */
    PTO_SCHED_LOCALITY = 1   /* a finished task's newly ready successors stay on the finishing
                                worker (run next / its own deque); idle workers steal */
};

/* Flags of pto_rt_begin / pto_rt_run_program / pto_rt_run_graph. */
#define PTO_RUN_TRACE 1      /* record one pto_trace_record per task and the dependency edges */

/* Flags of pto_rt_submit. */
#define PTO_SUBMIT_HOLD 1    /* do not schedule the task until pto_rt_release(task) */

/* One executed task (trace). Times are steady-clock nanoseconds since the run began. */
typedef struct pto_trace_record {
    int64_t task;        /* task id (submission order) */
    int32_t kernel_id;
    int32_t worker;      /* 0..num_workers-1, or num_workers for the orchestrating thread */
    int64_t start_ns;
    int64_t end_ns;
} pto_trace_record;

/* Counters of the last run (pto_rt_get_stats). */
typedef struct pto_rt_stats {
    int64_t tasks;        /* tasks submitted */
    int64_t edges;        /* dependency edges enforced (predecessor unfinished at submission) */
    int64_t elapsed_ns;   /* from begin to the end of the run */
    int64_t max_live;     /* peak number of submitted, unfinished tasks */
    int64_t pool_slots;   /* task slots allocated (kept between runs) */
    int64_t steals;       /* tasks a worker took from another worker's deque */
    int64_t helped;       /* tasks executed by the orchestrating thread */
    int64_t roots;        /* distinct root buffers seen */
} pto_rt_stats;

/* A task for pto_rt_run_graph: explicit deps name earlier tasks of the same graph (indices). */
typedef struct pto_task_desc {
    pto_kernel_fn  fn;
    const pto_arg* args;
    const int64_t* deps;
    int32_t        kernel_id;   /* label for traces */
    int32_t        nargs;
    int32_t        ndeps;
    int32_t        reserved;
} pto_task_desc;

/* Runtime with `num_workers` threads (0: serial mode), a pto_sched_mode, and per-worker scratch
 * arenas of `scratch_bytes`. Returns NULL on bad arguments or if threads cannot start. */
void*   pto_rt_create(int32_t num_workers, int32_t sched_mode, int64_t scratch_bytes);
void    pto_rt_destroy(void* rt);
int32_t pto_rt_abi_version(void);
int32_t pto_rt_num_workers(void* rt);
/* Most submitted-but-unfinished tasks before submission blocks (and helps); default 16384. */
void    pto_rt_set_window(void* rt, int64_t max_live_tasks);

/* Run a compiled program: check its ABI version, grow the scratch arenas to its needs, call its
 * orchestration with the api table, wait for all tasks, free run-lifetime tensors.
 * Returns 0 or -1 (message in err). */
int32_t pto_rt_run_program(void* rt, const pto_program* prog, const pto_arg* params,
                           int32_t nparams, int32_t flags, char* err, int32_t err_len);

/* Direct task API (tests and tools). */
int32_t pto_rt_begin(void* rt, int32_t flags);
/* Submit a call of `fn` (kernel_id only labels it). `deps` are explicit predecessors: ids of
 * earlier tasks of this run. Returns the task id or -1 (the run has failed; see pto_rt_error). */
int64_t pto_rt_submit(void* rt, pto_kernel_fn fn, int32_t kernel_id, const pto_arg* args,
                      int32_t nargs, const int64_t* deps, int32_t ndeps, int32_t flags);
/* Explicit edge before -> after; `after` must still be held and `before` < `after`. 0 or -1. */
int32_t pto_rt_add_dep(void* rt, int64_t before, int64_t after);
/* Let a held task be scheduled. 0 or -1. */
int32_t pto_rt_release(void* rt, int64_t task);
/* Wait for every task (the calling thread helps), end the run. 0 or -1 (message in err). */
int32_t pto_rt_wait_all(void* rt, char* err, int32_t err_len);
/* begin + submit every task + wait_all. 0 or -1. */
int32_t pto_rt_run_graph(void* rt, const pto_task_desc* tasks, int64_t ntasks, int32_t flags,
                         char* err, int32_t err_len);
/* The current run's first error (empty if none). Returns its length. */
int32_t pto_rt_error(void* rt, char* err, int32_t err_len);

/* Results of the last run. */
int64_t pto_rt_trace_count(void* rt);
int64_t pto_rt_trace_read(void* rt, pto_trace_record* out, int64_t cap);
int64_t pto_rt_trace_edge_count(void* rt);
int64_t pto_rt_trace_edges(void* rt, int64_t* out_pairs, int64_t cap_pairs);
void    pto_rt_get_stats(void* rt, pto_rt_stats* out);
/* Tasks executed per lane (num_workers + 1 lanes; the last is the orchestrating thread). */
int32_t pto_rt_lane_counts(void* rt, int64_t* out, int32_t cap);

/* Built-in test kernels (see pypto/runtime/README.md for their signatures). */
int32_t       pto_rt_builtin_count(void);
const char*   pto_rt_builtin_name(int32_t i);
pto_kernel_fn pto_rt_builtin_kernel(int32_t i);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* PTO_RUNTIME_HOST_H */
