// An interval treap of accesses: find every recorded access whose byte interval meets a query
// interval in O(log n + k), so that many concurrently live tasks on disjoint parts of one buffer
// (tiles) cost no more to track than a few.
//
// Nodes live in one pool (indices, not pointers; a free list; capacity kept between runs), keyed by
// (lo, seq) with seq unique, and augmented with the largest `hi` of their subtree.
#pragma once

#include <cstdint>
#include <vector>

#include "region.hpp"

namespace pto {

struct Task;

struct AccessNode {
    uint64_t lo = 0, hi = 0, max_hi = 0;
    uint64_t seq = 0;
    uint32_t prio = 0;
    int32_t left = -1, right = -1;
    Task* task = nullptr;
    int64_t id = -1;
};

class AccessPool {
  public:
    int32_t alloc(const Region& r, Task* t, int64_t id) {
        int32_t i;
        if (free_ >= 0) {
            i = free_;
            free_ = nodes_[static_cast<size_t>(i)].left;
        } else {
            i = static_cast<int32_t>(nodes_.size());
            nodes_.emplace_back();
            regions_.emplace_back();
        }
        AccessNode& n = nodes_[static_cast<size_t>(i)];
        n.lo = r.lo;
        n.hi = r.hi;
        n.max_hi = r.hi;
        n.seq = ++seq_;
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 17;
        rng_ ^= rng_ << 5;
        n.prio = rng_;
        n.left = n.right = -1;
        n.task = t;
        n.id = id;
        regions_[static_cast<size_t>(i)] = r;
        return i;
    }
    void release(int32_t i) {
        nodes_[static_cast<size_t>(i)].left = free_;
        nodes_[static_cast<size_t>(i)].task = nullptr;
        free_ = i;
    }
    void reset() {
        nodes_.clear();
        regions_.clear();
        free_ = -1;
    }
    AccessNode& node(int32_t i) { return nodes_[static_cast<size_t>(i)]; }
    const Region& region(int32_t i) const { return regions_[static_cast<size_t>(i)]; }

  private:
    std::vector<AccessNode> nodes_;
    std::vector<Region> regions_;
    int32_t free_ = -1;
    uint64_t seq_ = 0;
    uint32_t rng_ = 0x2545F491u;
};

class AccessTreap {
  public:
    void insert(AccessPool& p, int32_t n) {
        root_ = insert(p, root_, n);
        ++count_;
    }

    void erase(AccessPool& p, int32_t n) {
        const AccessNode& k = p.node(n);
        root_ = erase(p, root_, k.lo, k.seq);
        p.release(n);
        --count_;
    }

    // f(node) for every node whose [lo, hi) meets [lo, hi).
    template <class F>
    void query(AccessPool& p, uint64_t lo, uint64_t hi, F&& f) const {
        query(p, root_, lo, hi, f);
    }

    // f(node) for every node.
    template <class F>
    void for_all(AccessPool& p, F&& f) const {
        query(p, root_, 0, UINT64_MAX, f);
    }

    size_t size() const { return count_; }
    void clear() {
        root_ = -1;
        count_ = 0;
    }

  private:
    static bool less(const AccessNode& a, uint64_t lo, uint64_t seq) {
        return a.lo < lo || (a.lo == lo && a.seq < seq);
    }

    static void pull(AccessPool& p, int32_t t) {
        AccessNode& n = p.node(t);
        uint64_t m = n.hi;
        if (n.left >= 0 && p.node(n.left).max_hi > m) m = p.node(n.left).max_hi;
        if (n.right >= 0 && p.node(n.right).max_hi > m) m = p.node(n.right).max_hi;
        n.max_hi = m;
    }

    static int32_t rotate_right(AccessPool& p, int32_t t) {
        int32_t l = p.node(t).left;
        p.node(t).left = p.node(l).right;
        p.node(l).right = t;
        pull(p, t);
        pull(p, l);
        return l;
    }

    static int32_t rotate_left(AccessPool& p, int32_t t) {
        int32_t r = p.node(t).right;
        p.node(t).right = p.node(r).left;
        p.node(r).left = t;
        pull(p, t);
        pull(p, r);
        return r;
    }

    static int32_t insert(AccessPool& p, int32_t t, int32_t n) {
        if (t < 0) return n;
        const AccessNode& k = p.node(n);
        if (less(k, p.node(t).lo, p.node(t).seq)) {
            int32_t c = insert(p, p.node(t).left, n);
            p.node(t).left = c;
            if (p.node(c).prio > p.node(t).prio) return rotate_right(p, t);
        } else {
            int32_t c = insert(p, p.node(t).right, n);
            p.node(t).right = c;
            if (p.node(c).prio > p.node(t).prio) return rotate_left(p, t);
        }
        pull(p, t);
        return t;
    }

    static int32_t merge(AccessPool& p, int32_t a, int32_t b) {
        if (a < 0) return b;
        if (b < 0) return a;
        if (p.node(a).prio > p.node(b).prio) {
            p.node(a).right = merge(p, p.node(a).right, b);
            pull(p, a);
            return a;
        }
        p.node(b).left = merge(p, a, p.node(b).left);
        pull(p, b);
        return b;
    }

    static int32_t erase(AccessPool& p, int32_t t, uint64_t lo, uint64_t seq) {
        if (t < 0) return t;
        AccessNode& n = p.node(t);
        if (n.lo == lo && n.seq == seq) return merge(p, n.left, n.right);
        if (lo < n.lo || (lo == n.lo && seq < n.seq)) {
            n.left = erase(p, n.left, lo, seq);
        } else {
            n.right = erase(p, n.right, lo, seq);
        }
        pull(p, t);
        return t;
    }

    template <class F>
    static void query(AccessPool& p, int32_t t, uint64_t lo, uint64_t hi, F& f) {
        while (t >= 0) {
            const AccessNode& n = p.node(t);
            if (n.max_hi <= lo) return;
            query(p, n.left, lo, hi, f);
            if (n.lo >= hi) return;  // the right subtree starts at or after n.lo
            const int32_t right = n.right;
            if (n.hi > lo) f(t);
            t = right;
        }
    }

    int32_t root_ = -1;
    size_t count_ = 0;
};

}  // namespace pto
