// DRUN_EXAMPLE_LOG=DIR, for tests of what a job trained on: each worker
// process writes DIR/<host>-<pid>.log, a line per example of each step it
// trains, "<global step> <epoch> <example index> <workers>", flushed with
// the step so that a killed worker's lines end at its last step. Unset, it
// costs nothing.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace drun::train {

class ExampleLog {
 public:
  // Null when DRUN_EXAMPLE_LOG is unset or empty.
  static std::unique_ptr<ExampleLog> from_environment();
  explicit ExampleLog(std::FILE* out) : out_(out) {}
  ~ExampleLog();
  ExampleLog(const ExampleLog&) = delete;
  ExampleLog& operator=(const ExampleLog&) = delete;

  void record(int64_t step, int64_t epoch, const std::vector<int64_t>& examples, int workers);

 private:
  std::FILE* out_;
};

}  // namespace drun::train
