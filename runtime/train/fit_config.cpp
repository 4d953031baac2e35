#include "train/fit_config.hpp"

namespace drun::train {

namespace {
// "" (FitConfig's "none") as the schema's "no default".
json none_if_empty(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}
}  // namespace

const Schema& fit_input_schema() {
  static const Schema s{
      {"x", OptionType::any, nullptr, "the training input, a data set (required)"},
      {"validation_data", OptionType::any, nullptr,
       "a data set evaluated after each epoch (and every eval_every_steps)"},
      {"batch_size", OptionType::integer, nullptr,
       "the batch of inputs without a batch() (Keras' 32)"},
      {"hooks", OptionType::any, nullptr, "a list of hooks (drun.hooks or tables of your own)"},
      {"callbacks", OptionType::any, nullptr,
       "a list of callbacks (drun.callbacks, as keras.callbacks, or tables of your own)"}};
  return s;
}

const Schema& fit_run_schema() {
  static const Schema s = [] {
    const FitConfig d;
    return Schema{
        {"epochs", OptionType::integer, d.epochs,
         "passes over the input (with only steps given: as many as steps needs)"},
        {"steps", OptionType::integer, d.max_steps, "stop at this global step (< 0: no limit)"},
        {"model_dir", OptionType::string, none_if_empty(d.model_dir),
         "checkpoints, TensorBoard events and summary.json; none: nothing written"},
        {"save_checkpoints_steps", OptionType::integer, d.save_checkpoints_steps,
         "checkpoint interval in steps, and one after the last step (0 with "
         "save_checkpoints_secs 0: no checkpoints)"},
        {"save_checkpoints_secs", OptionType::number, d.save_checkpoints_secs,
         "checkpoint interval in seconds, and one after the last step (0 with "
         "save_checkpoints_steps 0: no checkpoints)"},
        {"keep_checkpoint_max", OptionType::integer, d.keep_checkpoint_max,
         "checkpoints kept in model_dir"},
        {"save_summary_steps", OptionType::integer, d.save_summary_steps,
         "TensorBoard scalars interval in steps (0: none)"},
        {"histogram_freq", OptionType::integer, d.histogram_freq,
         "TensorBoard weight histograms interval in epochs, as Keras' TensorBoard (0: none)"},
        {"eval_every_steps", OptionType::integer, d.eval_every_steps,
         "also evaluate every so many steps (0: after each epoch only)"},
        {"eval_steps", OptionType::integer, d.eval_steps,
         "batches per evaluation (< 0: the whole input)"},
        {"timeline", OptionType::string, none_if_empty(d.timeline),
         "a Chrome trace of the fit, every rank in one file"},
        {"strategy", OptionType::table, nullptr,
         "how workers keep in step, a drun.strategy description (default: AllReduce)"}};
  }();
  return s;
}

const Schema& fit_schema() {
  static const Schema s = fit_input_schema().with(fit_run_schema());
  return s;
}

FitConfig parse_fit_config(Options& o) {
  FitConfig c;
  c.max_steps = o.get<int64_t>("steps", c.max_steps);
  // Steps without epochs bound the run by themselves (tf.estimator's train(steps)).
  c.epochs_bounded = o.has("epochs") || c.max_steps < 0;
  c.epochs = c.epochs_bounded ? o.get<int64_t>("epochs", c.epochs) : kUnboundedEpochs;
  c.model_dir = o.get<std::string>("model_dir", c.model_dir);
  c.save_checkpoints_steps = o.get<int64_t>("save_checkpoints_steps", c.save_checkpoints_steps);
  c.save_checkpoints_secs = o.get<double>("save_checkpoints_secs", c.save_checkpoints_secs);
  c.keep_checkpoint_max = o.get<int>("keep_checkpoint_max", c.keep_checkpoint_max);
  c.save_summary_steps = o.get<int64_t>("save_summary_steps", c.save_summary_steps);
  c.histogram_freq = o.get<int64_t>("histogram_freq", c.histogram_freq);
  c.eval_every_steps = o.get<int64_t>("eval_every_steps", c.eval_every_steps);
  c.eval_steps = o.get<int64_t>("eval_steps", c.eval_steps);
  c.timeline = o.get<std::string>("timeline", c.timeline);
  const std::string& owner = o.owner();
  if (c.epochs < 1) throw UsageError(owner + ": epochs must be at least 1");
  if (c.save_checkpoints_steps < 0 || c.save_checkpoints_secs < 0 || c.save_summary_steps < 0 ||
      c.histogram_freq < 0 || c.eval_every_steps < 0)
    throw UsageError(owner + ": checkpoint, summary and evaluation intervals must not be negative");
  return c;
}

}  // namespace drun::train
