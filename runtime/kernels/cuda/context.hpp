// One GPU's working state for the thread that trains on it: the cuBLAS and
// cuDNN handles, the convolution plans (one per geometry, chosen once by
// cuDNN's heuristics) and the stream that input copies run on. Plain C++:
// the CUDA types stay in the .cpp.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>

#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/conv.hpp"

namespace drun::kernels::cuda {

class Context {
 public:
  // Makes `device` the calling thread's GPU.
  explicit Context(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  Blas& blas() { return *blas_; }
  // The plan of geometry g for tensors of `dtype` (conv.hpp), made once.
  Convolution& convolution(const ConvGeometry& g, DType dtype = DType::f32);
  void* copy_stream() const { return copy_stream_; }  // cudaStream_t

 private:
  using Key = std::array<int64_t, 14>;
  int device_;
  std::unique_ptr<Blas> blas_;
  std::unique_ptr<Dnn> dnn_;
  std::map<Key, std::unique_ptr<Convolution>> plans_;
  void* copy_stream_ = nullptr;
};

}  // namespace drun::kernels::cuda
