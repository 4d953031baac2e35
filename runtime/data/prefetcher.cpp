// The producer/consumer ring behind Prefetcher. Slot i % depth holds batch i;
// the producer writes a slot only after the consumer has moved past it, and the
// consumer takes one only after the producer has published it, so neither
// touches a slot's tensors under the lock. The consumer swaps its batch with
// the slot rather than copying it: on a 16-core Xeon the copy of a batch of 256
// images, on the training thread while the other cores waited, was 7 % of the
// seed CNN's step.
#include "data/prefetcher.hpp"

#include <utility>

namespace drun::data {

Prefetcher::Prefetcher(int64_t depth) : slots_(static_cast<size_t>(depth)) {}

Prefetcher::~Prefetcher() {
  stop();
}

void Prefetcher::start(int64_t first, int64_t end, Make make) {
  stop();
  {
    std::lock_guard lock(mu_);
    produced_ = consumed_ = first;
    end_ = end;
    stopping_ = false;
    error_ = nullptr;
  }
  thread_ = std::thread([this, first, make = std::move(make)] { run(first, make); });
}

void Prefetcher::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Prefetcher::run(int64_t first, const Make& make) {
  const auto depth = static_cast<int64_t>(slots_.size());
  for (int64_t i = first;; ++i) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || i >= end_ || i - consumed_ < depth; });
      if (stopping_ || i >= end_) return;
    }
    try {
      make(i, slots_[static_cast<size_t>(i % depth)]);
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mu_);
      produced_ = i + 1;
    }
    cv_.notify_all();
  }
}

bool Prefetcher::next(Batch& out) {
  int64_t index;
  {
    std::unique_lock lock(mu_);
    if (consumed_ >= end_) return false;
    cv_.wait(lock, [&] { return produced_ > consumed_ || error_ || !thread_.joinable(); });
    if (produced_ <= consumed_) {
      if (error_) std::rethrow_exception(error_);
      return false;  // stopped before this batch was made
    }
    index = consumed_;
  }
  std::swap(slots_[static_cast<size_t>(index % static_cast<int64_t>(slots_.size()))], out);
  {
    std::lock_guard lock(mu_);
    consumed_ = index + 1;
  }
  cv_.notify_all();
  return true;
}

}  // namespace drun::data
