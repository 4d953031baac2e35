// The GPU side of the backend interface (ops.hpp): ops.cpp holds the CPU
// implementation and hands every op on a GPU tensor to the GpuBackend of the
// build (kernels/cuda/ops_cuda.cpp; the tests' emulated GPU), or refuses
// where none is built. One pure virtual per line of kernels/op_list.hpp,
// taking the op's arguments after ops.cpp's checks (every tensor on the GPU).
#pragma once
#include <memory>

#include "kernels/ops.hpp"

namespace drun::kernels {

class GpuStager {
 public:
  virtual ~GpuStager() = default;
  virtual const Tensor& stage(const Tensor& host) = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::unique_ptr<GpuStager> make_stager(const Exec& ex) = 0;

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
