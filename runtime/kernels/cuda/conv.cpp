#include "kernels/cuda/conv.hpp"

#include <cudnn.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace drun::kernels::cuda {

namespace {
void check(cudnnStatus_t rc, const char* what) {
  if (rc != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cudnnGetErrorString(rc));
}
int i(int64_t v) {
  return static_cast<int>(v);
}

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::f16:
      return CUDNN_DATA_HALF;
    case DType::bf16:
      return CUDNN_DATA_BFLOAT16;
    case DType::f32:
      return CUDNN_DATA_FLOAT;
    default:
      throw std::logic_error(std::string("cuDNN convolution of ") + dtype_name(t));
  }
}

// The first of cuDNN's candidates (fastest first, by its heuristics) that
// works and fits the workspace limit.
template <class Perf, class Algo>
void choose(const Perf* candidates, int found, size_t limit, Algo& algo, size_t& bytes,
            const char* what) {
  for (int k = 0; k < found; ++k)
    if (candidates[k].status == CUDNN_STATUS_SUCCESS && candidates[k].memory <= limit) {
      algo = candidates[k].algo;
      bytes = candidates[k].memory;
      return;
    }
  throw std::runtime_error(std::string("cuDNN: no ") + what +
                           " convolution algorithm fits the workspace limit");
}
}  // namespace

struct Dnn::Handle {
  cudnnHandle_t h = nullptr;
};

Dnn::Dnn() : handle_(std::make_unique<Handle>()) {
  check(cudnnCreate(&handle_->h), "cudnnCreate");
  check(cudnnSetStream(handle_->h, cudaStreamPerThread), "cudnnSetStream");  // device.hpp
}
Dnn::~Dnn() {
  if (handle_->h) cudnnDestroy(handle_->h);
}
void* Dnn::raw() const {
  return handle_->h;
}

struct Convolution::Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t fwd_bytes = 0, data_bytes = 0, filter_bytes = 0;
  // Extra bottom/right rows and columns of TensorFlow's asymmetric padding.
  int64_t extra_h = 0, extra_w = 0;
  size_t padded_bytes = 0;  // the padded input's copy, at the workspace's start
  ~Descriptors() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

Convolution::Convolution(Dnn& dnn, const ConvGeometry& g, DType dtype, size_t workspace_limit)
    : dnn_(dnn), g_(g), element_bytes_(dtype_size(dtype)), d_(std::make_unique<Descriptors>()) {
  const cudnnDataType_t type = data_type(dtype);
  auto handle = static_cast<cudnnHandle_t>(dnn.raw());
  // Total padding per axis; what exceeds twice the top/left side goes bottom/right explicitly.
  const int64_t pad_h = std::max<int64_t>(0, (g.oh - 1) * g.sh + g.kh - g.h);
  const int64_t pad_w = std::max<int64_t>(0, (g.ow - 1) * g.sw + g.kw - g.w);
  d_->extra_h = std::max<int64_t>(0, pad_h - 2 * g.pad_top);
  d_->extra_w = std::max<int64_t>(0, pad_w - 2 * g.pad_left);
  const int64_t h = g.h + d_->extra_h, w = g.w + d_->extra_w;
  if (d_->extra_h || d_->extra_w)
    d_->padded_bytes = static_cast<size_t>(g.n * h * w * g.c) * element_bytes_;

  check(cudnnCreateTensorDescriptor(&d_->x), "cudnnCreateTensorDescriptor");
  check(cudnnCreateTensorDescriptor(&d_->y), "cudnnCreateTensorDescriptor");
  check(cudnnCreateFilterDescriptor(&d_->w), "cudnnCreateFilterDescriptor");
  check(cudnnCreateConvolutionDescriptor(&d_->conv), "cudnnCreateConvolutionDescriptor");
  check(cudnnSetTensor4dDescriptor(d_->x, CUDNN_TENSOR_NHWC, type, i(g.n), i(g.c), i(h), i(w)),
        "cudnnSetTensor4dDescriptor x");
  check(
      cudnnSetTensor4dDescriptor(d_->y, CUDNN_TENSOR_NHWC, type, i(g.n), i(g.co), i(g.oh), i(g.ow)),
      "cudnnSetTensor4dDescriptor y");
  check(
      cudnnSetFilter4dDescriptor(d_->w, type, CUDNN_TENSOR_NHWC, i(g.co), i(g.c), i(g.kh), i(g.kw)),
      "cudnnSetFilter4dDescriptor");
  // Keras' convolution is cross-correlation.
  check(cudnnSetConvolution2dDescriptor(d_->conv, i(g.pad_top), i(g.pad_left), i(g.sh), i(g.sw), 1,
                                        1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
  // float32: full float32 arithmetic, as the CPU reference (no TF32 tensor
  // cores). float16/bfloat16: the tensor cores, accumulating in float32 (the
  // descriptor's compute type above).
  check(cudnnSetConvolutionMathType(d_->conv,
                                    dtype == DType::f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
        "cudnnSetConvolutionMathType");

  constexpr int kCandidates = 8;
  int found = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[kCandidates];
  check(cudnnGetConvolutionForwardAlgorithm_v7(handle, d_->x, d_->w, d_->conv, d_->y, kCandidates,
                                               &found, fwd),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  choose(fwd, found, workspace_limit, d_->fwd, d_->fwd_bytes, "forward");
  cudnnConvolutionBwdDataAlgoPerf_t data[kCandidates];
  check(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d_->w, d_->y, d_->conv, d_->x,
                                                    kCandidates, &found, data),
        "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  choose(data, found, workspace_limit, d_->bwd_data, d_->data_bytes, "backward-data");
  cudnnConvolutionBwdFilterAlgoPerf_t filter[kCandidates];
  check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, d_->x, d_->y, d_->conv, d_->w,
                                                      kCandidates, &found, filter),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  choose(filter, found, workspace_limit, d_->bwd_filter, d_->filter_bytes, "backward-filter");
}

Convolution::~Convolution() = default;

size_t Convolution::workspace_bytes() const {
  return d_->padded_bytes + std::max({d_->fwd_bytes, d_->data_bytes, d_->filter_bytes});
}

const void* Convolution::input(const void* x, char* workspace) const {
  if (!d_->padded_bytes) return x;
  pad_bottom_right(x, workspace, g_.n, g_.h, g_.w, g_.c, d_->extra_h, d_->extra_w, element_bytes_);
  return workspace;
}

void Convolution::forward(const void* x, const void* w_ohwi, void* y, void* workspace) {
  auto handle = static_cast<cudnnHandle_t>(dnn_.raw());
  const float one = 1.f, zero = 0.f;
  char* ws = static_cast<char*>(workspace);
  const void* in = input(x, ws);
  check(cudnnConvolutionForward(handle, &one, d_->x, in, d_->w, w_ohwi, d_->conv, d_->fwd,
                                ws + d_->padded_bytes, d_->fwd_bytes, &zero, d_->y, y),
        "cudnnConvolutionForward");
}

void Convolution::backward_data(const void* dy, const void* w_ohwi, void* dx, void* workspace) {
  auto handle = static_cast<cudnnHandle_t>(dnn_.raw());
  const float one = 1.f, zero = 0.f;
  char* ws = static_cast<char*>(workspace);
  void* out = d_->padded_bytes ? static_cast<void*>(ws) : dx;
  check(cudnnConvolutionBackwardData(handle, &one, d_->w, w_ohwi, d_->y, dy, d_->conv, d_->bwd_data,
                                     ws + d_->padded_bytes, d_->data_bytes, &zero, d_->x, out),
        "cudnnConvolutionBackwardData");
  if (d_->padded_bytes)
    crop_bottom_right(out, dx, g_.n, g_.h, g_.w, g_.c, d_->extra_h, d_->extra_w, element_bytes_);
}

void Convolution::backward_filter(const void* x, const void* dy, void* dw_ohwi, void* workspace) {
  auto handle = static_cast<cudnnHandle_t>(dnn_.raw());
  const float one = 1.f, zero = 0.f;
  char* ws = static_cast<char*>(workspace);
  const void* in = input(x, ws);
  check(cudnnConvolutionBackwardFilter(handle, &one, d_->x, in, d_->y, dy, d_->conv, d_->bwd_filter,
                                       ws + d_->padded_bytes, d_->filter_bytes, &zero, d_->w,
                                       dw_ohwi),
        "cudnnConvolutionBackwardFilter");
}

}  // namespace drun::kernels::cuda
