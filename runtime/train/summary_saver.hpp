// SummarySaver: the chief's TensorBoard summaries during fit (TensorFlow's
// SummarySaverHook): every save_summary_steps steps, the step's loss, the
// epoch's running metrics, the learning rate, global_step/sec and images/sec;
// every histogram_freq epochs (Keras' TensorBoard), a histogram of each
// weight, tagged with its checkpoint name ("dense/kernel") at the global step,
// the x axis of the scalars. All go into model_dir's events.out.tfevents.*
// file. Fit adds it on the chief when there is a model_dir and either interval
// is positive.
#pragma once
#include <chrono>

#include "io/event_writer.hpp"
#include "train/hooks.hpp"

namespace drun::train {

class SummarySaver final : public Hook {
 public:
  // Creates the events file in `model_dir`. 0 turns scalars (every_steps)
  // or histograms (histogram_every_epochs) off.
  SummarySaver(const std::string& model_dir, int64_t every_steps, int64_t histogram_every_epochs);
  std::string name() const override { return "SummarySaverHook"; }
  void begin(Trainer& trainer) override;
  bool after_step(const StepResult& step) override;
  void end_epoch(EpochEnd& epoch) override;
  void end(Trainer& trainer, json& result) override;

 private:
  io::EventWriter events_;
  int64_t every_steps_;
  int64_t histogram_every_epochs_;
  Trainer* trainer_ = nullptr;
  std::chrono::steady_clock::time_point since_;  // of the last scalars (or of the start)
  int64_t since_step_ = 0;
  int64_t images_ = 0;  // trained on since then
};

}  // namespace drun::train
