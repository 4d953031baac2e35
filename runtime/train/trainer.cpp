#include "train/trainer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace drun::train {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

Trainer::Trainer(nn::Model& model, const Compiled& compiled, const kernels::Exec& exec)
    : model_(model),
      compiled_(compiled),
      loss_(compiled.loss),
      optimizer_(optim::make_optimizer(compiled.optimizer)),
      metrics_(nn::make_metrics(compiled.metrics, loss_.from_logits())),
      params_(model.params()),
      exec_(exec) {
  model_.set_exec(exec);
}

void Trainer::set_strategy(dist::Strategy* strategy) {
  strategy_ = strategy;
  if (!strategy_) {
    model_.set_backward_listener(nullptr);
    return;
  }
  strategy_->setup(params_);
  model_.set_backward_listener([this](nn::Layer& l) { strategy_->gradients_ready(l.params()); });
}

double Trainer::train_step(const data::Batch& batch) {
  const Tensor& out = model_.forward(batch.x, true);
  const double loss = loss_.compute(exec_, out, batch.y, dlogits_);
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
    const Tensor& out = model_.forward(batch.x, false);
    const double loss = loss_.compute(exec_, out, batch.y, dlogits_);
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
    const Tensor& out = model_.forward(batch.x, false);
    result.rows(row, row + batch.size).copy_from(out);
    row += batch.size;
  }
  return result;
}

FitResult Trainer::fit(data::Pipeline& train, data::Pipeline* eval, const FitConfig& config,
                       Progress& progress) {
  const auto start = Clock::now();
  FitResult result;
  data::Batch batch;
  double train_seconds = 0.0;
  int64_t train_images = 0;
  bool stop = false;
  for (int64_t epoch = 0; epoch < config.epochs && !stop; ++epoch) {
    reset_metrics();
    train.start_epoch(epoch);
    progress.begin_epoch(epoch, config.epochs, train.batches_per_epoch());
    const auto epoch_start = Clock::now();
    int64_t epoch_images = 0, step = 0;
    while (train.next(batch)) {
      train_step(batch);
      epoch_images += batch.size;
      ++step;
      if (progress.due(step))
        progress.update(step, loss_sum_ / static_cast<double>(loss_count_), metric_values(),
                        static_cast<double>(epoch_images) / seconds_since(epoch_start));
      if (config.max_steps >= 0 && global_step_ >= config.max_steps) {
        stop = true;
        break;
      }
    }
    const double epoch_seconds = seconds_since(epoch_start);
    train_seconds += epoch_seconds;
    train_images += epoch_images;
    // After the last step the strategy leaves the final model on the chief
    // (e.g. from the parameter servers), so the last evaluation sees it.
    if (strategy_ && (stop || epoch + 1 == config.epochs))
      strategy_->finish(params_, config.model_dir);
    sum_over_workers();
    if (strategy_) {
      result.strategy = strategy_->epoch_stats();
      if (!result.strategy.empty()) progress.line(strategy_->name() + " " + result.strategy.dump());
    }
    result.train = {loss_count_ ? loss_sum_ / static_cast<double>(loss_count_) : 0.0,
                    metric_values(), loss_count_};
    MetricValues eval_values;
    const bool chief = !strategy_ || strategy_->is_chief();
    if (eval && chief && strategy_ && strategy_->workers() > 1) {
      // The other workers go on training while the chief's copy is evaluated.
      if (auto done = background_eval_.finish()) report_eval(*done, progress, result);
      background_eval_.start(model_, compiled_, *eval, epoch);
    } else if (eval && chief) {
      result.eval = evaluate(*eval);
      eval_values.emplace_back("loss", result.eval->loss);
      for (const auto& kv : result.eval->metrics) eval_values.push_back(kv);
    }
    progress.end_epoch(result.train.loss, result.train.metrics,
                       static_cast<double>(epoch_images) / epoch_seconds, eval_values);
    result.epochs = epoch + 1;
  }
  if (auto done = background_eval_.finish()) report_eval(*done, progress, result);
  result.global_step = global_step_;
  const int workers = strategy_ ? strategy_->workers() : 1;
  // Images of all workers: each trains the same number of steps on its shard.
  result.images_per_sec =
      train_seconds > 0 ? static_cast<double>(train_images) * workers / train_seconds : 0;
  result.wall_seconds = seconds_since(start);
  result.workers = workers;
  if (!config.model_dir.empty() && (!strategy_ || strategy_->is_chief())) {
    std::filesystem::create_directories(config.model_dir);
    write_json_atomically(config.model_dir + "/summary.json", result.to_json());
  }
  return result;
}

void Trainer::report_eval(const BackgroundEval::Result& done, Progress& progress,
                          FitResult& result) {
  result.eval = done.evaluation;
  std::string line = "evaluation after epoch " + std::to_string(done.epoch + 1) + ": val_loss " +
                     std::to_string(done.evaluation.loss);
  for (const auto& [k, v] : done.evaluation.metrics)
    line += " - val_" + k + " " + std::to_string(v);
  progress.line(line);
}

json FitResult::to_json() const {
  json t = {{"loss", train.loss}, {"images_per_sec", images_per_sec}};
  for (const auto& [k, v] : train.metrics) t[k] = v;
  json j = {{"global_step", global_step},
            {"epochs", epochs},
            {"workers", workers},
            {"train", t},
            {"wall_seconds", wall_seconds}};
  if (!strategy.empty()) j["strategy"] = strategy;
  if (eval) {
    json e = {{"loss", eval->loss}, {"examples", eval->examples}};
    for (const auto& [k, v] : eval->metrics) e[k] = v;
    j["eval"] = e;
  }
  return j;
}

void write_json_atomically(const std::string& path, const json& value) {
  const std::string tmp = path + ".tmp";
  const std::string text = value.dump(2) + "\n";
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

}  // namespace drun::train
