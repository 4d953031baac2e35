// StepGraphs: a training step's device work on a GPU launched as one CUDA
// graph instead of kernel by kernel. A step at batch 64 is a hundred small
// kernels, and launching them one by one costs the host more time than the
// GPU takes to run them; a graph is one launch.
//
// A graph replays the same kernels on the same memory with the same
// arguments, so one is kept per input: the stager's two device buffers at the
// full batch, and any other shape (an epoch's last, smaller batch) the same
// way. Each input's step runs kernel by kernel until it has run kWarmRuns
// times (by then every buffer, plan and workspace it needs exists), is then
// captured and from then on launched as its graph; a graph whose memory has
// moved (a device tensor allocated or freed since, e.g. by an evaluation at
// another batch size) is dropped and made again the same way. Where the
// capture fails, graphs are off for the rest of the run (off() says why; the
// trainer prints it); steps then run kernel by kernel, as they always can.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kernels/ops.hpp"

namespace drun::kernels {
class GpuGraph;
}

namespace drun::train {

class StepGraphs {
 public:
  // The step's input on the device: which buffers, of how many elements.
  struct Input {
    const void* x;
    const void* y;
    int64_t x_numel, y_numel;
    auto operator<=>(const Input&) const = default;
  };
  static constexpr int kWarmRuns = 2;
  static constexpr size_t kMaxGraphs = 4;

  // `ex` is the GPU the steps run on; `off` is why they must not be
  // captured (empty where they may).
  StepGraphs(const kernels::Exec& ex, std::string off);
  ~StepGraphs();

  // Runs `launch_step`, which launches one step's device work for `input`
  // and changes no host state that a second call would change again: as the
  // input's graph where there is one, else by calling it (capturing it first
  // where it is warm).
  void run(const Input& input, const std::function<void()>& launch_step);

  // Why steps run kernel by kernel; empty while graphs are on.
  const std::string& off() const { return off_; }
  int64_t captures() const { return captures_; }
  int64_t graph_launches() const { return graph_launches_; }

 private:
  struct Entry {
    int eager_runs = 0;
    std::unique_ptr<kernels::GpuGraph> graph;
  };
  void turn_off(const std::string& why);

  kernels::Exec ex_;
  std::string off_;
  std::map<Input, Entry> entries_;
  int64_t captures_ = 0, graph_launches_ = 0;
};

}  // namespace drun::train
