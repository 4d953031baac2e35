// The evaluator (tf.estimator's evaluator task): a process beside the training
// job that waits for new checkpoints in model_dir, evaluates each one, and
// writes the results to model_dir/eval (TensorBoard) and
// model_dir/eval_results.json. It ends once the chief has written summary.json
// for the newest checkpoint (the training is over and nothing is left to
// evaluate), so it never outlives its job.
#pragma once
#include <string>

#include "data/pipeline.hpp"
#include "train/trainer.hpp"

namespace drun::train {

struct EvaluatorConfig {
  std::string model_dir;
  int64_t eval_steps = -1;    // batches per evaluation; < 0: the whole input
  double poll_seconds = 0.5;  // how often to look for a new checkpoint
};

// Returns {"role": "evaluator", "evaluated": [steps...], "eval": last result}.
json run_evaluator(Trainer& trainer, data::Pipeline& eval, const EvaluatorConfig& config,
                   Progress& progress);

}  // namespace drun::train
