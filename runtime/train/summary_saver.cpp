#include "train/summary_saver.hpp"

#include <algorithm>
#include <cmath>

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

SummarySaver::SummarySaver(const std::string& model_dir, int64_t every_steps,
                           int64_t histogram_every_epochs)
    : events_(model_dir),
      every_steps_(every_steps),
      histogram_every_epochs_(histogram_every_epochs) {}

void SummarySaver::begin(Trainer& trainer) {
  trainer_ = &trainer;
  since_ = Clock::now();
  since_step_ = trainer.global_step();
  images_ = 0;
}

bool SummarySaver::after_step(const StepResult& step) {
  images_ += step.batch_size;
  if (every_steps_ == 0 || step.global_step % every_steps_ != 0) return false;
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

void SummarySaver::end_epoch(EpochEnd& epoch) {
  // Keras' rule: epochs 0, n, 2n... counted from 0, so the first epoch has one.
  if (histogram_every_epochs_ == 0 || epoch.epoch % histogram_every_epochs_ != 0) return;
  const int64_t at = trainer_->global_step();
  for (const Param* p : trainer_->model().params()) {
    const Tensor host = p->value.to(Device::cpu);
    const std::span<const float> values = host.span_f32();
    // A weight gone NaN is NanGuard's to report (the loss shows it too); a
    // histogram cannot hold it, and the other weights' histograms still can.
    if (std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); }))
      events_.histogram(p->name, at, values);
  }
  events_.flush();
}

void SummarySaver::end(Trainer&, json&) {
  events_.flush();
}

}  // namespace drun::train
