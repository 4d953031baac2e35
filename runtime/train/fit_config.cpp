#include "train/fit_config.hpp"

namespace drun::train {

FitConfig parse_fit_config(Options& o) {
  FitConfig c;
  c.max_steps = o.get<int64_t>("steps", c.max_steps);
  // Steps without epochs bound the run by themselves (tf.estimator's train(steps)).
  c.epochs_bounded = o.has("epochs") || c.max_steps < 0;
  c.epochs = c.epochs_bounded ? o.get<int64_t>("epochs", c.epochs) : kUnboundedEpochs;
  c.model_dir = o.get<std::string>("model_dir", c.model_dir);
  c.save_checkpoints_steps = o.get<int64_t>("save_checkpoints_steps", 0);
  c.save_checkpoints_secs = o.get<double>("save_checkpoints_secs", 0);
  c.keep_checkpoint_max = o.get<int>("keep_checkpoint_max", c.keep_checkpoint_max);
  c.save_summary_steps = o.get<int64_t>("save_summary_steps", 0);
  c.eval_every_steps = o.get<int64_t>("eval_every_steps", 0);
  c.eval_steps = o.get<int64_t>("eval_steps", c.eval_steps);
  c.timeline = o.get<std::string>("timeline", c.timeline);
  const std::string& owner = o.owner();
  if (c.epochs < 1) throw UsageError(owner + ": epochs must be at least 1");
  if (c.save_checkpoints_steps < 0 || c.save_checkpoints_secs < 0 || c.save_summary_steps < 0 ||
      c.eval_every_steps < 0)
    throw UsageError(owner + ": checkpoint, summary and evaluation intervals must not be negative");
  return c;
}

}  // namespace drun::train
