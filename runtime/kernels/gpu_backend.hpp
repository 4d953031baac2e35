// The GPU side of the backend interface (ops.hpp): ops.cpp holds the CPU
// implementation and hands every op on a GPU tensor to the GpuBackend of the
// build (kernels/cuda/ops_cuda.cpp; the tests' emulated GPU), or refuses
// where none is built. One pure virtual per line of kernels/op_list.hpp,
// taking the op's arguments after ops.cpp's checks (every tensor on the GPU).
#pragma once
#include <memory>
#include <string>

#include "kernels/ops.hpp"

namespace drun::kernels {

class GpuStager {
 public:
  virtual ~GpuStager() = default;
  virtual const Tensor& stage(const Tensor& host) = 0;
};

// A training step's device work recorded once and launched again as one unit
// (a CUDA graph): the same kernels on the same memory with the same
// arguments, so whatever changes from step to step must be read from device
// memory (the optimizer's rate, ...), not passed as an argument.
class GpuGraph {
 public:
  virtual ~GpuGraph() = default;
  // Whether the memory it uses is still there: false once any device tensor
  // was allocated or freed after the capture (the graph would use a freed
  // buffer or another tensor's).
  virtual bool current() const = 0;
  // Runs it again, in order after the work launched before, returning at once.
  virtual void launch() = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::unique_ptr<GpuStager> make_stager(const Exec& ex) = 0;
  // From now on the device work this thread launches on ex's device is
  // recorded, not run, until end_capture. Work that cannot be recorded (a
  // copy to the host, a wait, an allocation from the driver) throws.
  virtual void begin_capture(const Exec& ex) = 0;
  // Ends the recording; the graph, or null with the reason in `why` where the
  // capture failed (a throw in between ends it here too).
  virtual std::unique_ptr<GpuGraph> end_capture(const Exec& ex, std::string& why) = 0;

#define DRUN_OP(ret, name, params, args, device, checks) virtual ret name params = 0;
#include "kernels/op_list.hpp"
#undef DRUN_OP
};

// The build's GPU backend; null where none is built.
GpuBackend* gpu_backend();

}  // namespace drun::kernels

// Removes the parentheses of an op list's argument list: DRUN_UNPAREN (a, b)
// is a, b (to forward an op's arguments to a function of more parameters).
#define DRUN_UNPAREN(...) __VA_ARGS__
