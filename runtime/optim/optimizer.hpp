// Optimizers: Keras' SGD, Adagrad, Adam and RMSprop with Keras' option names,
// defaults and update rules (tf.keras optimizer_v2, i.e. Keras 2 and
// tf.keras.optimizers.legacy). The arithmetic lives in
// kernels/cpu/optimizer_update; an optimizer only keeps the step count, the
// learning-rate schedule and one set of slot tensors per variable.
//
// The classes, their names and their options with the defaults are the
// optimizer registry's (optim/optimizer_list.hpp); every optimizer takes, besides
// its own options, name, learning_rate (a number or a schedule spec, see
// schedule.hpp), decay (Keras 2's legacy inverse-time decay), weight_decay,
// clipnorm, clipvalue and global_clipnorm, as Keras 3's base optimizer does:
//  - weight_decay is Keras 3's decoupled decay, w -= w * weight_decay * lr
//    (lr the schedule's rate, before Adam's bias correction) before the
//    update rule, of every trainable variable: Keras excludes none unless
//    exclude_from_weight_decay is called. With Adam this is AdamW, which is
//    Adam with a weight_decay of 0.004 by default.
//  - the clips (at most one of them; a limit of 0 clips nothing) change the
//    gradients in place before the update (kernels/gradient_clip.hpp): under
//    AllReduce that is after the exchange, so every worker clips the same
//    gradient; under a loss scale the scaled gradient is clipped as Keras
//    clips the unscaled one.
//  - gradient_accumulation_steps = k (Keras 3's; null or 1: none, as
//    without it) makes k batches one update: the trainer adds each batch's
//    gradients into this optimizer's accumulators (accumulate()) and, on the
//    k-th, adds them into that batch's gradients before the exchange and the
//    update (add_accumulated()), so a strategy exchanges once per k batches.
//    The trainer counts the cycle in global steps (batches): a parameter
//    server's workers never apply their own optimizer.
//    The trainer scales the loss gradient by 1/k, so the update sees the
//    mean of the k gradients, as Keras' (g_1 + ... + g_k) / k; clips and
//    weight decay apply to that mean, on the update only. As in Keras,
//    iterations() counts batches (Keras' `_iterations`, saved), the schedule
//    reads it, and updates() = iterations() / k is what Keras' property
//    optimizer.iterations gives and what Adam's bias correction counts.
// config() writes weight_decay, a clip and gradient_accumulation_steps only when they are set.
//
// Loss scaling: wrapped in Keras' LossScaleOptimizer ({"class_name":
// "LossScaleOptimizer", "config": {"inner_optimizer": {...}, "initial_scale":
// 32768, "dynamic_growth_steps": 2000}}), an optimizer carries a
// DynamicLossScale (optim/loss_scale.hpp): the trainer multiplies the loss
// gradient by the scale (loss_scale_on()); the step checks every gradient for
// a NaN or an infinity on the device, and its updates divide the scale out
// or, where the check found one, leave everything as it was; end_step() reads
// the check, moves the scale and counts only an applied step in iterations().
//
// Steps: the learning rate of an update is the schedule at iterations() before
// the update (Keras' optimizer.iterations); Adam's bias correction uses
// t = updates() + 1. apply() then adds one to iterations().
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/options.hpp"
#include "base/registry.hpp"
#include "kernels/ops.hpp"
#include "kernels/optimizer_update.hpp"
#include "optim/loss_scale.hpp"
#include "optim/schedule.hpp"
#include "tensor/param.hpp"

namespace drun::optim {

using kernels::Exec;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Creates the slot tensors of every trainable variable in `params` (Keras'
  // optimizer.build). apply() calls it on first use; a checkpoint restore calls
  // it first so that state() has tensors to load into. A second call with other
  // variables (count, names or sizes) throws std::invalid_argument.
  void build(std::span<Param* const> params);
  // One update of every trainable variable that has a gradient; the others are
  // left alone. The same variables in the same order every call. Once built it
  // allocates nothing.
  void apply(std::span<Param* const> params);
  // Seconds this process spent in apply() so far (host time: on a GPU, the
  // launches): what a strategy's apply spent updating rather than exchanging
  // (train/scaling_meter).
  double apply_seconds() const { return apply_seconds_; }
  // apply() in three parts, for a trainer that records the middle one into a
  // CUDA graph (train/step_graph.hpp):
  //  - begin_step builds, moves slots to their variables' devices and writes
  //    the step's values (the rate, the loss scale and its inverse) where each
  //    device reads them, only those that changed; called again before
  //    end_step, it changes nothing.
  //  - launch_updates launches the loss scale's check of every gradient and
  //    the updates, which read the check; it changes nothing on the host.
  //  - end_step counts the step in iterations(); under a loss scale it first
  //    waits for the check, moves the scale and counts only an applied step.
  void begin_step(std::span<Param* const> params);
  void launch_updates(std::span<Param* const> params);
  void end_step();
  bool built() const { return built_; }

  int64_t iterations() const { return iterations_; }
  void set_iterations(int64_t iterations) { iterations_ = iterations; }
  // The updates applied: iterations() / gradient_accumulation_steps.
  int64_t updates() const { return iterations_ / accumulation_steps_; }

  // Gradient accumulation (the header comment): k, 1 without it.
  int64_t accumulation_steps() const { return accumulation_steps_; }
  // A batch that only accumulates: adds every trainable variable's gradient
  // into its accumulator and counts the batch in iterations(). No update.
  void accumulate(std::span<Param* const> params);
  // On an update's batch, before its gradient of variable `index` (its
  // position in the span given to build) is exchanged or used: adds the
  // accumulated gradients into it and empties the accumulator. Nothing without accumulation.
  void add_accumulated(size_t index, Param& p);
  // The accumulators, "<variable>/gradient_accumulator" (Keras' name) in the
  // variables' order: the sum of this cycle's gradients so far, already
  // divided by k. Empty without accumulation or before build(); checkpoints
  // keep them, so that a run resumes in the middle of a cycle exactly.
  std::vector<std::pair<std::string, Tensor*>> accumulators();
  // The learning rate the next update uses: schedule(iterations()), with the legacy decay.
  float current_lr() const;
  const Schedule& learning_rate() const { return *schedule_; }
  // Multiplies every learning rate the schedule gives, e.g. by the number of
  // workers for the linear scaling rule (Goyal et al. 2017). Default 1.
  void set_lr_scale(float scale) { lr_scale_ = scale; }
  // Replaces the schedule by a constant rate, as Keras' `optimizer.learning_rate
  // = lr` (what callbacks such as ReduceLROnPlateau do).
  void set_learning_rate(float lr);
  // How many threads the updates of variables in host memory may use (the
  // trainer's --threads). Default 1.
  void set_cpu_threads(int threads) { cpu_threads_ = threads < 1 ? 1 : threads; }
  float weight_decay() const { return weight_decay_; }
  // The gradient clipping: Keras' option name ("clipnorm", ...) and limit; none: an empty key.
  std::pair<std::string, float> clip() const {
    return clip_ ? std::pair{std::string(clip_->key), clip_->limit} : std::pair{std::string(), 0.f};
  }

  // The factor for the loss gradient: the dynamic loss scale's, 1 without one.
  float loss_scale() const { return loss_scale_ ? loss_scale_->scale() : 1.0f; }
  // loss_scale() as one float32 on `device`, where a step reads it (written
  // by begin_step, which must have seen a variable on that device).
  const Tensor& loss_scale_on(Device device) const;
  // The dynamic loss scale, if this optimizer was wrapped in a LossScaleOptimizer.
  DynamicLossScale* dynamic_loss_scale() { return loss_scale_ ? &*loss_scale_ : nullptr; }
  const DynamicLossScale* dynamic_loss_scale() const {
    return loss_scale_ ? &*loss_scale_ : nullptr;
  }
  // Throws UsageError with gradient accumulation: a skipped update would
  // have to drop k batches' accumulated gradients.
  void set_dynamic_loss_scale(const DynamicLossScale& s);

  // The slot tensors by name, "<variable>/<slot>" with a ":0" suffix of the
  // variable dropped (e.g. "conv2d/kernel/momentum"), in Keras' order: all
  // variables' first slot, then all variables' second slot, ... Empty before
  // build(). iterations() is not among them: checkpoints store it on its own.
  std::vector<std::pair<std::string, Tensor*>> state();

  // Keras' serialisation: {"class_name": "SGD", "config": {"name": ..., "learning_rate": ...}}.
  // make_optimizer(config()) gives an equal, fresh optimizer.
  json config() const;
  const std::string& class_name() const { return class_name_; }
  // Keras' optimizer name: the "name" option, the class name by default.
  const std::string& name() const { return name_; }
  // Same configuration, no state, iterations() == 0 (e.g. for a parameter server).
  std::unique_ptr<Optimizer> clone_fresh() const;

 protected:
  struct SlotSpec {
    const char* name;  // Keras' slot name: "momentum", "m", "v", ...
    float initial;     // what the slot starts as
  };
  // Reads name, learning_rate, decay and weight_decay from options checked
  // against the class's schema (which holds their defaults).
  Optimizer(Options& options, std::string class_name);
  // Subclasses call this after reading their own options: unknown keys, then base values.
  void finish(Options& options) const;

  // The slots every variable gets, in Keras' creation order.
  virtual std::vector<SlotSpec> slot_specs() const = 0;
  // This class's own keys for config().
  virtual void add_config(json& config) const = 0;
  // The rate the updates of this step use, given its learning rate (Adam
  // folds its bias correction in).
  virtual float step_rate(float lr) const { return lr; }
  // Updates variable `index` (its position in the span) given its gradient,
  // with the step's values in `step` (on w's device: step_rate's rate, the
  // gradient's factor, the skip flag), on ex (where w lives).
  virtual void update(const Exec& ex, size_t index, Tensor& w, const Tensor& g,
                      const Tensor& step) = 0;

  Tensor& slot(size_t index, size_t k) { return vars_[index].slots[k]; }
  // The weight decay of variable `index`: weight_decay(), Keras excluding none.
  float decay_of(size_t) const { return weight_decay_; }

 private:
  double apply_seconds_ = 0.0;
  struct Var {
    std::string name;        // without ":0"
    bool has_slots = false;  // made for trainable variables
    int64_t numel = 0;
    std::vector<Tensor> slots;  // one per specs_ entry
    Tensor accumulator;         // with gradient accumulation, for a trainable variable
  };
  // The step's values on one device: what the updates read (kStepValues
  // floats, kernels/optimizer_update.hpp), then the loss scale, then the
  // clip's sum of squares.
  struct StepValues {
    static constexpr int kLossScale = kernels::kStepValues;
    static constexpr int kSumSquares = kLossScale + 1;
    static constexpr int kCount = kSumSquares + 1;
    Tensor all;                     // the kCount floats
    Tensor updates;                 // the first kStepValues: what the updates read
    Tensor skip;                    // the flag the loss scale's check marks
    Tensor loss_scale;              // what the loss gradient is multiplied by
    Tensor sum_squares;             // written and read on the device by the clip
    float written[kLossScale + 1];  // what the host last wrote there (NaN: nothing yet)
  };
  struct Clip {
    kernels::GradientClip kind;
    float limit;
    const char* key;  // Keras' option
  };
  bool clips(kernels::GradientClip kind) const {
    return clip_ && clip_->kind == kind && clip_->limit > 0.f;
  }
  // Keras' clipping of every trainable variable's gradient, in place, on the device.
  void clip_gradients(std::span<Param* const> params);
  void make_slots(Var& v, const Param& p);
  // all[index] = value on device slot k (0 the CPU, 1 the GPU), unless it holds it already.
  void write_step_value(int k, int index, float value);
  std::string class_name_;
  std::string name_;
  std::shared_ptr<Schedule> schedule_;
  float decay_ = 0.f;
  float weight_decay_ = 0.f;
  std::optional<Clip> clip_;
  int64_t accumulation_steps_ = 1;
  int64_t iterations_ = 0;
  float lr_scale_ = 1.f;
  int cpu_threads_ = 1;
  bool built_ = false;
  std::optional<DynamicLossScale> loss_scale_;
  StepValues step_[2];  // on the CPU, on the GPU
  int scaled_ = -1;     // the device slot of the loss-scaled variables; -1: none
  Tensor skip_host_;    // end_step's copy of the check
  std::vector<SlotSpec> specs_;
  std::vector<Var> vars_;
};

// Keras SGD: momentum in [0, 1]. momentum == 0: w -= lr * g. Else the slot "momentum" v: v =
// momentum * v - lr * g, w += v, or with nesterov w += momentum * v - lr * g.
class SGD final : public Optimizer {
 public:
  explicit SGD(const json& config = json::object());

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void add_config(json& config) const override;
  void update(const Exec& ex, size_t index, Tensor& w, const Tensor& g,
              const Tensor& step) override;

 private:
  struct Parsed {};
  SGD(Options&& o, Parsed);
  float momentum_;
  bool nesterov_;
};

// Keras Adagrad. Slot "accumulator": acc += g^2; w -= lr * g / (sqrt(acc) + epsilon).
class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(const json& config = json::object());

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void add_config(json& config) const override;
  void update(const Exec& ex, size_t index, Tensor& w, const Tensor& g,
              const Tensor& step) override;

 private:
  struct Parsed {};
  Adagrad(Options&& o, Parsed);
  float initial_accumulator_value_;
  float epsilon_;
};

// Keras Adam, rounded as Keras 3 rounds it (1 - beta_1 and 1 - beta_2 from
// double, lr_t in float32). Slots "m", "v" (and "vhat" with amsgrad). With t = iterations() + 1:
// lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t); m = beta_1 m + (1 - beta_1) g;
// v = beta_2 v + (1 - beta_2) g^2; [vhat = max(vhat, v), used for v];
// w -= lr_t * m / (sqrt(v) + epsilon).
class Adam : public Optimizer {
 public:
  explicit Adam(const json& config = json::object());

 protected:
  struct Parsed {};
  Adam(Options&& o, std::string class_name, Parsed);
  std::vector<SlotSpec> slot_specs() const override;
  void add_config(json& config) const override;
  void update(const Exec& ex, size_t index, Tensor& w, const Tensor& g,
              const Tensor& step) override;

 private:
  float step_rate(float lr) const override;
  float beta_1_;
  float beta_2_;
  // 1 - beta in double, then rounded: Keras 3's (Python's) arithmetic.
  float one_minus_beta_1_;
  float one_minus_beta_2_;
  float epsilon_;
  bool amsgrad_;
};

// Keras 3 AdamW: Adam whose weight_decay (the decoupled decay every optimizer
// takes) is 0.004 by default; config() always writes it, as Keras does.
class AdamW final : public Adam {
 public:
  explicit AdamW(const json& config = json::object());

 protected:
  void add_config(json& config) const override;
};

// Keras RMSprop. Slots "rms", then "momentum" if momentum > 0, then "mg" if centered.
// rms = rho rms + (1 - rho) g^2; centered: mg = rho mg + (1 - rho) g, denom = rms - mg^2,
// else denom = rms. Without momentum w -= lr g / (sqrt(denom) + epsilon); with
// momentum (TensorFlow's ApplyRMSProp, epsilon inside the root)
// mom = momentum mom + lr g / sqrt(denom + epsilon), w -= mom.
class RMSprop final : public Optimizer {
 public:
  explicit RMSprop(const json& config = json::object());

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void add_config(json& config) const override;
  void update(const Exec& ex, size_t index, Tensor& w, const Tensor& g,
              const Tensor& step) override;

 private:
  struct Parsed {};
  RMSprop(Options&& o, Parsed);
  float rho_;
  float momentum_;
  float epsilon_;
  bool centered_;
};

// An optimizer class: its names (the Keras class first, then other spellings
// of it such as RMSProp, then Keras' lowercase shorthand such as "rmsprop"),
// its options with their defaults (those every optimizer takes included) and
// the constructor that reads its config.
struct OptimizerInfo {
  Described about;
  std::function<std::unique_ptr<Optimizer>(const json& config)> make;
};

#define DRUN_OPTIMIZER(id) const OptimizerInfo& id##_optimizer();
#include "optim/optimizer_list.hpp"
#undef DRUN_OPTIMIZER

// Every optimizer, in the list's order.
const std::vector<const OptimizerInfo*>& optimizer_registry();
// Keras' convention: a class name starts with a capital letter; a lowercase
// name is a string shorthand ("sgd"), not a class_name.
bool is_class_name(const std::string& name);
// The options every optimizer takes (LossScaleOptimizer aside), with
// learning_rate's default, followed by a class's own.
Schema optimizer_options(float default_learning_rate, const Schema& own,
                         float default_weight_decay = 0.f);

// Builds an optimizer from {"class_name": "SGD", "config": {...}} (Keras'
// serialisation; a class name of the registry: SGD, Adam, Adagrad, RMSprop or
// RMSProp, LossScaleOptimizer around one of them), or from a name alone, Keras'
// string shorthands "sgd", "adam"... included, for the defaults. Throws
// UsageError for an unknown class (listing the valid ones) and for an unknown,
// mistyped or invalid option.
std::unique_ptr<Optimizer> make_optimizer(const json& spec);

// `spec` (as make_optimizer takes it) without gradient_accumulation_steps:
// for an optimizer that applies gradients accumulated elsewhere (a parameter
// server's, fed by workers that accumulate), one update per call.
json without_accumulation(const json& spec);

}  // namespace drun::optim
