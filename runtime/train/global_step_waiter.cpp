#include "train/global_step_waiter.hpp"

#include <chrono>
#include <cstdio>
#include <limits>
#include <thread>

#include "train/hook_registry.hpp"
#include "train/trainer.hpp"

namespace drun::train {

const HookInfo& global_step_waiter_hook() {
  static const HookInfo info{
      {{"GlobalStepWaiterHook"},
       "before its first step the worker waits until the parameter servers have applied so many "
       "updates",
       {{"wait_until_step", OptionType::integer, kRequired, "the global step to wait for (>= 0)"}}},
      [](Options& o) {
        const auto wait = o.get<int64_t>("wait_until_step");
        if (wait < 0)
          throw UsageError("GlobalStepWaiterHook: wait_until_step must be a number >= 0, got " +
                           std::to_string(wait));
        return std::make_unique<GlobalStepWaiter>(wait);
      }};
  return info;
}

void GlobalStepWaiter::before_step(int64_t global_step) {
  if (waited_ || wait_until_ <= 0) return;
  waited_ = true;
  distributed::Strategy* strategy = trainer_->strategy();
  const auto params = trainer_->model().params();
  auto step = strategy ? strategy->shared_global_step(params) : std::nullopt;
  if (!step) {
    if (global_step >= wait_until_) return;
    throw UsageError("GlobalStepWaiterHook: wait_until_step " + std::to_string(wait_until_) +
                     " needs a parameter-server strategy; here every worker counts its own "
                     "steps and this one is at " +
                     std::to_string(global_step));
  }
  const auto start = std::chrono::steady_clock::now();
  while (*step < wait_until_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    step = strategy->shared_global_step(params);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (*step == std::numeric_limits<int64_t>::max())
    std::printf("GlobalStepWaiterHook: the chief finished before global step %lld; going on\n",
                static_cast<long long>(wait_until_));
  else
    std::printf("GlobalStepWaiterHook: global step %lld >= %lld after %.2f s\n",
                static_cast<long long>(*step), static_cast<long long>(wait_until_), secs);
  std::fflush(stdout);
}

}  // namespace drun::train
