// The cast kernel of cast.hpp, and the convolution's epilogue (conv.hpp),
// which widens as it does: a grid-stride loop through float, with the
// device's own round-to-nearest-even conversions (__float2half_rn,
// __float2bfloat16_rn), which the backend harness compares with the CPU's
// kernels/half.hpp bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/activation_list.hpp"
#include "kernels/cast.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

template <class T>
struct Element;
template <>
struct Element<float> {
  __device__ static float widen(float v) { return v; }
  __device__ static float narrow(float v) { return v; }
};
template <>
struct Element<__half> {
  __device__ static float widen(__half v) { return __half2float(v); }
  __device__ static __half narrow(float v) { return __float2half_rn(v); }
};
template <>
struct Element<__nv_bfloat16> {
  __device__ static float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 narrow(float v) { return __float2bfloat16_rn(v); }
};

template <class From, class To>
__global__ void cast_kernel(const From* x, To* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride())
    y[i] = Element<To>::narrow(Element<From>::widen(x[i]));
}

template <class From, class To>
void launch_cast(const void* x, void* y, int64_t n) {
  cast_kernel<<<blocks_for(n), kThreads>>>(static_cast<const From*>(x), static_cast<To*>(y), n);
  check_launch("cast");
}

template <class From>
__global__ void conv_epilogue_kernel(const From* x, float* y, const float* __restrict__ bias,
                                     bool relu, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    float v = Element<From>::widen(x[i]);
    if (bias) v += bias[i % cols];
    y[i] = relu ? act::Relu{}.forward(v) : v;
  }
}

template <class From>
void launch_conv_epilogue(const void* x, float* y, const float* bias, bool relu, int64_t rows,
                          int64_t cols) {
  conv_epilogue_kernel<<<blocks_for(rows * cols), kThreads>>>(static_cast<const From*>(x), y, bias,
                                                              relu, rows, cols);
  check_launch("conv_epilogue");
}

template <class From>
void cast_from(const void* x, void* y, DType to, int64_t n) {
  switch (to) {
    case DType::f16:
      return launch_cast<From, __half>(x, y, n);
    case DType::bf16:
      return launch_cast<From, __nv_bfloat16>(x, y, n);
    default:
      return launch_cast<From, float>(x, y, n);
  }
}

}  // namespace

void cast(const void* x, DType from, void* y, DType to, int64_t n) {
  if (n <= 0) return;
  switch (from) {
    case DType::f16:
      return cast_from<__half>(x, y, to, n);
    case DType::bf16:
      return cast_from<__nv_bfloat16>(x, y, to, n);
    default:
      return cast_from<float>(x, y, to, n);
  }
}

void conv_epilogue(const void* x, DType type, float* y, const float* bias, bool relu, int64_t rows,
                   int64_t cols) {
  if (rows * cols <= 0) return;
  switch (type) {
    case DType::f16:
      return launch_conv_epilogue<__half>(x, y, bias, relu, rows, cols);
    case DType::bf16:
      return launch_conv_epilogue<__nv_bfloat16>(x, y, bias, relu, rows, cols);
    default:
      return launch_conv_epilogue<float>(x, y, bias, relu, rows, cols);
  }
}

}  // namespace drun::kernels::cuda
