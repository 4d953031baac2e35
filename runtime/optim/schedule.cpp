#include "optim/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <numbers>

namespace drun::optim {

json float_json(float v) {
  if (!std::isfinite(v)) return v;  // nlohmann writes null for these, as JSON has no inf/nan
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf) - 1, v);
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

namespace {

json name_json(const std::string& name) {
  return name.empty() ? json(nullptr) : json(name);
}

json wrap(const char* class_name, json config) {
  return json{{"class_name", class_name}, {"config", std::move(config)}};
}

json floats(const std::vector<float>& v) {
  json a = json::array();
  for (float x : v) a.push_back(float_json(x));
  return a;
}

void check_positive_steps(const std::string& owner, const char* key, int64_t v) {
  if (v <= 0) throw UsageError(owner + ": " + key + " must be positive, got " + std::to_string(v));
}

}  // namespace

json Constant::config() const {
  return float_json(lr_);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries,
                                               std::vector<float> values, std::string name)
    : boundaries_(std::move(boundaries)), values_(std::move(values)), name_(std::move(name)) {
  if (values_.size() != boundaries_.size() + 1)
    throw UsageError("PiecewiseConstantDecay: the length of values (" +
                     std::to_string(values_.size()) +
                     ") must be one more than the length of boundaries (" +
                     std::to_string(boundaries_.size()) + ")");
  if (!std::is_sorted(boundaries_.begin(), boundaries_.end()))
    throw UsageError("PiecewiseConstantDecay: boundaries must be in increasing order");
}

float PiecewiseConstantDecay::at(int64_t step) const {
  // The first boundary b with step <= b picks its value; past the last, the last value.
  auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
  return values_[static_cast<size_t>(it - boundaries_.begin())];
}

json PiecewiseConstantDecay::config() const {
  return wrap(
      "PiecewiseConstantDecay",
      {{"boundaries", boundaries_}, {"values", floats(values_)}, {"name", name_json(name_)}});
}

ExponentialDecay::ExponentialDecay(float initial_learning_rate, int64_t decay_steps,
                                   float decay_rate, bool staircase, std::string name)
    : initial_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      staircase_(staircase),
      name_(std::move(name)) {
  check_positive_steps("ExponentialDecay", "decay_steps", decay_steps_);
}

float ExponentialDecay::at(int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return static_cast<float>(initial_ * std::pow(static_cast<double>(decay_rate_), p));
}

json ExponentialDecay::config() const {
  return wrap("ExponentialDecay", {{"initial_learning_rate", float_json(initial_)},
                                   {"decay_steps", decay_steps_},
                                   {"decay_rate", float_json(decay_rate_)},
                                   {"staircase", staircase_},
                                   {"name", name_json(name_)}});
}

CosineDecay::CosineDecay(float initial_learning_rate, int64_t decay_steps, float alpha,
                         std::string name, std::optional<float> warmup_target, int64_t warmup_steps)
    : initial_(initial_learning_rate),
      decay_steps_(decay_steps),
      alpha_(alpha),
      name_(std::move(name)),
      warmup_target_(warmup_target),
      warmup_steps_(warmup_steps) {
  check_positive_steps("CosineDecay", "decay_steps", decay_steps_);
  if (warmup_steps_ < 0)
    throw UsageError("CosineDecay: warmup_steps must not be negative, got " +
                     std::to_string(warmup_steps_));
}

float CosineDecay::at(int64_t step) const {
  const double decay_steps = static_cast<double>(decay_steps_);
  auto decay = [&](double s, double from) {
    const double fraction = s / decay_steps;
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * fraction));
    return from * ((1.0 - alpha_) * cosine + alpha_);
  };
  double s = static_cast<double>(step);
  if (!warmup_target_) return static_cast<float>(decay(std::min(s, decay_steps), initial_));
  const double warmup = static_cast<double>(warmup_steps_);
  const double target = *warmup_target_;
  s = std::min(s, decay_steps + warmup);
  if (s < warmup) return static_cast<float>((target - initial_) * (s / warmup) + initial_);
  return static_cast<float>(decay(s - warmup, target));
}

json CosineDecay::config() const {
  json c = {{"initial_learning_rate", float_json(initial_)},
            {"decay_steps", decay_steps_},
            {"alpha", float_json(alpha_)},
            {"name", name_json(name_)}};
  if (warmup_target_) {
    c["warmup_target"] = float_json(*warmup_target_);
    c["warmup_steps"] = warmup_steps_;
  }
  return wrap("CosineDecay", std::move(c));
}

LinearWarmup::LinearWarmup(std::shared_ptr<Schedule> after_warmup, int64_t warmup_steps,
                           float warmup_learning_rate, std::string name)
    : after_(std::move(after_warmup)),
      warmup_steps_(warmup_steps),
      warmup_lr_(warmup_learning_rate),
      name_(std::move(name)) {
  if (!after_) throw UsageError("LinearWarmup: after_warmup_lr_sched is required");
  if (warmup_steps_ < 0)
    throw UsageError("LinearWarmup: warmup_steps must not be negative, got " +
                     std::to_string(warmup_steps_));
  final_warmup_lr_ = after_->at(warmup_steps_);
}

float LinearWarmup::at(int64_t step) const {
  if (step >= warmup_steps_) return after_->at(step);
  const double fraction = static_cast<double>(step) / static_cast<double>(warmup_steps_);
  return static_cast<float>(warmup_lr_ +
                            (static_cast<double>(final_warmup_lr_) - warmup_lr_) * fraction);
}

json LinearWarmup::config() const {
  return wrap("LinearWarmup", {{"after_warmup_lr_sched", after_->config()},
                               {"warmup_steps", warmup_steps_},
                               {"warmup_learning_rate", float_json(warmup_lr_)},
                               {"name", name_json(name_)}});
}

// The registry ---------------------------------------------------------------

namespace {

// Keras' name of a schedule, which every schedule takes; absent: none.
const Schema& common_options() {
  static const Schema s{{"name", OptionType::string, nullptr, "Keras' name of the schedule"}};
  return s;
}

std::string name_of(Options& o) {
  return o.get<std::string>("name", "");
}

}  // namespace

const ScheduleInfo& piecewise_constant_decay_schedule() {
  static const ScheduleInfo info{
      {{"PiecewiseConstantDecay"},
       "values[i] up to boundaries[i], then the last value",
       {{"boundaries", OptionType::list, kRequired,
         "the steps where the rate changes, increasing (integers)"},
        {"values", OptionType::list, kRequired, "the rates, one more than boundaries (numbers)"}}},
      [](Options& o) {
        return std::make_shared<PiecewiseConstantDecay>(o.get<std::vector<int64_t>>("boundaries"),
                                                        o.get<std::vector<float>>("values"),
                                                        name_of(o));
      }};
  return info;
}

const ScheduleInfo& exponential_decay_schedule() {
  static const ScheduleInfo info{
      {{"ExponentialDecay"},
       "initial_learning_rate * decay_rate ^ (step / decay_steps)",
       {{"initial_learning_rate", OptionType::number, kRequired, "the rate at step 0"},
        {"decay_steps", OptionType::integer, kRequired,
         "steps over which the rate is multiplied by decay_rate (positive)"},
        {"decay_rate", OptionType::number, kRequired, "the factor every decay_steps steps"},
        {"staircase", OptionType::boolean, false,
         "floor the exponent: the rate changes every decay_steps steps"}}},
      [](Options& o) {
        return std::make_shared<ExponentialDecay>(
            o.get<float>("initial_learning_rate"), o.get<int64_t>("decay_steps"),
            o.get<float>("decay_rate"), o.get<bool>("staircase"), name_of(o));
      }};
  return info;
}

const ScheduleInfo& cosine_decay_schedule() {
  static const ScheduleInfo info{
      {{"CosineDecay"},
       "half a cosine from the initial rate down to alpha times it over decay_steps, after an "
       "optional linear warm-up",
       {{"initial_learning_rate", OptionType::number, kRequired,
         "the rate at step 0 (the warm-up's start with warmup_target)"},
        {"decay_steps", OptionType::integer, kRequired, "the length of the decay (positive)"},
        {"alpha", OptionType::number, 0.0, "the final rate as a fraction of the initial one"},
        {"warmup_target", OptionType::number, nullptr,
         "the rate the warm-up reaches and the decay starts from; absent: no warm-up"},
        {"warmup_steps", OptionType::integer, 0, "the length of the warm-up"}}},
      [](Options& o) {
        return std::make_shared<CosineDecay>(o.get<float>("initial_learning_rate"),
                                             o.get<int64_t>("decay_steps"), o.get<float>("alpha"),
                                             name_of(o), o.maybe<float>("warmup_target"),
                                             o.get<int64_t>("warmup_steps"));
      }};
  return info;
}

const ScheduleInfo& linear_warmup_schedule() {
  static const ScheduleInfo info{
      {{"LinearWarmup"},
       "a linear ramp from warmup_learning_rate to another schedule's rate over warmup_steps, "
       "then that schedule (TF Model Garden)",
       {{"after_warmup_lr_sched", OptionType::any, kRequired,
         "the rate after the warm-up: a number or a schedule"},
        {"warmup_steps", OptionType::integer, kRequired, "the length of the warm-up"},
        {"warmup_learning_rate", OptionType::number, 0.0, "the rate at step 0"}}},
      [](Options& o) {
        auto after = make_schedule(o.value("after_warmup_lr_sched"));
        return std::make_shared<LinearWarmup>(std::move(after), o.get<int64_t>("warmup_steps"),
                                              o.get<float>("warmup_learning_rate"), name_of(o));
      }};
  return info;
}

const std::vector<const ScheduleInfo*>& schedule_registry() {
  static const std::vector<ScheduleInfo> infos = with_common_options(
      std::vector<ScheduleInfo>{
#define DRUN_SCHEDULE(id) id##_schedule(),
#include "optim/schedule_list.hpp"
#undef DRUN_SCHEDULE
      },
      common_options());
  static const std::vector<const ScheduleInfo*> pointers = entry_pointers(infos);
  return pointers;
}

std::shared_ptr<Schedule> make_schedule(const json& spec) {
  if (spec.is_number()) return std::make_shared<Constant>(spec.get<float>());
  if (!spec.is_object())
    throw UsageError(
        "learning-rate schedule: expected a number or {class_name = ..., config = {...}}, got " +
        spec.dump());
  Options top(spec, "learning-rate schedule");
  const auto class_name = top.require<std::string>("class_name");
  json config = top.raw("config");
  top.raw("module");  // written by Keras 3; the class name is enough here
  top.raw("registered_name");
  top.finish();

  const ScheduleInfo* info = find_entry(schedule_registry(), class_name);
  if (!info)
    throw UsageError("unknown learning-rate schedule class '" + class_name + "'; valid classes: " +
                     registry_names(schedule_registry()) + " (or a number for a constant rate)");
  // Unknown keys are reported before missing ones: a misspelt key is the likelier mistake.
  Options o(config, info->about.name(), info->about.schema);
  return info->make(o);
}

}  // namespace drun::optim
