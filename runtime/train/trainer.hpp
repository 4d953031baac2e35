// Trainer: the training loop of one process. One step is forward, loss,
// backward, optimizer update and metric accumulation, in C++, allocating
// nothing once warm. fit() runs epochs over a pipeline, evaluates after each
// epoch, prints progress and writes summary.json to the model directory.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/pipeline.hpp"
#include "dist/strategy.hpp"
#include "nn/loss.hpp"
#include "nn/metrics.hpp"
#include "nn/model.hpp"
#include "optim/optimizer.hpp"
#include "train/background_eval.hpp"
#include "train/compiled.hpp"
#include "train/progress.hpp"

namespace drun::train {

struct FitConfig {
  int64_t epochs = 1;
  int64_t max_steps = -1;  // stop after this many steps in all (< 0: no limit)
  std::string model_dir;   // where summary.json goes; empty: nowhere
};

struct FitResult {
  int64_t global_step = 0;
  int64_t epochs = 0;
  Evaluation train;  // the last epoch's running averages
  double images_per_sec = 0.0;
  std::optional<Evaluation> eval;
  double wall_seconds = 0.0;
  int workers = 1;
  json strategy = json::object();  // what the strategy measured in the last epoch
  json to_json() const;
};

class Trainer {
 public:
  Trainer(nn::Model& model, const Compiled& compiled, const kernels::Exec& exec);
  // From now on gradients are exchanged every step through `strategy`,
  // metrics are summed over workers, and only the chief evaluates and writes
  // summary.json. Sets the strategy up (e.g. the chief's initial weights).
  void set_strategy(dist::Strategy* strategy);

  // One training step on a batch; returns the batch's mean loss.
  double train_step(const data::Batch& batch);
  Evaluation evaluate(data::Pipeline& input, int64_t max_steps = -1);
  FitResult fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                Progress& progress);
  // Model outputs for every example of the input, rows in input order.
  Tensor predict(data::Pipeline& input);

  optim::Optimizer& optimizer() { return *optimizer_; }
  nn::Model& model() { return model_; }
  int64_t global_step() const { return global_step_; }

 private:
  MetricValues metric_values() const;
  void reset_metrics();
  // Adds every worker's loss and metric sums into this one's.
  void sum_over_workers();
  void report_eval(const BackgroundEval::Result& done, Progress& progress, FitResult& result);

  nn::Model& model_;
  Compiled compiled_;
  nn::Loss loss_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<nn::Metric> metrics_;
  std::vector<Param*> params_;
  kernels::Exec exec_;
  dist::Strategy* strategy_ = nullptr;
  Tensor dlogits_;
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;
  int64_t global_step_ = 0;
  BackgroundEval background_eval_;
};

// Writes `value` to `path` atomically: a temporary file, fsync, rename.
void write_json_atomically(const std::string& path, const json& value);

}  // namespace drun::train
