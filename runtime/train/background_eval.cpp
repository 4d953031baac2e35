#include "train/background_eval.hpp"

#include "train/trainer.hpp"

namespace drun::train {

BackgroundEval::BackgroundEval() = default;

BackgroundEval::~BackgroundEval() {
  if (running_.valid()) running_.wait();
}

void BackgroundEval::start(nn::Model& model, const CompileOptions& compiled, data::Pipeline& input,
                           int64_t epoch, int64_t max_steps, timeline::Timeline* tl) {
  finish();
  if (!copy_) {
    copy_ = std::make_unique<nn::Model>(model.spec(), 0);
    // One CPU thread: the training threads keep the cores they were given,
    // and a GPU's handles stay with the thread that trains on it.
    evaluator_ = std::make_unique<Trainer>(*copy_, compiled, kernels::Exec{Device::cpu, 1});
  }
  auto from = model.params();
  auto to = copy_->params();
  for (size_t i = 0; i < from.size(); ++i) to[i]->value.copy_from(from[i]->value);
  epoch_ = epoch;
  running_ = std::async(std::launch::async, [this, &input, max_steps, tl, epoch] {
    timeline::Span span(tl, timeline::Lane::eval, timeline::kEval, "evaluate", "evaluate", "epoch",
                        epoch);
    return evaluator_->evaluate(input, max_steps);
  });
}

std::optional<BackgroundEval::Result> BackgroundEval::finish() {
  if (!running_.valid()) return std::nullopt;
  return Result{epoch_, running_.get()};
}

}  // namespace drun::train
