// BackgroundEval: the chief's evaluation of a snapshot of the weights on a
// thread of its own, so that in a multi-worker job the others need not wait
// for it. One evaluation runs at a time; start() waits for the previous one.
#pragma once
#include <future>
#include <memory>
#include <optional>

#include "data/pipeline.hpp"
#include "nn/model.hpp"
#include "train/compile_options.hpp"

namespace drun::train {

class Trainer;

class BackgroundEval {
 public:
  struct Result {
    int64_t epoch;
    Evaluation evaluation;
  };
  BackgroundEval();
  ~BackgroundEval();
  // Copies the model's variables and evaluates the copy on `input` (which
  // must stay alive and unused until finish()).
  // Evaluates a copy of `model` on at most max_steps batches (< 0: all).
  // The evaluation is recorded on `timeline`'s evaluation lane, when not null.
  void start(nn::Model& model, const CompileOptions& compiled, data::Pipeline& input, int64_t epoch,
             int64_t max_steps = -1, timeline::Timeline* timeline = nullptr);
  // Waits for the running evaluation, if any, and returns its result.
  std::optional<Result> finish();

 private:
  std::unique_ptr<nn::Model> copy_;
  std::unique_ptr<Trainer> evaluator_;
  std::future<Evaluation> running_;
  int64_t epoch_ = -1;
};

}  // namespace drun::train
