// TensorBoard event files: a TFRecord file of tensorflow.Event protos, the
// format tf.summary writes, so that TensorBoard (or anything reading TF
// summaries) shows a drun run's loss, metrics and weight histograms. The few
// protobuf messages are encoded by hand to keep protobuf out of the build.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

namespace drun::io {

// One event file. Not thread-safe: a thread that logs on its own (evaluation)
// opens its own writer, usually in a subdirectory such as "eval", which
// TensorBoard shows as a run of its own.
class EventWriter {
 public:
  // Creates `dir` if needed and the file
  // dir/events.out.tfevents.<unix seconds>.<hostname>.<pid>.drun, whose first
  // record carries the file version TensorBoard checks (a name already taken
  // gets ".1", ".2"... appended). Throws UsageError naming the path when it
  // cannot create or write it.
  explicit EventWriter(const std::string& dir);
  ~EventWriter();  // flushes and closes
  EventWriter(EventWriter&&) noexcept;
  EventWriter& operator=(EventWriter&&) noexcept;

  // A scalar summary; TensorBoard keeps it as a float32 (simple_value).
  void scalar(const std::string& tag, int64_t step, double value);
  // A histogram summary with TensorFlow's default buckets (limits growing by
  // 1.1x from 1e-12 to 1e20, mirrored for negatives, and 0), empty buckets
  // merged as TensorFlow does. Throws UsageError for a NaN or infinite value,
  // as TensorFlow's histogram summary does.
  void histogram(const std::string& tag, int64_t step, std::span<const float> values);
  // Hands what was written to the OS, so that a reader sees every record.
  void flush();
  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  void write_record(const std::string& data);
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
};

}  // namespace drun::io
