#include "train/nan_guard.hpp"

#include <cmath>

#include "train/hook_registry.hpp"
#include "train/trainer.hpp"

namespace drun::train {

const HookInfo& nan_guard_hook() {
  static const HookInfo info{
      {{"NanGuard"},
       "stops the job on a NaN or infinite loss, naming the step and the first layer whose output "
       "is not finite",
       {}},
      [](Options&) { return std::make_unique<NanGuard>(); }};
  return info;
}

bool NanGuard::after_step(const StepResult& step) {
  if (std::isfinite(step.loss())) return false;
  std::string where = "no layer output is non-finite (the loss itself overflowed)";
  for (const auto& node : trainer_->model().nodes()) {
    const Tensor& out = node.layer->output();
    if (!out.defined()) continue;
    // Held by name: a range-for over out.to(cpu).span_f32() would read a GPU
    // output's host copy after its end (found by AddressSanitizer).
    const Tensor host = out.to(Device::cpu);
    bool bad = false;
    for (float v : host.span_f32()) bad = bad || !std::isfinite(v);
    if (bad) {
      where = "first non-finite output: layer '" + node.layer->name() + "' (" + node.layer->kind() +
              ")";
      break;
    }
  }
  throw UsageError("NanGuard: the loss is " + std::to_string(step.loss()) + " at step " +
                   std::to_string(step.global_step) + "; " + where + " (lower the learning rate?)");
}

}  // namespace drun::train
