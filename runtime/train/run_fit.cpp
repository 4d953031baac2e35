#include "train/run_fit.hpp"

#include <cstdio>
#include <stdexcept>

#include "distributed/strategy_factory.hpp"
#include "train/evaluator.hpp"
#include "train/preemption.hpp"

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
  Options o(options, "fit");
  FitRequest r;
  r.config = parse_fit_config(o);
  r.strategy = distributed::parse_strategy(o.get<json>("strategy", json::object()));
  o.finish();
  return r;
}

void plan_fit(Context& ctx, const nn::Model& model, const json& strategy) {
  ctx.planned_fit = PlannedFit{
      distributed::parse_strategy(strategy.is_null() ? json::object() : strategy), model.summary()};
}

namespace {

// A parameter server's fit: serve the workers until they are done.
json serve(const Context& ctx, Session& s, const FitRequest& r) {
  if (!r.strategy.uses_servers())
    throw UsageError("this rank is a parameter server, but strategy " + r.strategy.name +
                     " uses none");
  if (!ctx.comm) throw std::logic_error("a parameter server outside an MPI job");
  return distributed::serve(r.strategy, *ctx.comm, s.model->params(), s.compiled.optimizer,
                            r.config.model_dir);
}

// The evaluator's fit: evaluate each new checkpoint until the training is over.
json evaluate(const Context& ctx, Session& s, const FitRequest& r, const Input* eval) {
  if (!eval)
    throw UsageError("the evaluator needs an evaluation input (eval_input / validation_data)");
  auto input = make_pipeline(*eval);
  Progress progress(ctx.tty, ctx.quiet);
  return run_evaluator(s.trainer, *input, {r.config.model_dir, r.config.eval_steps, 0.5}, progress);
}

// A checkpoint in model_dir: continue from it, telling the chief's user.
std::optional<TrainingState> resume(Trainer& trainer, const std::string& model_dir, bool chief) {
  const auto resumed = trainer.restore(model_dir, [&](const std::string& warning) {
    if (chief) std::fprintf(stderr, "drun: warning: %s\n", warning.c_str());
  });
  if (resumed && chief)
    std::fprintf(stderr, "drun: resuming from %s/ckpt-%lld.h5 (epoch %lld, batch %lld)\n",
                 model_dir.c_str(), static_cast<long long>(resumed->global_step),
                 static_cast<long long>(resumed->epoch + 1),
                 static_cast<long long>(resumed->batch));
  return resumed;
}

// A worker's fit (the chief's too).
json train(Context& ctx, Session& s, const FitRequest& r, const Input& train, const Input* eval) {
  const int workers = ctx.worker_count();
  const bool servers = ctx.comm && ctx.comm->size() > workers;
  std::unique_ptr<distributed::Strategy> fresh;
  if ((workers > 1 || servers) && !s.strategy)
    fresh = distributed::make_strategy(r.strategy, *ctx.comm, *ctx.workers, s.compiled.optimizer);
  // On every rank, before the strategy hands the chief's variables to the others.
  const auto resumed = resume(s.trainer, r.config.model_dir, ctx.role == "chief");
  if (fresh) {
    s.strategy = std::move(fresh);
    if (resumed) s.strategy->resume_from(resumed->global_step);
    s.trainer.set_strategy(s.strategy.get());
    // Linear scaling (Goyal et al. 2017) where this worker applies the mean
    // of all workers' gradients; servers scale their own optimizer.
    if (r.strategy.scale_lr && r.strategy.exchange == distributed::Exchange::all_reduce)
      s.trainer.optimizer().set_lr_scale(static_cast<float>(workers));
  }
  auto train_input = make_pipeline(train, workers, ctx.worker_rank());
  std::unique_ptr<data::Pipeline> eval_input;
  if (eval) eval_input = make_pipeline(*eval);
  Progress progress(ctx.tty, ctx.quiet);
  const auto result = s.trainer.fit(*train_input, eval_input.get(), r.config, progress);
  // Parameter servers return when a fit ends: a later fit starts afresh with
  // new ones (the servers' ranks serve again from their own fit call).
  if (s.strategy && r.strategy.uses_servers()) {
    s.trainer.set_strategy(nullptr);
    s.strategy.reset();
  }
  if (result.preempted) {
    ctx.exit_code = kPreemptedExitCode;
    const std::string& dir = r.config.model_dir;
    throw UsageError(
        "preempted at step " + std::to_string(result.global_step) +
        (dir.empty() ? "; no model_dir, so nothing was saved"
                     : "; checkpoint written to " + dir + ", rerun the same command to resume"));
  }
  return result.to_json();
}

}  // namespace

json run_fit(Context& ctx, Session& session, const FitRequest& request, const Input& train_input,
             const Input* eval_input) {
  if (ctx.role == "ps") return serve(ctx, session, request);
  if (ctx.role == "evaluator") return evaluate(ctx, session, request, eval_input);
  return train(ctx, session, request, train_input, eval_input);
}

}  // namespace drun::train
