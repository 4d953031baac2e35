#include "train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>

#include "distributed/activity.hpp"
#include "io/atomic_file.hpp"
#include "train/callbacks/callback_runner.hpp"
#include "train/checkpoint_saver.hpp"
#include "train/example_log.hpp"
#include "train/preemption.hpp"
#include "train/reshard.hpp"
#include "train/summary_saver.hpp"
#include "train/validator.hpp"

namespace drun::train {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One training step's parts for the ScalingMeter, however the step's loop
// body ends (on to the next batch, or a stop): input up to construction,
// compute (less the exchange wait train_step left in `exchange`) between the
// two calls, other before and after them.
class StepClock {
 public:
  StepClock(ScalingMeter& meter, Clock::time_point start, const double& exchange)
      : meter_(meter), start_(start), exchange_(exchange), input_end_(Clock::now()) {}
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;
  void compute_starts() { compute_start_ = Clock::now(); }
  void compute_ends() { compute_end_ = Clock::now(); }
  ~StepClock() {
    const auto end = Clock::now();
    const auto secs = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    const double in_step = secs(compute_start_, compute_end_);
    meter_.add({secs(start_, input_end_), in_step - exchange_, exchange_,
                secs(input_end_, compute_start_) + secs(compute_end_, end), secs(start_, end)});
  }

 private:
  ScalingMeter& meter_;
  Clock::time_point start_;
  const double& exchange_;
  Clock::time_point input_end_, compute_start_, compute_end_;
};

// Fit's own hooks, run after the user's: on the chief, checkpoints and
// summaries where there is a model_dir, evaluation where there is an input;
// on every worker, the callbacks (after the evaluation, whose values they
// read, and before the checkpoints, which hold their state).
std::vector<Hook*> own_hooks(const FitConfig& c, data::Pipeline* eval, bool chief,
                             Progress& progress, FitResult& result, Hook* callbacks,
                             std::vector<std::unique_ptr<Hook>>& owned) {
  std::vector<Hook*> hooks;
  const auto own = [&](std::unique_ptr<Hook> h) {
    hooks.push_back(h.get());
    owned.push_back(std::move(h));
  };
  // First: it checks keep_checkpoint_max before any file is made.
  auto checkpoints = c.model_dir.empty() || !chief ? nullptr : std::make_unique<CheckpointSaver>(c);
  const bool summaries = !c.model_dir.empty() && c.save_summary_steps > 0;
  if (chief && !c.model_dir.empty() && (summaries || c.histogram_freq > 0))
    own(std::make_unique<SummarySaver>(c.model_dir, c.save_summary_steps, c.histogram_freq));
  if (chief && eval) own(std::make_unique<Validator>(c, *eval, progress, result, summaries));
  if (callbacks) hooks.push_back(callbacks);
  if (checkpoints) own(std::move(checkpoints));
  return hooks;
}
}  // namespace

Trainer::Trainer(nn::Model& model, const CompileOptions& compiled, const kernels::Exec& exec)
    : model_(model),
      compiled_(compiled),
      loss_(compiled.loss),
      optimizer_(optim::make_optimizer(compiled.optimizer)),
      params_(model.params()),
      exec_(exec),
      stage_x_(exec),
      stage_y_(exec),
      values_(nn::make_metrics(compiled.metrics, loss_.from_logits(), model.output_shape()),
              exec.device),
      eval_values_(nn::make_metrics(compiled.metrics, loss_.from_logits(), model.output_shape()),
                   exec.device) {
  for (size_t i = 0; i < params_.size(); ++i) index_of_[params_[i]] = i;
  model_.set_exec(exec);
  optimizer_->set_cpu_threads(exec.threads);
  set_precision(compiled.precision);
}

void Trainer::set_precision(const std::string& precision) {
  if (precision == "float32") {
    model_.set_compute_dtype(DType::f32);
    return;
  }
  if (exec_.device == Device::cpu)
    throw UsageError("compile: precision '" + precision +
                     "' needs a GPU (drun --device cuda): on the CPU drun trains in float32");
  model_.set_compute_dtype(precision == "mixed_float16" ? DType::f16 : DType::bf16);
  // Keras' compile does the same: float16 gradients need a loss scale, bfloat16's range does not.
  if (precision == "mixed_float16" && !optimizer_->dynamic_loss_scale())
    optimizer_->set_dynamic_loss_scale(optim::DynamicLossScale(
        optim::DynamicLossScale::kDefaultInitial, optim::DynamicLossScale::kDefaultGrowthSteps));
}

Trainer::~Trainer() = default;

void Trainer::set_strategy(distributed::Strategy* strategy) {
  staged_.reset();
  graphs_.reset();  // whether steps may be captured depends on the strategy
  graphs_said_ = false;
  if (strategy && exec_.device != Device::cpu && !strategy->device_aware()) {
    staged_ = std::make_unique<distributed::HostStaged>(*strategy);
    strategy = staged_.get();
  }
  if (strategy && optimizer_->dynamic_loss_scale() && strategy->name() != "AllReduce")
    throw UsageError(
        "loss scaling (a LossScaleOptimizer, which mixed_float16 adds) works with "
        "AllReduce or without a strategy, not with " +
        strategy->name() +
        ": only AllReduce applies this worker's optimizer, which knows the scale, "
        "to every step's gradients (mixed_bfloat16 needs no loss scale)");
  strategy_ = strategy;
  step_strategy_ = nullptr;
  model_.set_backward_listener(nullptr);
  if (!strategy_) return;
  strategy_->setup(params_);
  if (!strategy_->exchanges_gradients()) return;  // steps run as without one
  step_strategy_ = strategy_;
  model_.set_backward_listener([this](nn::Layer& l) {
    if (!updating_) return;  // a batch that only accumulates exchanges nothing
    add_accumulated(l.params());
    step_strategy_->gradients_ready(l.params());
  });
}

void Trainer::set_timeline(timeline::Timeline* tl) {
  timeline_ = tl;
  model_.set_timeline(tl);
}

std::string Trainer::why_not_graphs() {
  if (!compiled_.cuda_graphs) return "compile{cuda_graphs = false}";
  if (step_strategy_)
    return "the strategy (" + step_strategy_->name() +
           ") exchanges gradients in the middle of the step";
  if (optimizer_->accumulation_steps() > 1)
    return "gradient_accumulation_steps: a batch that accumulates is another step than an update";
  return {};
}

void Trainer::add_accumulated(std::span<Param> params) {
  if (optimizer_->accumulation_steps() == 1) return;
  for (Param& p : params) optimizer_->add_accumulated(index_of_.at(&p), p);
}

void Trainer::forward_backward(const Tensor& x, const Tensor& y) {
  using timeline::Span, timeline::Lane, timeline::kMain;
  const Tensor& out = model_.forward(x, true);
  {
    Span span(timeline_, Lane::main, kMain, "loss", "loss");
    loss_.compute(exec_, out, y, dlogits_, values_.loss_slot());
    values_.measure(exec_, out, y);
    // The loss scale is read on the device: it changes between the replays of a graph.
    if (optimizer_->dynamic_loss_scale())
      kernels::scale_by(exec_, optimizer_->loss_scale_on(exec_.device), dlogits_);
    // 1/workers, and 1/k: the update sees the mean of the k batches' gradients.
    const float factor = (step_strategy_ ? step_strategy_->gradient_scale() : 1.0f) /
                         static_cast<float>(optimizer_->accumulation_steps());
    if (factor != 1.0f) kernels::scale(exec_, factor, dlogits_);
  }
  model_.backward(dlogits_);
}

// On a GPU the layers see the batch only on the device: what they check of
// it (Embedding's ids) is checked here, on the host. On the CPU they check
// it themselves in their forward.
void Trainer::check_input(const Tensor& host_x) const {
  if (exec_.device != Device::cpu) model_.check_input(host_x);
}

void Trainer::train_step(const data::Batch& batch) {
  using timeline::Span, timeline::Lane, timeline::kMain;
  Span step(timeline_, Lane::main, kMain, "step", "step", "step", global_step_);
  check_input(batch.x);
  // Two references, so that the std::function below keeps the step's
  // closure ([this, &in]) without allocating.
  const struct {
    const Tensor& x;
    const Tensor& y;
  } in{stage_x_.stage(batch.x), stage_y_.stage(batch.y)};
  const Shape out_shape = model_.output_shape().with_batch(batch.size);
  loss_.check(out_shape, batch.y);
  model_.begin_training_step();
  step_exchange_seconds_ = 0.0;
  if (exec_.device == Device::cuda && !graphs_)
    graphs_ = std::make_unique<StepGraphs>(exec_, why_not_graphs());
  updating_ = update_due();
  if (!updating_) {
    forward_backward(in.x, in.y);
    Span span(timeline_, Lane::main, kMain, "accumulate gradients", "accumulate");
    optimizer_->accumulate(params_);
  } else if (step_strategy_) {
    // The strategy applies the optimizer; a loss scale's value must be on
    // the device before the backward reads it (only AllReduce takes one).
    if (optimizer_->dynamic_loss_scale()) optimizer_->begin_step(params_);
    forward_backward(in.x, in.y);
    Span span(timeline_, Lane::main, kMain, "apply gradients", "apply");
    // The exchange's exposed wait: the strategy's apply less the update in it.
    const double updating = optimizer_->apply_seconds();
    const auto apply_start = Clock::now();
    step_strategy_->apply(*optimizer_, params_);
    step_exchange_seconds_ = seconds_since(apply_start) - (optimizer_->apply_seconds() - updating);
  } else if (graphs_ && graphs_->off().empty()) {
    // The step's device work, recorded once per input into a graph: what
    // changes between steps (the rate, the loss scale) is written to the
    // device before it, and the loss scale's check is read after it.
    optimizer_->begin_step(params_);
    graphs_->run({in.x.raw(), in.y.raw(), in.x.numel(), in.y.numel()}, [this, &in] {
      forward_backward(in.x, in.y);
      optimizer_->launch_updates(params_);
    });
    optimizer_->end_step();
  } else {
    optimizer_->begin_step(params_);
    forward_backward(in.x, in.y);
    for (size_t i = 0; i < params_.size(); ++i) optimizer_->add_accumulated(i, *params_[i]);
    Span span(timeline_, Lane::main, kMain, "optimizer", "optimizer");
    optimizer_->launch_updates(params_);
    optimizer_->end_step();
  }
  values_.commit(exec_, out_shape, batch.size);
  ++global_step_;
}

void Trainer::sum_over_workers() {
  if (!strategy_ || strategy_->workers() == 1) return;
  // One call: [loss sum, examples, (metric totals..., metric count)...].
  std::vector<double> v = values_.sums();
  strategy_->sum(v.data(), static_cast<int64_t>(v.size()));
  values_.set_sums(v);
}

Evaluation Trainer::evaluate(data::Pipeline& input, int64_t max_steps) {
  // Its own running values: the epoch's training values stay as they are.
  eval_values_.reset();
  data::Batch batch;
  input.start_epoch(0);
  for (int64_t step = 0; (max_steps < 0 || step < max_steps) && input.next(batch); ++step) {
    check_input(batch.x);
    const Tensor& y = stage_y_.stage(batch.y);
    const Tensor& out = model_.forward(stage_x_.stage(batch.x), false);
    loss_.check(out.shape(), batch.y);
    loss_.compute(exec_, out, y, dlogits_, eval_values_.loss_slot());
    eval_values_.add_step(exec_, out, y, batch.size);
  }
  return {eval_values_.mean_loss(), eval_values_.metrics(), eval_values_.examples(),
          loss_.sparse() && input.dataset().info.contains("vocabulary_size")};
}

Tensor Trainer::predict(data::Pipeline& input) {
  data::Batch batch;
  input.start_epoch(0);
  const int64_t total = input.examples_per_epoch();
  Tensor result(model_.output_shape().with_batch(total));
  int64_t row = 0;
  while (input.next(batch)) {
    check_input(batch.x);
    const Tensor& out = model_.forward(stage_x_.stage(batch.x), false);
    result.rows(row, row + batch.size).copy_from(out);
    row += batch.size;
  }
  return result;
}

std::optional<TrainingState> Trainer::restore(const std::string& model_dir,
                                              const std::function<void(const std::string&)>& warn) {
  if (model_dir.empty()) return std::nullopt;
  resume_ = Checkpoints(model_dir, 1).restore(model_, *optimizer_, warn);
  if (resume_) global_step_ = resume_->global_step;
  return resume_;
}

bool Trainer::preemption_agreed() {
  // Workers that do not step together stop each on its own signal: a
  // collective here could wait for a worker that is elsewhere (e.g. one held
  // back by GlobalStepWaiterHook).
  if (!strategy_ || strategy_->workers() == 1 || !strategy_->lockstep())
    return preemption_requested();
  if (global_step_ % kAgreeEvery != 0) return false;
  double asked = preemption_requested() ? 1.0 : 0.0;
  strategy_->sum(&asked, 1);
  return asked > 0;
}

void Trainer::save_checkpoint(Checkpoints& checkpoints, const TrainingState& state, bool servers) {
  timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain, "checkpoint", "checkpoint",
                      "step", state.global_step);
  if (strategy_ && servers) strategy_->checkpoint(checkpoints.model_dir(), state.global_step);
  TrainingState with = state;
  // What a rerun with fewer workers needs to go on where these stopped (train/reshard.hpp).
  with.workers = strategy_ ? strategy_->workers() : 1;
  with.epoch_offset = train_ && train_->epoch() == state.epoch ? train_->offset() : 0;
  if (callbacks_) {
    CallbackState cs = callbacks_->state();
    with.callbacks = std::move(cs.state);
    with.callback_tensors = std::move(cs.tensors);
  }
  checkpoints.save(model_, *optimizer_, with);
}

const StepResult& Trainer::step_result(int64_t epoch, int64_t batch, int64_t batch_size,
                                       bool ends_epoch) {
  StepResult& r = step_result_;
  r.global_step = global_step_;
  r.epoch = epoch;
  r.batch = batch;
  r.learning_rate = optimizer_->current_lr();
  r.batch_size = batch_size;
  r.ends_epoch = ends_epoch;
  r.values = &values_;
  return r;
}

FitResult Trainer::fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                       Progress& progress) {
  const auto start = Clock::now();
  FitResult result;
  const bool chief = !strategy_ || strategy_->is_chief();
  std::unique_ptr<CallbackRunner> callbacks;
  if (!config.callbacks.empty()) {
    callbacks = std::make_unique<CallbackRunner>(config.callbacks, result, eval != nullptr);
    if (resume_ && !resume_->callbacks.is_null())
      callbacks->restore({resume_->callbacks, resume_->callback_tensors});
  }
  callbacks_ = callbacks.get();
  train_ = &train;
  // Not past this fit, however it ends (a hook may throw).
  const struct Forget {
    CallbackRunner*& runner;
    data::Pipeline*& input;
    ~Forget() {
      runner = nullptr;
      input = nullptr;
    }
  } forget{callbacks_, train_};
  std::vector<std::unique_ptr<Hook>> own;
  scaling_ = ScalingMeter();
  std::vector<Hook*> hooks(config.hooks);
  for (Hook* h : own_hooks(config, eval, chief, progress, result, callbacks.get(), own))
    hooks.push_back(h);
  install_preemption_handlers();
  for (Hook* h : hooks) h->begin(*this);

  const bool resumed = resume_.has_value();
  // A run its callbacks stopped is done: a rerun trains no further.
  const bool stopped_before =
      resumed && resume_->callbacks.is_object() && resume_->callbacks.value("stopped", false);
  const int workers = strategy_ ? strategy_->workers() : 1;
  TrainingState from = resume_.value_or(TrainingState{global_step_, 0, 0});
  // A checkpoint of more workers (drun --min-workers) goes on where they all were.
  const EpochResume go_on = epoch_resume(from, workers, train.spec().batch_size, train.pass_size());
  from.epoch = go_on.epoch;
  from.batch = go_on.batch;
  if (!go_on.resharded && from.batch >= train.batches_per_epoch())
    from = {from.global_step, from.epoch + 1, 0};
  resume_.reset();
  const auto example_log = ExampleLog::from_environment();
  // Images have height, width and channels; anything else counts as examples.
  progress.set_plan({config.epochs_bounded ? config.epochs : 0, config.max_steps, workers,
                     model_.input_shape().rank() == 3});
  data::Batch batch;
  bool finished = false;  // strategy_->finish has run
  double train_seconds = 0.0;
  int64_t train_images = 0;
  bool stop = stopped_before || (config.max_steps >= 0 && global_step_ >= config.max_steps);
  result.already_done = resumed && (stop || from.epoch >= config.epochs);
  for (int64_t epoch = from.epoch; epoch < config.epochs && !stop; ++epoch) {
    values_.reset();
    if (epoch == from.epoch && go_on.resharded)
      train.seek_from(epoch, go_on.offset);
    else
      train.seek(epoch, epoch == from.epoch ? from.batch : 0);
    progress.begin_epoch(epoch, train.batches_per_epoch(), global_step_);
    for (Hook* h : hooks) h->begin_epoch(epoch);
    const auto epoch_start = Clock::now();
    int64_t epoch_images = 0;
    // The wait for each batch is the timeline's "input".
    const auto next_batch = [&] {
      timeline::Span span(timeline_, timeline::Lane::main, timeline::kMain, "input", "input");
      return train.next(batch);
    };
    for (auto step_start = Clock::now(); next_batch(); step_start = Clock::now()) {
      StepClock clock(scaling_, step_start, step_exchange_seconds_);
      for (Hook* h : hooks) h->before_step(global_step_);
      distributed::activity::set_step(global_step_);  // for the stall inspector
      clock.compute_starts();
      train_step(batch);
      clock.compute_ends();
      if (graphs_ && !graphs_->off().empty() && !graphs_said_) {
        progress.line("CUDA graphs off: " + graphs_->off() +
                      "; each step launches its kernels one by one");
        graphs_said_ = true;
      }
      epoch_images += batch.size;
      const int64_t step = train.position();  // batches of the epoch done
      if (example_log)
        example_log->record(global_step_, epoch, train.examples_of(step - 1), workers);
      if (progress.due(step))
        progress.update(step, values_.mean_loss(), values_.metrics(),
                        static_cast<double>(epoch_images) / seconds_since(epoch_start));
      bool hook_stop = false;
      if (!hooks.empty()) {
        const StepResult& r =
            step_result(epoch, step, batch.size, step >= train.batches_per_epoch());
        for (Hook* h : hooks) hook_stop = h->after_step(r) || hook_stop;
      }
      if (preemption_agreed()) {
        for (Hook* h : hooks) h->last_step({global_step_, epoch, step}, true);
        if (strategy_) strategy_->finish(params_, config.model_dir);  // servers exit too
        finished = result.preempted = stop = true;
        break;
      }
      result.stopped_by_hook = hook_stop;
      stop = hook_stop || (config.max_steps >= 0 && global_step_ >= config.max_steps);
      if (stop) break;
      for (Hook* h : hooks) h->continuing(step_result_);
    }
    const double epoch_seconds = seconds_since(epoch_start);
    train_seconds += epoch_seconds;
    train_images += epoch_images;
    if (result.preempted) break;
    // After the last step: the last checkpoint (servers still serving), then
    // the strategy leaves the final model on the chief (e.g. from the
    // parameter servers), so the last evaluation sees it.
    if (stop || epoch + 1 == config.epochs) {
      const int64_t done = train.position();
      const bool complete = done >= train.batches_per_epoch();  // next: the next epoch
      for (Hook* h : hooks)
        h->last_step({global_step_, complete ? epoch + 1 : epoch, complete ? 0 : done}, false);
      if (strategy_) strategy_->finish(params_, config.model_dir);
      finished = true;
    }
    const bool stopped = end_epoch({epoch, train.position(), {}}, hooks, result, progress,
                                   static_cast<double>(epoch_images) / epoch_seconds, finished);
    if (stopped && !finished) {
      // A callback ended the fit at this epoch's end (EarlyStopping): the
      // last step's hooks and the strategy's end, as after a last epoch.
      result.stopped_by_hook = stop = true;
      for (Hook* h : hooks) h->last_step({global_step_, epoch + 1, 0}, false);
      if (strategy_) strategy_->finish(params_, config.model_dir);
      finished = true;
    }
  }
  for (Hook* h : hooks) h->complete();
  // No epoch ran (resumed at or past the end): the strategy still ends, so
  // that parameter servers return.
  if (strategy_ && !finished) strategy_->finish(params_, config.model_dir);
  if (workers > 1 && !result.preempted && !result.already_done) {
    const auto window = strategy_->exchange_window();
    result.scaling = scaling_.combine(strategy_->worker_index(), workers,
                                      {window.window, window.hidden, strategy_->bucket_bytes()},
                                      [this](double* v, int64_t n) { strategy_->sum(v, n); });
    progress.line("scaling: " + scaling_line(result.scaling));
  }
  // Images of all workers: each trains the same number of steps on its shard.
  result.images_per_sec =
      train_seconds > 0 ? static_cast<double>(train_images) * workers / train_seconds : 0;
  result.wall_seconds = seconds_since(start);
  finish_fit(config, hooks, result, chief);
  return result;
}

bool Trainer::end_epoch(EpochEnd end, const std::vector<Hook*>& hooks, FitResult& result,
                        Progress& progress, double images_per_sec, bool last) {
  sum_over_workers();
  if (strategy_) {
    result.strategy = strategy_->epoch_stats();
    if (!result.strategy.empty()) progress.line(strategy_->name() + " " + result.strategy.dump());
  }
  result.train = {values_.mean_loss(), values_.metrics(), values_.examples()};
  if (const optim::DynamicLossScale* s = optimizer_->dynamic_loss_scale()) {
    const int64_t skipped = s->skipped() - result.loss_scale.value("skipped_steps", int64_t{0});
    result.loss_scale = {{"scale", s->scale()}, {"skipped_steps", s->skipped()}};
    if (skipped > 0)
      progress.line("loss scale 2^" + std::to_string(std::ilogb(s->scale())) + ": " +
                    std::to_string(skipped) + " step" + (skipped == 1 ? "" : "s") +
                    " skipped this epoch, their gradients overflowed");
  }
  for (Hook* h : hooks) h->end_epoch(end);
  progress.end_epoch(result.train.loss, result.train.metrics, images_per_sec, end.shown, last);
  result.epochs = end.epoch + 1;
  return end.stop;
}

void Trainer::finish_fit(const FitConfig& config, const std::vector<Hook*>& hooks,
                         FitResult& result, bool chief) {
  result.global_step = global_step_;
  result.workers = strategy_ ? strategy_->workers() : 1;
  result.device = device_name(exec_.device);
  result.resizes = resizes_;
  if (graphs_) {
    result.cuda_graphs = {{"captures", graphs_->captures()},
                          {"graph_steps", graphs_->graph_launches()}};
    if (!graphs_->off().empty()) result.cuda_graphs["off"] = graphs_->off();
  }
  json summary = result.to_json();
  for (Hook* h : hooks) h->end(*this, summary);
  // A fit with nothing left to do keeps the summary (and evaluation) of the run that did it.
  if (!config.model_dir.empty() && chief && !result.preempted && !result.already_done) {
    std::filesystem::create_directories(config.model_dir);
    io::write_json_atomically(config.model_dir + "/summary.json", summary);
  }
}

}  // namespace drun::train
