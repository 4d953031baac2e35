// An emulated GPU for CI, which has none: "device" memory is host memory
// tagged Device::cuda, and each op of the GpuBackend runs the CPU op on host
// views of its tensors. Linked instead of drun_backend into
// test_emulated_gpu, it drives every line of the runtime's GPU plumbing
// (variables moved by set_exec, buffers sized on the device, input staging,
// host-side readers, HostStaged, AllReduce's device buckets) through the
// dispatcher's check that each op's tensors are all on its device; only the
// CUDA kernels themselves are left to the GPU suites.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels/gpu_backend.hpp"
#include "tensor/device_memory.hpp"

namespace drun::device_memory {

void* allocate(Device, size_t bytes) {
  return ::operator new (bytes, std::align_val_t{Storage::kAlign});
}
void release(Device, void* p, size_t) {
  ::operator delete (p, std::align_val_t{Storage::kAlign});
}
void copy(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void zero(Device, void* p, size_t bytes) {
  std::memset(p, 0, bytes);
}
bool pin(void*, size_t) {
  return false;  // host memory already
}
void unpin(void*) {}

}  // namespace drun::device_memory

namespace drun::kernels {

namespace cuda {
class Context {};
}  // namespace cuda

namespace {

const Exec kHost{Device::cpu, 1};

// The same memory as the CPU sees it.
Tensor host(const Tensor& t) {
  if (t.device() != Device::cuda) throw std::logic_error("emulated GPU op given a host tensor");
  return Tensor::borrowed(const_cast<void*>(t.raw()), t.shape(), t.dtype());
}

class EmulatedStager final : public GpuStager {
 public:
  const Tensor& stage(const Tensor& batch) override {
    slot_.ensure(batch.shape(), batch.dtype(), Device::cuda);
    slot_.copy_from(batch);
    return slot_;
  }

 private:
  Tensor slot_;
};

class EmulatedGpu final : public GpuBackend {
 public:
  void synchronize(const Exec&) override {}
  std::unique_ptr<GpuStager> make_stager(const Exec&) override {
    return std::make_unique<EmulatedStager>();
  }
  void matmul(const Exec&, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
              const Tensor& a, const Tensor& b, float beta, Tensor& y) override {
    Tensor hy = host(y);
    kernels::matmul(kHost, ta, tb, m, n, k, alpha, host(a), host(b), beta, hy);
  }
  void bias_add(Tensor& y, const Tensor& b) override {
    Tensor hy = host(y);
    kernels::bias_add(kHost, hy, host(b));
  }
  void column_sums(const Tensor& x, Tensor& s) override {
    Tensor hs = host(s);
    kernels::column_sums(kHost, host(x), hs);
  }
  void activation_forward(Activation a, const Tensor& x, Tensor& y) override {
    Tensor hy = host(y);
    kernels::activation_forward(kHost, a, host(x), hy);
  }
  void activation_backward(Activation a, const Tensor& y, const Tensor& dy, Tensor& dx) override {
    Tensor hdx = host(dx);
    kernels::activation_backward(kHost, a, host(y), host(dy), hdx);
  }
  void add(const Tensor& a, const Tensor& b, Tensor& y) override {
    Tensor hy = host(y);
    kernels::add(kHost, host(a), host(b), hy);
  }
  void axpy(float alpha, const Tensor& x, Tensor& y) override {
    Tensor hy = host(y);
    kernels::axpy(kHost, alpha, host(x), hy);
  }
  void scale(float alpha, Tensor& y) override {
    Tensor hy = host(y);
    kernels::scale(kHost, alpha, hy);
  }
  void mul(const Tensor& a, const Tensor& b, Tensor& y) override {
    Tensor hy = host(y);
    kernels::mul(kHost, host(a), host(b), hy);
  }
  bool all_finite(const Tensor& x) override { return kernels::all_finite(kHost, host(x)); }

  int64_t conv2d_workspace_floats(const Exec&, const ConvGeometry& g) override {
    return kernels::conv2d_workspace_floats(kHost, g);
  }
  void conv2d_forward(const Exec&, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                      const Tensor& b, Tensor& y, bool relu, Tensor& ws) override {
    Tensor hy = host(y), hws = host(ws);
    kernels::conv2d_forward(kHost, g, host(x), host(w), host(b), hy, relu, hws);
  }
  void conv2d_backward_filter(const Exec&, const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                              const Tensor* relu_y, Tensor& dw, Tensor& db, Tensor& ws) override {
    Tensor hdw = host(dw), hdb = host(db), hws = host(ws);
    const Tensor hrelu = relu_y ? host(*relu_y) : Tensor();
    kernels::conv2d_backward_filter(kHost, g, host(x), host(dy), relu_y ? &hrelu : nullptr, hdw,
                                    hdb, hws);
  }
  void conv2d_backward_data(const Exec&, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx, Tensor& ws) override {
    Tensor hdx = host(dx), hws = host(ws);
    kernels::conv2d_backward_data(kHost, g, host(dy), host(w), hdx, hws);
  }

  void max_pool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y,
                        Tensor& argmax) override {
    Tensor hy = host(y), ha = host(argmax);
    kernels::max_pool_forward(kHost, g, host(x), hy, ha);
  }
  void max_pool_backward(const PoolGeometry& g, const Tensor& dy, const Tensor& argmax,
                         Tensor& dx) override {
    Tensor hdx = host(dx);
    kernels::max_pool_backward(kHost, g, host(dy), host(argmax), hdx);
  }
  void avg_pool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y) override {
    Tensor hy = host(y);
    kernels::avg_pool_forward(kHost, g, host(x), hy);
  }
  void avg_pool_backward(const PoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    Tensor hdx = host(dx);
    kernels::avg_pool_backward(kHost, g, host(dy), hdx);
  }
  void global_avg_pool_forward(const Tensor& x, Tensor& y) override {
    Tensor hy = host(y);
    kernels::global_avg_pool_forward(kHost, host(x), hy);
  }
  void global_avg_pool_backward(const Tensor& dy, Tensor& dx) override {
    Tensor hdx = host(dx);
    kernels::global_avg_pool_backward(kHost, host(dy), hdx);
  }

  void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                               float momentum, Tensor& moving_mean, Tensor& moving_var,
                               Tensor& mean, Tensor& inv_std, Tensor& y) override {
    Tensor mm = host(moving_mean), mv = host(moving_var), m = host(mean), is = host(inv_std),
           hy = host(y);
    kernels::batchnorm_forward_train(kHost, host(x), host(gamma), host(beta), eps, momentum, mm, mv,
                                     m, is, hy);
  }
  void batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                               const Tensor& moving_mean, const Tensor& moving_var,
                               Tensor& y) override {
    Tensor hy = host(y);
    kernels::batchnorm_forward_infer(kHost, host(x), host(gamma), host(beta), eps,
                                     host(moving_mean), host(moving_var), hy);
  }
  void batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                          const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                          Tensor& dx, Tensor& dgamma, Tensor& dbeta) override {
    Tensor hdx = host(dx), hdg = host(dgamma), hdb = host(dbeta);
    kernels::batchnorm_backward(kHost, host(x), host(dy), host(gamma), host(mean), host(inv_std),
                                batch_statistics, hdx, hdg, hdb);
  }

  double loss_forward_backward(LossKind kind, const Tensor& pred, const Tensor& target,
                               Tensor& grad, int64_t* bad_row) override {
    Tensor hg = host(grad);
    return kernels::loss_forward_backward(kHost, kind, host(pred), host(target), hg, bad_row);
  }
  void argmax_rows(const Tensor& x, Tensor& out) override {
    Tensor ho = host(out);
    kernels::argmax_rows(kHost, host(x), ho);
  }

  void sgd_update(const Tensor& g, Tensor& w, float lr, float wd) override {
    Tensor hw = host(w);
    kernels::sgd_update(host(g), hw, lr, wd);
  }
  void sgd_momentum_update(const Tensor& g, Tensor& w, Tensor& v, float lr, float momentum,
                           bool nesterov, float wd) override {
    Tensor hw = host(w), hv = host(v);
    kernels::sgd_momentum_update(host(g), hw, hv, lr, momentum, nesterov, wd);
  }
  void adagrad_update(const Tensor& g, Tensor& w, Tensor& acc, float lr, float epsilon,
                      float wd) override {
    Tensor hw = host(w), ha = host(acc);
    kernels::adagrad_update(host(g), hw, ha, lr, epsilon, wd);
  }
  void adam_update(const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat, float lr_t,
                   float beta_1, float beta_2, float epsilon, float wd) override {
    Tensor hw = host(w), hm = host(m), hv = host(v);
    Tensor hvhat = vhat ? host(*vhat) : Tensor();
    kernels::adam_update(host(g), hw, hm, hv, vhat ? &hvhat : nullptr, lr_t, beta_1, beta_2,
                         epsilon, wd);
  }
  void rmsprop_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, float lr, float rho,
                      float epsilon, float wd) override {
    Tensor hw = host(w), hr = host(rms);
    Tensor hmg = mg ? host(*mg) : Tensor();
    kernels::rmsprop_update(host(g), hw, hr, mg ? &hmg : nullptr, lr, rho, epsilon, wd);
  }
  void rmsprop_momentum_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, Tensor& mom,
                               float lr, float rho, float momentum, float epsilon,
                               float wd) override {
    Tensor hw = host(w), hr = host(rms), hmom = host(mom);
    Tensor hmg = mg ? host(*mg) : Tensor();
    kernels::rmsprop_momentum_update(host(g), hw, hr, mg ? &hmg : nullptr, hmom, lr, rho, momentum,
                                     epsilon, wd);
  }
};

}  // namespace

bool cuda_built() {
  return true;
}
// One GPU, or DRUN_EMULATED_GPUS of them (the multi-rank tests want one per rank).
int cuda_device_count() {
  const char* n = std::getenv("DRUN_EMULATED_GPUS");
  return n ? std::atoi(n) : 1;
}
std::shared_ptr<cuda::Context> make_cuda_context(int) {
  return std::make_shared<cuda::Context>();
}
std::string cuda_device_name(int) {
  return "emulated GPU (host memory, CPU kernels)";
}
GpuBackend* gpu_backend() {
  static EmulatedGpu gpu;
  return &gpu;
}

}  // namespace drun::kernels
