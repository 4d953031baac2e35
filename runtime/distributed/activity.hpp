// What this process is doing, for the stall inspector (stall_inspector.hpp):
// the training step it is at, and whether it waits for other ranks and in
// which exchange. Written by the thread that trains, read by the inspector's
// thread: atomics only, no lock, so that reading never waits on a rank that
// is stuck.
#pragma once
#include <cstdint>

namespace drun::distributed::activity {

// The global step the trainer is at.
void set_step(int64_t step);
int64_t step();

// While one lives, this process waits for other ranks in `exchange` (a
// string literal: "MPI_Waitall", "MPI_Bcast"...). Nested scopes keep the outer one.
class Waiting {
 public:
  explicit Waiting(const char* exchange);
  ~Waiting();
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;

 private:
  bool outer_;
};

// The exchange waited in (nullptr: none) and since when (seconds since the epoch).
const char* waiting_in();
double waiting_since();

// Seconds since the epoch, as a double: heartbeats compare it across processes.
double now();

}  // namespace drun::distributed::activity
