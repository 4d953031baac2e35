// Prefetcher: a background thread that makes batches first..end-1 in order into
// a ring of `depth` slots while the training step runs. next() swaps the
// caller's batch into the ring, so depth + 1 batches' tensors circulate, kept
// across epochs: once warm nothing is allocated, and a batch taken by next()
// stays the caller's until its next call of next(). An exception thrown
// while making a batch is re-thrown by next() when that batch is due.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "data/batch.hpp"

namespace drun::data {

class Prefetcher {
 public:
  // Makes batch `index` into `slot`; called on the background thread only.
  using Make = std::function<void(int64_t index, Batch& slot)>;

  explicit Prefetcher(int64_t depth);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Stops any running thread, then produces batches [first, end) with `make`.
  void start(int64_t first, int64_t end, Make make);
  // Joins the thread; batches made but not taken are dropped.
  void stop();
  // Swaps the next batch into out (out's old tensors go back to the ring, to
  // be overwritten); false after end-1.
  bool next(Batch& out);

 private:
  void run(int64_t first, const Make& make);

  std::vector<Batch> slots_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t produced_ = 0;  // batches [.., produced_) are ready in their slots
  int64_t consumed_ = 0;  // the next batch next() returns
  int64_t end_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it must not outlive the members above
};

}  // namespace drun::data
