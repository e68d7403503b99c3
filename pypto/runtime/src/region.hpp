// Regions: the set of bytes a tensor view touches inside its root buffer, and exact-or-conservative
// overlap / containment tests between two of them.
//
// A view's bytes are {off + sum_k x_k * s_k : 0 <= x_k < e_k} (byte strides s_k, extents e_k, plus
// an innermost pseudo-dimension (stride 1, extent dtype_bytes) for the bytes of one element).
// After dropping unit dims, sorting by stride and merging contiguous dims, the strides form a
// *chain* s_0 > s_1 > ... > s_{n-1} = 1. When each stride divides the previous one, every byte
// offset has a unique mixed-radix representation in the chain, and when the view does not "carry"
// (c_i + e_i <= s_{i-1} / s_i) its bytes are exactly a box of coordinates: two such boxes in the
// same chain overlap iff their per-dim intervals all intersect. Views of one root with different
// chains (a row and a tile, say) are compared in the merged chain of both when that is possible;
// in every other case the test falls back to the byte interval [lo, hi), which is conservative
// (it may report an overlap that is not there, never the reverse).
#pragma once

#include <cstdint>
#include <string>

#include "common.hpp"

namespace pto {

constexpr int kMaxChain = PTO_MAX_DIMS + 1;

struct Region {
    uint64_t lo = 0, hi = 0;   // byte interval [lo, hi) relative to the root
    int32_t nd = 0;            // chain length
    bool box = false;          // coord/ext describe the bytes exactly
    bool empty = false;        // no bytes at all (some shape is 0)
    uint64_t stride[kMaxChain];
    uint64_t coord[kMaxChain];
    uint64_t ext[kMaxChain];

    bool dense() const { return box && nd == 1; }  // every byte of [lo, hi)
};

// Build the region of `t`. Returns false with a message in `err` if the view is malformed or does
// not lie inside its root buffer.
inline bool make_region(const pto_tensor& t, Region& r, std::string& err) {
    if (t.dtype_bytes < 1 || t.dtype_bytes > 64) {
        err = strfmt("dtype_bytes is %d (must be 1..64)", t.dtype_bytes);
        return false;
    }
    if (t.ndim < 0 || t.ndim > PTO_MAX_DIMS) {
        err = strfmt("ndim is %d (must be 0..%d)", t.ndim, PTO_MAX_DIMS);
        return false;
    }
    r.empty = false;
    for (int k = 0; k < t.ndim; ++k) {
        if (t.shape[k] < 0) {
            err = strfmt("shape[%d] is %lld (must be >= 0)", k, static_cast<long long>(t.shape[k]));
            return false;
        }
        if (t.shape[k] == 0) r.empty = true;
    }
    if (r.empty) {
        r.lo = r.hi = 0;
        r.nd = 0;
        r.box = true;
        return true;
    }
    if (!t.root || !t.data) {
        err = t.root ? "data pointer is NULL" : "root pointer is NULL";
        return false;
    }
    if (t.root_nbytes <= 0) {
        err = strfmt("root_nbytes is %lld (must be > 0 for a non-empty view)",
                     static_cast<long long>(t.root_nbytes));
        return false;
    }
    // Collect (byte stride, extent) of the non-trivial dims, normalising negative strides.
    int64_t off = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data) -
                                       reinterpret_cast<uintptr_t>(t.root));
    int64_t span = t.dtype_bytes;  // hi - lo
    uint64_t s[kMaxChain], e[kMaxChain];
    int n = 0;
    bool overflow = false;
    for (int k = 0; k < t.ndim; ++k) {
        int64_t ext = t.shape[k];
        if (ext == 1 || t.strides[k] == 0) continue;
        int64_t bs = 0, reach = 0;
        overflow |= __builtin_mul_overflow(t.strides[k], static_cast<int64_t>(t.dtype_bytes), &bs);
        if (overflow) break;
        if (bs < 0) {
            if (bs == INT64_MIN) { overflow = true; break; }
            bs = -bs;
            overflow |= __builtin_mul_overflow(ext - 1, bs, &reach);
            overflow |= __builtin_sub_overflow(off, reach, &off);
        } else {
            overflow |= __builtin_mul_overflow(ext - 1, bs, &reach);
        }
        overflow |= __builtin_add_overflow(span, reach, &span);
        if (overflow) break;
        s[n] = static_cast<uint64_t>(bs);
        e[n] = static_cast<uint64_t>(ext);
        ++n;
    }
    int64_t end = 0;
    if (overflow || __builtin_add_overflow(off, span, &end)) {
        err = "shape * strides overflows 64-bit byte offsets";
        return false;
    }
    if (off < 0 || end > t.root_nbytes) {
        err = strfmt("the view covers bytes [%lld, %lld) of its root buffer, which has %lld bytes "
                     "(a region outside its root buffer)",
                     static_cast<long long>(off), static_cast<long long>(end),
                     static_cast<long long>(t.root_nbytes));
        return false;
    }
    r.lo = static_cast<uint64_t>(off);
    r.hi = static_cast<uint64_t>(end);
    // Pseudo dim for the bytes of one element.
    s[n] = 1;
    e[n] = static_cast<uint64_t>(t.dtype_bytes);
    ++n;
    // Sort by stride, descending (insertion sort: n <= 9).
    for (int i = 1; i < n; ++i) {
        uint64_t ks = s[i], ke = e[i];
        int j = i - 1;
        while (j >= 0 && s[j] < ks) { s[j + 1] = s[j]; e[j + 1] = e[j]; --j; }
        s[j + 1] = ks;
        e[j + 1] = ke;
    }
    // Merge dims that are contiguous with the next inner one.
    int m = n - 1;  // innermost kept dim index in the output (built from the inside out)
    uint64_t cs[kMaxChain], ce[kMaxChain];
    int cn = 0;
    cs[0] = s[n - 1];
    ce[0] = e[n - 1];
    cn = 1;
    for (int i = m - 1; i >= 0; --i) {
        uint64_t& is = cs[cn - 1];
        uint64_t& ie = ce[cn - 1];
        if (s[i] == is * ie) {  // contiguous: fold into the inner dim
            ie *= e[i];
        } else {
            cs[cn] = s[i];
            ce[cn] = e[i];
            ++cn;
        }
    }
    // cs/ce are innermost-first; store outermost-first.
    r.nd = cn;
    for (int i = 0; i < cn; ++i) {
        r.stride[i] = cs[cn - 1 - i];
        r.ext[i] = ce[cn - 1 - i];
    }
    // Nested chain check and mixed-radix coordinates of lo.
    bool ok = r.stride[r.nd - 1] == 1;
    uint64_t rem = r.lo;
    for (int i = 0; i < r.nd && ok; ++i) {
        if (i > 0) {
            if (r.stride[i] >= r.stride[i - 1] || r.stride[i - 1] % r.stride[i] != 0) { ok = false; break; }
        }
        r.coord[i] = rem / r.stride[i];
        rem %= r.stride[i];
        if (i > 0 && r.coord[i] + r.ext[i] > r.stride[i - 1] / r.stride[i]) ok = false;
    }
    r.box = ok;
    return true;
}

namespace detail {

inline bool same_chain(const Region& a, const Region& b) {
    if (a.nd != b.nd) return false;
    for (int i = 0; i < a.nd; ++i)
        if (a.stride[i] != b.stride[i]) return false;
    return true;
}

// Express `r` in the chain `m` (strictly descending, nested, last = 1). False if it is no box there.
// A dim of `r` longer than its radix in `m` is split over the next outer dims when it starts at
// coordinate 0 and its extent is a multiple of the radix (a column of 12 rows is 3 x 4 rows in a
// chain that also has a stride of 4 rows).
inline bool project(const Region& r, const uint64_t* m, int mn, uint64_t* c, uint64_t* e) {
    bool used[2 * kMaxChain];
    uint64_t rem = r.lo;
    for (int i = 0; i < mn; ++i) {
        c[i] = rem / m[i];
        rem %= m[i];
        e[i] = 1;
        used[i] = false;
    }
    int j = r.nd - 1;
    for (int i = mn - 1; i >= 0 && j >= 0; --i) {
        if (m[i] != r.stride[j]) continue;
        uint64_t ext = r.ext[j--];
        for (int k = i;; --k) {
            if (k < 0 || used[k]) return false;
            used[k] = true;
            const uint64_t radix = k > 0 ? m[k - 1] / m[k] : UINT64_MAX;
            if (c[k] + ext <= radix) {
                e[k] = ext;
                break;
            }
            if (c[k] != 0 || ext % radix != 0) return false;
            e[k] = radix;
            ext /= radix;
        }
    }
    return j < 0;
}

// Merge two chains; false if the union is not nested (some stride does not divide the previous).
inline int merge_chains(const Region& a, const Region& b, uint64_t* m) {
    int i = 0, j = 0, n = 0;
    while (i < a.nd || j < b.nd) {
        uint64_t v;
        if (j >= b.nd || (i < a.nd && a.stride[i] > b.stride[j])) {
            v = a.stride[i++];
        } else if (i >= a.nd || b.stride[j] > a.stride[i]) {
            v = b.stride[j++];
        } else {
            v = a.stride[i];
            ++i;
            ++j;
        }
        if (n > 0 && m[n - 1] % v != 0) return -1;
        m[n++] = v;
    }
    return n;
}

// Boxes of a and b in a common chain; false if there is none.
inline bool common_boxes(const Region& a, const Region& b, int& n, uint64_t* ac, uint64_t* ae,
                         uint64_t* bc, uint64_t* be) {
    uint64_t m[2 * kMaxChain];
    n = merge_chains(a, b, m);
    if (n < 0) return false;
    return project(a, m, n, ac, ae) && project(b, m, n, bc, be);
}

}  // namespace detail

// Do a and b share a byte? Exact for boxes with a common chain, conservative (true) otherwise.
inline bool overlaps(const Region& a, const Region& b) {
    if (a.empty || b.empty || a.hi <= b.lo || b.hi <= a.lo) return false;
    if (!a.box || !b.box) return true;
    if (detail::same_chain(a, b)) {
        for (int i = 0; i < a.nd; ++i) {
            if (a.coord[i] + a.ext[i] <= b.coord[i] || b.coord[i] + b.ext[i] <= a.coord[i]) return false;
        }
        return true;
    }
    int n;
    uint64_t ac[2 * kMaxChain], ae[2 * kMaxChain], bc[2 * kMaxChain], be[2 * kMaxChain];
    if (!detail::common_boxes(a, b, n, ac, ae, bc, be)) return true;
    for (int i = 0; i < n; ++i) {
        if (ac[i] + ae[i] <= bc[i] || bc[i] + be[i] <= ac[i]) return false;
    }
    return true;
}

// Does w contain every byte of r? Exact for boxes with a common chain, conservative (false) otherwise.
inline bool covers(const Region& w, const Region& r) {
    if (r.empty) return true;
    if (w.empty || r.lo < w.lo || r.hi > w.hi) return false;
    if (w.dense()) return true;
    if (!w.box || !r.box) return false;
    if (detail::same_chain(w, r)) {
        for (int i = 0; i < w.nd; ++i) {
            if (r.coord[i] < w.coord[i] || r.coord[i] + r.ext[i] > w.coord[i] + w.ext[i]) return false;
        }
        return true;
    }
    int n;
    uint64_t wc[2 * kMaxChain], we[2 * kMaxChain], rc[2 * kMaxChain], re[2 * kMaxChain];
    if (!detail::common_boxes(w, r, n, wc, we, rc, re)) return false;
    for (int i = 0; i < n; ++i) {
        if (rc[i] < wc[i] || rc[i] + re[i] > wc[i] + we[i]) return false;
    }
    return true;
}

}  // namespace pto
