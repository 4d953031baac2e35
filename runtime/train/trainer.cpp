#include "train/trainer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/event_writer.hpp"
#include "train/preemption.hpp"

namespace drun::train {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

Trainer::Trainer(nn::Model& model, const CompileOptions& compiled, const kernels::Exec& exec)
    : model_(model),
      compiled_(compiled),
      loss_(compiled.loss),
      optimizer_(optim::make_optimizer(compiled.optimizer)),
      metrics_(nn::make_metrics(compiled.metrics, loss_.from_logits())),
      params_(model.params()),
      exec_(exec),
      stage_x_(exec),
      stage_y_(exec) {
  model_.set_exec(exec);
}

Trainer::~Trainer() = default;

void Trainer::set_strategy(distributed::Strategy* strategy) {
  staged_.reset();
  if (strategy && exec_.device != Device::cpu && !strategy->device_aware()) {
    staged_ = std::make_unique<distributed::HostStaged>(*strategy);
    strategy = staged_.get();
  }
  strategy_ = strategy;
  if (!strategy_) {
    model_.set_backward_listener(nullptr);
    return;
  }
  strategy_->setup(params_);
  model_.set_backward_listener([this](nn::Layer& l) { strategy_->gradients_ready(l.params()); });
}

double Trainer::train_step(const data::Batch& batch) {
  const Tensor& y = stage_y_.stage(batch.y);
  const Tensor& out = model_.forward(stage_x_.stage(batch.x), true);
  const double loss = loss_.compute(exec_, out, y, dlogits_);
  if (strategy_ && strategy_->gradient_scale() != 1.0f)
    kernels::scale(exec_, strategy_->gradient_scale(), dlogits_);
  model_.backward(dlogits_);
  if (strategy_)
    strategy_->apply(*optimizer_, params_);
  else
    optimizer_->apply(params_);
  for (auto& m : metrics_) m.update(exec_, out, batch.y);
  loss_sum_ += loss * static_cast<double>(batch.size);
  loss_count_ += batch.size;
  ++global_step_;
  return loss;
}

void Trainer::reset_metrics() {
  for (auto& m : metrics_) m.reset();
  loss_sum_ = 0.0;
  loss_count_ = 0;
}

void Trainer::sum_over_workers() {
  if (!strategy_ || strategy_->workers() == 1) return;
  // One call: [loss sum, loss count, (metric sum, metric count)...].
  std::vector<double> v{loss_sum_, static_cast<double>(loss_count_)};
  for (const auto& m : metrics_) {
    v.push_back(m.sum());
    v.push_back(static_cast<double>(m.count()));
  }
  strategy_->sum(v.data(), static_cast<int64_t>(v.size()));
  loss_sum_ = v[0];
  loss_count_ = static_cast<int64_t>(v[1]);
  for (size_t i = 0; i < metrics_.size(); ++i)
    metrics_[i].set(v[2 + 2 * i], static_cast<int64_t>(v[3 + 2 * i]));
}

MetricValues Trainer::metric_values() const {
  MetricValues v;
  for (const auto& m : metrics_) v.emplace_back(m.name(), m.result());
  return v;
}

Evaluation Trainer::evaluate(data::Pipeline& input, int64_t max_steps) {
  reset_metrics();
  data::Batch batch;
  input.start_epoch(0);
  for (int64_t step = 0; (max_steps < 0 || step < max_steps) && input.next(batch); ++step) {
    const Tensor& out = model_.forward(stage_x_.stage(batch.x), false);
    const double loss = loss_.compute(exec_, out, stage_y_.stage(batch.y), dlogits_);
    for (auto& m : metrics_) m.update(exec_, out, batch.y);
    loss_sum_ += loss * static_cast<double>(batch.size);
    loss_count_ += batch.size;
  }
  Evaluation e{loss_count_ ? loss_sum_ / static_cast<double>(loss_count_) : 0.0, metric_values(),
               loss_count_};
  reset_metrics();
  return e;
}

Tensor Trainer::predict(data::Pipeline& input) {
  data::Batch batch;
  input.start_epoch(0);
  const int64_t total = input.examples_per_epoch();
  Tensor result(model_.output_shape().with_batch(total));
  int64_t row = 0;
  while (input.next(batch)) {
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

void Trainer::save_checkpoint(Checkpoints& checkpoints, const TrainingState& state) {
  if (strategy_) strategy_->checkpoint(checkpoints.model_dir(), state.global_step);
  checkpoints.save(model_, *optimizer_, state);
}

FitResult Trainer::fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                       Progress& progress) {
  const auto start = Clock::now();
  FitResult result;
  const bool chief = !strategy_ || strategy_->is_chief();
  const bool saving = !config.model_dir.empty() &&
                      (config.save_checkpoints_steps > 0 || config.save_checkpoints_secs > 0);
  std::optional<Checkpoints> checkpoints;
  if (!config.model_dir.empty() && chief)
    checkpoints.emplace(config.model_dir, config.keep_checkpoint_max);
  std::unique_ptr<io::EventWriter> events;
  if (chief && !config.model_dir.empty() && config.save_summary_steps > 0) {
    events = std::make_unique<io::EventWriter>(config.model_dir);
    eval_events_ = std::make_unique<io::EventWriter>(config.model_dir + "/eval");
  }
  install_preemption_handlers();
  for (Hook* h : config.hooks) h->begin(*this);

  TrainingState from = resume_.value_or(TrainingState{global_step_, 0, 0});
  if (from.batch >= train.batches_per_epoch()) from = {from.global_step, from.epoch + 1, 0};
  resume_.reset();
  TrainingState at = from;  // where the next step starts
  int64_t saved_step = from.global_step;
  auto last_save = Clock::now();
  const auto save = [&] {
    if (checkpoints && at.global_step != saved_step) save_checkpoint(*checkpoints, at);
    saved_step = at.global_step;
    last_save = Clock::now();
  };

  data::Batch batch;
  bool finished = false;  // strategy_->finish has run
  double train_seconds = 0.0;
  int64_t train_images = 0;
  auto summary_time = Clock::now();
  int64_t summary_step = global_step_, summary_images = 0;
  bool stop = config.max_steps >= 0 && global_step_ >= config.max_steps;
  for (int64_t epoch = from.epoch; epoch < config.epochs && !stop; ++epoch) {
    reset_metrics();
    train.seek(epoch, epoch == from.epoch ? from.batch : 0);
    progress.begin_epoch(epoch, config.epochs, train.batches_per_epoch());
    const auto epoch_start = Clock::now();
    int64_t epoch_images = 0, step = train.position();
    while (train.next(batch)) {
      for (Hook* h : config.hooks) h->before_step(global_step_);
      const double loss = train_step(batch);
      epoch_images += batch.size;
      summary_images += batch.size;
      ++step;
      at = {global_step_, epoch, train.position()};
      if (progress.due(step))
        progress.update(step, loss_sum_ / static_cast<double>(loss_count_), metric_values(),
                        static_cast<double>(epoch_images) / seconds_since(epoch_start));
      bool hook_stop = false;
      if (!config.hooks.empty()) {
        // Filled in place: after the first step the names reuse their storage.
        StepResult& r = step_result_;
        r.global_step = global_step_;
        r.epoch = epoch;
        r.loss = loss;
        r.learning_rate = optimizer_->current_lr();
        r.batch_size = batch.size;
        r.running.resize(1 + metrics_.size());
        r.running[0].first = "loss";
        r.running[0].second = loss_sum_ / static_cast<double>(loss_count_);
        for (size_t i = 0; i < metrics_.size(); ++i) {
          r.running[i + 1].first = metrics_[i].name();
          r.running[i + 1].second = metrics_[i].result();
        }
        for (Hook* h : config.hooks) hook_stop = h->after_step(r) || hook_stop;
      }
      if (events && global_step_ % config.save_summary_steps == 0) {
        const double secs = seconds_since(summary_time);
        events->scalar("loss", global_step_, loss);
        for (const auto& [k, v] : metric_values()) events->scalar(k, global_step_, v);
        events->scalar("learning_rate", global_step_, optimizer_->current_lr());
        events->scalar("global_step/sec", global_step_,
                       static_cast<double>(global_step_ - summary_step) / secs);
        events->scalar("images/sec", global_step_, static_cast<double>(summary_images) / secs);
        events->flush();
        summary_time = Clock::now();
        summary_step = global_step_;
        summary_images = 0;
      }
      if (saving && ((config.save_checkpoints_steps > 0 &&
                      global_step_ % config.save_checkpoints_steps == 0) ||
                     (config.save_checkpoints_secs > 0 &&
                      seconds_since(last_save) >= config.save_checkpoints_secs)))
        save();
      if (preemption_agreed()) {
        save();
        if (strategy_) strategy_->finish(params_, config.model_dir);  // servers exit too
        finished = true;
        result.preempted = true;
        stop = true;
        break;
      }
      if (hook_stop) {
        result.stopped_by_hook = true;
        stop = true;
        break;
      }
      if (config.max_steps >= 0 && global_step_ >= config.max_steps) {
        stop = true;
        break;
      }
      if (eval && chief && config.eval_every_steps > 0 &&
          global_step_ % config.eval_every_steps == 0) {
        const auto values = evaluate_now(*eval, epoch, config.eval_steps, progress, result);
        if (!values.empty()) {
          std::string line = "evaluation at step " + std::to_string(global_step_) + ":";
          for (const auto& [k, v] : values) line += " val_" + k + " " + std::to_string(v);
          progress.line(line);
        }
      }
    }
    const double epoch_seconds = seconds_since(epoch_start);
    train_seconds += epoch_seconds;
    train_images += epoch_images;
    if (train.position() >= train.batches_per_epoch())
      at = {global_step_, epoch + 1, 0};  // the epoch is complete
    if (result.preempted) break;
    // After the last step: the last checkpoint (servers still serving), then
    // the strategy leaves the final model on the chief (e.g. from the
    // parameter servers), so the last evaluation sees it.
    if (stop || epoch + 1 == config.epochs) {
      if (saving) save();
      if (strategy_) strategy_->finish(params_, config.model_dir);
      finished = true;
    }
    sum_over_workers();
    if (strategy_) {
      result.strategy = strategy_->epoch_stats();
      if (!result.strategy.empty()) progress.line(strategy_->name() + " " + result.strategy.dump());
    }
    result.train = {loss_count_ ? loss_sum_ / static_cast<double>(loss_count_) : 0.0,
                    metric_values(), loss_count_};
    MetricValues eval_values;
    // Not twice at one step: the step interval may have just evaluated.
    const bool evaluated =
        config.eval_every_steps > 0 && step > 0 && global_step_ % config.eval_every_steps == 0;
    if (eval && chief && !evaluated)
      eval_values = evaluate_now(*eval, epoch, config.eval_steps, progress, result);
    progress.end_epoch(result.train.loss, result.train.metrics,
                       static_cast<double>(epoch_images) / epoch_seconds, eval_values);
    result.epochs = epoch + 1;
  }
  if (auto done = background_eval_.finish()) report_eval(*done, progress, result);
  // No epoch ran (resumed at or past the end): the strategy still ends, so
  // that parameter servers return.
  if (strategy_ && !finished) strategy_->finish(params_, config.model_dir);
  result.global_step = global_step_;
  const int workers = strategy_ ? strategy_->workers() : 1;
  // Images of all workers: each trains the same number of steps on its shard.
  result.images_per_sec =
      train_seconds > 0 ? static_cast<double>(train_images) * workers / train_seconds : 0;
  result.wall_seconds = seconds_since(start);
  result.workers = workers;
  result.device = device_name(exec_.device);
  json summary = result.to_json();
  for (Hook* h : config.hooks) h->end(*this, summary);
  if (!config.model_dir.empty() && chief && !result.preempted) {
    std::filesystem::create_directories(config.model_dir);
    write_json_atomically(config.model_dir + "/summary.json", summary);
  }
  if (events) events->flush();
  eval_events_.reset();
  return result;
}

MetricValues Trainer::evaluate_now(data::Pipeline& eval, int64_t epoch, int64_t max_steps,
                                   Progress& progress, FitResult& result) {
  MetricValues values;
  if (strategy_ && strategy_->workers() > 1) {
    // The other workers go on training while the chief's copy is evaluated.
    if (auto done = background_eval_.finish()) report_eval(*done, progress, result);
    eval_step_ = global_step_;
    background_eval_.start(model_, compiled_, eval, epoch, max_steps);
    return values;
  }
  result.eval = evaluate(eval, max_steps);
  eval_step_ = global_step_;
  write_eval_summary(*result.eval);
  values.emplace_back("loss", result.eval->loss);
  for (const auto& kv : result.eval->metrics) values.push_back(kv);
  return values;
}

void Trainer::write_eval_summary(const Evaluation& e) {
  if (!eval_events_) return;
  eval_events_->scalar("loss", eval_step_, e.loss);
  for (const auto& [k, v] : e.metrics) eval_events_->scalar(k, eval_step_, v);
  eval_events_->flush();
}

void Trainer::report_eval(const BackgroundEval::Result& done, Progress& progress,
                          FitResult& result) {
  result.eval = done.evaluation;
  write_eval_summary(done.evaluation);
  std::string line = "evaluation at step " + std::to_string(eval_step_) + " (epoch " +
                     std::to_string(done.epoch + 1) + "): val_loss " +
                     std::to_string(done.evaluation.loss);
  for (const auto& [k, v] : done.evaluation.metrics)
    line += " - val_" + k + " " + std::to_string(v);
  progress.line(line);
}

json FitResult::to_json() const {
  json t = {{"loss", train.loss}, {"images_per_sec", images_per_sec}};
  for (const auto& [k, v] : train.metrics) t[k] = v;
  json j = {{"global_step", global_step}, {"epochs", epochs}, {"workers", workers},
            {"device", device},           {"train", t},       {"wall_seconds", wall_seconds}};
  if (!strategy.empty()) j["strategy"] = strategy;
  if (preempted) j["preempted"] = true;
  if (stopped_by_hook) j["stopped_by_hook"] = true;
  if (eval) {
    json e = {{"loss", eval->loss}, {"examples", eval->examples}};
    for (const auto& [k, v] : eval->metrics) e[k] = v;
    j["eval"] = e;
  }
  return j;
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write " + path + ": " + std::strerror(errno));
  }
}

void write_json_atomically(const std::string& path, const json& value) {
  write_text_atomically(path, value.dump(2) + "\n");
}

}  // namespace drun::train
