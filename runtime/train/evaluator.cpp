#include "train/evaluator.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "io/atomic_file.hpp"
#include "io/event_writer.hpp"
#include "train/checkpoint.hpp"

namespace drun::train {

namespace {

namespace fs = std::filesystem;

// The global step summary.json reports, when it was written after the
// checkpoint of that step (so it belongs to the training that wrote it); -1 else.
int64_t finished_step(const std::string& model_dir, const Checkpoints& checkpoints) {
  const fs::path summary = fs::path(model_dir) / "summary.json";
  std::error_code ec;
  if (!fs::exists(summary, ec)) return -1;
  json j;
  try {
    std::ifstream(summary) >> j;
  } catch (const json::exception&) {
    return -1;  // being replaced right now; look again
  }
  const int64_t step = j.value("global_step", int64_t{-1});
  const auto ckpt = fs::path(checkpoints.path_of(step));
  if (!fs::exists(ckpt, ec) || fs::last_write_time(summary, ec) < fs::last_write_time(ckpt, ec))
    return -1;
  return step;
}

}  // namespace

json run_evaluator(Trainer& trainer, data::Pipeline& eval, const EvaluatorConfig& config,
                   Progress& progress) {
  if (config.model_dir.empty())
    throw UsageError("the evaluator needs the training's model_dir to find its checkpoints");
  Checkpoints checkpoints(config.model_dir, 1);
  io::EventWriter events(config.model_dir + "/eval");
  json results = json::array(), evaluated = json::array(), last = json::object();
  int64_t done = -1;
  progress.line("evaluator: watching " + config.model_dir + " for checkpoints");
  for (;;) {
    const int64_t finished = finished_step(config.model_dir, checkpoints);
    const auto steps = checkpoints.steps();
    if (!steps.empty() && steps.back() > done) {
      const int64_t step = steps.back();  // the newest; older unseen ones are skipped, as TF does
      try {
        checkpoints.load(step, trainer.model(), trainer.optimizer());
      } catch (const UsageError& e) {
        // Being written or pruned under us: the next look settles it.
        progress.line(std::string("evaluator: ") + e.what() + "; looking again");
        std::this_thread::sleep_for(std::chrono::duration<double>(config.poll_seconds));
        continue;
      }
      const Evaluation e = trainer.evaluate(eval, config.eval_steps);
      events.scalar("loss", step, e.loss);
      json entry = {{"global_step", step}, {"loss", e.loss}, {"examples", e.examples}};
      MetricValues values{{"loss", e.loss}};
      for (const auto& [k, v] : e.metrics) {
        events.scalar(k, step, v);
        entry[k] = v;
        values.emplace_back(k, v);
      }
      events.flush();
      progress.line("evaluator: checkpoint " + std::to_string(step) + ": " +
                    format_values(values, "val_"));
      results.push_back(entry);
      evaluated.push_back(step);
      last = entry;
      io::write_json_atomically(config.model_dir + "/eval_results.json", results);
      done = step;
      continue;
    }
    if (finished >= 0 && finished <= done) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(config.poll_seconds));
  }
  progress.line("evaluator: training is over; " + std::to_string(evaluated.size()) +
                " checkpoint(s) evaluated");
  return {{"role", "evaluator"}, {"evaluated", evaluated}, {"eval", last}};
}

}  // namespace drun::train
