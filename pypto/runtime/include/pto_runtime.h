/*
 * pto_runtime.h -- the C ABI between compiled PyPTO programs and the MPMD task runtime.
 *
 * A compiled *program* is a shared object that exports the `pto_program_*` functions declared at
 * the end of this file. Its orchestration function (`pto_program_run`) does not link against the
 * runtime: it receives the runtime's services as a table of function pointers (`pto_rt_api`) and
 * an opaque runtime handle, and it submits *tasks* -- calls of the program's kernels -- through
 * `api->submit`.
 *
 * Dependencies are derived by the runtime from the tensor regions each task reads and writes
 * (read-after-write, write-after-read, write-after-write); there are no global barriers. A task
 * runs once every earlier task whose region overlaps one of its own, where at least one of the
 * two writes, has finished. Submission order is program order.
 *
 * Plain C (C99 + anonymous unions, i.e. C11 / any C++), no dependencies beyond <stdint.h>.
 *
 * Threading contract: one thread (the one that called pto_program_run) calls the api functions
 * of a run. Kernels run on the runtime's worker threads (and on the orchestrating thread while it
 * waits); a kernel must only touch the regions its arguments declare, plus its scratch arena.
 */
#ifndef PTO_RUNTIME_H
#define PTO_RUNTIME_H

#include <sched.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structs or function tables below. */
#define PTO_ABI_VERSION 2

/* Most dimensions a tensor view may have. */
#define PTO_MAX_DIMS 8

/* Most arguments one task may take. */
#define PTO_MAX_ARGS 1024

/*
 * A tensor view as a kernel sees it.
 *
 * `data` is the address of element [0, ..., 0] of the view; element [i0, ..., in-1] lives at
 * `(char*)data + dtype_bytes * sum_k(i_k * strides[k])`. Strides are in elements and may be
 * zero (broadcast) or negative. The view must lie inside its *root buffer*
 * [root, root + root_nbytes): the allocation it was cut from. The runtime tracks dependencies
 * per root buffer, so every view of one allocation must name the same `root`, and distinct roots
 * used in one run must not overlap (the runtime reports overlapping roots as an error).
 * Entries of shape/strides at index >= ndim are ignored.
 */
typedef struct pto_tensor {
    void*   data;                       /* element [0, ..., 0] of the view */
    int32_t dtype_bytes;                /* element size in bytes, 1..64 */
    int32_t ndim;                       /* 0..PTO_MAX_DIMS (0: one element) */
    int64_t shape[PTO_MAX_DIMS];        /* >= 0; any 0 makes the view empty */
    int64_t strides[PTO_MAX_DIMS];      /* in elements */
    void*   root;                       /* base address of the root allocation */
    int64_t root_nbytes;                /* size of the root allocation in bytes */
} pto_tensor;

/* Argument kinds. For tensors the kind is the access direction. */
enum pto_arg_kind {
    PTO_IN = 0,          /* tensor, read */
    PTO_OUT = 1,         /* tensor, written */
    PTO_INOUT = 2,       /* tensor, read and written */
    PTO_SCALAR_I64 = 3,  /* 64-bit integer scalar in `i` */
    PTO_SCALAR_F64 = 4   /* double scalar in `f` */
};

/* One task argument: a tagged union. sizeof(pto_arg) == 168. */
typedef struct pto_arg {
    int32_t kind;        /* enum pto_arg_kind */
    int32_t reserved;    /* set to 0 */
    union {
        pto_tensor t;    /* kind PTO_IN / PTO_OUT / PTO_INOUT */
        int64_t    i;    /* kind PTO_SCALAR_I64 */
        double     f;    /* kind PTO_SCALAR_F64 */
    };
} pto_arg;

/*
 * A kernel. `args` is the runtime's private copy of the arguments given at submission;
 * `scratch` is the executing worker's scratch arena: 64-byte aligned, at least
 * pto_program_scratch_bytes() long, reused by every task that worker runs (its content is
 * undefined on entry).
 */
typedef void (*pto_kernel_fn)(const pto_arg* args, int32_t nargs, char* scratch);

/*
 * The runtime's services to an orchestration function. `rt` is the opaque handle passed to
 * pto_program_run. None of these may be called from inside a kernel.
 */
typedef struct pto_rt_api {
    int32_t abi_version;   /* PTO_ABI_VERSION of the runtime */
    int32_t num_workers;   /* worker threads (0: serial mode, the orchestrating thread runs all) */

    /* Submit a call of kernel `kernel_id` (0 <= id < pto_program_num_kernels()). The args are
     * copied; the caller may reuse its array at once. Returns the task id (>= 0, in submission
     * order) or < 0 if the arguments are malformed or the run has already failed; the run then
     * reports the error and later submissions are refused. */
    int64_t (*submit)(void* rt, int32_t kernel_id, const pto_arg* args, int32_t nargs);

    /* A zero-filled, 64-byte aligned buffer that lives until the run ends (after every task has
     * finished). Returns NULL (and fails the run) if out of memory or nbytes < 0. */
    void* (*alloc_tensor)(void* rt, int64_t nbytes);

    /* Block until every submitted task that writes a region overlapping `t` has finished, so the
     * orchestration may read `t` (e.g. a scalar that drives control flow). The calling thread
     * executes ready tasks while it waits. */
    void (*wait_tensor)(void* rt, const pto_tensor* t);

    /* Block until every submitted task has finished (the calling thread helps). */
    void (*wait_all)(void* rt);

    /* Report an error; the run fails with `message` (the first error wins), submissions are
     * refused from now on and queued tasks are skipped. */
    void (*fail)(void* rt, const char* message);

    /* Nonzero once the run has failed (so long orchestration loops may stop early). */
    int32_t (*failed)(void* rt);

    /* Submit with the task language's options (pto_submit_opts below). kernel_id -1 is a task
     * without work (a join: `task_dummy`). Returns the task id that stands for the whole
     * submission (an spmd grid: its last block; depending on it waits for every block), or < 0. */
    int64_t (*submit_ex)(void* rt, int32_t kernel_id, const pto_arg* args, int32_t nargs,
                         const struct pto_submit_opts* opts);
} pto_rt_api;

/* Flags of pto_submit_opts. */
#define PTO_TASK_MANUAL 1       /* manual scope: no inferred edges for this task (its accesses are still
                                   recorded, so later automatically tracked tasks wait for it) */
#define PTO_TASK_SYNC 2         /* the blocks run at once on threads of their own, so a barrier
                                   (pto_barrier_wait, `syncall`) among them cannot deadlock */

/* Predicate comparisons (pred_cmp; 0: no predicate). */
enum pto_pred_cmp { PTO_PRED_EQ = 1, PTO_PRED_NE, PTO_PRED_GT, PTO_PRED_LT, PTO_PRED_GE, PTO_PRED_LE };
/* How the predicate element is read (pred_type). */
enum pto_pred_type { PTO_PRED_SINT = 0, PTO_PRED_UINT = 1, PTO_PRED_FLOAT = 2 };

/*
 * Options of a submission (api->submit_ex).
 * - deps: explicit predecessors (task ids of this run; entries < 0 mean "no producer" and are
 *   skipped). They add to the edges inferred from the argument regions.
 * - untracked: per argument, 1 = this argument is not tracked (no inferred edge, not recorded);
 *   NULL = all tracked.
 * - nblocks >= 1 blocks (spmd). Every block gets a private copy of the arguments in which
 *   args[block_arg].i = the block index (block_arg + 1 holds the block count, + 2 the barrier
 *   pointer of a PTO_TASK_SYNC grid, else 0); block_arg -1: no block arguments. The blocks share
 *   the inferred and explicit dependencies and are not ordered among themselves.
 * - pred_cmp != 0: when the task is dispatched (after its predecessors finished) the element
 *   `pred` is compared with pred_value; false retires the task without running it (successors are
 *   released as usual). The element is read (tracked as an input unless the task is MANUAL).
 */
typedef struct pto_submit_opts {
    const int64_t* deps;
    const uint8_t* untracked;
    int32_t ndeps;
    int32_t flags;
    int32_t nblocks;
    int32_t block_arg;
    int32_t pred_cmp;
    int32_t pred_type;
    double  pred_value;
    pto_tensor pred;
} pto_submit_opts;

/* A barrier among the blocks of a PTO_TASK_SYNC grid (the runtime owns it; kernels only wait). */
typedef struct pto_barrier {
    int32_t n;
    int32_t count;
    int32_t gen;
    int32_t reserved;
} pto_barrier;

/* Wait until all n blocks arrived (NULL: a single block, nothing to wait for). */
static inline void pto_barrier_wait(pto_barrier* b) {
    int32_t g, spins = 0;
    if (!b || b->n <= 1) return;
    g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&b->gen, 1, __ATOMIC_ACQ_REL);
        return;
    }
    while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == g) {
        if (++spins > 1000) { spins = 0; sched_yield(); }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Exports of a compiled program shared object (all `extern "C"`, default visibility):
 *
 *   int32_t       pto_program_abi_version(void);     must return PTO_ABI_VERSION
 *   int32_t       pto_program_num_kernels(void);
 *   const char*   pto_program_kernel_name(int32_t i); static string, used for traces
 *   pto_kernel_fn pto_program_kernel(int32_t i);
 *   int64_t       pto_program_scratch_bytes(void);   per-worker scratch arena size
 *   int32_t       pto_program_run(const pto_rt_api* api, void* rt,
 *                                 const pto_arg* params, int32_t nparams);
 *                 the orchestration: returns 0, or nonzero on error (call api->fail first to
 *                 give a message). It may return with tasks still running: the runtime waits
 *                 for them after it returns.
 *
 * The host passes these to the runtime as a `pto_program` table, so the runtime needs no
 * dlopen of its own and no link-time dependency either way.
 * ------------------------------------------------------------------------------------------- */
typedef struct pto_program {
    int32_t       (*abi_version)(void);
    int32_t       (*num_kernels)(void);
    const char*   (*kernel_name)(int32_t i);
    pto_kernel_fn (*kernel)(int32_t i);
    int64_t       (*scratch_bytes)(void);
    int32_t       (*run)(const pto_rt_api* api, void* rt, const pto_arg* params, int32_t nparams);
} pto_program;

/* ---------------------------------------------------------------------------------------------
 * Inline helpers for generated code (no runtime calls).
 * ------------------------------------------------------------------------------------------- */

/* A dense row-major tensor that is its own root buffer. */
static inline pto_tensor pto_tensor_dense(void* data, int32_t dtype_bytes, int32_t ndim,
                                          const int64_t* shape) {
    pto_tensor t;
    int64_t n = 1;
    int32_t k;
    for (k = 0; k < PTO_MAX_DIMS; ++k) { t.shape[k] = 1; t.strides[k] = 0; }
    for (k = ndim - 1; k >= 0; --k) { t.shape[k] = shape[k]; t.strides[k] = n; n *= shape[k]; }
    t.data = data;
    t.dtype_bytes = dtype_bytes;
    t.ndim = ndim;
    t.root = data;
    t.root_nbytes = n * dtype_bytes;
    return t;
}

/* The box [offsets, offsets + sizes) of `base` (same ndim, same strides, same root). */
static inline pto_tensor pto_tensor_slice(const pto_tensor* base, const int64_t* offsets,
                                          const int64_t* sizes) {
    pto_tensor t = *base;
    int64_t off = 0;
    int32_t k;
    for (k = 0; k < base->ndim; ++k) { off += offsets[k] * base->strides[k]; t.shape[k] = sizes[k]; }
    t.data = (char*)base->data + off * base->dtype_bytes;
    return t;
}

static inline pto_arg pto_arg_tensor(int32_t kind, pto_tensor t) {
    pto_arg a;
    a.kind = kind;
    a.reserved = 0;
    a.t = t;
    return a;
}

static inline pto_arg pto_arg_i64(int64_t v) {
    pto_arg a;
    a.kind = PTO_SCALAR_I64;
    a.reserved = 0;
    a.i = v;
    return a;
}

static inline pto_arg pto_arg_f64(double v) {
    pto_arg a;
    a.kind = PTO_SCALAR_F64;
    a.reserved = 0;
    a.f = v;
    return a;
}

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* PTO_RUNTIME_H */
