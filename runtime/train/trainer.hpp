// Trainer: the training loop of one process. One step is forward, loss,
// backward, optimizer update and metric accumulation, in C++, allocating
// nothing once warm. fit() runs epochs over a pipeline with hooks: the
// user's, then its own for checkpoints, summaries and evaluation
// (train/checkpoint_saver, train/summary_saver, train/validator); it prints
// progress and writes summary.json to the model directory.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/pipeline.hpp"
#include "distributed/host_staged.hpp"
#include "distributed/strategy.hpp"
#include "nn/loss.hpp"
#include "nn/metrics.hpp"
#include "nn/model.hpp"
#include "optim/optimizer.hpp"
#include "train/checkpoint.hpp"
#include "train/compile_options.hpp"
#include "train/fit_config.hpp"
#include "train/fit_result.hpp"
#include "train/hooks.hpp"
#include "train/progress.hpp"
#include "train/running_values.hpp"
#include "train/scaling_meter.hpp"
#include "train/step_graph.hpp"

namespace drun::train {

class CallbackRunner;

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

  // One training step on a batch. On a GPU it returns once the step's
  // kernels are queued; last_loss() waits for them.
  void train_step(const data::Batch& batch);
  // The mean loss of the last step's batch.
  double last_loss() { return values_.last_loss(); }
  Evaluation evaluate(data::Pipeline& input, int64_t max_steps = -1);
  FitResult fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                Progress& progress);
  // Model outputs for every example of the input, rows in input order.
  Tensor predict(data::Pipeline& input);

  // Writes a checkpoint (the strategy's servers first, unless not `servers`:
  // their shards of that step are written already) of the state `state`.
  void save_checkpoint(Checkpoints& checkpoints, const TrainingState& state, bool servers = true);

  // Steps, input waits, layers, updates, evaluations and checkpoints are
  // recorded there from now on (null: nowhere); the caller keeps it alive.
  void set_timeline(timeline::Timeline* timeline);
  timeline::Timeline* timeline() const { return timeline_; }

  // The node losses this run went on after (FitResult::resizes), for summary.json.
  void set_resizes(json resizes) { resizes_ = std::move(resizes); }

  optim::Optimizer& optimizer() { return *optimizer_; }
  nn::Model& model() { return model_; }
  const CompileOptions& compiled() const { return compiled_; }
  distributed::Strategy* strategy() { return strategy_; }
  int64_t global_step() const { return global_step_; }
  // The steps' CUDA graphs on a GPU, once a step ran there; null otherwise.
  const StepGraphs* step_graphs() const { return graphs_.get(); }

 private:
  // Adds every worker's loss and metric sums into this one's.
  void sum_over_workers();
  // Whether to stop for preemption; workers in lockstep agree every
  // kAgreeEvery steps, so all stop at the same step.
  bool preemption_agreed();
  // What hooks see after a step, filled in place (no allocation once warm).
  const StepResult& step_result(int64_t epoch, int64_t batch, int64_t batch_size, bool ends_epoch);
  // After an epoch: metrics summed over workers into `result`, the hooks'
  // end_epoch, the epoch's progress line. Returns whether a hook ends the fit there.
  bool end_epoch(EpochEnd end, const std::vector<Hook*>& hooks, FitResult& result,
                 Progress& progress, double images_per_sec, bool last);
  // The end of fit: the result's totals, the hooks' end, summary.json.
  void finish_fit(const FitConfig& config, const std::vector<Hook*>& hooks, FitResult& result,
                  bool chief);
  // compile's precision: the model's compute type, a loss scale for mixed_float16.
  void set_precision(const std::string& precision);
  // A training step's forward, loss, metrics and backward (device work only:
  // a CUDA graph may record it).
  void forward_backward(const Tensor& x, const Tensor& y);
  // The model's checks of an input batch on the host (nn::Model::check_input).
  void check_input(const Tensor& host_x) const;
  // Why this trainer's steps must not be captured into CUDA graphs; empty where they may.
  std::string why_not_graphs();
  // Gradient accumulation (optim/optimizer.hpp): whether the batch of global
  // step global_step_ + 1 ends a cycle of k, i.e. updates; every batch without accumulation.
  bool update_due() const { return (global_step_ + 1) % optimizer_->accumulation_steps() == 0; }
  // On an update's batch: the accumulated gradients into these variables'.
  void add_accumulated(std::span<Param> params);
  static constexpr int64_t kAgreeEvery = 20;

  nn::Model& model_;
  CompileOptions compiled_;
  nn::Loss loss_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<Param*> params_;
  std::unordered_map<const Param*, size_t> index_of_;  // a variable's position in params_
  // This step updates (is the last of its cycle): the backward listener
  // starts the exchange only then.
  bool updating_ = true;
  kernels::Exec exec_;
  // Batches to the device the model runs on (nothing to do on the CPU).
  kernels::InputStager stage_x_, stage_y_;
  std::unique_ptr<distributed::HostStaged> staged_;  // a host strategy's view of a GPU's variables
  distributed::Strategy* strategy_ = nullptr;
  // strategy_ where it exchanges gradients during each step; null where
  // steps run as without a strategy (AllReduce with one worker).
  distributed::Strategy* step_strategy_ = nullptr;
  timeline::Timeline* timeline_ = nullptr;
  Tensor dlogits_;
  RunningValues values_, eval_values_;  // the epoch's, an evaluation's
  int64_t global_step_ = 0;
  std::optional<TrainingState> resume_;
  StepResult step_result_;               // what hooks see after each step
  CallbackRunner* callbacks_ = nullptr;  // fit's, while it runs: its state goes into checkpoints
  json resizes_ = json::array();         // set_resizes
  // fit's input, while it runs: its position goes into checkpoints.
  data::Pipeline* train_ = nullptr;
  // On a GPU, from the first step: the steps' CUDA graphs (or why there are none).
  std::unique_ptr<StepGraphs> graphs_;
  bool graphs_said_ = false;  // fit printed why they are off
  // With several workers: what this fit's steps were made of (summary.json's
  // "scaling"), and the exchange wait of the step train_step last ran.
  ScalingMeter scaling_;
  double step_exchange_seconds_ = 0.0;
};

}  // namespace drun::train
