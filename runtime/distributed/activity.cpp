#include "distributed/activity.hpp"

#include <atomic>
#include <chrono>

namespace drun::distributed::activity {
namespace {

std::atomic<int64_t> step_{0};
std::atomic<const char*> exchange_{nullptr};
std::atomic<double> since_{0.0};

}  // namespace

void set_step(int64_t step) {
  step_.store(step, std::memory_order_relaxed);
}
int64_t step() {
  return step_.load(std::memory_order_relaxed);
}

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Waiting::Waiting(const char* exchange) : outer_(exchange_.load() == nullptr) {
  if (!outer_) return;
  since_.store(now());
  exchange_.store(exchange);
}

Waiting::~Waiting() {
  if (outer_) exchange_.store(nullptr);
}

const char* waiting_in() {
  return exchange_.load();
}
double waiting_since() {
  return since_.load();
}

}  // namespace drun::distributed::activity
