#include "train/callbacks/callback_runner.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include "keras/keras_h5.hpp"
#include "train/fit_result.hpp"
#include "train/session.hpp"
#include "train/trainer.hpp"

namespace drun::train {

CallbackRunner::CallbackRunner(std::vector<Callback*> callbacks, const FitResult& result,
                               bool has_eval)
    : callbacks_(std::move(callbacks)), result_(result), has_eval_(has_eval) {
  for (Callback* c : callbacks_) batches_ = batches_ || c->wants_batches();
}

void CallbackRunner::begin(Trainer& trainer) {
  trainer_ = &trainer;
  if (restored_) {
    const json& s = restored_->state;
    if (s.contains("learning_rate") && s["learning_rate"].is_number())
      set_learning_rate(s["learning_rate"].get<double>());
    const json saved = s.value("callbacks", json::array());
    for (size_t i = 0; i < callbacks_.size() && i < saved.size(); ++i) {
      callbacks_[i]->set_state(saved[i]);
      const std::string prefix = std::to_string(i) + "/";
      std::vector<std::pair<std::string, Tensor>> mine;
      for (const auto& [name, t] : restored_->tensors)
        if (name.rfind(prefix, 0) == 0) mine.emplace_back(name.substr(prefix.size()), t);
      if (!mine.empty()) callbacks_[i]->set_state_tensors(mine);
    }
    restored_.reset();
  }
  for (Callback* c : callbacks_) c->train_begin(*this);
}

void CallbackRunner::begin_epoch(int64_t epoch) {
  for (Callback* c : callbacks_) c->epoch_begin(epoch, *this);
  agree();
}

bool CallbackRunner::after_step(const StepResult& step) {
  if (!batches_) return stop_;
  const BatchLogs logs(step);
  // Keras' batch: the index within the epoch, from 0.
  for (Callback* c : callbacks_)
    if (c->wants_batches()) c->train_batch_end(step.batch - 1, logs, *this);
  // Workers that do not step together learn of a stop at the epoch's end:
  // a collective here could wait for a worker that is elsewhere.
  distributed::Strategy* s = trainer_->strategy();
  if (several_workers() && s->lockstep()) agree();
  return stop_ && (!several_workers() || s->lockstep());
}

Logs CallbackRunner::epoch_logs() {
  Logs logs;
  logs.values.emplace_back("loss", result_.train.loss);
  for (const auto& kv : result_.train.metrics) logs.values.push_back(kv);
  if (has_eval_) {
    // The chief's evaluation; the other workers learn its values here.
    std::vector<double> val(1 + result_.train.metrics.size(), 0.0);
    if (chief()) {
      if (result_.eval) {
        val[0] = result_.eval->loss;
        for (size_t i = 0; i + 1 < val.size(); ++i)
          val[i + 1] = i < result_.eval->metrics.size() ? result_.eval->metrics[i].second
                                                        : std::numeric_limits<double>::quiet_NaN();
      } else {
        std::fill(val.begin(), val.end(), std::numeric_limits<double>::quiet_NaN());
      }
    }
    if (several_workers()) trainer_->strategy()->sum(val.data(), static_cast<int64_t>(val.size()));
    logs.values.emplace_back("val_loss", val[0]);
    for (size_t i = 0; i + 1 < val.size(); ++i)
      logs.values.emplace_back("val_" + result_.train.metrics[i].first, val[i + 1]);
  }
  logs.values.emplace_back("learning_rate", learning_rate());
  return logs;
}

void CallbackRunner::end_epoch(EpochEnd& epoch) {
  const Logs logs = epoch_logs();
  if (has_eval_) {
    Logs val;
    for (const auto& kv : logs.values)
      if (kv.first.rfind("val_", 0) == 0) val.values.emplace_back(kv.first.substr(4), kv.second);
    for (Callback* c : callbacks_) c->test_end(val, *this);
  }
  for (Callback* c : callbacks_) c->epoch_end(epoch.epoch, logs, *this);
  agree();
  epoch.stop = epoch.stop || stop_;
}

void CallbackRunner::complete() {
  for (Callback* c : callbacks_) c->train_end(*this);
}

void CallbackRunner::agree() {
  if (!several_workers()) return;
  const bool mine = chief();
  // [stop, whether a rate was set, the rate]: the chief's alone.
  double v[3] = {mine && stop_ ? 1.0 : 0.0, mine && lr_set_ ? 1.0 : 0.0,
                 mine && lr_set_ ? *lr_set_ : 0.0};
  trainer_->strategy()->sum(v, 3);
  stop_ = v[0] > 0;
  if (v[1] > 0 && (!lr_set_ || *lr_set_ != v[2])) set_learning_rate(v[2]);
}

CallbackState CallbackRunner::state() const {
  CallbackState out;
  json states = json::array();
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    states.push_back(callbacks_[i]->state());
    for (auto& [name, t] : callbacks_[i]->state_tensors())
      out.tensors.emplace_back(std::to_string(i) + "/" + name, t);
  }
  out.state = {{"learning_rate", lr_set_ ? json(*lr_set_) : json(nullptr)},
               {"stopped", stop_},
               {"callbacks", states}};
  return out;
}

bool CallbackRunner::several_workers() const {
  const distributed::Strategy* s = trainer_->strategy();
  return s && s->workers() > 1;
}

bool CallbackRunner::chief() const {
  const distributed::Strategy* s = trainer_->strategy();
  return !s || s->is_chief();
}

double CallbackRunner::learning_rate() const {
  const optim::Optimizer& o = trainer_->optimizer();
  return o.learning_rate().at(o.iterations());
}

void CallbackRunner::set_learning_rate(double lr) {
  if (!std::isfinite(lr) || lr < 0)
    throw UsageError("a callback set the learning rate to " + std::to_string(lr) +
                     "; it must be a finite number >= 0");
  // The optimizer keeps a float32, as Keras' variable does.
  lr_set_ = static_cast<double>(static_cast<float>(lr));
  trainer_->optimizer().set_learning_rate(static_cast<float>(lr));
}

std::vector<Tensor> CallbackRunner::weights() const {
  std::vector<Tensor> out;
  for (const Param* p : trainer_->model().params())
    out.push_back(p->value.device() == Device::cpu ? p->value.clone() : p->value.to(Device::cpu));
  return out;
}

void CallbackRunner::set_weights(const std::vector<Tensor>& weights) {
  const auto params = trainer_->model().params();
  if (weights.size() != params.size())
    throw UsageError("callbacks: " + std::to_string(weights.size()) +
                     " weights to restore, the model has " + std::to_string(params.size()));
  for (size_t i = 0; i < params.size(); ++i) params[i]->value.copy_from(weights[i]);
}

void CallbackRunner::save_model(const std::string& path, bool weights_only) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (weights_only)
    keras::save_weights(trainer_->model(), path);
  else
    keras::save_model(trainer_->model(), path,
                      training_config(trainer_->compiled(), trainer_->optimizer()));
}

}  // namespace drun::train
