// Per-root-buffer access lists: who reads and writes which region, for dependency derivation.
//
// Only the submitting thread touches these structures. An entry names its task by (slot, id):
// task slots are recycled, so an entry whose slot now holds another id belongs to a finished task.
// The lists stay small because (a) entries of finished tasks are dropped whenever a query meets
// them, and by a full sweep whenever a list has doubled since the last one (amortised O(1)),
// (b) a new write that covers an earlier access makes that entry redundant (every later access
// that would conflict with it conflicts with the covering write, which is ordered after it), and
// (c) a write is recorded only among the writers (it conflicts with every later access), reads
// only among the readers, which new reads never need to look at. Entries are kept in interval
// treaps, so a query costs O(log n + overlapping entries).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "intervals.hpp"
#include "region.hpp"

namespace pto {

struct AccessList {
    void* root = nullptr;
    int64_t nbytes = 0;
    AccessTreap writers;
    AccessTreap readers;
    size_t sweep_writers_at = 64;
    size_t sweep_readers_at = 64;

    void reset(void* r, int64_t n) {
        root = r;
        nbytes = n;
        writers.clear();
        readers.clear();
        sweep_writers_at = sweep_readers_at = 64;
    }
};

// Maps a root pointer to its AccessList (open addressing), and keeps the roots of the run sorted by
// address to reject overlapping distinct roots. Everything is reused from run to run.
class RootTable {
  public:
    // The list of `root`, registering it on first use. nullptr with a message in `err` if the root
    // conflicts with another one.
    AccessList* find_or_add(void* root, int64_t nbytes, std::string& err) {
        if (table_.empty()) rehash(64);
        size_t mask = table_.size() - 1;
        size_t h = hash(root) & mask;
        while (table_[h].key) {
            if (table_[h].key == root) {
                AccessList* l = &lists_[table_[h].index];
                if (l->nbytes != nbytes) {
                    err = strfmt("root buffer %p is named with two sizes (%lld and %lld bytes); every "
                                 "view of one allocation must give the same root and root_nbytes",
                                 root, static_cast<long long>(l->nbytes), static_cast<long long>(nbytes));
                    return nullptr;
                }
                return l;
            }
            h = (h + 1) & mask;
        }
        if (!check_disjoint(root, nbytes, err)) return nullptr;
        if (used_ == lists_.size()) lists_.emplace_back();
        AccessList* l = &lists_[used_];
        l->reset(root, nbytes);
        table_[h] = {root, static_cast<int32_t>(used_)};
        ++used_;
        if (used_ * 2 > table_.size()) rehash(table_.size() * 2);
        return l;
    }

    AccessList* find(void* root) {
        if (table_.empty()) return nullptr;
        size_t mask = table_.size() - 1;
        for (size_t h = hash(root) & mask; table_[h].key; h = (h + 1) & mask) {
            if (table_[h].key == root) return &lists_[table_[h].index];
        }
        return nullptr;
    }

    AccessPool& pool() { return pool_; }

    void reset() {
        pool_.reset();
        for (auto& s : table_) s = {nullptr, 0};
        for (size_t i = 0; i < used_; ++i) lists_[i].reset(nullptr, 0);
        used_ = 0;
        sorted_.clear();
    }

    size_t size() const { return used_; }

  private:
    struct Slot {
        void* key;
        int32_t index;
    };
    struct Range {
        uintptr_t lo, hi;
    };

    static size_t hash(void* p) {
        uint64_t x = reinterpret_cast<uintptr_t>(p);
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        return static_cast<size_t>(x);
    }

    void rehash(size_t cap) {
        std::vector<Slot> old;
        old.swap(table_);
        table_.assign(cap, Slot{nullptr, 0});
        for (const Slot& s : old) {
            if (!s.key) continue;
            size_t h = hash(s.key) & (cap - 1);
            while (table_[h].key) h = (h + 1) & (cap - 1);
            table_[h] = s;
        }
    }

    bool check_disjoint(void* root, int64_t nbytes, std::string& err) {
        Range r{reinterpret_cast<uintptr_t>(root), reinterpret_cast<uintptr_t>(root) + static_cast<uint64_t>(nbytes)};
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), r,
                                   [](const Range& a, const Range& b) { return a.lo < b.lo; });
        const Range* clash = nullptr;
        if (it != sorted_.end() && it->lo < r.hi) clash = &*it;
        if (!clash && it != sorted_.begin() && (it - 1)->hi > r.lo) clash = &*(it - 1);
        if (clash) {
            err = strfmt("root buffers [%p, +%lld) and [%p, +%lld) overlap; views of one allocation "
                         "must all name the same root",
                         root, static_cast<long long>(nbytes), reinterpret_cast<void*>(clash->lo),
                         static_cast<long long>(clash->hi - clash->lo));
            return false;
        }
        sorted_.insert(it, r);
        return true;
    }

    std::vector<Slot> table_;
    std::deque<AccessList> lists_;  // deque: pointers stay valid as it grows
    size_t used_ = 0;
    std::vector<Range> sorted_;
    AccessPool pool_;
};

}  // namespace pto
