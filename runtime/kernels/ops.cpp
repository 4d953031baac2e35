#include "kernels/ops.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cpu/batchnorm.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "kernels/cpu/gemm.hpp"
#include "kernels/cpu/loss.hpp"

namespace drun::kernels {

namespace {

// Every op below runs on the CPU backend; a CUDA build adds its branch here.
void on_cpu(const Exec& ex, const char* op) {
  if (ex.device != Device::cpu)
    throw std::runtime_error(std::string(op) + ": no " + device_name(ex.device) +
                             " backend in this build");
}

void same_size(const Tensor& a, const Tensor& b, const char* op) {
  if (a.numel() != b.numel())
    throw std::logic_error(std::string(op) + ": sizes differ, " + a.shape().str() + " vs " +
                           b.shape().str());
}

int64_t last_dim(const Tensor& t) {
  return t.rank() ? t.dim(-1) : 1;
}

}  // namespace

void matmul(const Exec& ex, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
            const Tensor& a, const Tensor& b, float beta, Tensor& y) {
  on_cpu(ex, "matmul");
  if (a.numel() < m * k || b.numel() < k * n || y.numel() < m * n)
    throw std::logic_error("matmul: operands smaller than " + std::to_string(m) + "x" +
                           std::to_string(k) + " * " + std::to_string(k) + "x" + std::to_string(n));
  cpu::gemm(ta, tb, m, n, k, alpha, a.f32(), ta ? m : k, b.f32(), tb ? k : n, beta, y.f32(), n,
            ex.threads);
}

void bias_add(const Exec& ex, Tensor& y, const Tensor& b) {
  on_cpu(ex, "bias_add");
  const int64_t cols = b.numel();
  cpu::bias_add(y.f32(), b.f32(), y.numel() / cols, cols);
}

void column_sums(const Exec& ex, const Tensor& x, Tensor& s) {
  on_cpu(ex, "column_sums");
  const int64_t cols = s.numel();
  cpu::column_sums(x.f32(), x.numel() / cols, cols, s.f32());
}

void activation_forward(const Exec& ex, Activation a, const Tensor& x, Tensor& y) {
  on_cpu(ex, "activation");
  same_size(x, y, "activation");
  const int64_t cols = last_dim(x);
  cpu::activation_forward(a, x.f32(), y.f32(), x.numel() / cols, cols);
}

void activation_backward(const Exec& ex, Activation a, const Tensor& y, const Tensor& dy,
                         Tensor& dx) {
  on_cpu(ex, "activation_backward");
  same_size(y, dy, "activation_backward");
  same_size(y, dx, "activation_backward");
  const int64_t cols = last_dim(y);
  cpu::activation_backward(a, y.f32(), dy.f32(), dx.f32(), y.numel() / cols, cols);
}

void add(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  on_cpu(ex, "add");
  same_size(a, b, "add");
  same_size(a, y, "add");
  cpu::add(a.f32(), b.f32(), y.f32(), a.numel());
}

void axpy(const Exec& ex, float alpha, const Tensor& x, Tensor& y) {
  on_cpu(ex, "axpy");
  same_size(x, y, "axpy");
  cpu::axpy(alpha, x.f32(), y.f32(), x.numel());
}

void scale(const Exec& ex, float alpha, Tensor& y) {
  on_cpu(ex, "scale");
  cpu::scale(alpha, y.f32(), y.numel());
}

void mul(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  on_cpu(ex, "mul");
  same_size(a, b, "mul");
  same_size(a, y, "mul");
  cpu::mul(a.f32(), b.f32(), y.f32(), a.numel());
}

bool all_finite(const Exec& ex, const Tensor& x) {
  on_cpu(ex, "all_finite");
  return cpu::all_finite(x.f32(), x.numel());
}

int64_t conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g) {
  return cpu::conv2d_workspace_floats(g, ex.threads);
}

void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                    const Tensor& b, Tensor& y, bool relu, Tensor& ws) {
  on_cpu(ex, "conv2d");
  cpu::conv2d_forward(g, x.f32(), w.f32(), b.f32(), y.f32(), relu, ws.f32(), ex.threads);
}

void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                            Tensor& ws) {
  on_cpu(ex, "conv2d_backward_filter");
  cpu::conv2d_backward_filter(g, x.f32(), dy.f32(), relu_y ? relu_y->f32() : nullptr, dw.f32(),
                              db.f32(), ws.f32(), ex.threads);
}

void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                          Tensor& dx, Tensor& ws) {
  on_cpu(ex, "conv2d_backward_data");
  cpu::conv2d_backward_data(g, dy.f32(), w.f32(), dx.f32(), ws.f32(), ex.threads);
}

void max_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y,
                      Tensor& argmax) {
  on_cpu(ex, "max_pool");
  cpu::max_pool_forward(g, x.f32(), y.f32(), argmax.i32(), ex.threads);
}

void max_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy,
                       const Tensor& argmax, Tensor& dx) {
  on_cpu(ex, "max_pool_backward");
  cpu::max_pool_backward(g, dy.f32(), argmax.i32(), dx.f32(), ex.threads);
}

void avg_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y) {
  on_cpu(ex, "avg_pool");
  cpu::avg_pool_forward(g, x.f32(), y.f32(), ex.threads);
}

void avg_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy, Tensor& dx) {
  on_cpu(ex, "avg_pool_backward");
  cpu::avg_pool_backward(g, dy.f32(), dx.f32(), ex.threads);
}

void global_avg_pool_forward(const Exec& ex, const Tensor& x, Tensor& y) {
  on_cpu(ex, "global_avg_pool");
  const int64_t n = x.dim(0), c = x.dim(-1);
  cpu::global_avg_pool_forward(n, x.numel() / (n * c), c, x.f32(), y.f32());
}

void global_avg_pool_backward(const Exec& ex, const Tensor& dy, Tensor& dx) {
  on_cpu(ex, "global_avg_pool_backward");
  const int64_t n = dx.dim(0), c = dx.dim(-1);
  cpu::global_avg_pool_backward(n, dx.numel() / (n * c), c, dy.f32(), dx.f32());
}

void batchnorm_forward_train(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, float momentum, Tensor& moving_mean,
                             Tensor& moving_var, Tensor& mean, Tensor& inv_std, Tensor& y) {
  on_cpu(ex, "batchnorm");
  const int64_t c = gamma.numel();
  cpu::batchnorm_forward_train(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps, momentum,
                               moving_mean.f32(), moving_var.f32(), mean.f32(), inv_std.f32(),
                               y.f32());
}

void batchnorm_forward_infer(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, const Tensor& moving_mean,
                             const Tensor& moving_var, Tensor& y) {
  on_cpu(ex, "batchnorm");
  const int64_t c = gamma.numel();
  cpu::batchnorm_forward_infer(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps,
                               moving_mean.f32(), moving_var.f32(), y.f32());
}

void batchnorm_backward(const Exec& ex, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                        const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                        Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  on_cpu(ex, "batchnorm_backward");
  const int64_t c = gamma.numel();
  cpu::batchnorm_backward(x.f32(), dy.f32(), x.numel() / c, c, gamma.f32(), mean.f32(),
                          inv_std.f32(), batch_statistics, dx.f32(), dgamma.f32(), dbeta.f32());
}

double loss_forward_backward(const Exec& ex, LossKind kind, const Tensor& pred,
                             const Tensor& target, Tensor& grad, int64_t* bad_row) {
  on_cpu(ex, "loss");
  same_size(pred, grad, "loss");
  const int64_t rows = pred.dim(0), cols = pred.numel() / rows;
  *bad_row = -1;
  switch (kind) {
    case LossKind::softmax_xent_sparse:
      return cpu::softmax_xent_sparse(pred.f32(), target.i32(), rows, cols, grad.f32(), bad_row);
    case LossKind::xent_sparse:
      return cpu::xent_sparse_probs(pred.f32(), target.i32(), rows, cols, grad.f32(), bad_row);
    case LossKind::softmax_xent:
      same_size(pred, target, "loss");
      return cpu::softmax_xent_dense(pred.f32(), target.f32(), rows, cols, grad.f32());
    case LossKind::xent:
      same_size(pred, target, "loss");
      return cpu::xent_dense_probs(pred.f32(), target.f32(), rows, cols, grad.f32());
    case LossKind::sigmoid_bce:
      same_size(pred, target, "loss");
      return cpu::sigmoid_bce(pred.f32(), target.f32(), pred.numel(), grad.f32());
    case LossKind::bce:
      same_size(pred, target, "loss");
      return cpu::bce_probs(pred.f32(), target.f32(), pred.numel(), grad.f32());
    case LossKind::mse:
      same_size(pred, target, "loss");
      return cpu::mse(pred.f32(), target.f32(), pred.numel(), grad.f32());
  }
  return 0.0;
}

void argmax_rows(const Exec& ex, const Tensor& x, Tensor& out) {
  on_cpu(ex, "argmax");
  const int64_t rows = x.dim(0);
  cpu::argmax_rows(x.f32(), rows, x.numel() / rows, out.i32());
}

}  // namespace drun::kernels
