// Validator: the chief's evaluation on the eval input during fit (Keras'
// validation_data): every eval_every_steps global steps and after each epoch
// (not twice at one step), on at most eval_steps batches. With several
// workers it evaluates a snapshot of the weights in the background
// (BackgroundEval) so the others need not wait, unless fit has callbacks,
// which read each epoch's evaluation at its end; alone, at once. Results go
// to fit's result, the progress output and, with summaries on,
// model_dir/eval's TensorBoard events. Fit adds it on the chief when there
// is an eval input.
#pragma once
#include <memory>

#include "data/pipeline.hpp"
#include "io/event_writer.hpp"
#include "train/background_eval.hpp"
#include "train/fit_config.hpp"
#include "train/hooks.hpp"

namespace drun::train {

struct FitResult;

class Validator final : public Hook {
 public:
  // `eval`, `progress` and `result` must outlive the hook. With `summaries`,
  // creates the events file in model_dir/eval.
  Validator(const FitConfig& config, data::Pipeline& eval, Progress& progress, FitResult& result,
            bool summaries);
  ~Validator() override;
  std::string name() const override { return "Validator"; }
  void begin(Trainer& trainer) override { trainer_ = &trainer; }
  void continuing(const StepResult& step) override;
  void end_epoch(EpochEnd& epoch) override;
  void complete() override;

 private:
  // Evaluates now, or starts it in the background with several workers;
  // returns the values to show (none when in the background).
  MetricValues evaluate(int64_t epoch);
  void report_background(const BackgroundEval::Result& done);
  void write_summary(const Evaluation& e);

  int64_t every_steps_, max_steps_;
  data::Pipeline& eval_;
  Progress& progress_;
  FitResult& result_;
  bool foreground_;  // evaluate at once with several workers too (callbacks wait for it)
  std::unique_ptr<io::EventWriter> events_;
  Trainer* trainer_ = nullptr;
  BackgroundEval background_;
  int64_t eval_step_ = 0;        // the global step being evaluated
  int64_t evaluated_step_ = -1;  // the step of the last evaluation started
};

}  // namespace drun::train
