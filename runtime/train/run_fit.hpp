// run_fit: what one fit of a script does on this rank, as its role decides.
// A parameter server serves the workers until they are done; the evaluator
// evaluates each new checkpoint of model_dir; a worker (the chief included)
// resumes from model_dir's newest checkpoint, joins the job's strategy (with
// the learning-rate scaling it asks for), trains on its shard of the input
// and releases the parameter servers when done. The Lua binding converts
// values and calls these functions; nothing here knows Lua.
#pragma once
#include <memory>

#include "base/options.hpp"
#include "data/dataset.hpp"
#include "data/pipeline.hpp"
#include "distributed/strategy_spec.hpp"
#include "train/context.hpp"
#include "train/fit_config.hpp"
#include "train/session.hpp"

namespace drun::train {

// An input as a script gives it: a data set and the ops of its pipeline
// (data::parse_pipeline_ops; anything but a list counts as none).
struct Input {
  std::shared_ptr<const data::Dataset> dataset;
  json ops = json::array();
};

// The input's pipeline. With shards > 1 and a data set that was not sharded
// when loaded, shard `shard` of it (UsageError if the ops shard it already).
std::unique_ptr<data::Pipeline> make_pipeline(const Input& input, int shards = 1, int shard = 0);

struct FitRequest {
  FitConfig config;  // hooks: the caller's, alive during run_fit
  distributed::StrategySpec strategy;
};

// fit's options: parse_fit_config's and `strategy` ({name, options}, default
// AllReduce); UsageError for a bad value or an unknown key.
FitRequest parse_fit_request(const json& options);

// Returns what fit gives the script: summary.json's content on a worker, what
// a parameter server served, the evaluator's results. A preempted fit throws
// Preempted (train/preemption.hpp), saying where it stopped and how to resume.
json run_fit(Context& ctx, Session& session, const FitRequest& request, const Input& train,
             const Input* eval);

// Plan mode: records what a fit would run (the strategy, checked, and the
// model's summary) in ctx.planned_fit for the launcher.
void plan_fit(Context& ctx, const nn::Model& model, const json& strategy,
              const std::string& model_dir = "");

}  // namespace drun::train
