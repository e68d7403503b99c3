// pto/sync.hpp -- pipe synchronization. A kernel runs on one CPU thread, in program order, so these
// are no-ops; they exist so generated code keeps the PTO shape.
#pragma once
namespace pto {
enum Pipe { PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_M, PIPE_V, PIPE_S, PIPE_FIX, PIPE_ALL };
enum Event { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
inline void set_flag(Pipe, Pipe, int = 0) {}
inline void wait_flag(Pipe, Pipe, int = 0) {}
inline void pipe_barrier(Pipe = PIPE_ALL) {}
}  // namespace pto
