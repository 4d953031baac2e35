// FitResult: what a fit returns to the script and writes to summary.json
// (docs/formats.md): steps, epochs, the last epoch's training metrics and
// throughput, the last evaluation, how the fit ended.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "base/options.hpp"
#include "train/compile_options.hpp"

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
  bool already_done = false;       // resumed at or past the end: no step was taken
  json strategy = json::object();  // what the strategy measured in the last epoch
  // With several workers: what the steps were made of (train/scaling_meter).
  json scaling = json::object();
  // With a LossScaleOptimizer: {"scale": the scale at the end, "skipped_steps":
  // the steps whose gradients overflowed, this process}; empty otherwise.
  json loss_scale = json::object();
  // On a GPU: {"captures": graphs captured, "graph_steps": steps launched as
  // a graph, "off": why steps ran kernel by kernel, where they did}; empty on the CPU.
  json cuda_graphs = json::object();
  // After drun --min-workers went on without a lost node: [{"lost_node",
  // "step", "workers_before", "workers_after"}, ...] (launch/resize.hpp).
  json resizes = json::array();
  json to_json() const;
};

}  // namespace drun::train
