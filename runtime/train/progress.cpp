#include "train/progress.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

namespace drun::train {

namespace {
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

Progress::Progress(bool tty, bool quiet, std::FILE* out) : tty_(tty), quiet_(quiet), out_(out) {}

std::string Progress::stats(double loss, const MetricValues& metrics) const {
  std::string s = fmt::format("loss {:.4f}", loss);
  for (const auto& [name, v] : metrics) s += fmt::format(" - {} {:.4f}", name, v);
  return s;
}

void Progress::begin_epoch(int64_t epoch, int64_t epochs, int64_t steps) {
  epoch_ = epoch;
  epochs_ = epochs;
  steps_ = steps;
  next_line_step_ = std::max<int64_t>(1, steps / 10);
  start_ = last_draw_ = std::chrono::steady_clock::now();
  if (!quiet_ && !tty_)
    fmt::print(out_, "{} epoch {}/{}: {} steps\n", clock_prefix(), epoch + 1, epochs, steps);
}

bool Progress::due(int64_t step) const {
  if (quiet_) return false;
  // A terminal is redrawn at most 10 times a second; a log gets ~10 lines an epoch.
  if (tty_)
    return step == steps_ ||
           std::chrono::steady_clock::now() - last_draw_ >= std::chrono::milliseconds(100);
  return step >= next_line_step_ && step != steps_;
}

void Progress::update(int64_t step, double loss, const MetricValues& metrics,
                      double images_per_sec) {
  if (!due(step)) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    last_draw_ = now;
    const int width = 24;
    const int filled = steps_ ? static_cast<int>(width * step / steps_) : width;
    const double eta = step ? elapsed / static_cast<double>(step) * (steps_ - step) : 0.0;
    fmt::print(out_, "\rEpoch {}/{} [{}{}] {}/{} ETA {} - {} - {:.0f} img/s\x1b[K", epoch_ + 1,
               epochs_, std::string(static_cast<size_t>(filled), '='),
               std::string(static_cast<size_t>(width - filled), '.'), step, steps_, duration(eta),
               stats(loss, metrics), images_per_sec);
    std::fflush(out_);
    return;
  }
  next_line_step_ += std::max<int64_t>(1, steps_ / 10);
  fmt::print(out_, "{} epoch {}/{} step {}/{} - {} - {:.0f} img/s\n", clock_prefix(), epoch_ + 1,
             epochs_, step, steps_, stats(loss, metrics), images_per_sec);
  std::fflush(out_);
}

void Progress::end_epoch(double loss, const MetricValues& metrics, double images_per_sec,
                         const MetricValues& eval) {
  if (quiet_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string tail;
  for (const auto& [name, v] : eval) tail += fmt::format(" - val_{} {:.4f}", name, v);
  if (tty_)
    fmt::print(out_, "\rEpoch {}/{} {} steps in {} - {} - {:.0f} img/s{}\x1b[K\n", epoch_ + 1,
               epochs_, steps_, duration(elapsed), stats(loss, metrics), images_per_sec, tail);
  else
    fmt::print(out_, "{} epoch {}/{} done in {} - {} - {:.0f} img/s{}\n", clock_prefix(),
               epoch_ + 1, epochs_, duration(elapsed), stats(loss, metrics), images_per_sec, tail);
  std::fflush(out_);
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  if (tty_)
    fmt::print(out_, "{}\n", text);
  else
    fmt::print(out_, "{} {}\n", clock_prefix(), text);
  std::fflush(out_);
}

}  // namespace drun::train
