// TaskPool: a fixed set of threads that run the tasks 0..count-1 of one job at
// a time, the calling thread taking its share, e.g. the images of one batch
// decoded in parallel. Its threads live as long as the pool, so a job costs
// no thread start. A task's exception ends the job and is re-thrown by run().
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace drun::data {

class TaskPool {
 public:
  using Task = std::function<void(int64_t index)>;

  // threads >= 1: the caller of run() is one of them, so 1 starts no thread.
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }
  // Runs task(0) .. task(count - 1), in any order and on any of the threads;
  // returns when all are done. One job at a time: run() is not reentrant.
  void run(int64_t count, const Task& task);

 private:
  void help();
  void work();  // takes tasks of the current job until none is left

  std::mutex mu_;
  std::condition_variable wake_;  // a job started, or the pool is closing
  std::condition_variable done_;  // a helper finished its part of the job
  const Task* task_ = nullptr;
  int64_t count_ = 0;
  int64_t next_ = 0;  // the next task to take
  uint64_t job_ = 0;  // counts jobs, so a helper joins each exactly once
  int busy_ = 0;      // helpers still on the current job
  bool closing_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> helpers_;  // last: they use the members above
};

}  // namespace drun::data
