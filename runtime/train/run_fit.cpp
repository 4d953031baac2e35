#include "train/run_fit.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "distributed/strategy_factory.hpp"
#include "launch/resize.hpp"
#include "train/evaluator.hpp"
#include "train/fit_timeline.hpp"
#include "train/preemption.hpp"
#include "train/run_setup.hpp"

namespace drun::train {

std::unique_ptr<data::Pipeline> make_pipeline(const Input& input, int shards, int shard) {
  if (!input.dataset) throw std::logic_error("make_pipeline: no data set");
  auto spec = data::parse_pipeline_ops(input.ops.is_array() ? input.ops : json::array());
  if (shards > 1 && !input.dataset->sharded) {
    if (spec.shard_count != 1)
      throw UsageError(
          "the training input is sharded over the workers already; remove its shard()");
    spec.shard_count = shards;
    spec.shard_index = shard;
  }
  return std::make_unique<data::Pipeline>(input.dataset, spec);
}

FitRequest parse_fit_request(const json& options) {
  Options o(options, "fit", fit_run_schema());
  FitRequest r;
  r.config = parse_fit_config(o);
  const json& strategy = o.value("strategy");
  r.strategy = distributed::parse_strategy(strategy.is_null() ? json::object() : strategy);
  o.finish();
  return r;
}

void plan_fit(Context& ctx, const nn::Model& model, const json& strategy,
              const std::string& model_dir) {
  ctx.planned_fit =
      PlannedFit{distributed::parse_strategy(strategy.is_null() ? json::object() : strategy),
                 model.summary(), model_dir};
}

namespace {

// A parameter server's fit: serve the workers until they are done.
json serve(const Context& ctx, Session& s, const FitRequest& r, timeline::Timeline* tl) {
  if (!r.strategy.uses_servers())
    throw UsageError("this rank is a parameter server, but strategy " + r.strategy.name +
                     " uses none");
  if (!ctx.comm) throw std::logic_error("a parameter server outside an MPI job");
  return distributed::serve(r.strategy, *ctx.comm, s.model->params(), s.compiled.optimizer,
                            r.config.model_dir, tl);
}

// The evaluator's fit: evaluate each new checkpoint until the training is over.
json evaluate(const Context& ctx, Session& s, const FitRequest& r, const Input* eval) {
  if (!eval)
    throw UsageError("the evaluator needs an evaluation input (eval_input / validation_data)");
  auto input = make_pipeline(*eval);
  Progress progress(ctx.tty, ctx.quiet);
  return run_evaluator(s.trainer, *input, {r.config.model_dir, r.config.eval_steps, 0.5}, progress);
}

// Whether a run resumed at `at` has nothing left to train (a callback such
// as EarlyStopping ended it, or its steps or epochs are done).
bool training_done(const TrainingState& at, const FitConfig& c, int64_t batches_per_epoch) {
  if (at.callbacks.is_object() && at.callbacks.value("stopped", false)) return true;
  const int64_t epoch = at.batch >= batches_per_epoch ? at.epoch + 1 : at.epoch;
  return (c.max_steps >= 0 && at.global_step >= c.max_steps) || epoch >= c.epochs;
}

// A checkpoint in model_dir: continue from it, telling the chief's user
// (one line: resuming, or nothing left to do). A run of another setup is
// refused, as is a trace of a run with nothing left to trace. Starting afresh
// over another run's summary.json says so too, so that it is never replaced
// silently; the chief records the setup of a run it starts.
// A rerun that the launcher resized after a lost node (`resized`) is another
// setup by design: it records its own.
std::optional<TrainingState> resume(Trainer& trainer, const FitConfig& c, int64_t batches_per_epoch,
                                    const RunSetup& setup, bool tracing, bool chief, bool resized) {
  const std::string& dir = c.model_dir;
  const auto resumed = trainer.restore(dir, [&](const std::string& warning) {
    if (chief) std::fprintf(stderr, "drun: warning: %s\n", warning.c_str());
  });
  if (dir.empty()) return resumed;
  if (resumed && !resized) check_setup(dir, setup);
  if (resumed && resized && chief) record_setup(dir, setup);
  const bool done = resumed && training_done(*resumed, c, batches_per_epoch);
  if (done && tracing)
    throw UsageError("--timeline: model_dir " + dir + " is already at step " +
                     std::to_string(resumed->global_step) +
                     " (training done), so there is nothing to trace; give more --epochs to "
                     "continue it, or --model-dir DIR for a new run");
  if (!chief) return resumed;
  if (!resumed) {
    if (std::filesystem::exists(dir + "/summary.json"))
      std::fprintf(stderr,
                   "drun: warning: model_dir %s holds an earlier run's summary.json and no "
                   "checkpoint to resume from; this run replaces it (another model_dir keeps "
                   "both)\n",
                   dir.c_str());
    record_setup(dir, setup);
    return resumed;
  }
  if (done)
    std::fprintf(stderr,
                 "drun: model_dir %s is already at step %lld (training done); nothing to do "
                 "(more --epochs continue it, --model-dir DIR starts a new run)\n",
                 dir.c_str(), static_cast<long long>(resumed->global_step));
  else
    std::fprintf(stderr, "drun: resuming from %s/ckpt-%lld.h5 (epoch %lld, batch %lld)\n",
                 dir.c_str(), static_cast<long long>(resumed->global_step),
                 static_cast<long long>(resumed->epoch + 1),
                 static_cast<long long>(resumed->batch));
  return resumed;
}

// What a finished run's rerun returns: the summary.json of the run that
// trained (its last evaluation printed), else this fit's result.
json finished_run(const FitConfig& c, const FitResult& result) {
  std::ifstream in(c.model_dir + "/summary.json");
  json summary = in ? json::parse(in, nullptr, false) : json();
  if (!summary.is_object()) return result.to_json();
  if (summary.contains("eval") && summary["eval"].is_object()) {
    MetricValues values;
    for (const auto& [k, v] : summary["eval"].items())
      if (v.is_number() && k != "examples") values.emplace_back(k, v.get<double>());
    std::fprintf(stderr, "drun: its last evaluation: %s\n", format_values(values, "val_").c_str());
  }
  return summary;
}

// While it lives, the session's trainer and strategy record on a timeline.
class Recording {
 public:
  Recording(Session& s, timeline::Timeline* tl) : s_(s) { attach(tl); }
  ~Recording() { attach(nullptr); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

 private:
  void attach(timeline::Timeline* tl) {
    s_.trainer.set_timeline(tl);
    if (s_.strategy) s_.strategy->set_timeline(tl);
  }
  Session& s_;
};

// A worker's fit (the chief's too).
json train(Context& ctx, Session& s, const FitRequest& r, const Input& train, const Input* eval,
           timeline::Timeline* tl) {
  const int workers = ctx.worker_count();
  const bool servers = ctx.comm && ctx.comm->size() > workers;
  std::unique_ptr<distributed::Strategy> fresh;
  if ((workers > 1 || servers) && !s.strategy)
    fresh = distributed::make_strategy(r.strategy, *ctx.comm, *ctx.workers, s.compiled.optimizer);
  auto train_input = make_pipeline(train, workers, ctx.worker_rank());
  // On every rank, before the strategy hands the chief's variables to the others.
  const bool chief = ctx.role == "chief";
  const RunSetup setup{workers, r.strategy.name, train_input->spec().batch_size};
  // Set by drun --min-workers for a rerun on fewer nodes (launch/resize.hpp).
  const char* resized_env = std::getenv("DRUN_RESIZED");
  const auto resizes = launch::parse_resizes(resized_env ? resized_env : "");
  s.trainer.set_resizes(launch::resizes_json(resizes));
  const auto resumed = resume(s.trainer, r.config, train_input->batches_per_epoch(), setup,
                              tl != nullptr, chief, !resizes.empty());
  if (fresh) {
    s.strategy = std::move(fresh);
    if (resumed) s.strategy->resume_from(resumed->global_step);
    s.trainer.set_strategy(s.strategy.get());
    // Linear scaling (Goyal et al. 2017) where this worker applies the mean
    // of all workers' gradients; servers scale their own optimizer.
    if (r.strategy.scale_lr && r.strategy.exchange == distributed::Exchange::all_reduce)
      s.trainer.optimizer().set_lr_scale(static_cast<float>(workers));
  }
  std::unique_ptr<data::Pipeline> eval_input;
  if (eval) eval_input = make_pipeline(*eval);
  Progress progress(ctx.tty, ctx.quiet);
  train_input->set_timeline(tl);
  FitResult result;
  {
    Recording recording(s, tl);
    result = s.trainer.fit(*train_input, eval_input.get(), r.config, progress);
  }
  // Parameter servers return when a fit ends: a later fit starts afresh with
  // new ones (the servers' ranks serve again from their own fit call).
  if (s.strategy && r.strategy.uses_servers()) {
    s.trainer.set_strategy(nullptr);
    s.strategy.reset();
  }
  if (result.preempted) {
    const std::string& dir = r.config.model_dir;
    throw Preempted(
        "preempted at step " + std::to_string(result.global_step) +
        (dir.empty() ? "; no model_dir, so nothing was saved"
                     : "; checkpoint written to " + dir + ", rerun the same command to resume"));
  }
  if (result.already_done && chief) return finished_run(r.config, result);
  return result.to_json();
}

}  // namespace

json run_fit(Context& ctx, Session& session, const FitRequest& request, const Input& train_input,
             const Input* eval_input) {
  if (ctx.role == "evaluator") return evaluate(ctx, session, request, eval_input);
  const std::string& path =
      request.config.timeline.empty() ? ctx.timeline : request.config.timeline;
  std::optional<FitTimeline> tl;
  if (!path.empty()) tl.emplace(ctx, path);  // on every rank of the job together
  json result = ctx.role == "ps" ? serve(ctx, session, request, tl ? tl->get() : nullptr)
                                 : train(ctx, session, request, train_input, eval_input,
                                         tl ? tl->get() : nullptr);
  if (tl) tl->write();
  return result;
}

}  // namespace drun::train
