// A hand-written PyPTO program for the runtime tests: what the code generator emits, in miniature.
//
// params: x (inout, M x N float64), tile (i64), iters (i64), limit (f64), mode (i64)
// Per iteration: x = x * 0.5 + (it + 1) tile by tile; row sums of x into a run-lifetime buffer;
// their total into a scalar; the orchestration waits for that scalar and, if it exceeds `limit`,
// subtracts 1 from every tile (data-dependent control flow). `mode` != 0 exercises error paths.
#include <cmath>
#include <cstdint>

#include "pto_runtime.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

#ifndef TEST_ABI_VERSION
#define TEST_ABI_VERSION PTO_ABI_VERSION
#endif

namespace {

// scale_add(inout t[R, C], f64 s, f64 b): t = t * s + b
void k_scale_add(const pto_arg* a, int32_t, char*) {
    const pto_tensor& t = a[0].t;
    double* p = static_cast<double*>(t.data);
    for (int64_t i = 0; i < t.shape[0]; ++i)
        for (int64_t j = 0; j < t.shape[1]; ++j) {
            double& v = p[i * t.strides[0] + j * t.strides[1]];
            v = v * a[1].f + a[2].f;
        }
}

// row_sum_acc(in t[R, C], inout acc[R]): acc[i] += sum_j t[i, j], staged in the scratch arena.
void k_row_sum_acc(const pto_arg* a, int32_t, char* scratch) {
    const pto_tensor& t = a[0].t;
    const pto_tensor& acc = a[1].t;
    const double* p = static_cast<const double*>(t.data);
    double* s = reinterpret_cast<double*>(scratch);
    const bool aligned = (reinterpret_cast<uintptr_t>(scratch) % 64) == 0;
    for (int64_t i = 0; i < t.shape[0]; ++i) {
        s[i] = 0;
        for (int64_t j = 0; j < t.shape[1]; ++j) s[i] += p[i * t.strides[0] + j * t.strides[1]];
    }
    double* q = static_cast<double*>(acc.data);
    for (int64_t i = 0; i < t.shape[0]; ++i) q[i * acc.strides[0]] += aligned ? s[i] : NAN;
}

const char* const kNames[] = {"scale_add", "row_sum_acc"};
const pto_kernel_fn kKernels[] = {&k_scale_add, &k_row_sum_acc};

int64_t submit_tile_op(const pto_rt_api* api, void* rt, const pto_tensor& x, int64_t ti, int64_t tj,
                       int64_t tile, double s, double b) {
    const int64_t off[2] = {ti * tile, tj * tile}, size[2] = {tile, tile};
    pto_arg args[3] = {pto_arg_tensor(PTO_INOUT, pto_tensor_slice(&x, off, size)), pto_arg_f64(s),
                       pto_arg_f64(b)};
    return api->submit(rt, 0, args, 3);
}

}  // namespace

EXPORT int32_t pto_program_abi_version(void) { return TEST_ABI_VERSION; }
EXPORT int32_t pto_program_num_kernels(void) { return 2; }
EXPORT const char* pto_program_kernel_name(int32_t i) { return (i >= 0 && i < 2) ? kNames[i] : nullptr; }
EXPORT pto_kernel_fn pto_program_kernel(int32_t i) { return (i >= 0 && i < 2) ? kKernels[i] : nullptr; }
EXPORT int64_t pto_program_scratch_bytes(void) { return 1 << 16; }

EXPORT int32_t pto_program_run(const pto_rt_api* api, void* rt, const pto_arg* p, int32_t np) {
    if (api->abi_version != PTO_ABI_VERSION) return 1;
    if (np != 5 || p[0].kind != PTO_INOUT || p[1].kind != PTO_SCALAR_I64) {
        api->fail(rt, "tiled_program: expected (x inout, tile i64, iters i64, limit f64, mode i64)");
        return 2;
    }
    const pto_tensor x = p[0].t;
    const int64_t tile = p[1].i, iters = p[2].i, mode = p[4].i;
    const double limit = p[3].f;
    const int64_t m = x.shape[0], n = x.shape[1];
    if (mode == 1) {  // a kernel id the program does not have
        pto_arg a = pto_arg_tensor(PTO_IN, x);
        return api->submit(rt, 7, &a, 1) < 0 ? 3 : 0;
    }
    if (mode == 2) {
        api->fail(rt, "custom failure from the program");
        return 4;
    }
    if (mode == 3) {  // a view that runs past the end of its root buffer
        const int64_t off[2] = {m - 1, 0}, size[2] = {2, n};
        pto_arg a = pto_arg_tensor(PTO_OUT, pto_tensor_slice(&x, off, size));
        return api->submit(rt, 0, &a, 1) < 0 ? 5 : 0;
    }
    if (mode == 4) return 6;  // an error code without a message
    for (int64_t it = 0; it < iters && !api->failed(rt); ++it) {
        for (int64_t ti = 0; ti < m / tile; ++ti)
            for (int64_t tj = 0; tj < n / tile; ++tj) submit_tile_op(api, rt, x, ti, tj, tile, 0.5, double(it + 1));
        const int64_t acc_shape[1] = {m};
        pto_tensor acc = pto_tensor_dense(api->alloc_tensor(rt, m * 8), 8, 1, acc_shape);
        for (int64_t ti = 0; ti < m / tile; ++ti)
            for (int64_t tj = 0; tj < n / tile; ++tj) {
                const int64_t off[2] = {ti * tile, tj * tile}, size[2] = {tile, tile};
                const int64_t aoff[1] = {ti * tile}, asize[1] = {tile};
                pto_arg args[2] = {pto_arg_tensor(PTO_IN, pto_tensor_slice(&x, off, size)),
                                   pto_arg_tensor(PTO_INOUT, pto_tensor_slice(&acc, aoff, asize))};
                api->submit(rt, 1, args, 2);
            }
        // total = sum(acc): acc viewed as 1 x m, into a scalar buffer of this run
        const int64_t one[1] = {1}, row_shape[2] = {1, m};
        pto_tensor total = pto_tensor_dense(api->alloc_tensor(rt, 8), 8, 1, one);
        pto_tensor acc_row = pto_tensor_dense(acc.data, 8, 2, row_shape);
        pto_arg args[2] = {pto_arg_tensor(PTO_IN, acc_row), pto_arg_tensor(PTO_INOUT, total)};
        api->submit(rt, 1, args, 2);
        api->wait_tensor(rt, &total);
        const double s = *static_cast<const double*>(total.data);
        if (s > limit) {
            for (int64_t ti = 0; ti < m / tile; ++ti)
                for (int64_t tj = 0; tj < n / tile; ++tj) submit_tile_op(api, rt, x, ti, tj, tile, 1.0, -1.0);
        }
    }
    return 0;
}
