// The backend interface: the only code that knows whether a tensor lives on a
// CPU or a GPU. Layers, losses and optimizers call these functions with
// tensors; each checks the device and runs the matching backend's kernel.
// Shapes are checked by the callers (layers know the names users see); these
// functions only check what would otherwise corrupt memory.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/pool.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels {

using cpu::Activation;
using cpu::ConvGeometry;
using cpu::PoolGeometry;

namespace cuda {
class Context;
}
class GpuStager;

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
// Waits until every kernel launched on ex's device has finished.
void synchronize(const Exec& ex);

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

// y = op(a) op(b) * alpha + beta * y, with a, b, y seen as matrices (rows =
// leading dimension, or as given by m/n/k).
void matmul(const Exec& ex, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
            float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& y);

void bias_add(const Exec& ex, Tensor& y, const Tensor& b);     // rows of y += b
void column_sums(const Exec& ex, const Tensor& x, Tensor& s);  // over leading rows
void activation_forward(const Exec& ex, Activation a, const Tensor& x, Tensor& y);
void activation_backward(const Exec& ex, Activation a, const Tensor& y, const Tensor& dy,
                         Tensor& dx);
void add(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y);
void axpy(const Exec& ex, float alpha, const Tensor& x, Tensor& y);
void scale(const Exec& ex, float alpha, Tensor& y);  // y *= alpha
void mul(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y);
bool all_finite(const Exec& ex, const Tensor& x);

int64_t conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g);
void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                    const Tensor& b, Tensor& y, bool relu, Tensor& workspace);
// relu_y: the forward's ReLU output to mask dy with, fused (nullptr: dy as is).
void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                            Tensor& workspace);
void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                          Tensor& dx, Tensor& workspace);

void max_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y,
                      Tensor& argmax);
void max_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy,
                       const Tensor& argmax, Tensor& dx);
void avg_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y);
void avg_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy, Tensor& dx);
void global_avg_pool_forward(const Exec& ex, const Tensor& x, Tensor& y);
void global_avg_pool_backward(const Exec& ex, const Tensor& dy, Tensor& dx);

void batchnorm_forward_train(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, float momentum, Tensor& moving_mean,
                             Tensor& moving_var, Tensor& mean, Tensor& inv_std, Tensor& y);
void batchnorm_forward_infer(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, const Tensor& moving_mean,
                             const Tensor& moving_var, Tensor& y);
void batchnorm_backward(const Exec& ex, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                        const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                        Tensor& dx, Tensor& dgamma, Tensor& dbeta);

enum class LossKind { softmax_xent_sparse, xent_sparse, softmax_xent, xent, sigmoid_bce, bce, mse };
// Mean loss over the batch; grad = d(mean)/d(pred). For sparse kinds, a label
// outside [0, classes) sets *bad_row to its row (else -1).
double loss_forward_backward(const Exec& ex, LossKind kind, const Tensor& pred,
                             const Tensor& target, Tensor& grad, int64_t* bad_row);

void argmax_rows(const Exec& ex, const Tensor& x, Tensor& out);

// Optimizer updates (kernels/cpu/optimizer_update.hpp gives each rule); they
// run where w lives. Optional slots (AMSGrad's vhat, centered RMSprop's mg)
// are null when unused.
void sgd_update(const Tensor& g, Tensor& w, float lr, float weight_decay);
void sgd_momentum_update(const Tensor& g, Tensor& w, Tensor& v, float lr, float momentum,
                         bool nesterov, float weight_decay);
void adagrad_update(const Tensor& g, Tensor& w, Tensor& acc, float lr, float epsilon,
                    float weight_decay);
void adam_update(const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat, float lr_t,
                 float beta_1, float beta_2, float epsilon, float weight_decay);
void rmsprop_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, float lr, float rho,
                    float epsilon, float weight_decay);
void rmsprop_momentum_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, Tensor& mom,
                             float lr, float rho, float momentum, float epsilon,
                             float weight_decay);

}  // namespace drun::kernels
