// Ready queues and the small allocators of the runtime.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common.hpp"

namespace pto {

// A growable ring deque behind a spin lock. Critical sections are a few instructions, so with a
// handful of workers the lock is almost never contended; head/tail are atomics so that idle workers
// can check emptiness without taking the lock. Capacity is kept between runs.
template <class T>
class RingDeque {
  public:
    RingDeque() : buf_(64) {}

    void push_back(T v) {
        SpinGuard g(lock_);
        uint64_t h = head_.load(std::memory_order_relaxed), t = tail_.load(std::memory_order_relaxed);
        if (t - h == buf_.size()) grow(h, t);
        buf_[t & (buf_.size() - 1)] = v;
        tail_.store(t + 1, std::memory_order_relaxed);
    }

    // Oldest element (FIFO / thieves).
    bool pop_front(T& out) {
        if (empty_approx()) return false;
        SpinGuard g(lock_);
        uint64_t h = head_.load(std::memory_order_relaxed), t = tail_.load(std::memory_order_relaxed);
        if (h == t) return false;
        out = buf_[h & (buf_.size() - 1)];
        head_.store(h + 1, std::memory_order_relaxed);
        return true;
    }

    // Newest element (the owner of a work-stealing deque).
    bool pop_back(T& out) {
        if (empty_approx()) return false;
        SpinGuard g(lock_);
        uint64_t h = head_.load(std::memory_order_relaxed), t = tail_.load(std::memory_order_relaxed);
        if (h == t) return false;
        out = buf_[(t - 1) & (buf_.size() - 1)];
        tail_.store(t - 1, std::memory_order_relaxed);
        return true;
    }

    bool empty_approx() const {
        return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_relaxed);
    }

  private:
    void grow(uint64_t h, uint64_t t) {
        std::vector<T> nb(buf_.size() * 2);
        for (uint64_t i = h; i < t; ++i) nb[i & (nb.size() - 1)] = buf_[i & (buf_.size() - 1)];
        buf_.swap(nb);
    }

    SpinLock lock_;
    std::atomic<uint64_t> head_{0}, tail_{0};
    std::vector<T> buf_;
};

// Bump allocator of fixed-size objects in chunks, reset per run; chunks are kept (no growth across
// runs that need the same amount), and pointers stay valid until reset.
template <class T, size_t kChunk = 1024>
class ChunkArena {
  public:
    T* alloc() {
        size_t c = used_ / kChunk;
        if (c == chunks_.size()) chunks_.emplace_back(new T[kChunk]);
        T* p = &chunks_[c][used_ % kChunk];
        ++used_;
        return p;
    }
    void reset() { used_ = 0; }

  private:
    std::vector<std::unique_ptr<T[]>> chunks_;
    size_t used_ = 0;
};

// Arrays of 2^c elements, recycled through one free list per size class. Used by one thread (the
// submitter). Memory is bounded by the peak number of arrays in use at once, whatever the sizes
// that individual slots happen to need over time.
template <class T>
class SizeClassPool {
  public:
    static constexpr int kClasses = 24;

    T* get(size_t n, int8_t& cls) {
        int c = 0;
        while ((size_t(1) << c) < n) ++c;
        cls = static_cast<int8_t>(c);
        std::vector<T*>& fl = free_[c];
        if (!fl.empty()) {
            T* p = fl.back();
            fl.pop_back();
            return p;
        }
        owned_.emplace_back(new T[size_t(1) << c]);
        return owned_.back().get();
    }

    void put(T* p, int8_t cls) { free_[cls].push_back(p); }

  private:
    std::vector<T*> free_[kClasses];
    std::vector<std::unique_ptr<T[]>> owned_;
};

}  // namespace pto
