// Trainer: the training loop of one process. One step is forward, loss,
// backward, optimizer update and metric accumulation, in C++, allocating
// nothing once warm. fit() runs epochs over a pipeline, evaluates after each
// epoch, prints progress and writes summary.json to the model directory.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/pipeline.hpp"
#include "distributed/host_staged.hpp"
#include "distributed/strategy.hpp"
#include "nn/loss.hpp"
#include "nn/metrics.hpp"
#include "nn/model.hpp"
#include "optim/optimizer.hpp"
#include "train/background_eval.hpp"
#include "train/checkpoint.hpp"
#include "train/compile_options.hpp"
#include "train/fit_config.hpp"
#include "train/hooks.hpp"
#include "train/progress.hpp"

namespace drun::io {
class EventWriter;
}

namespace drun::train {

struct FitResult {
  int64_t global_step = 0;
  int64_t epochs = 0;
  Evaluation train;  // the last epoch's running averages
  double images_per_sec = 0.0;
  std::optional<Evaluation> eval;
  double wall_seconds = 0.0;
  int workers = 1;
  std::string device = "cpu";  // where the chief computed: cpu or cuda
  bool preempted = false;      // stopped by SIGTERM/SIGUSR1 after a checkpoint
  bool stopped_by_hook = false;
  json strategy = json::object();  // what the strategy measured in the last epoch
  json to_json() const;
};

class Trainer {
 public:
  Trainer(nn::Model& model, const CompileOptions& compiled, const kernels::Exec& exec);
  ~Trainer();
  // From now on gradients are exchanged every step through `strategy`,
  // metrics are summed over workers, and only the chief evaluates and writes
  // summary.json. Sets the strategy up (e.g. the chief's initial weights).
  void set_strategy(distributed::Strategy* strategy);

  // Loads the newest readable checkpoint of `model_dir` (skipping broken ones
  // with a warning through `warn`); the next fit() continues from its step,
  // epoch and batch. Call before set_strategy, so that a strategy starts from
  // the restored variables. Returns the state restored, if any.
  std::optional<TrainingState> restore(const std::string& model_dir,
                                       const std::function<void(const std::string&)>& warn);

  // One training step on a batch; returns the batch's mean loss.
  double train_step(const data::Batch& batch);
  Evaluation evaluate(data::Pipeline& input, int64_t max_steps = -1);
  FitResult fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                Progress& progress);
  // Model outputs for every example of the input, rows in input order.
  Tensor predict(data::Pipeline& input);

  optim::Optimizer& optimizer() { return *optimizer_; }
  nn::Model& model() { return model_; }
  distributed::Strategy* strategy() { return strategy_; }
  int64_t global_step() const { return global_step_; }

 private:
  MetricValues metric_values() const;
  void reset_metrics();
  // Adds every worker's loss and metric sums into this one's.
  void sum_over_workers();
  void report_eval(const BackgroundEval::Result& done, Progress& progress, FitResult& result);
  // Whether to stop for preemption; workers in lockstep agree every
  // kAgreeEvery steps, so all stop at the same step.
  bool preemption_agreed();
  void save_checkpoint(Checkpoints& checkpoints, const TrainingState& state);
  void write_eval_summary(const Evaluation& e);
  // Evaluates on the chief: on a snapshot in the background with several
  // workers, else at once; returns the values to show (empty when in the background).
  MetricValues evaluate_now(data::Pipeline& eval, int64_t epoch, int64_t max_steps,
                            Progress& progress, FitResult& result);
  static constexpr int64_t kAgreeEvery = 20;

  nn::Model& model_;
  CompileOptions compiled_;
  nn::Loss loss_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<nn::Metric> metrics_;
  std::vector<Param*> params_;
  kernels::Exec exec_;
  // Batches to the device the model runs on (nothing to do on the CPU).
  kernels::InputStager stage_x_, stage_y_;
  std::unique_ptr<distributed::HostStaged> staged_;  // a host strategy's view of a GPU's variables
  distributed::Strategy* strategy_ = nullptr;
  Tensor dlogits_;
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;
  int64_t global_step_ = 0;
  BackgroundEval background_eval_;
  std::optional<TrainingState> resume_;
  StepResult step_result_;                        // what hooks see after each step
  std::unique_ptr<io::EventWriter> eval_events_;  // model_dir/eval, during fit
  int64_t eval_step_ = 0;                         // the global step being evaluated
};

// Writes `text` to `path` atomically: a temporary file, fsync, rename.
void write_text_atomically(const std::string& path, const std::string& text);
void write_json_atomically(const std::string& path, const json& value);

}  // namespace drun::train
