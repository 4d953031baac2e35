// SGD, Adagrad, Adam and RMSprop: their registry entries (names, options and
// defaults), slots and the call into the backend's update kernels (which run
// where the variable lives).
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

const OptimizerInfo& sgd_optimizer() {
  static const OptimizerInfo info{
      {{"SGD", "sgd"},
       "gradient descent, with momentum and Nesterov's momentum",
       optimizer_options(0.01f, {{"momentum", OptionType::number, 0.0,
                                  "in [0, 1]: the velocity's decay (0: plain gradient descent)"},
                                 {"nesterov", OptionType::boolean, false, "Nesterov's momentum"}})},
      [](const json& config) { return std::make_unique<SGD>(config); }};
  return info;
}

SGD::SGD(const json& config)
    : SGD(Options(config, "SGD", sgd_optimizer().about.schema), Parsed{}) {}

SGD::SGD(Options&& o, Parsed)
    : Optimizer(o, "SGD"), momentum_(o.get<float>("momentum")), nesterov_(o.get<bool>("nesterov")) {
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

const OptimizerInfo& adagrad_optimizer() {
  static const OptimizerInfo info{
      {{"Adagrad", "adagrad"},
       "per-coordinate rates: the step divided by the root of the summed squared gradients",
       optimizer_options(0.001f, {{"initial_accumulator_value", OptionType::number, 0.1,
                                   "what the sums of squared gradients start from (>= 0)"},
                                  {"epsilon", OptionType::number, 1e-7,
                                   "added to the root for stability (>= 0)"}})},
      [](const json& config) { return std::make_unique<Adagrad>(config); }};
  return info;
}

Adagrad::Adagrad(const json& config)
    : Adagrad(Options(config, "Adagrad", adagrad_optimizer().about.schema), Parsed{}) {}

Adagrad::Adagrad(Options&& o, Parsed)
    : Optimizer(o, "Adagrad"),
      initial_accumulator_value_(o.get<float>("initial_accumulator_value")),
      epsilon_(o.get<float>("epsilon")) {
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

namespace {
// Adam's and AdamW's own options.
Schema adam_own_options() {
  return {
      {"beta_1", OptionType::number, 0.9, "in [0, 1): the decay of the gradient's mean"},
      {"beta_2", OptionType::number, 0.999, "in [0, 1): the decay of the squared gradient's mean"},
      {"epsilon", OptionType::number, 1e-7, "added to the root for stability (>= 0)"},
      {"amsgrad", OptionType::boolean, false,
       "AMSGrad: divide by the largest squared-gradient mean so far"}};
}
}  // namespace

const OptimizerInfo& adam_optimizer() {
  static const OptimizerInfo info{
      {{"Adam", "adam"},
       "Adam: steps from bias-corrected running means of the gradient and its square",
       optimizer_options(0.001f, adam_own_options())},
      [](const json& config) { return std::make_unique<Adam>(config); }};
  return info;
}

Adam::Adam(const json& config)
    : Adam(Options(config, "Adam", adam_optimizer().about.schema), "Adam", Parsed{}) {}

Adam::Adam(Options&& o, std::string class_name, Parsed)
    : Optimizer(o, std::move(class_name)),
      beta_1_(o.get<float>("beta_1")),
      beta_2_(o.get<float>("beta_2")),
      one_minus_beta_1_(static_cast<float>(1.0 - o.get<double>("beta_1"))),
      one_minus_beta_2_(static_cast<float>(1.0 - o.get<double>("beta_2"))),
      epsilon_(o.get<float>("epsilon")),
      amsgrad_(o.get<bool>("amsgrad")) {
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
  // Bias correction folded into the rate in float32, as Keras 3 computes it
  // (t counts updates from 1).
  const float t = static_cast<float>(updates() + 1);
  return lr * std::sqrt(1.f - std::pow(beta_2_, t)) / (1.f - std::pow(beta_1_, t));
}

void Adam::update(const Exec& ex, size_t i, Tensor& w, const Tensor& g, const Tensor& step) {
  kernels::adam_update(ex, g, w, slot(i, 0), slot(i, 1), amsgrad_ ? &slot(i, 2) : nullptr, step,
                       one_minus_beta_1_, one_minus_beta_2_, epsilon_, decay_of(i));
}

// AdamW ---------------------------------------------------------------------

const OptimizerInfo& adamw_optimizer() {
  static const OptimizerInfo info{
      {{"AdamW", "adamw"},
       "Adam with Keras' decoupled weight decay (0.004 by default)",
       optimizer_options(0.001f, adam_own_options(), 0.004f)},
      [](const json& config) { return std::make_unique<AdamW>(config); }};
  return info;
}

AdamW::AdamW(const json& config)
    : Adam(Options(config, "AdamW", adamw_optimizer().about.schema), "AdamW", Parsed{}) {}

void AdamW::add_config(json& c) const {
  Adam::add_config(c);
  c["weight_decay"] = float_json(weight_decay());
}

// RMSprop -------------------------------------------------------------------

const OptimizerInfo& rmsprop_optimizer() {
  static const OptimizerInfo info{
      {{"RMSprop", "RMSProp", "rmsprop"},
       "steps divided by the root of a running mean of the squared gradient",
       optimizer_options(
           0.001f,
           {{"rho", OptionType::number, 0.9, "in [0, 1]: the decay of the squared gradient's mean"},
            {"momentum", OptionType::number, 0.0, "in [0, 1]: momentum on the steps"},
            {"epsilon", OptionType::number, 1e-7, "added for stability (>= 0)"},
            {"centered", OptionType::boolean, false,
             "divide by the gradient's variance instead of its second moment"}})},
      [](const json& config) { return std::make_unique<RMSprop>(config); }};
  return info;
}

RMSprop::RMSprop(const json& config)
    : RMSprop(Options(config, "RMSprop", rmsprop_optimizer().about.schema), Parsed{}) {}

RMSprop::RMSprop(Options&& o, Parsed)
    : Optimizer(o, "RMSprop"),
      rho_(o.get<float>("rho")),
      momentum_(o.get<float>("momentum")),
      epsilon_(o.get<float>("epsilon")),
      centered_(o.get<bool>("centered")) {
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
