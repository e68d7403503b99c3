// Built-in test kernels, so that tests and benchmarks can build task graphs over NumPy arrays.
//
// Tensors of 4-byte elements are float32, of 8-byte elements float64; every tensor of one call
// has the same element type and the binary kernels take equal shapes (the Python side checks
// this). Any view (strided, negative strides, offsets) is fine.
#pragma once

#include <cstdint>

#include "common.hpp"

namespace pto {
namespace kernels {

// Calls f(offset_a, offset_b) (in elements) for every index of a's shape, walking a and b together.
template <class F>
inline void for_each2(const pto_tensor& a, const pto_tensor& b, F f) {
    const int nd = a.ndim;
    for (int k = 0; k < nd; ++k)
        if (a.shape[k] == 0) return;
    if (nd == 0) {
        f(int64_t(0), int64_t(0));
        return;
    }
    const int in = nd - 1;
    const int64_t n = a.shape[in], sa = a.strides[in], sb = b.strides[in];
    int64_t idx[PTO_MAX_DIMS] = {0};
    int64_t oa = 0, ob = 0;
    for (;;) {
        for (int64_t j = 0; j < n; ++j) f(oa + j * sa, ob + j * sb);
        int k = in - 1;
        for (; k >= 0; --k) {
            oa += a.strides[k];
            ob += b.strides[k];
            if (++idx[k] < a.shape[k]) break;
            oa -= a.shape[k] * a.strides[k];
            ob -= a.shape[k] * b.strides[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

template <class F>
inline void for_each(const pto_tensor& a, F f) {
    for_each2(a, a, [&](int64_t oa, int64_t) { f(oa); });
}

template <class T>
inline T* ptr(const pto_tensor& t) { return static_cast<T*>(t.data); }

// Runs the body with T = float or double after the element size of `t`.
#define PTO_DISPATCH(t, ...)                   \
    do {                                       \
        if ((t).dtype_bytes == 4) {            \
            using T = float;                   \
            __VA_ARGS__;                       \
        } else if ((t).dtype_bytes == 8) {     \
            using T = double;                  \
            __VA_ARGS__;                       \
        }                                      \
    } while (0)

// noop(...): nothing (benchmarks; the args only create dependencies).
inline void noop(const pto_arg*, int32_t, char*) {}

// fill(out t, f64 v): t[...] = v
inline void fill(const pto_arg* a, int32_t, char*) {
    const pto_tensor& t = a[0].t;
    const double v = a[1].f;
    PTO_DISPATCH(t, { T* p = ptr<T>(t); for_each(t, [&](int64_t o) { p[o] = static_cast<T>(v); }); });
}

// scale_add(inout t, f64 s, f64 b): t = t * s + b (order-sensitive: use it to check hazards)
inline void scale_add(const pto_arg* a, int32_t, char*) {
    const pto_tensor& t = a[0].t;
    const double s = a[1].f, b = a[2].f;
    PTO_DISPATCH(t, {
        T* p = ptr<T>(t);
        for_each(t, [&](int64_t o) { p[o] = static_cast<T>(p[o] * s + b); });
    });
}

// axpy(in x, inout y, f64 s): y += s * x
inline void axpy(const pto_arg* a, int32_t, char*) {
    const pto_tensor& x = a[0].t;
    const pto_tensor& y = a[1].t;
    const double s = a[2].f;
    PTO_DISPATCH(x, {
        const T* px = ptr<T>(x);
        T* py = ptr<T>(y);
        for_each2(x, y, [&](int64_t ox, int64_t oy) { py[oy] = static_cast<T>(py[oy] + s * px[ox]); });
    });
}

// copy(in src, out dst): dst = src
inline void copy(const pto_arg* a, int32_t, char*) {
    const pto_tensor& s = a[0].t;
    const pto_tensor& d = a[1].t;
    PTO_DISPATCH(s, {
        const T* ps = ptr<T>(s);
        T* pd = ptr<T>(d);
        for_each2(s, d, [&](int64_t os, int64_t od) { pd[od] = ps[os]; });
    });
}

// add(in x, in y, out z): z = x + y
inline void add(const pto_arg* a, int32_t, char*) {
    const pto_tensor& x = a[0].t;
    const pto_tensor& y = a[1].t;
    const pto_tensor& z = a[2].t;
    PTO_DISPATCH(x, {
        const T* px = ptr<T>(x);
        const T* py = ptr<T>(y);
        T* pz = ptr<T>(z);
        const int nd = x.ndim;
        int64_t total = 1;
        for (int k = 0; k < nd; ++k) total *= x.shape[k];
        int64_t idx[PTO_MAX_DIMS] = {0};
        for (int64_t n = 0; n < total; ++n) {
            int64_t ox = 0, oy = 0, oz = 0;
            for (int k = 0; k < nd; ++k) {
                ox += idx[k] * x.strides[k];
                oy += idx[k] * y.strides[k];
                oz += idx[k] * z.strides[k];
            }
            pz[oz] = static_cast<T>(px[ox] + py[oy]);
            for (int k = nd - 1; k >= 0; --k) {
                if (++idx[k] < x.shape[k]) break;
                idx[k] = 0;
            }
        }
    });
}

// reduce_sum(in x, inout acc): acc[0, ..., 0] += sum(x)
inline void reduce_sum(const pto_arg* a, int32_t, char*) {
    const pto_tensor& x = a[0].t;
    const pto_tensor& acc = a[1].t;
    PTO_DISPATCH(x, {
        const T* px = ptr<T>(x);
        double s = 0;
        for_each(x, [&](int64_t o) { s += px[o]; });
        T* pa = ptr<T>(acc);
        pa[0] = static_cast<T>(pa[0] + s);
    });
}

// spin(i64 ns, ...): busy-wait ns nanoseconds (the remaining args only create dependencies).
inline void spin(const pto_arg* a, int32_t, char*) {
    const int64_t until = now_ns() + a[0].i;
    while (now_ns() < until) cpu_relax();
}

#undef PTO_DISPATCH

struct Builtin {
    const char* name;
    pto_kernel_fn fn;
};

inline const Builtin* builtins(int32_t& n) {
    static const Builtin table[] = {
        {"noop", &noop},   {"fill", &fill}, {"scale_add", &scale_add},   {"axpy", &axpy},
        {"copy", &copy},   {"add", &add},   {"reduce_sum", &reduce_sum}, {"spin", &spin},
    };
    n = static_cast<int32_t>(sizeof table / sizeof table[0]);
    return table;
}

}  // namespace kernels
}  // namespace pto
