// The CUDA backend behind ops.hpp: cuBLAS for GEMM, cuDNN for convolutions
// (kernels kept in Keras' HWIO and turned into cuDNN's OHWI at this edge),
// drun's own kernels for the rest. Everything runs on the training thread's
// default stream (kernels/cuda/device.hpp), so ops are ordered among
// themselves without events; only input copies use a stream of their own
// (InputStager).
#include <cuda_runtime.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/activation.hpp"
#include "kernels/batchnorm.hpp"
#include "kernels/cast.hpp"
#include "kernels/cuda/context.hpp"
#include "kernels/cuda/depthwise_conv.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/pool.hpp"
#include "kernels/cuda/strided_copy.hpp"
#include "kernels/dropout.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/embedding.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/gradient_clip.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/loss.hpp"
#include "kernels/masked_softmax.hpp"
#include "kernels/metric.hpp"
#include "kernels/metric_counts.hpp"
#include "kernels/mixed_reference.hpp"
#include "kernels/optimizer_update.hpp"
#include "kernels/recurrent_args.hpp"

namespace drun::kernels {

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}

cuda::Context& context(const Exec& ex, const char* op) {
  if (!ex.gpu)
    throw std::logic_error(std::string(op) + " on the GPU needs its context (Exec::gpu)");
  return *ex.gpu;
}

int64_t last_dim(const Tensor& t) {
  return t.rank() ? t.dim(-1) : 1;
}

// Mixed precision (op_list.hpp): x as `type` on the device, x itself where
// it is of that type, else its rounded copy in `copy`.
const void* as_type(const Tensor& x, DType type, std::optional<cuda::Scratch>& copy) {
  if (x.dtype() == type) return x.raw();
  copy.emplace(static_cast<size_t>(x.numel()) * dtype_size(type));
  cuda::cast(x.raw(), x.dtype(), copy->get(), type, x.numel());
  return copy->get();
}

// The plan's workspace: the layer's (sized for float32 plans), or a larger
// one of the pool where a float16 or bfloat16 plan needs more.
void* workspace_for(const cuda::Convolution& conv, Tensor& ws,
                    std::optional<cuda::Scratch>& larger) {
  if (conv.workspace_bytes() <= ws.bytes()) return ws.raw();
  larger.emplace(conv.workspace_bytes());
  return larger->get();
}

// Input batches through two pinned host buffers and two device buffers, used
// in turn. The copy stream waits until the compute stream is done with a
// device buffer before refilling it, and the compute stream waits for the
// copy before using it; the host never waits for the GPU here.
class CudaStager final : public GpuStager {
 public:
  explicit CudaStager(const Exec& ex) : stream_(static_cast<cudaStream_t>(ex.gpu->copy_stream())) {
    for (Slot& s : slots_) {
      check(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming), "cudaEventCreate");
      check(cudaEventCreateWithFlags(&s.released, cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~CudaStager() override {
    for (Slot& s : slots_) {
      cudaEventDestroy(s.copied);
      cudaEventDestroy(s.released);
      if (s.pinned) cudaFreeHost(s.pinned);
    }
  }

  const Tensor& stage(const Tensor& host) override {
    if (host.device() != Device::cpu) return host;
    // Every kernel of the previous batch's step is queued by now.
    check(cudaEventRecord(slots_[current_].released, cudaStreamPerThread), "cudaEventRecord");
    current_ ^= 1;
    Slot& s = slots_[current_];
    const size_t bytes = host.bytes();
    check(cudaEventSynchronize(s.copied), "cudaEventSynchronize");  // its pinned buffer is free
    if (s.capacity < bytes) {
      if (s.pinned) check(cudaFreeHost(s.pinned), "cudaFreeHost");
      s.pinned = nullptr;
      check(cudaMallocHost(&s.pinned, bytes), "cudaMallocHost");
      s.capacity = bytes;
    }
    std::memcpy(s.pinned, host.raw(), bytes);
    s.device.ensure(host.shape(), host.dtype(), Device::cuda);
    check(cudaStreamWaitEvent(stream_, s.released, 0), "cudaStreamWaitEvent");
    check(cudaMemcpyAsync(s.device.raw(), s.pinned, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
    check(cudaEventRecord(s.copied, stream_), "cudaEventRecord");
    check(cudaStreamWaitEvent(cudaStreamPerThread, s.copied, 0), "cudaStreamWaitEvent");
    return s.device;
  }

 private:
  struct Slot {
    void* pinned = nullptr;
    size_t capacity = 0;
    Tensor device;
    cudaEvent_t copied = nullptr, released = nullptr;
  };
  cudaStream_t stream_;
  Slot slots_[2];
  int current_ = 0;
};

// A step captured from this thread's stream (cuda/device.hpp). Captured in
// the thread-local mode: a call of this thread that cannot be recorded (a
// blocking copy, cudaMalloc, a wait) fails the capture, and other threads
// (the input pipeline's) are left alone.
class CudaGraph final : public GpuGraph {
 public:
  explicit CudaGraph(cudaGraphExec_t exec)
      : exec_(exec), tensor_changes_(cuda::device_pool().tensor_changes()) {}
  ~CudaGraph() override { cudaGraphExecDestroy(exec_); }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  bool current() const override { return cuda::device_pool().tensor_changes() == tensor_changes_; }
  void launch() override { check(cudaGraphLaunch(exec_, cudaStreamPerThread), "cudaGraphLaunch"); }

 private:
  cudaGraphExec_t exec_;
  int64_t tensor_changes_;
};

// One override per line of kernels/op_list.hpp: the op's CUDA side, on
// device tensors after ops.cpp's checks.
class CudaBackend final : public GpuBackend {
 public:
  void begin_capture(const Exec&) override {
    check(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
  }

  std::unique_ptr<GpuGraph> end_capture(const Exec&, std::string& why) override {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(cudaStreamPerThread, &graph);
    if (ended != cudaSuccess || !graph) {
      cudaGetLastError();  // a failed capture's error is not sticky: clear it
      why = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(ended);
      if (graph) cudaGraphDestroy(graph);
      return nullptr;
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (made != cudaSuccess) {
      cudaGetLastError();
      why = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
      return nullptr;
    }
    return std::make_unique<CudaGraph>(exec);
  }

  std::unique_ptr<GpuStager> make_stager(const Exec& ex) override {
    context(ex, "input staging");
    return std::make_unique<CudaStager>(ex);
  }

  void synchronize(const Exec&) override { cuda::synchronize(); }
  void matmul(const Exec& ex, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
              const Tensor& a, const Tensor& b, float beta, Tensor& y) override {
    if (a.dtype() == DType::f32 && b.dtype() == DType::f32) {
      context(ex, "matmul").blas().gemm(ta, tb, m, n, k, alpha, a.f32(), b.f32(), beta, y.f32());
      return;
    }
    const DType type = mixed_reference::compute_type(a, b);
    std::optional<cuda::Scratch> a_copy, b_copy;
    const void* pa = as_type(a, type, a_copy);
    const void* pb = as_type(b, type, b_copy);
    context(ex, "matmul").blas().gemm(ta, tb, m, n, k, alpha, pa, pb, type, beta, y.f32());
  }
  void affine(const Exec& ex, int64_t rows, int64_t in, int64_t cols, const Tensor& x,
              const Tensor& w, const Tensor& b, Tensor& y) override {
    matmul(ex, false, false, rows, cols, in, 1.0f, x, w, 0.0f, y);
    cuda::bias_add(y.f32(), b.f32(), rows, cols);
  }
  void batched_matmul(const Exec& ex, const BatchedGemm& g, float alpha, const Tensor& a,
                      const Tensor& b, float beta, Tensor& y) override {
    context(ex, "batched_matmul").blas().gemm_batched(g, alpha, a.f32(), b.f32(), beta, y.f32());
  }
  void masked_softmax_forward(const Exec&, float scale, bool causal, int64_t t, const Tensor& x,
                              Tensor& y) override {
    const int64_t cols = last_dim(x);
    cuda::masked_softmax_forward(scale, causal, t, x.f32(), y.f32(), x.numel() / cols, cols);
  }
  void masked_softmax_backward(const Exec&, float scale, const Tensor& y, const Tensor& dy,
                               Tensor& dx) override {
    const int64_t cols = last_dim(y);
    cuda::masked_softmax_backward(scale, y.f32(), dy.f32(), dx.f32(), y.numel() / cols, cols);
  }
  void bias_add(const Exec&, Tensor& y, const Tensor& b) override {
    cuda::bias_add(y.f32(), b.f32(), y.numel() / b.numel(), b.numel());
  }
  void column_sums(const Exec&, const Tensor& x, Tensor& s) override {
    cuda::column_sums(x.f32(), x.numel() / s.numel(), s.numel(), s.f32());
  }
  void activation_forward(const Exec&, ActivationFn a, const Tensor& x, Tensor& y) override {
    const int64_t cols = last_dim(x);
    cuda::activation_forward(a, x.f32(), y.f32(), x.numel() / cols, cols);
  }
  void activation_backward(const Exec&, ActivationFn a, const Tensor& x, const Tensor& y,
                           const Tensor& dy, Tensor& dx) override {
    const int64_t cols = last_dim(y);
    cuda::activation_backward(a, x.defined() ? x.f32() : nullptr, y.f32(), dy.f32(), dx.f32(),
                              y.numel() / cols, cols);
  }
  void add(const Exec&, const Tensor& a, const Tensor& b, Tensor& y) override {
    cuda::add(a.f32(), b.f32(), y.f32(), a.numel());
  }
  void add_relu(const Exec&, const Tensor& a, const Tensor& b, Tensor& y) override {
    // Two passes: the fusion saves memory passes on the CPU; here it keeps
    // one code path for the layer.
    cuda::add(a.f32(), b.f32(), y.f32(), a.numel());
    cuda::activation_forward(Activation::relu, y.f32(), y.f32(), a.numel(), 1);
  }
  void add_relu_backward(const Exec&, const Tensor& a, const Tensor& b, const Tensor& y,
                         Tensor& dx) override {
    // Two passes, as add_relu.
    cuda::add(a.f32(), b.f32(), dx.f32(), a.numel());
    cuda::activation_backward(Activation::relu, nullptr, y.f32(), dx.f32(), dx.f32(), a.numel(), 1);
  }
  void axpy(const Exec&, float alpha, const Tensor& x, Tensor& y) override {
    cuda::axpy(alpha, x.f32(), y.f32(), x.numel());
  }
  void fill(const Exec&, float value, Tensor& y) override { cuda::fill(value, y.f32(), y.numel()); }
  void scale(const Exec&, float alpha, Tensor& y) override {
    cuda::scale(alpha, y.f32(), y.numel());
  }
  void scale_by(const Exec&, const Tensor& alpha, Tensor& y) override {
    cuda::scale_by(alpha.f32(), y.f32(), y.numel());
  }
  void mul(const Exec&, const Tensor& a, const Tensor& b, Tensor& y) override {
    cuda::mul(a.f32(), b.f32(), y.f32(), a.numel());
  }
  void dropout_set_key(const Exec&, uint64_t key, Tensor& stored) override {
    cuda::dropout_set_key(key, stored.i32());
  }
  void dropout_forward(const Exec&, const Tensor& stored, float keep, const Tensor& x, Tensor& mask,
                       Tensor& y) override {
    cuda::dropout_forward(x.f32(), mask.f32(), y.f32(), x.numel(), stored.i32(), 0, keep);
  }
  void cast(const Exec&, const Tensor& x, Tensor& y) override {
    cuda::cast(x.raw(), x.dtype(), y.raw(), y.dtype(), x.numel());
  }
  void mark_nonfinite(const Exec&, const Tensor& x, Tensor& flag) override {
    cuda::mark_nonfinite(x.f32(), x.numel(), flag.f32());
  }

  int64_t conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g) override {
    const size_t bytes = context(ex, "conv2d").convolution(g).workspace_bytes();
    return std::max<int64_t>(1, static_cast<int64_t>((bytes + 3) / 4));
  }
  bool conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                      const Tensor& b, Tensor& y, bool relu, Tensor& ws, Tensor*) override {
    const float* bias = b.defined() ? b.f32() : nullptr;
    const int64_t rows = g.n * g.oh * g.ow;
    if (x.dtype() != DType::f32) {
      // y = f32(conv in x's type) + b: cuDNN writes y in x's type.
      const DType type = x.dtype();
      cuda::Convolution& conv = context(ex, "conv2d").convolution(g, type);
      std::optional<cuda::Scratch> w_copy, larger;
      const void* w_t = as_type(w, type, w_copy);
      cuda::Scratch w_ohwi(static_cast<size_t>(w.numel()) * dtype_size(type));
      cuda::hwio_to_ohwi(w_t, w_ohwi.get(), g.kh, g.kw, g.c, g.co, dtype_size(type));
      cuda::Scratch y_t(static_cast<size_t>(y.numel()) * dtype_size(type));
      conv.forward(x.raw(), w_ohwi.get(), y_t.get(), workspace_for(conv, ws, larger));
      cuda::conv_epilogue(y_t.get(), type, y.f32(), bias, relu, rows, g.co);
      return false;
    }
    cuda::Convolution& conv = context(ex, "conv2d").convolution(g);
    cuda::Scratch w_ohwi(w.bytes());
    cuda::hwio_to_ohwi(w.f32(), w_ohwi.f32(), g.kh, g.kw, g.c, g.co);
    conv.forward(x.f32(), w_ohwi.f32(), y.f32(), ws.raw());
    if (bias || relu) cuda::conv_epilogue(y.f32(), DType::f32, y.f32(), bias, relu, rows, g.co);
    return false;  // no moments: the batch norm's own pass reads y (op_list.hpp)
  }
  void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                              const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                              Tensor& ws) override {
    // The plan of x's type: float32, or float16/bfloat16 (dw from dy rounded to it).
    cuda::Convolution& conv = context(ex, "conv2d_backward_filter").convolution(g, x.dtype());
    const int64_t rows = g.n * g.oh * g.ow;
    // dy as the convolution reads it: masked where relu_y says, or rounded
    // to x's type by the layer already (op_list.hpp: then no mask, no db).
    const void* d = dy.raw();
    std::optional<cuda::Scratch> masked;
    if (relu_y) {
      masked.emplace(dy.bytes());
      cuda::activation_backward(Activation::relu, nullptr, relu_y->f32(), dy.f32(), masked->f32(),
                                rows, g.co);
      d = masked->get();
    }
    if (db.defined()) cuda::column_sums(static_cast<const float*>(d), rows, g.co, db.f32());
    if (x.dtype() != DType::f32) {
      // dw = f32(the gradient in x's type, from dy rounded to it).
      const DType type = x.dtype();
      const size_t bytes = dtype_size(type);
      std::optional<cuda::Scratch> dy_copy, larger;
      if (dy.dtype() != type) {
        dy_copy.emplace(static_cast<size_t>(dy.numel()) * bytes);
        cuda::cast(d, DType::f32, dy_copy->get(), type, dy.numel());
        d = dy_copy->get();
      }
      cuda::Scratch dw_ohwi(static_cast<size_t>(dw.numel()) * bytes),
          dw_hwio(static_cast<size_t>(dw.numel()) * bytes);
      conv.backward_filter(x.raw(), d, dw_ohwi.get(), workspace_for(conv, ws, larger));
      cuda::ohwi_to_hwio(dw_ohwi.get(), dw_hwio.get(), g.kh, g.kw, g.c, g.co, bytes);
      cuda::cast(dw_hwio.get(), type, dw.raw(), DType::f32, dw.numel());
      return;
    }
    cuda::Scratch dw_ohwi(dw.bytes());
    conv.backward_filter(x.f32(), d, dw_ohwi.f32(), ws.raw());
    cuda::ohwi_to_hwio(dw_ohwi.f32(), dw.f32(), g.kh, g.kw, g.c, g.co);
  }
  void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy,
                            const Tensor& w, Tensor& dx, Tensor& ws) override {
    if (w.dtype() != DType::f32) {
      // dx = f32(the gradient in w's type, from dy rounded to it).
      const DType type = w.dtype();
      const size_t bytes = dtype_size(type);
      cuda::Convolution& conv = context(ex, "conv2d_backward_data").convolution(g, type);
      std::optional<cuda::Scratch> dy_copy, larger;
      const void* dy_t = as_type(dy, type, dy_copy);
      cuda::Scratch w_ohwi(static_cast<size_t>(w.numel()) * bytes);
      cuda::hwio_to_ohwi(w.raw(), w_ohwi.get(), g.kh, g.kw, g.c, g.co, bytes);
      cuda::Scratch dx_t(static_cast<size_t>(dx.numel()) * bytes);
      conv.backward_data(dy_t, w_ohwi.get(), dx_t.get(), workspace_for(conv, ws, larger));
      cuda::cast(dx_t.get(), type, dx.raw(), DType::f32, dx.numel());
      return;
    }
    cuda::Convolution& conv = context(ex, "conv2d_backward_data").convolution(g);
    cuda::Scratch w_ohwi(w.bytes());
    cuda::hwio_to_ohwi(w.f32(), w_ohwi.f32(), g.kh, g.kw, g.c, g.co);
    conv.backward_data(dy.f32(), w_ohwi.f32(), dx.f32(), ws.raw());
  }

  // No fused kernel: cuDNN's convolution and the pooling kernel run one
  // after the other (the layer does, when this says false).
  bool conv2d_max_pool_forward(const Exec&, const ConvGeometry&, const PoolGeometry&, const Tensor&,
                               const Tensor&, const Tensor&, Tensor&, Tensor&, bool,
                               Tensor&) override {
    return false;
  }
  void conv2d_max_pool_backward_filter(const Exec&, const ConvGeometry&, const PoolGeometry&,
                                       const Tensor&, const Tensor&, const Tensor&, const Tensor*,
                                       Tensor&, Tensor&, Tensor&) override {
    throw std::logic_error(
        "conv2d_max_pool_backward_filter on CUDA: its forward declined, so the layer runs the "
        "two ops");
  }

  void depthwise_conv2d_forward(const Exec&, const ConvGeometry& g, const Tensor& x,
                                const Tensor& w, const Tensor& b, Tensor& y) override {
    cuda::depthwise_conv2d_forward(g, x.f32(), w.f32(), b.defined() ? b.f32() : nullptr, y.f32());
  }
  void depthwise_conv2d_backward_data(const Exec&, const ConvGeometry& g, const Tensor& dy,
                                      const Tensor& w, Tensor& dx) override {
    cuda::depthwise_conv2d_backward_data(g, dy.f32(), w.f32(), dx.f32());
  }
  void depthwise_conv2d_backward_filter(const Exec&, const ConvGeometry& g, const Tensor& x,
                                        const Tensor& dy, Tensor& dw) override {
    cuda::depthwise_conv2d_backward_filter(g, x.f32(), dy.f32(), dw.f32());
  }

  void max_pool_forward(const Exec&, const PoolGeometry& g, const Tensor& x, Tensor& y,
                        Tensor& argmax) override {
    cuda::max_pool_forward(g, x.f32(), y.f32(), argmax.i32());
  }
  void max_pool_backward(const Exec&, const PoolGeometry& g, const Tensor& dy, const Tensor& argmax,
                         Tensor& dx) override {
    cuda::max_pool_backward(g, dy.f32(), argmax.i32(), dx.f32());
  }
  void avg_pool_forward(const Exec&, const PoolGeometry& g, const Tensor& x, Tensor& y) override {
    cuda::avg_pool_forward(g, x.f32(), y.f32());
  }
  void avg_pool_backward(const Exec&, const PoolGeometry& g, const Tensor& dy,
                         Tensor& dx) override {
    cuda::avg_pool_backward(g, dy.f32(), dx.f32());
  }
  void global_avg_pool_forward(const Exec&, const Tensor& x, Tensor& y) override {
    const int64_t n = x.dim(0), c = x.dim(-1);
    cuda::global_avg_pool_forward(n, x.numel() / (n * c), c, x.f32(), y.f32());
  }
  void global_avg_pool_backward(const Exec&, const Tensor& dy, Tensor& dx) override {
    const int64_t n = dx.dim(0), c = dx.dim(-1);
    cuda::global_avg_pool_backward(n, dx.numel() / (n * c), c, dy.f32(), dx.f32());
  }

  void strided_copy(const Exec&, const CopyGeometry& g, const Tensor& x, float beta,
                    Tensor& y) override {
    cuda::strided_copy(g, x.f32(), beta, y.f32());
  }

  void batchnorm_forward_train(const Exec&, const Tensor& x, const Tensor& gamma,
                               const Tensor& beta, float eps, float momentum, Tensor& moving_mean,
                               Tensor& moving_var, Tensor& mean, Tensor& inv_std, Tensor& y,
                               bool relu, const Tensor*) override {
    const int64_t c = gamma.numel();
    cuda::batchnorm_forward_train(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps, momentum,
                                  moving_mean.f32(), moving_var.f32(), mean.f32(), inv_std.f32(),
                                  y.f32(), relu);
  }
  void batchnorm_forward_infer(const Exec&, const Tensor& x, const Tensor& gamma,
                               const Tensor& beta, float eps, const Tensor& moving_mean,
                               const Tensor& moving_var, Tensor& y, bool relu) override {
    const int64_t c = gamma.numel();
    cuda::batchnorm_forward_infer(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps,
                                  moving_mean.f32(), moving_var.f32(), y.f32(), relu);
  }
  void batchnorm_backward(const Exec&, const Tensor& x, const Tensor& dy, const Tensor* relu_y,
                          const Tensor& gamma, const Tensor&, const Tensor& mean,
                          const Tensor& inv_std, bool batch_statistics, Tensor& dx, Tensor& dgamma,
                          Tensor& dbeta) override {
    const int64_t c = gamma.numel(), rows = x.numel() / c;
    const float* grad = dy.f32();
    if (relu_y) {  // the masked gradient goes to dx first; batch norm's passes may read it there
      cuda::activation_backward(Activation::relu, nullptr, relu_y->f32(), dy.f32(), dx.f32(), rows,
                                c);
      grad = dx.f32();
    }
    cuda::batchnorm_backward(x.f32(), grad, rows, c, gamma.f32(), mean.f32(), inv_std.f32(),
                             batch_statistics, dx.f32(), dgamma.f32(), dbeta.f32());
  }

  void layer_norm_forward(const Exec&, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          float eps, Tensor& mean, Tensor& inv_std, Tensor& y) override {
    const int64_t c = x.dim(-1);
    cuda::layer_norm_forward(x.f32(), x.numel() / c, c, gamma.defined() ? gamma.f32() : nullptr,
                             beta.defined() ? beta.f32() : nullptr, eps, mean.f32(), inv_std.f32(),
                             y.f32());
  }
  void layer_norm_backward(const Exec&, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                           const Tensor& mean, const Tensor& inv_std, Tensor& dx, Tensor& dgamma,
                           Tensor& dbeta) override {
    const int64_t c = x.dim(-1), rows = x.numel() / c;
    if (dgamma.defined() || dbeta.defined())
      cuda::layer_norm_param_grads(x.f32(), dy.f32(), rows, c, mean.f32(), inv_std.f32(),
                                   dgamma.defined() ? dgamma.f32() : nullptr,
                                   dbeta.defined() ? dbeta.f32() : nullptr);
    if (dx.defined())
      cuda::layer_norm_backward_input(x.f32(), dy.f32(), rows, c,
                                      gamma.defined() ? gamma.f32() : nullptr, mean.f32(),
                                      inv_std.f32(), dx.f32());
  }

  void embedding_gather(const Exec&, const Tensor& ids, const Tensor& table, Tensor& y) override {
    cuda::embedding_gather(ids.raw(), ids.dtype(), ids.numel(), table.f32(), table.dim(0),
                           table.dim(1), y.f32());
  }
  void embedding_scatter_add(const Exec&, const Tensor& ids, const Tensor& dy,
                             Tensor& dtable) override {
    cuda::embedding_scatter_add(ids.raw(), ids.dtype(), ids.numel(), dy.f32(), dtable.dim(0),
                                dtable.dim(1), dtable.f32());
  }

  void loss_forward_backward(const Exec&, LossKind kind, const Tensor& pred, const Tensor& target,
                             Tensor& grad, Tensor& loss) override {
    const auto [rows, cols] = class_rows(pred.shape());
    float* out = loss.f32();
    switch (kind) {
      case LossKind::softmax_xent_sparse:
        return cuda::softmax_xent_sparse(pred.f32(), target.i32(), rows, cols, grad.f32(), out);
      case LossKind::xent_sparse:
        return cuda::xent_sparse_probs(pred.f32(), target.i32(), rows, cols, grad.f32(), out);
      case LossKind::softmax_xent:
        return cuda::softmax_xent_dense(pred.f32(), target.f32(), rows, cols, grad.f32(), out);
      case LossKind::xent:
        return cuda::xent_dense_probs(pred.f32(), target.f32(), rows, cols, grad.f32(), out);
      case LossKind::sigmoid_bce:
        return cuda::sigmoid_bce(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
      case LossKind::bce:
        return cuda::bce_probs(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
      case LossKind::mse:
        return cuda::mse(pred.f32(), target.f32(), pred.numel(), grad.f32(), out);
    }
  }
  void metric_sum(const Exec&, MetricKind kind, const Tensor& pred, const Tensor& target,
                  Tensor& sum) override {
    const auto [rows, cols] = class_rows(pred.shape());
    float* out = sum.f32();
    switch (kind) {
      case MetricKind::label_accuracy:
        return cuda::label_hits(pred.f32(), target.i32(), rows, cols, out);
      case MetricKind::onehot_accuracy:
        return cuda::argmax_hits(pred.f32(), target.f32(), rows, cols, out);
      case MetricKind::binary_accuracy_logits:
        return cuda::threshold_hits(pred.f32(), target.f32(), pred.numel(), 0.0f, out);
      case MetricKind::binary_accuracy_probs:
        return cuda::threshold_hits(pred.f32(), target.f32(), pred.numel(), 0.5f, out);
      case MetricKind::squared_error:
        return cuda::error_sum(pred.f32(), target.f32(), pred.numel(), true, out);
      case MetricKind::absolute_error:
        return cuda::error_sum(pred.f32(), target.f32(), pred.numel(), false, out);
    }
  }

  void top_k_hits(const Exec&, int k, const Tensor& pred, const Tensor& target,
                  Tensor& sum) override {
    const auto [rows, cols] = class_rows(pred.shape());
    const bool labels = target.dtype() == DType::i32;
    cuda::top_k_hits(pred.f32(), labels ? target.i32() : nullptr, labels ? nullptr : target.f32(),
                     rows, cols, k, sum.f32());
  }
  void threshold_counts(const Exec&, const Thresholds& thresholds, const Tensor& pred,
                        const Tensor& target, Tensor& counts) override {
    cuda::threshold_counts(pred.f32(), target.f32(), pred.numel(), thresholds, counts.f32());
  }
  void bucket_counts(const Exec&, const Tensor& pred, const Tensor& target,
                     Tensor& counts) override {
    cuda::bucket_counts(pred.f32(), target.f32(), pred.numel(), counts.numel() / 2, counts.f32());
  }
  void class_counts(const Exec&, std::optional<float> threshold, const Tensor& pred,
                    const Tensor& target, Tensor& counts) override {
    const auto [rows, cols] = class_rows(pred.shape());
    cuda::class_counts(pred.f32(), target.f32(), rows, cols, !threshold, threshold.value_or(0.0f),
                       counts.f32());
  }

  void sgd_update(const Exec&, const Tensor& g, Tensor& w, const Tensor& step, float wd) override {
    cuda::sgd(w.f32(), g.f32(), w.numel(), step.f32(), wd);
  }
  void sgd_momentum_update(const Exec&, const Tensor& g, Tensor& w, Tensor& v, const Tensor& step,
                           float momentum, bool nesterov, float wd) override {
    cuda::sgd_momentum(w.f32(), g.f32(), v.f32(), w.numel(), step.f32(), momentum, nesterov, wd);
  }
  void adagrad_update(const Exec&, const Tensor& g, Tensor& w, Tensor& acc, const Tensor& step,
                      float epsilon, float wd) override {
    cuda::adagrad(w.f32(), g.f32(), acc.f32(), w.numel(), step.f32(), epsilon, wd);
  }
  void adam_update(const Exec&, const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat,
                   const Tensor& step, float one_minus_b1, float one_minus_b2, float epsilon,
                   float wd) override {
    cuda::adam(w.f32(), g.f32(), m.f32(), v.f32(), vhat ? vhat->f32() : nullptr, w.numel(),
               step.f32(), one_minus_b1, one_minus_b2, epsilon, wd);
  }
  void rmsprop_update(const Exec&, const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg,
                      const Tensor& step, float rho, float epsilon, float wd) override {
    cuda::rmsprop(w.f32(), g.f32(), rms.f32(), mg ? mg->f32() : nullptr, w.numel(), step.f32(), rho,
                  epsilon, wd);
  }
  void rmsprop_momentum_update(const Exec&, const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg,
                               Tensor& mom, const Tensor& step, float rho, float momentum,
                               float epsilon, float wd) override {
    cuda::rmsprop_momentum(w.f32(), g.f32(), rms.f32(), mg ? mg->f32() : nullptr, mom.f32(),
                           w.numel(), step.f32(), rho, momentum, epsilon, wd);
  }
  void clip_gradient(const Exec&, GradientClip kind, float limit, const Tensor& sum_squares,
                     const Tensor& step, Tensor& g) override {
    cuda::clip_gradient(kind, limit, sum_squares.defined() ? sum_squares.f32() : nullptr,
                        step.f32(), g.f32(), g.numel());
  }

  // The recurrent steps: kernels/recurrent.hpp's functors, launched once each.
  void lstm_step_forward(const Exec&, int64_t t_x, int64_t t_y, const Tensor& xp, const Tensor& hr,
                         const Tensor& c_prev, Tensor& gates, Tensor& c, Tensor& h,
                         Tensor* seq) override {
    cuda::rnn_step(rnn_args::lstm_forward(t_x, t_y, xp, hr, c_prev, gates, c, h, seq), 0);
  }
  void lstm_step_backward(const Exec&, int64_t t_y, const Tensor* dseq, const Tensor& gates,
                          const Tensor& c, const Tensor& c_prev, const Tensor& dh, Tensor& dc,
                          Tensor& dz) override {
    cuda::rnn_step(rnn_args::lstm_backward(t_y, dseq, gates, c, c_prev, dh, dc, dz), 0);
  }
  void gru_step_forward(const Exec&, bool reset_after, int64_t t_x, int64_t t_y, const Tensor& xp,
                        const Tensor& hr, const Tensor& hrh, const Tensor& h_prev, Tensor& gates,
                        Tensor& h, Tensor* seq) override {
    cuda::rnn_step(rnn_args::gru_forward(reset_after, t_x, t_y, xp, hr, hrh, h_prev, gates, h, seq),
                   0);
  }
  void gru_reset_forward(const Exec&, int64_t t_x, const Tensor& xp, const Tensor& hr,
                         const Tensor& h_prev, Tensor& rh) override {
    cuda::rnn_step(rnn_args::gru_reset_forward(t_x, xp, hr, h_prev, rh), 0);
  }
  void gru_step_backward(const Exec&, bool reset_after, int64_t t_x, int64_t t_y,
                         const Tensor* dseq, const Tensor& gates, const Tensor& h_prev, Tensor& dh,
                         Tensor& dzx, Tensor& dzr, Tensor* dzh) override {
    cuda::rnn_step(
        rnn_args::gru_backward(reset_after, t_x, t_y, dseq, gates, h_prev, dh, dzx, dzr, dzh), 0);
  }
  void gru_reset_backward(const Exec&, int64_t t_x, const Tensor& gates, const Tensor& h_prev,
                          const Tensor& drh, Tensor& dh, Tensor& dzx, Tensor& dzr) override {
    cuda::rnn_step(rnn_args::gru_reset_backward(t_x, gates, h_prev, drh, dh, dzx, dzr), 0);
  }
  void simple_rnn_step_forward(const Exec&, ActivationFn a, int64_t t_x, int64_t t_y,
                               const Tensor& xp, const Tensor& hr, Tensor& h,
                               Tensor* seq) override {
    cuda::simple_rnn_step_forward(a, rnn_args::shape(xp, h, t_x, t_y), xp.f32(), hr.f32(), h.f32(),
                                  rnn_args::data(seq), 0);
  }
  void simple_rnn_step_backward(const Exec&, ActivationFn a, int64_t t_x, int64_t t_y,
                                const Tensor* dseq, const Tensor& h, const Tensor& dh, Tensor& dz,
                                Tensor& dzx) override {
    cuda::simple_rnn_step_backward(a, rnn_args::shape(dzx, h, t_x, t_y), rnn_args::data(dseq),
                                   h.f32(), dh.f32(), dz.f32(), dzx.f32(), 0);
  }
};

}  // namespace

GpuBackend* gpu_backend() {
  static CudaBackend backend;  // stateless: the state is in each Exec's context
  return &backend;
}

bool cuda_built() {
  return true;
}

int cuda_device_count() {
  return cuda::device_count();
}

std::string cuda_device_name(int index) {
  return cuda::device_name(index);
}

std::shared_ptr<cuda::Context> make_cuda_context(int index) {
  const int n = cuda::device_count();
  if (index < 0 || index >= n)
    throw std::runtime_error("GPU " + std::to_string(index) + " does not exist (" +
                             (n ? std::to_string(n) + " found" : cuda::no_device_reason()) + ")");
  return std::make_shared<cuda::Context>(index);
}

namespace cuda {

Context::Context(int device) : device_(device) {
  set_device(device);
  blas_ = std::make_unique<Blas>();
  dnn_ = std::make_unique<Dnn>();
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  copy_stream_ = s;
}

Context::~Context() {
  plans_.clear();
  if (copy_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(copy_stream_));
}

Convolution& Context::convolution(const ConvGeometry& g, DType dtype) {
  const Key key{g.n,  g.h,  g.w,       g.c,        g.kh, g.kw, g.co,
                g.sh, g.sw, g.pad_top, g.pad_left, g.oh, g.ow, static_cast<int64_t>(dtype)};
  auto it = plans_.find(key);
  if (it == plans_.end())
    it = plans_.emplace(key, std::make_unique<Convolution>(*dnn_, g, dtype)).first;
  return *it->second;
}

}  // namespace cuda

}  // namespace drun::kernels
