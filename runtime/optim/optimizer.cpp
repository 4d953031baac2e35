#include "optim/optimizer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string_view>

#include "base/did_you_mean.hpp"

namespace drun::optim {

namespace {

// "dense/kernel:0" -> "dense/kernel"
std::string_view strip_suffix(std::string_view name) {
  auto colon = name.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == name.size()) return name;
  for (size_t i = colon + 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, colon);
}

}  // namespace

Schema optimizer_options(float default_learning_rate, const Schema& own,
                         float default_weight_decay) {
  const Schema first{{"learning_rate", OptionType::any, float_json(default_learning_rate),
                      "a number or a schedule (optim/schedule.hpp)"}};
  const Schema common{
      {"decay", OptionType::number, 0.0,
       "Keras 2's legacy inverse-time decay: lr / (1 + decay * iterations)"},
      {"weight_decay", OptionType::number, float_json(default_weight_decay),
       "Keras' decoupled decay of every trainable variable before the update: w -= lr * "
       "weight_decay * w"},
      {"clipnorm", OptionType::number, nullptr,
       "clip each variable's gradient to this L2 norm (Keras' clipnorm)"},
      {"clipvalue", OptionType::number, nullptr,
       "clip every gradient value to [-clipvalue, clipvalue]"},
      {"global_clipnorm", OptionType::number, nullptr,
       "clip the gradients to this L2 norm taken over all of them together"},
      {"gradient_accumulation_steps", OptionType::integer, nullptr,
       "Keras 3's: one exchange and one update, with the mean gradient, per this many batches "
       "(nil or 1: every batch)"},
      {"name", OptionType::string, nullptr, "Keras' name of the optimizer (default: its class)"}};
  return first.with(own).with(common);
}

bool is_class_name(const std::string& name) {
  return !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
}

Optimizer::Optimizer(Options& o, std::string class_name) : class_name_(std::move(class_name)) {
  name_ = o.get<std::string>("name", class_name_);
  try {
    schedule_ = make_schedule(o.value("learning_rate"));
  } catch (const UsageError& e) {
    throw UsageError(o.owner() + ": learning_rate: " + e.what());
  }
  decay_ = o.get<float>("decay");
  weight_decay_ = o.get<float>("weight_decay");
  if (const std::optional<int64_t> k = o.maybe<int64_t>("gradient_accumulation_steps")) {
    if (*k < 1)
      throw UsageError(o.owner() + ": gradient_accumulation_steps must be at least 1, got " +
                       std::to_string(*k));
    accumulation_steps_ = *k;
  }
  // Keras' rule: at most one of the three; a value <= 0 clips nothing.
  int given = 0;
  for (const auto& [key, kind] :
       {std::pair{"clipnorm", kernels::GradientClip::norm},
        std::pair{"clipvalue", kernels::GradientClip::value},
        std::pair{"global_clipnorm", kernels::GradientClip::global_norm}}) {
    const std::optional<float> limit = o.maybe<float>(key);
    if (!limit) continue;
    if (++given > 1)
      throw UsageError(o.owner() +
                       ": only one of clipnorm, clipvalue and global_clipnorm can be set, got " +
                       o.raw("clipnorm").dump() + ", " + o.raw("clipvalue").dump() + ", " +
                       o.raw("global_clipnorm").dump());
    if (!(*limit >= 0.f))
      throw UsageError(o.owner() + ": " + key + " must not be negative, got " +
                       std::to_string(*limit));
    clip_ = Clip{kind, *limit, key};
  }
}

void Optimizer::finish(Options& o) const {
  o.finish();
  if (!(decay_ >= 0.f))
    throw UsageError(o.owner() + ": decay must not be negative, got " + std::to_string(decay_));
  if (!(weight_decay_ >= 0.f))
    throw UsageError(o.owner() + ": weight_decay must not be negative, got " +
                     std::to_string(weight_decay_));
}

void Optimizer::set_learning_rate(float lr) {
  schedule_ = std::make_shared<Constant>(lr);
}

float Optimizer::current_lr() const {
  float lr = schedule_->at(iterations_) * lr_scale_;
  if (decay_ > 0.f)
    lr = static_cast<float>(lr /
                            (1.0 + static_cast<double>(decay_) * static_cast<double>(iterations_)));
  return lr;
}

void Optimizer::make_slots(Var& v, const Param& p) {
  if (p.value.dtype() != DType::f32)
    throw std::invalid_argument(class_name_ + ": variable '" + p.name + "' is " +
                                dtype_name(p.value.dtype()) + ", optimizers update float32");
  v.slots.clear();
  for (const SlotSpec& s : specs_) {
    Tensor t(p.value.shape(), DType::f32, p.value.device());
    t.fill(s.initial);
    v.slots.push_back(std::move(t));
  }
  v.has_slots = true;
}

void Optimizer::build(std::span<Param* const> params) {
  if (built_) {
    if (params.size() != vars_.size())
      throw std::invalid_argument(class_name_ + ": built for " + std::to_string(vars_.size()) +
                                  " variables, given " + std::to_string(params.size()));
    for (size_t i = 0; i < params.size(); ++i) {
      const Param& p = *params[i];
      const Var& v = vars_[i];
      if (strip_suffix(p.name) != v.name || p.value.numel() != v.numel)
        throw std::invalid_argument(class_name_ + ": variable " + std::to_string(i) + " is '" +
                                    p.name + "' of " + std::to_string(p.value.numel()) +
                                    " elements, but the optimizer was built for '" + v.name +
                                    "' of " + std::to_string(v.numel));
    }
    return;
  }
  specs_ = slot_specs();
  std::vector<Var> vars(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]) throw std::invalid_argument(class_name_ + ": null variable");
    const Param& p = *params[i];
    Var& v = vars[i];
    v.name = std::string(strip_suffix(p.name));
    v.numel = p.value.numel();
    if (p.trainable) make_slots(v, p);
    if (p.trainable && accumulation_steps_ > 1)
      v.accumulator = Tensor::zeros(p.value.shape()).to(p.value.device());
  }
  vars_ = std::move(vars);
  built_ = true;
}

namespace {

Exec exec_for(const Tensor& t, int cpu_threads) {
  return Exec{t.device(), t.device() == Device::cpu ? cpu_threads : 1};
}

}  // namespace

void Optimizer::apply(std::span<Param* const> params) {
  const auto start = std::chrono::steady_clock::now();
  begin_step(params);
  launch_updates(params);
  end_step();
  apply_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Optimizer::accumulate(std::span<Param* const> params) {
  build(params);
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = *params[i];
    if (!p.trainable || !p.grad.defined()) continue;
    Tensor& a = vars_[i].accumulator;
    if (!a.defined())  // made trainable after build: once
      a = Tensor::zeros(p.value.shape());
    if (a.device() != p.grad.device()) a = a.to(p.grad.device());  // once, as the slots
    kernels::axpy(exec_for(p.grad, cpu_threads_), 1.0f, p.grad, a);
  }
  ++iterations_;
}

void Optimizer::add_accumulated(size_t index, Param& p) {
  if (accumulation_steps_ == 1 || index >= vars_.size() || !p.grad.defined()) return;
  Tensor& a = vars_[index].accumulator;
  if (!a.defined()) return;  // nothing accumulated yet (a variable made trainable since)
  if (a.device() != p.grad.device()) a = a.to(p.grad.device());
  const Exec ex = exec_for(p.grad, cpu_threads_);
  kernels::axpy(ex, 1.0f, a, p.grad);
  kernels::fill(ex, 0.0f, a);  // Keras' reset: what a checkpoint keeps between cycles
}

std::vector<std::pair<std::string, Tensor*>> Optimizer::accumulators() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (Var& v : vars_)
    if (v.accumulator.defined()) out.emplace_back(v.name + "/gradient_accumulator", &v.accumulator);
  return out;
}

void Optimizer::set_dynamic_loss_scale(const DynamicLossScale& s) {
  if (accumulation_steps_ > 1)
    throw UsageError(class_name_ +
                     ": gradient_accumulation_steps = " + std::to_string(accumulation_steps_) +
                     " does not work with a loss scale (a LossScaleOptimizer, which "
                     "mixed_float16 adds): mixed_bfloat16 needs none");
  loss_scale_ = s;
}

void Optimizer::begin_step(std::span<Param* const> params) {
  build(params);
  bool used[2] = {false, false};
  for (size_t i = 0; i < params.size(); ++i) {
    Param& p = *params[i];
    if (!p.trainable || !p.grad.defined()) continue;
    Var& v = vars_[i];
    if (!v.has_slots) make_slots(v, p);  // made trainable after build: once
    // Slots follow their variable: a GPU worker's optimizer built (or restored
    // from a checkpoint) on the GPU keeps its state when a host strategy
    // hands it the variables' host copies (distributed/host_staged.hpp). Once.
    for (Tensor& s : v.slots)
      if (s.device() != p.value.device()) s = s.to(p.value.device());
    if (p.grad.numel() != v.numel || p.grad.dtype() != DType::f32)
      throw std::invalid_argument(class_name_ + ": gradient of '" + p.name + "' is " +
                                  dtype_name(p.grad.dtype()) + " " + p.grad.shape().str() +
                                  ", the variable is float32 " + p.value.shape().str());
    used[p.value.device() == Device::cpu ? 0 : 1] = true;
  }
  // One check decides for the whole step: the variables share one device.
  if (loss_scale_ && used[0] && used[1])
    throw std::invalid_argument(class_name_ + ": a loss scale needs every variable on one device");
  if (clips(kernels::GradientClip::global_norm) && used[0] && used[1])
    throw std::invalid_argument(class_name_ +
                                ": global_clipnorm needs every variable on one device");
  scaled_ = !loss_scale_ ? -1 : used[1] ? 1 : used[0] ? 0 : -1;
  const float lr = current_lr();
  const float rate = step_rate(lr);
  const float scale = loss_scale();
  for (int k = 0; k < 2; ++k) {
    if (!used[k]) continue;
    write_step_value(k, kernels::kRate, rate);
    write_step_value(k, kernels::kLearningRate, lr);
    write_step_value(k, kernels::kGradFactor, 1.0f / scale);  // exact: a power of two
    write_step_value(k, StepValues::kLossScale, scale);
  }
}

void Optimizer::write_step_value(int k, int index, float value) {
  StepValues& s = step_[k];
  const Device d = k == 0 ? Device::cpu : Device::cuda;
  if (!s.all.defined()) {
    s.all = Tensor::zeros(Shape{StepValues::kCount}).to(d);
    s.updates = s.all.rows(0, kernels::kStepValues);
    s.skip = s.all.rows(kernels::kSkip, kernels::kSkip + 1);
    s.loss_scale = s.all.rows(StepValues::kLossScale, StepValues::kLossScale + 1);
    s.sum_squares = s.all.rows(StepValues::kSumSquares, StepValues::kSumSquares + 1);
    std::fill(std::begin(s.written), std::end(s.written), std::nanf(""));
  }
  if (s.written[index] == value) return;
  Tensor at = s.all.rows(index, index + 1);
  kernels::fill(Exec{d, 1}, value, at);
  s.written[index] = value;
}

const Tensor& Optimizer::loss_scale_on(Device device) const {
  const StepValues& s = step_[device == Device::cpu ? 0 : 1];
  if (!s.all.defined())
    throw std::logic_error(class_name_ + ": loss_scale_on(" + device_name(device) +
                           ") before a step's values were written there");
  return s.loss_scale;
}

void Optimizer::launch_updates(std::span<Param* const> params) {
  if (scaled_ >= 0) {
    // Every gradient's check marks one flag without waiting; the updates read it.
    Tensor& skip = step_[scaled_].skip;
    kernels::fill(Exec{skip.device(), 1}, 0.0f, skip);
    for (const Param* p : params)
      if (p->trainable && p->grad.defined())
        kernels::mark_nonfinite(exec_for(p->grad, cpu_threads_), p->grad, skip);
  }
  if (clip_ && clip_->limit > 0.f) clip_gradients(params);
  for (size_t i = 0; i < params.size(); ++i) {
    Param& p = *params[i];
    if (!p.trainable || !p.grad.defined()) continue;
    const Device d = p.value.device();
    update(exec_for(p.value, cpu_threads_), i, p.value, p.grad,
           step_[d == Device::cpu ? 0 : 1].updates);
  }
}

void Optimizer::clip_gradients(std::span<Param* const> params) {
  using kernels::GradientClip;
  // The sums of squares as a 1 x n by n x 1 product: summed on the device,
  // where the clip reads them, without a wait.
  auto sum_squares = [&](const Param& p, float beta) {
    StepValues& s = step_[p.grad.device() == Device::cpu ? 0 : 1];
    kernels::matmul(exec_for(p.grad, cpu_threads_), false, false, 1, 1, p.grad.numel(), 1.0f,
                    p.grad, p.grad, beta, s.sum_squares);
  };
  auto clip = [&](Param& p) {
    StepValues& s = step_[p.grad.device() == Device::cpu ? 0 : 1];
    kernels::clip_gradient(exec_for(p.grad, cpu_threads_), clip_->kind, clip_->limit, s.sum_squares,
                           s.updates, p.grad);
  };
  auto clipped = [](const Param* p) { return p->trainable && p->grad.defined(); };
  if (clip_->kind == GradientClip::global_norm) {
    float beta = 0.f;
    for (const Param* p : params)
      if (clipped(p)) {
        sum_squares(*p, beta);
        beta = 1.f;
      }
    for (Param* p : params)
      if (clipped(p)) clip(*p);
    return;
  }
  for (Param* p : params) {
    if (!clipped(p)) continue;
    if (clip_->kind == GradientClip::norm) sum_squares(*p, 0.f);
    clip(*p);
  }
}

void Optimizer::end_step() {
  if (scaled_ >= 0) {
    if (!skip_host_.defined()) skip_host_ = Tensor::zeros(Shape{1});
    skip_host_.copy_from(step_[scaled_].skip);  // the one wait of a loss-scaled step
    const bool finite = skip_host_.f32()[0] == 0.0f;
    loss_scale_->update(finite);
    if (!finite) return;
  }
  ++iterations_;
}

std::vector<std::pair<std::string, Tensor*>> Optimizer::state() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t k = 0; k < specs_.size(); ++k)
    for (Var& v : vars_)
      if (v.has_slots) out.emplace_back(v.name + "/" + specs_[k].name, &v.slots[k]);
  return out;
}

json Optimizer::config() const {
  json c = {{"name", name_}, {"learning_rate", schedule_->config()}};
  if (decay_ != 0.f) c["decay"] = float_json(decay_);
  add_config(c);
  if (weight_decay_ != 0.f) c["weight_decay"] = float_json(weight_decay_);
  if (clip_) c[clip_->key] = float_json(clip_->limit);
  if (accumulation_steps_ > 1) c["gradient_accumulation_steps"] = accumulation_steps_;
  json inner{{"class_name", class_name_}, {"config", std::move(c)}};
  if (!loss_scale_) return inner;
  return json{{"class_name", "LossScaleOptimizer"},
              {"config",
               {{"inner_optimizer", std::move(inner)},
                {"initial_scale", float_json(loss_scale_->initial_scale())},
                {"dynamic_growth_steps", loss_scale_->growth_steps()}}}};
}

std::unique_ptr<Optimizer> Optimizer::clone_fresh() const {
  return make_optimizer(config());
}

json without_accumulation(const json& spec) {
  if (!spec.is_object() || !spec.contains("config") || !spec["config"].is_object()) return spec;
  json out = spec;
  out["config"].erase("gradient_accumulation_steps");
  return out;
}

const std::vector<const OptimizerInfo*>& optimizer_registry() {
  static const std::vector<const OptimizerInfo*> entries = {
#define DRUN_OPTIMIZER(id) &id##_optimizer(),
#include "optim/optimizer_list.hpp"
#undef DRUN_OPTIMIZER
  };
  return entries;
}

namespace {
// "Adagrad, Adam, AdamW, RMSprop (or RMSProp), SGD, LossScaleOptimizer": the class names.
std::string class_names() {
  std::string out;
  for (const OptimizerInfo* info : optimizer_registry()) {
    std::string others;
    for (size_t i = 1; i < info->about.names.size(); ++i)
      if (is_class_name(info->about.names[i]))
        others += (others.empty() ? "" : ", ") + info->about.names[i];
    out += (out.empty() ? "" : ", ") + info->about.name() +
           (others.empty() ? "" : " (or " + others + ")");
  }
  return out;
}
}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const json& spec) {
  std::string class_name;
  json config = json::object();
  if (spec.is_string()) {
    // A class name or Keras' shorthand, optimizer = 'adam': the defaults.
    class_name = spec.get<std::string>();
  } else if (spec.is_object()) {
    Options top(spec, "optimizer");
    class_name = top.require<std::string>("class_name");
    config = top.raw("config");
    top.raw("module");  // written by Keras 3; the class name is enough here
    top.raw("registered_name");
    top.finish();
  } else {
    throw UsageError("optimizer: expected {class_name = ..., config = {...}} or a name, got " +
                     spec.dump());
  }
  const OptimizerInfo* info = find_entry(optimizer_registry(), class_name);
  if (!info || (!spec.is_string() && !is_class_name(class_name)))
    throw UsageError("unknown optimizer class '" + class_name + "'" +
                     did_you_mean_in_list(class_name, registry_names(optimizer_registry())) +
                     "; valid classes: " + class_names());
  return info->make(config);
}

}  // namespace drun::optim
