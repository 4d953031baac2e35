#include "train/progress.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

namespace drun::train {

namespace {
using Clock = std::chrono::steady_clock;
// A log line at most this often: a fast epoch would otherwise print its ten
// lines in a burst that says nothing.
constexpr auto kLogLineEvery = std::chrono::seconds(2);
constexpr int64_t kLogLinesPerEpoch = 10;

std::string clock_prefix() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  return fmt::format("[{:%Y-%m-%d %H:%M:%S}]", tm);
}

std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}
}  // namespace

std::string format_values(const MetricValues& values, const std::string& prefix) {
  std::string s;
  for (const auto& [name, v] : values)
    s += fmt::format("{}{}{} {:.4f}", s.empty() ? "" : " - ", prefix, name, v);
  return s;
}

Progress::Progress(bool tty, bool quiet, std::FILE* out) : tty_(tty), quiet_(quiet), out_(out) {}

std::string Progress::stats(double loss, const MetricValues& metrics) const {
  std::string s = fmt::format("loss {:.4f}", loss);
  if (!metrics.empty()) s += " - " + format_values(metrics);
  return s;
}

std::string Progress::throughput(double per_worker_per_sec) const {
  const char* unit = plan_.images ? "img/s" : "examples/s";
  if (plan_.workers <= 1) return fmt::format("{:.0f} {}", per_worker_per_sec, unit);
  return fmt::format("{:.0f} {} in all ({} workers)", per_worker_per_sec * plan_.workers, unit,
                     plan_.workers);
}

std::string Progress::epoch_label() const {
  if (plan_.epochs <= 0) return fmt::format("epoch {}", epoch_ + 1);
  return fmt::format("epoch {}/{}", epoch_ + 1, plan_.epochs);
}

// Within an epoch, or of the whole run when it is bounded by steps alone.
std::string Progress::step_label(int64_t step) const {
  if (by_steps()) return fmt::format("step {}/{}", first_global_step_ + step, plan_.max_steps);
  return fmt::format("{} step {}/{}", epoch_label(), step, steps_);
}

void Progress::begin_epoch(int64_t epoch, int64_t steps, int64_t global_step) {
  epoch_ = epoch;
  steps_ = steps;
  first_global_step_ = global_step;
  next_line_step_ = std::max<int64_t>(1, steps / kLogLinesPerEpoch);
  start_ = last_draw_ = Clock::now();
  if (quiet_ || tty_) return;
  if (!by_steps())
    print_line(fmt::format("{}: {} steps", epoch_label(), steps));
  else if (last_line_ == Clock::time_point{})
    print_line(fmt::format("training to step {}", plan_.max_steps));
}

void Progress::print_line(const std::string& text) {
  fmt::print(out_, "{} {}\n", clock_prefix(), text);
  std::fflush(out_);
  last_line_ = Clock::now();
}

bool Progress::due(int64_t step) const {
  if (quiet_) return false;
  // A terminal is redrawn at most 10 times a second.
  if (tty_) return step == steps_ || Clock::now() - last_draw_ >= std::chrono::milliseconds(100);
  return step >= next_line_step_ && step != steps_ && Clock::now() - last_line_ >= kLogLineEvery;
}

void Progress::update(int64_t step, double loss, const MetricValues& metrics,
                      double per_worker_per_sec) {
  if (!due(step)) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    last_draw_ = now;
    // The bar spans the run when steps alone bound it, else the epoch.
    const int64_t done = by_steps() ? first_global_step_ + step : step;
    const int64_t total = by_steps() ? plan_.max_steps : steps_;
    const int width = 24;
    const int filled =
        total > 0 ? static_cast<int>(width * std::min<int64_t>(done, total) / total) : width;
    const double eta =
        step ? elapsed / static_cast<double>(step) * static_cast<double>(total - done) : 0.0;
    const std::string label =
        by_steps() ? std::string("Steps") : fmt::format("Epoch {}/{}", epoch_ + 1, plan_.epochs);
    fmt::print(out_, "\r{} [{}{}] {}/{} ETA {} - {} - {}\x1b[K", label,
               std::string(static_cast<size_t>(filled), '='),
               std::string(static_cast<size_t>(width - filled), '.'), done, total, duration(eta),
               stats(loss, metrics), throughput(per_worker_per_sec));
    std::fflush(out_);
    return;
  }
  // The next line waits for the next tenth of the epoch after this one.
  next_line_step_ = (step / std::max<int64_t>(1, steps_ / kLogLinesPerEpoch) + 1) *
                    std::max<int64_t>(1, steps_ / kLogLinesPerEpoch);
  print_line(fmt::format("{} - {} - {}", step_label(step), stats(loss, metrics),
                         throughput(per_worker_per_sec)));
}

void Progress::end_epoch(double loss, const MetricValues& metrics, double per_worker_per_sec,
                         const MetricValues& eval, bool last) {
  if (quiet_) return;
  // Many short epochs of a run bounded by steps: a terminal redraws the line
  // in place, a log gets one every kLogLineEvery.
  const bool keep = !by_steps() || last;
  if (!tty_ && !keep && Clock::now() - last_line_ < kLogLineEvery) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const std::string tail = eval.empty() ? "" : " - " + format_values(eval, "val_");
  if (tty_)
    fmt::print(out_, "\rEpoch {}{} {} steps in {} - {} - {}{}\x1b[K{}", epoch_ + 1,
               plan_.epochs > 0 ? fmt::format("/{}", plan_.epochs) : "", steps_, duration(elapsed),
               stats(loss, metrics), throughput(per_worker_per_sec), tail, keep ? "\n" : "");
  else
    print_line(fmt::format("{} done in {} - {} - {}{}", epoch_label(), duration(elapsed),
                           stats(loss, metrics), throughput(per_worker_per_sec), tail));
  std::fflush(out_);
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  if (!tty_) return print_line(text);
  fmt::print(out_, "{}\n", text);
  std::fflush(out_);
}

}  // namespace drun::train
