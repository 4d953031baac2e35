// The backend interface: the only code that knows whether a tensor lives on a
// CPU or a GPU. Layers, losses and optimizers call these functions with
// tensors; each checks the device and runs the matching backend's kernel.
// The ops are declared from one list, kernels/op_list.hpp, which also gives
// the GPU backend its interface (gpu_backend.hpp). Shapes are checked by the
// callers (layers know the names users see); these functions only check what
// would otherwise corrupt memory.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/types.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels {

namespace cuda {
class Context;
}
class GpuStager;
class GpuGraph;

// Where kernels run and with how many threads (the rank's share of its node).
struct Exec {
  Device device = Device::cpu;
  int threads = 1;
  // With device cuda: the GPU's library handles, convolution plans and copy
  // stream (make_cuda_context). Elementwise ops and optimizer updates run
  // without one; matmul, convolutions and staging need it.
  cuda::Context* gpu = nullptr;
};

// Whether this build has the CUDA backend, and how many GPUs it sees (0
// without a driver or device; never throws).
bool cuda_built();
int cuda_device_count();
// Makes GPU `index` this thread's device and opens its handles (cuBLAS,
// cuDNN, a copy stream). Throws where CUDA is not built or the GPU is missing.
std::shared_ptr<cuda::Context> make_cuda_context(int index);
std::string cuda_device_name(int index);

// Host batches to the device: each stage() copies from pinned host memory on a
// copy stream and returns at once; the next kernel on the compute stream waits
// for the copy, so the copy of batch k+1 overlaps what remains of step k. On
// the CPU it returns `host` itself.
class InputStager {
 public:
  explicit InputStager(const Exec& ex);
  ~InputStager();
  InputStager(const InputStager&) = delete;
  InputStager& operator=(const InputStager&) = delete;
  const Tensor& stage(const Tensor& host);

 private:
  std::unique_ptr<GpuStager> gpu_;  // null on the CPU
};

// Records the device work this thread launches on ex's GPU, from
// begin_capture to end_capture, as a graph to launch again
// (kernels/gpu_backend.hpp GpuGraph); end_capture returns null with the
// reason in `why` where the capture failed. Both refuse a CPU Exec.
void begin_capture(const Exec& ex);
std::unique_ptr<GpuGraph> end_capture(const Exec& ex, std::string& why);

// The rows and classes of a loss's or metric's predictions: the classes lie
// along the last axis, as Keras takes them, and every other position is a row,
// so that (N, T, C) is N*T rows and a mean counts each step of each example
// once. (N, C) is N rows; a rank-1 pred is N rows of one value.
struct ClassRows {
  int64_t rows = 0, cols = 0;
};
// Inline: the CUDA module (ops_cuda.cpp) uses it too.
inline ClassRows class_rows(const Shape& pred) {
  if (pred.rank() == 0) return {};
  const int64_t cols = pred.rank() == 1 ? 1 : pred[pred.rank() - 1];
  return {cols ? pred.numel() / cols : 0, cols};
}

// The ops, one per line of kernels/op_list.hpp (which documents each).
#define DRUN_OP(ret, name, params, args, device, checks) ret name params;
#include "kernels/op_list.hpp"
#undef DRUN_OP

}  // namespace drun::kernels
