// SummarySaver: the chief's TensorBoard scalars during fit (TensorFlow's
// SummarySaverHook): every save_summary_steps steps, the step's loss, the
// epoch's running metrics, the learning rate, global_step/sec and images/sec
// into model_dir's events.out.tfevents.* file. Fit adds it on the chief when
// there is a model_dir and save_summary_steps > 0.
#pragma once
#include <chrono>

#include "io/event_writer.hpp"
#include "train/hooks.hpp"

namespace drun::train {

class SummarySaver final : public Hook {
 public:
  // Creates the events file in `model_dir`.
  SummarySaver(const std::string& model_dir, int64_t every_steps);
  std::string name() const override { return "SummarySaverHook"; }
  void begin(Trainer& trainer) override;
  bool after_step(const StepResult& step) override;
  void end(Trainer& trainer, json& result) override;

 private:
  io::EventWriter events_;
  int64_t every_steps_;
  std::chrono::steady_clock::time_point since_;  // of the last scalars (or of the start)
  int64_t since_step_ = 0;
  int64_t images_ = 0;  // trained on since then
};

}  // namespace drun::train
