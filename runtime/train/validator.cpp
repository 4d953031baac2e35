#include "train/validator.hpp"

#include "train/trainer.hpp"

namespace drun::train {

Validator::Validator(const FitConfig& config, data::Pipeline& eval, Progress& progress,
                     FitResult& result, bool summaries)
    : every_steps_(config.eval_every_steps),
      max_steps_(config.eval_steps),
      eval_(eval),
      progress_(progress),
      result_(result),
      foreground_(!config.callbacks.empty()) {
  if (summaries) events_ = std::make_unique<io::EventWriter>(config.model_dir + "/eval");
}

Validator::~Validator() = default;

void Validator::continuing(const StepResult& step) {
  if (every_steps_ <= 0 || step.global_step % every_steps_ != 0) return;
  const auto values = evaluate(step.epoch);
  if (values.empty()) return;
  progress_.line("evaluation at step " + std::to_string(step.global_step) + ": " +
                 format_values(values, "val_"));
}

void Validator::end_epoch(EpochEnd& epoch) {
  // Not twice at one step: the step interval may have just evaluated. (A fit
  // stopped by max_steps on such a step has not: its last step runs no
  // `continuing`.)
  if (evaluated_step_ != trainer_->global_step()) epoch.shown = evaluate(epoch.epoch);
}

void Validator::complete() {
  if (auto done = background_.finish()) report_background(*done);
}

MetricValues Validator::evaluate(int64_t epoch) {
  MetricValues values;
  evaluated_step_ = trainer_->global_step();
  auto* strategy = trainer_->strategy();
  // Callbacks read this epoch's values at its end: then the others wait.
  if (strategy && strategy->workers() > 1 && !foreground_) {
    // The other workers go on training while the chief's copy is evaluated.
    if (auto done = background_.finish()) report_background(*done);
    eval_step_ = trainer_->global_step();
    background_.start(trainer_->model(), trainer_->compiled(), eval_, epoch, max_steps_,
                      trainer_->timeline());
    return values;
  }
  {
    timeline::Span span(trainer_->timeline(), timeline::Lane::main, timeline::kMain, "evaluate",
                        "evaluate", "epoch", epoch);
    result_.eval = trainer_->evaluate(eval_, max_steps_);
  }
  eval_step_ = trainer_->global_step();
  write_summary(*result_.eval);
  values.emplace_back("loss", result_.eval->loss);
  for (const auto& kv : result_.eval->metrics) values.push_back(kv);
  return values;
}

void Validator::report_background(const BackgroundEval::Result& done) {
  result_.eval = done.evaluation;
  write_summary(done.evaluation);
  MetricValues values{{"loss", done.evaluation.loss}};
  values.insert(values.end(), done.evaluation.metrics.begin(), done.evaluation.metrics.end());
  progress_.line("evaluation at step " + std::to_string(eval_step_) + " (epoch " +
                 std::to_string(done.epoch + 1) + "): " + format_values(values, "val_"));
}

void Validator::write_summary(const Evaluation& e) {
  if (!events_) return;
  events_->scalar("loss", eval_step_, e.loss);
  for (const auto& [k, v] : e.metrics) events_->scalar(k, eval_step_, v);
  events_->flush();
}

}  // namespace drun::train
