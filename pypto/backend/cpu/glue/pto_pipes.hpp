// pto_pipes.hpp -- cross-core pipes (pto.tpush / pto.tpop) for the blocks of one Group call.
//
// A Group call is a grid whose blocks run at once (PTO_TASK_SYNC): block 0 is the cube (AIC), blocks
// 1.. the vector lanes. Its blocks find one Grid through the grid's barrier pointer (the same for
// every block of a grid, unique among running grids). A pipe is an unbounded FIFO per (direction,
// id, lane) of row-major tile copies; a push never waits. A pop waits for its tile; when every block
// still running waits too (or has finished), no push can come and the pop fails naming the pipe.
// Split (pto-isa TileSplitAxis) with two vector lanes: 1 cuts rows, 2 cuts columns between the lanes
// and joins the lanes' halves for the cube; 0 gives each lane the whole tile (the cube takes lane
// 0's). One vector lane: the whole tile travels. (The interpreter's pipes.py is the same model.)
#ifndef PTO_PIPES_HPP
#define PTO_PIPES_HPP

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace glue::pipes {

enum Dir { C2V = 0, V2C = 1 };

struct Entry {
  int rows = 0, cols = 0, vr = 0, vc = 0, esz = 0;
  std::vector<unsigned char> data;  // rows x cols, row-major
};

struct Grid {
  std::mutex m;
  std::condition_variable cv;
  int alive = 0;
  std::set<long> waiting;  // blocks that wait with nothing pushed since (a push clears it)
  bool failed = false;
  std::map<std::tuple<int, int, int>, std::deque<Entry>> q;  // (dir, id, lane)
};

inline std::mutex& registry_mutex() { static std::mutex m; return m; }
inline std::map<const void*, std::shared_ptr<Grid>>& registry() {
  static std::map<const void*, std::shared_ptr<Grid>> r;
  return r;
}

inline char* msg_buf() { thread_local char buf[640]; return buf; }

// One per block of a kernel with pipe ops: joins its grid's pipes; leaving (any return) marks it done.
struct Block {
  std::shared_ptr<Grid> g;
  const void* key = nullptr;
  long idx = 0, n = 1;
  Block(long key_bits, long block, long nblocks) : idx(block), n(nblocks) {
    key = reinterpret_cast<const void*>(static_cast<intptr_t>(key_bits));
    if (!key || nblocks < 2) return;
    std::lock_guard<std::mutex> l(registry_mutex());
    auto& p = registry()[key];
    if (!p) { p = std::make_shared<Grid>(); p->alive = int(nblocks); }
    g = p;
  }
  ~Block() {
    if (!g) return;
    int left;
    { std::lock_guard<std::mutex> l(g->m); left = --g->alive; }
    g->cv.notify_all();
    if (left == 0) {
      std::lock_guard<std::mutex> l(registry_mutex());
      auto it = registry().find(key);
      if (it != registry().end() && it->second == g) registry().erase(it);
    }
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
};

inline std::string depths(const Grid& g) {
  std::string s;
  char b[96];
  for (const auto& [k, v] : g.q) {
    std::snprintf(b, sizeof b, "%s%s[id %d, lane %d]: %zu", s.empty() ? "" : ", ", std::get<0>(k) == C2V ? "c2v" : "v2c",
                  std::get<1>(k), std::get<2>(k), v.size());
    s += b;
  }
  return s.empty() ? "all empty" : s;
}

// Wait until every key has an entry; take one from each. Returns an error message or nullptr.
inline const char* take(Block& b, const std::vector<std::tuple<int, int, int>>& keys, const char* what,
                        std::vector<Entry>& out) {
  Grid& g = *b.g;
  std::unique_lock<std::mutex> l(g.m);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    bool ready = true;
    for (const auto& k : keys) {
      auto it = g.q.find(k);
      if (it == g.q.end() || it->second.empty()) { ready = false; break; }
    }
    if (ready) break;
    if (g.failed) {
      g.waiting.erase(b.idx);
      std::snprintf(msg_buf(), 640, "%s: stopped waiting (another block of the group failed)", what);
      return msg_buf();
    }
    size_t others = g.waiting.size() - g.waiting.count(b.idx);
    if (long(others) + 1 >= g.alive) {
      g.failed = true;
      g.cv.notify_all();
      std::snprintf(msg_buf(), 640, "%s waits for a tile that no block will push: every other block of the group "
                    "has finished or is waiting too (pipe depths: %s)", what, depths(g).c_str());
      return msg_buf();
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {  // (a safety net)
      g.failed = true;
      g.cv.notify_all();
      std::snprintf(msg_buf(), 640, "%s: no tile after 120 s (pipe depths: %s)", what, depths(g).c_str());
      return msg_buf();
    }
    g.waiting.insert(b.idx);
    g.cv.wait_for(l, std::chrono::milliseconds(200));
  }
  g.waiting.erase(b.idx);
  for (const auto& k : keys) {
    auto& d = g.q[k];
    out.push_back(std::move(d.front()));
    d.pop_front();
  }
  return nullptr;
}

inline void put(Block& b, std::tuple<int, int, int> key, Entry e) {
  { std::lock_guard<std::mutex> l(b.g->m); b.g->q[key].push_back(std::move(e)); b.g->waiting.clear(); }
  b.g->cv.notify_all();
}

template <class TileT> Entry copy_out(const TileT& t, int r0, int c0, int rows, int cols, int vr, int vc) {
  using T = typename TileT::value_type;
  Entry e;
  e.rows = rows; e.cols = cols; e.vr = vr; e.vc = vc; e.esz = int(sizeof(T));
  e.data.resize(size_t(rows) * cols * sizeof(T));
  T* d = reinterpret_cast<T*>(e.data.data());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) d[long(r) * cols + c] = t.at(r0 + r, c0 + c);
  return e;
}

inline const char* side_error(const Block& b, bool cube_op, const char* what) {
  if (!b.g) {
    std::snprintf(msg_buf(), 640, "%s: a pipe op outside a Group function (the pipe has no peer); call the cube "
                  "and vector functions from a pl.FunctionType.Group function", what);
    return msg_buf();
  }
  if ((b.idx == 0) != cube_op) {
    std::snprintf(msg_buf(), 640, "%s runs on the %s side, but block %ld is %s", what, cube_op ? "cube" : "vector",
                  b.idx, b.idx == 0 ? "the cube" : "a vector lane");
    return msg_buf();
  }
  return nullptr;
}

template <class TileT> const char* push(Block& b, int dir, int id, int split, const TileT& t, const char* what) {
  if (const char* e = side_error(b, dir == C2V, what)) return e;
  const int R = TileT::Rows, C = TileT::Cols;
  const int lanes = int(b.n - 1), lane = int(b.idx - 1);
  if (dir == V2C) { put(b, {V2C, id, lane}, copy_out(t, 0, 0, R, C, t.vr, t.vc)); return nullptr; }
  if (split == 0 || lanes == 1) {
    for (int l = 0; l < lanes; ++l) put(b, {C2V, id, l}, copy_out(t, 0, 0, R, C, t.vr, t.vc));
    return nullptr;
  }
  const bool rows = split == 1;
  const int n = rows ? R : C, h = n / 2;
  if (n % 2) {
    std::snprintf(msg_buf(), 640, "%s: split %d halves %s, but the tile has %d", what, split, rows ? "rows" : "columns", n);
    return msg_buf();
  }
  for (int l = 0; l < 2; ++l) {
    const int v = std::min(std::max((rows ? t.vr : t.vc) - l * h, 0), h);
    put(b, {C2V, id, l}, rows ? copy_out(t, l * h, 0, h, C, v, t.vc) : copy_out(t, 0, l * h, R, h, t.vr, v));
  }
  return nullptr;
}

template <class TileT> const char* pop(Block& b, int dir, int id, int split, TileT& t, const char* what) {
  using T = typename TileT::value_type;
  if (const char* e = side_error(b, dir == V2C, what)) return e;
  const int R = TileT::Rows, C = TileT::Cols;
  const int lanes = int(b.n - 1), lane = int(b.idx - 1);
  std::vector<Entry> got;
  const char* err = nullptr;
  if (dir == C2V) {
    err = take(b, {{C2V, id, lane}}, what, got);
  } else {
    std::vector<std::tuple<int, int, int>> keys;
    for (int l = 0; l < lanes; ++l) keys.emplace_back(V2C, id, l);
    err = take(b, keys, what, got);
  }
  if (err) return err;
  // the tile this pop receives: one entry, or the two lanes' halves joined
  int rows = got[0].rows, cols = got[0].cols;
  const bool join = dir == V2C && lanes == 2 && split != 0;
  if (join) {
    if (split == 1) rows += got[1].rows; else cols += got[1].cols;
  }
  if (rows != R || cols != C || got[0].esz != int(sizeof(T))) {
    std::snprintf(msg_buf(), 640, "%s: the pipe holds a [%d, %d] tile of %d-byte elements, the pop is declared [%d, %d] "
                  "of %d-byte elements", what, rows, cols, got[0].esz, R, C, int(sizeof(T)));
    return msg_buf();
  }
  const int parts = join ? 2 : 1;
  for (int p = 0; p < parts; ++p) {
    const Entry& e = got[size_t(p)];
    const T* s = reinterpret_cast<const T*>(e.data.data());
    const int r0 = join && split == 1 ? p * got[0].rows : 0, c0 = join && split == 2 ? p * got[0].cols : 0;
    for (int r = 0; r < e.rows; ++r)
      for (int c = 0; c < e.cols; ++c) t.at(r0 + r, c0 + c) = s[long(r) * e.cols + c];
  }
  return nullptr;
}

}  // namespace glue::pipes

#endif  // PTO_PIPES_HPP
