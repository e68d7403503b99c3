// Small shared utilities of the PyPTO task runtime: spin lock, clock, pause, message formatting.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "pto_runtime.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define PTO_EXPORT extern "C" __attribute__((visibility("default")))

namespace pto {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Test-and-test-and-set lock for tiny critical sections (queue push/pop).
class SpinLock {
  public:
    void lock() {
        for (;;) {
            if (!flag_.exchange(true, std::memory_order_acquire)) return;
            int n = 0;
            while (flag_.load(std::memory_order_relaxed)) {
                if (++n < 64) {
                    cpu_relax();
                } else {
                    std::this_thread::yield();
                    n = 0;
                }
            }
        }
    }
    void unlock() { flag_.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> flag_{false};
};

struct SpinGuard {
    explicit SpinGuard(SpinLock& l) : l_(l) { l_.lock(); }
    ~SpinGuard() { l_.unlock(); }
    SpinGuard(const SpinGuard&) = delete;
    SpinGuard& operator=(const SpinGuard&) = delete;
    SpinLock& l_;
};

// printf into a std::string.
inline std::string strfmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strfmt(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return std::string("(unformattable message)");
    if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
    std::string s(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(&s[0], s.size(), fmt, ap);
    va_end(ap);
    s.resize(static_cast<size_t>(n));
    return s;
}

// Copy `msg` into a caller buffer of `len` bytes, always NUL-terminated.
inline void copy_message(const std::string& msg, char* out, int32_t len) {
    if (!out || len <= 0) return;
    size_t n = msg.size() < static_cast<size_t>(len - 1) ? msg.size() : static_cast<size_t>(len - 1);
    std::memcpy(out, msg.data(), n);
    out[n] = '\0';
}

}  // namespace pto
