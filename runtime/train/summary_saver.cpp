#include "train/summary_saver.hpp"

#include "train/hook_registry.hpp"
#include "train/trainer.hpp"

namespace drun::train {

// A script's SummarySaverHook is no hook of its own: drun.hooks turns it into
// fit's save_summary_steps, which this saver reads.
const HookInfo& summary_saver_hook() {
  static const HookInfo info{{{"SummarySaverHook"},
                              "TensorBoard scalars every so many steps",
                              {{"save_steps", OptionType::integer, 100, "the interval in steps"}}},
                             {}};
  return info;
}

namespace {
using Clock = std::chrono::steady_clock;
}

SummarySaver::SummarySaver(const std::string& model_dir, int64_t every_steps)
    : events_(model_dir), every_steps_(every_steps) {}

void SummarySaver::begin(Trainer& trainer) {
  since_ = Clock::now();
  since_step_ = trainer.global_step();
  images_ = 0;
}

bool SummarySaver::after_step(const StepResult& step) {
  images_ += step.batch_size;
  if (step.global_step % every_steps_ != 0) return false;
  const int64_t at = step.global_step;
  const double secs = std::chrono::duration<double>(Clock::now() - since_).count();
  events_.scalar("loss", at, step.loss());
  // running[0] is the running loss; the metrics follow.
  const MetricValues running = step.running();
  for (size_t i = 1; i < running.size(); ++i)
    events_.scalar(running[i].first, at, running[i].second);
  events_.scalar("learning_rate", at, step.learning_rate);
  events_.scalar("global_step/sec", at, static_cast<double>(at - since_step_) / secs);
  events_.scalar("images/sec", at, static_cast<double>(images_) / secs);
  events_.flush();
  since_ = Clock::now();
  since_step_ = at;
  images_ = 0;
  return false;
}

void SummarySaver::end(Trainer&, json&) {
  events_.flush();
}

}  // namespace drun::train
