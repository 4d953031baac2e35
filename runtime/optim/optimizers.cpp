// SGD, Adagrad, Adam and RMSprop: options, slots and the call into the
// backend's update kernels (which run where the variable lives).
#include <cmath>

#include "kernels/ops.hpp"
#include "optim/optimizer.hpp"

namespace drun::optim {

namespace {

void check_range(const Options& o, const char* key, float v, float lo, float hi,
                 bool hi_open = false) {
  const bool ok = v >= lo && (hi_open ? v < hi : v <= hi);
  if (!ok)
    throw UsageError(o.owner() + ": " + key + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + (hi_open ? ")" : "]") + ", got " + std::to_string(v));
}

void check_nonnegative(const Options& o, const char* key, float v) {
  if (!(v >= 0.f))
    throw UsageError(o.owner() + ": " + key + " must not be negative, got " + std::to_string(v));
}

}  // namespace

// SGD -----------------------------------------------------------------------

SGD::SGD(const json& config) : SGD(Options(config, "SGD"), Parsed{}) {}

SGD::SGD(Options&& o, Parsed)
    : Optimizer(o, "SGD", 0.01f),
      momentum_(o.get<float>("momentum", 0.f)),
      nesterov_(o.get<bool>("nesterov", false)) {
  finish(o);
  check_range(o, "momentum", momentum_, 0.f, 1.f);
}

std::vector<Optimizer::SlotSpec> SGD::slot_specs() const {
  if (momentum_ > 0.f) return {{"momentum", 0.f}};
  return {};
}

void SGD::add_config(json& c) const {
  c["momentum"] = float_json(momentum_);
  c["nesterov"] = nesterov_;
}

void SGD::update(const Exec& ex, size_t i, Tensor& w, const Tensor& g, const Tensor& step) {
  if (momentum_ > 0.f)
    kernels::sgd_momentum_update(ex, g, w, slot(i, 0), step, momentum_, nesterov_, decay_of(i));
  else
    kernels::sgd_update(ex, g, w, step, decay_of(i));
}

// Adagrad -------------------------------------------------------------------

Adagrad::Adagrad(const json& config) : Adagrad(Options(config, "Adagrad"), Parsed{}) {}

Adagrad::Adagrad(Options&& o, Parsed)
    : Optimizer(o, "Adagrad", 0.001f),
      initial_accumulator_value_(o.get<float>("initial_accumulator_value", 0.1f)),
      epsilon_(o.get<float>("epsilon", 1e-7f)) {
  finish(o);
  check_nonnegative(o, "initial_accumulator_value", initial_accumulator_value_);
  check_nonnegative(o, "epsilon", epsilon_);
}

std::vector<Optimizer::SlotSpec> Adagrad::slot_specs() const {
  return {{"accumulator", initial_accumulator_value_}};
}

void Adagrad::add_config(json& c) const {
  c["initial_accumulator_value"] = float_json(initial_accumulator_value_);
  c["epsilon"] = float_json(epsilon_);
}

void Adagrad::update(const Exec& ex, size_t i, Tensor& w, const Tensor& g, const Tensor& step) {
  kernels::adagrad_update(ex, g, w, slot(i, 0), step, epsilon_, decay_of(i));
}

// Adam ----------------------------------------------------------------------

Adam::Adam(const json& config) : Adam(Options(config, "Adam"), Parsed{}) {}

Adam::Adam(Options&& o, Parsed)
    : Optimizer(o, "Adam", 0.001f),
      beta_1_(o.get<float>("beta_1", 0.9f)),
      beta_2_(o.get<float>("beta_2", 0.999f)),
      epsilon_(o.get<float>("epsilon", 1e-7f)),
      amsgrad_(o.get<bool>("amsgrad", false)) {
  finish(o);
  check_range(o, "beta_1", beta_1_, 0.f, 1.f, true);
  check_range(o, "beta_2", beta_2_, 0.f, 1.f, true);
  check_nonnegative(o, "epsilon", epsilon_);
}

std::vector<Optimizer::SlotSpec> Adam::slot_specs() const {
  if (amsgrad_) return {{"m", 0.f}, {"v", 0.f}, {"vhat", 0.f}};
  return {{"m", 0.f}, {"v", 0.f}};
}

void Adam::add_config(json& c) const {
  c["beta_1"] = float_json(beta_1_);
  c["beta_2"] = float_json(beta_2_);
  c["epsilon"] = float_json(epsilon_);
  c["amsgrad"] = amsgrad_;
}

float Adam::step_rate(float lr) const {
  // Bias correction folded into the rate, as tf.keras does (t counts from 1).
  const double t = static_cast<double>(iterations() + 1);
  return static_cast<float>(lr * std::sqrt(1.0 - std::pow(static_cast<double>(beta_2_), t)) /
                            (1.0 - std::pow(static_cast<double>(beta_1_), t)));
}

void Adam::update(const Exec& ex, size_t i, Tensor& w, const Tensor& g, const Tensor& step) {
  kernels::adam_update(ex, g, w, slot(i, 0), slot(i, 1), amsgrad_ ? &slot(i, 2) : nullptr, step,
                       beta_1_, beta_2_, epsilon_, decay_of(i));
}

// RMSprop -------------------------------------------------------------------

RMSprop::RMSprop(const json& config) : RMSprop(Options(config, "RMSprop"), Parsed{}) {}

RMSprop::RMSprop(Options&& o, Parsed)
    : Optimizer(o, "RMSprop", 0.001f),
      rho_(o.get<float>("rho", 0.9f)),
      momentum_(o.get<float>("momentum", 0.f)),
      epsilon_(o.get<float>("epsilon", 1e-7f)),
      centered_(o.get<bool>("centered", false)) {
  finish(o);
  check_range(o, "rho", rho_, 0.f, 1.f);
  check_range(o, "momentum", momentum_, 0.f, 1.f);
  check_nonnegative(o, "epsilon", epsilon_);
}

std::vector<Optimizer::SlotSpec> RMSprop::slot_specs() const {
  std::vector<SlotSpec> s{{"rms", 0.f}};
  if (momentum_ > 0.f) s.push_back({"momentum", 0.f});
  if (centered_) s.push_back({"mg", 0.f});
  return s;
}

void RMSprop::add_config(json& c) const {
  c["rho"] = float_json(rho_);
  c["momentum"] = float_json(momentum_);
  c["epsilon"] = float_json(epsilon_);
  c["centered"] = centered_;
}

void RMSprop::update(const Exec& ex, size_t i, Tensor& w, const Tensor& g, const Tensor& step) {
  Tensor& rms = slot(i, 0);
  if (momentum_ > 0.f)
    kernels::rmsprop_momentum_update(ex, g, w, rms, centered_ ? &slot(i, 2) : nullptr, slot(i, 1),
                                     step, rho_, momentum_, epsilon_, decay_of(i));
  else
    kernels::rmsprop_update(ex, g, w, rms, centered_ ? &slot(i, 1) : nullptr, step, rho_, epsilon_,
                            decay_of(i));
}

}  // namespace drun::optim
