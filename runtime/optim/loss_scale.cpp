#include "optim/loss_scale.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/options.hpp"
#include "optim/optimizer.hpp"

namespace drun::optim {

namespace {

bool power_of_two_at_least_one(float v) {
  int exponent = 0;
  return std::isfinite(v) && v >= 1.0f && std::frexp(v, &exponent) == 0.5f;
}

}  // namespace

DynamicLossScale::DynamicLossScale(float initial_scale, int64_t growth_steps)
    : initial_(initial_scale), growth_steps_(growth_steps), scale_(initial_scale) {
  if (!power_of_two_at_least_one(initial_scale))
    throw UsageError("LossScaleOptimizer: initial_scale must be a power of two, at least 1, got " +
                     std::to_string(initial_scale));
  if (growth_steps < 1)
    throw UsageError("LossScaleOptimizer: dynamic_growth_steps must be at least 1, got " +
                     std::to_string(growth_steps));
}

void DynamicLossScale::update(bool finite) {
  if (!finite) {
    // Below 1 the scale would shrink gradients instead: what overflows then
    // overflows without it too, and the steps stay skipped.
    scale_ = std::max(1.0f, scale_ / 2);
    counter_ = 0;
    ++skipped_;
    return;
  }
  if (++counter_ < growth_steps_) return;
  counter_ = 0;
  // Doubling the largest power of two a float holds would give infinity.
  if (scale_ < 0x1p126f) scale_ *= 2;
}

void DynamicLossScale::restore(float scale, int64_t counter) {
  if (!power_of_two_at_least_one(scale) || counter < 0)
    throw UsageError("loss scale " + std::to_string(scale) + " with counter " +
                     std::to_string(counter) + ": not a power of two >= 1 and a count >= 0");
  scale_ = scale;
  counter_ = counter;
}

// Keras' LossScaleOptimizer: not an update rule of its own but another
// optimizer that carries a DynamicLossScale.
const OptimizerInfo& loss_scale_optimizer_optimizer() {
  static const OptimizerInfo info{
      {{"LossScaleOptimizer"},
       "dynamic loss scaling around another optimizer (mixed precision)",
       {{"inner_optimizer", OptionType::any, kRequired,
         "the optimizer that updates the variables, e.g. drun.optim.SGD{...} (not a "
         "LossScaleOptimizer)"},
        {"initial_scale", OptionType::number, DynamicLossScale::kDefaultInitial,
         "the first scale: a power of two, at least 1"},
        {"dynamic_growth_steps", OptionType::integer, DynamicLossScale::kDefaultGrowthSteps,
         "finite steps in a row before the scale doubles"},
        {"name", OptionType::string, nullptr,
         "accepted (Keras writes one); the inner optimizer's name is kept"}}},
      [](const json& config) {
        Options o(config, "LossScaleOptimizer", loss_scale_optimizer_optimizer().about.schema);
        const DynamicLossScale scale(o.get<float>("initial_scale"),
                                     o.get<int64_t>("dynamic_growth_steps"));
        auto inner = make_optimizer(o.value("inner_optimizer"));
        if (inner->dynamic_loss_scale())
          throw UsageError("LossScaleOptimizer: its inner_optimizer is a LossScaleOptimizer too");
        inner->set_dynamic_loss_scale(scale);
        return inner;
      }};
  return info;
}

}  // namespace drun::optim
