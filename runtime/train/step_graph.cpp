#include "train/step_graph.hpp"

#include <exception>

#include "kernels/gpu_backend.hpp"

namespace drun::train {

StepGraphs::StepGraphs(const kernels::Exec& ex, std::string off) : ex_(ex), off_(std::move(off)) {}

StepGraphs::~StepGraphs() = default;

void StepGraphs::turn_off(const std::string& why) {
  off_ = why;
  entries_.clear();
}

void StepGraphs::run(const Input& input, const std::function<void()>& launch_step) {
  if (!off_.empty()) {
    launch_step();
    return;
  }
  Entry& e = entries_[input];
  if (e.graph && !e.graph->current()) {
    e.graph.reset();  // its memory moved: warm up and capture again
    e.eager_runs = 0;
  }
  if (e.graph) {
    e.graph->launch();
    ++graph_launches_;
    return;
  }
  size_t graphs = 0;
  for (const auto& [key, entry] : entries_) graphs += entry.graph ? 1 : 0;
  if (e.eager_runs < kWarmRuns || graphs >= kMaxGraphs) {
    launch_step();
    ++e.eager_runs;
    return;
  }
  std::string why;
  kernels::begin_capture(ex_);
  try {
    launch_step();
  } catch (const std::exception& failed) {
    why = failed.what();
  }
  std::string ended;
  e.graph = kernels::end_capture(ex_, ended);
  if (!e.graph || !why.empty()) {
    e.graph.reset();
    turn_off("the step could not be captured (" + (why.empty() ? ended : why) + ")");
    run(input, launch_step);  // nothing of the step ran: run it now, kernel by kernel
    return;
  }
  ++captures_;
  e.graph->launch();
  ++graph_launches_;
}

}  // namespace drun::train
