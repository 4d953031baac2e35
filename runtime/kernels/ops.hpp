// The backend interface: the only code that knows whether a tensor lives on a
// CPU or a GPU. Layers, losses and optimizers call these functions with
// tensors; each checks the device and runs the matching backend's kernel.
// Shapes are checked by the callers (layers know the names users see); these
// functions only check what would otherwise corrupt memory.
#pragma once
#include <cstdint>

#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/pool.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels {

using cpu::Activation;
using cpu::ConvGeometry;
using cpu::PoolGeometry;

// Where kernels run and with how many threads (the rank's share of its node).
struct Exec {
  Device device = Device::cpu;
  int threads = 1;
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

}  // namespace drun::kernels
