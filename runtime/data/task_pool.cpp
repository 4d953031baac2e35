// Tasks are handed out one at a time under the lock: a task here (decoding an
// image) takes milliseconds, so the lock is never what limits the pool.
#include "data/task_pool.hpp"

#include <stdexcept>
#include <utility>

namespace drun::data {

TaskPool::TaskPool(int threads) {
  if (threads < 1) throw std::invalid_argument("TaskPool: threads must be >= 1");
  helpers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { help(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void TaskPool::run(int64_t count, const Task& task) {
  {
    std::lock_guard lock(mu_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    error_ = nullptr;
    busy_ = static_cast<int>(helpers_.size());
    ++job_;
  }
  wake_.notify_all();
  work();
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return busy_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void TaskPool::help() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return closing_ || job_ != seen; });
      if (closing_) return;
      seen = job_;
    }
    work();
    {
      std::lock_guard lock(mu_);
      --busy_;
    }
    done_.notify_one();
  }
}

void TaskPool::work() {
  for (;;) {
    int64_t index;
    const Task* task;
    {
      std::lock_guard lock(mu_);
      if (next_ >= count_) return;
      index = next_++;
      task = task_;
    }
    try {
      (*task)(index);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_ = count_;  // the job has failed: start no more of its tasks
    }
  }
}

}  // namespace drun::data
