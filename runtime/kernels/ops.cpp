#include "kernels/ops.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cpu/batchnorm.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "kernels/cpu/gemm.hpp"
#include "kernels/cpu/loss.hpp"
#include "kernels/cpu/optimizer_update.hpp"
#include "kernels/gpu_backend.hpp"

namespace drun::kernels {

namespace {

// The backend for ex: null for the CPU (the code below), the build's GPU
// backend for a GPU. Every tensor must be on ex's device: a tensor left
// behind on the other side is a bug of the caller, caught here rather than
// as a wild pointer in a kernel.
GpuBackend* gpu(const Exec& ex, const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t && t->defined() && t->device() != ex.device)
      throw std::logic_error(std::string(op) + ": a " + t->shape().str() + " tensor is on " +
                             device_name(t->device()) + ", the op runs on " +
                             device_name(ex.device));
  if (ex.device == Device::cpu) return nullptr;
  GpuBackend* g = gpu_backend();
  if (!g)
    throw std::runtime_error(std::string(op) + ": no " + device_name(ex.device) +
                             " backend in this build");
  return g;
}

// Optimizer updates run where their variable lives.
Exec where(const Tensor& w) {
  return Exec{w.device(), 1};
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
  if (GpuBackend* g = gpu(ex, "matmul", {&a, &b, &y}))
    return g->matmul(ex, ta, tb, m, n, k, alpha, a, b, beta, y);
  if (a.numel() < m * k || b.numel() < k * n || y.numel() < m * n)
    throw std::logic_error("matmul: operands smaller than " + std::to_string(m) + "x" +
                           std::to_string(k) + " * " + std::to_string(k) + "x" + std::to_string(n));
  cpu::gemm(ta, tb, m, n, k, alpha, a.f32(), ta ? m : k, b.f32(), tb ? k : n, beta, y.f32(), n,
            ex.threads);
}

void bias_add(const Exec& ex, Tensor& y, const Tensor& b) {
  if (GpuBackend* g = gpu(ex, "bias_add", {&y, &b})) return g->bias_add(y, b);
  const int64_t cols = b.numel();
  cpu::bias_add(y.f32(), b.f32(), y.numel() / cols, cols);
}

void column_sums(const Exec& ex, const Tensor& x, Tensor& s) {
  if (GpuBackend* g = gpu(ex, "column_sums", {&x, &s})) return g->column_sums(x, s);
  const int64_t cols = s.numel();
  cpu::column_sums(x.f32(), x.numel() / cols, cols, s.f32());
}

void activation_forward(const Exec& ex, Activation a, const Tensor& x, Tensor& y) {
  same_size(x, y, "activation");
  if (GpuBackend* g = gpu(ex, "activation", {&x, &y})) return g->activation_forward(a, x, y);
  const int64_t cols = last_dim(x);
  cpu::activation_forward(a, x.f32(), y.f32(), x.numel() / cols, cols);
}

void activation_backward(const Exec& ex, Activation a, const Tensor& y, const Tensor& dy,
                         Tensor& dx) {
  same_size(y, dy, "activation_backward");
  same_size(y, dx, "activation_backward");
  if (GpuBackend* g = gpu(ex, "activation_backward", {&y, &dy, &dx}))
    return g->activation_backward(a, y, dy, dx);
  const int64_t cols = last_dim(y);
  cpu::activation_backward(a, y.f32(), dy.f32(), dx.f32(), y.numel() / cols, cols);
}

void add(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  same_size(a, b, "add");
  same_size(a, y, "add");
  if (GpuBackend* g = gpu(ex, "add", {&a, &b, &y})) return g->add(a, b, y);
  cpu::add(a.f32(), b.f32(), y.f32(), a.numel());
}

void axpy(const Exec& ex, float alpha, const Tensor& x, Tensor& y) {
  same_size(x, y, "axpy");
  if (GpuBackend* g = gpu(ex, "axpy", {&x, &y})) return g->axpy(alpha, x, y);
  cpu::axpy(alpha, x.f32(), y.f32(), x.numel());
}

void scale(const Exec& ex, float alpha, Tensor& y) {
  if (GpuBackend* g = gpu(ex, "scale", {&y})) return g->scale(alpha, y);
  cpu::scale(alpha, y.f32(), y.numel());
}

void mul(const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y) {
  same_size(a, b, "mul");
  same_size(a, y, "mul");
  if (GpuBackend* g = gpu(ex, "mul", {&a, &b, &y})) return g->mul(a, b, y);
  cpu::mul(a.f32(), b.f32(), y.f32(), a.numel());
}

bool all_finite(const Exec& ex, const Tensor& x) {
  if (GpuBackend* g = gpu(ex, "all_finite", {&x})) return g->all_finite(x);
  return cpu::all_finite(x.f32(), x.numel());
}

int64_t conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g) {
  if (GpuBackend* gb = gpu(ex, "conv2d", {})) return gb->conv2d_workspace_floats(ex, g);
  return cpu::conv2d_workspace_floats(g, ex.threads);
}

void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                    const Tensor& b, Tensor& y, bool relu, Tensor& ws) {
  if (GpuBackend* gb = gpu(ex, "conv2d", {&x, &w, &b, &y, &ws}))
    return gb->conv2d_forward(ex, g, x, w, b, y, relu, ws);
  cpu::conv2d_forward(g, x.f32(), w.f32(), b.f32(), y.f32(), relu, ws.f32(), ex.threads);
}

void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                            Tensor& ws) {
  if (GpuBackend* gb = gpu(ex, "conv2d_backward_filter", {&x, &dy, relu_y, &dw, &db, &ws}))
    return gb->conv2d_backward_filter(ex, g, x, dy, relu_y, dw, db, ws);
  cpu::conv2d_backward_filter(g, x.f32(), dy.f32(), relu_y ? relu_y->f32() : nullptr, dw.f32(),
                              db.f32(), ws.f32(), ex.threads);
}

void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                          Tensor& dx, Tensor& ws) {
  if (GpuBackend* gb = gpu(ex, "conv2d_backward_data", {&dy, &w, &dx, &ws}))
    return gb->conv2d_backward_data(ex, g, dy, w, dx, ws);
  cpu::conv2d_backward_data(g, dy.f32(), w.f32(), dx.f32(), ws.f32(), ex.threads);
}

void max_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y,
                      Tensor& argmax) {
  if (GpuBackend* gb = gpu(ex, "max_pool", {&x, &y, &argmax}))
    return gb->max_pool_forward(g, x, y, argmax);
  cpu::max_pool_forward(g, x.f32(), y.f32(), argmax.i32(), ex.threads);
}

void max_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy,
                       const Tensor& argmax, Tensor& dx) {
  if (GpuBackend* gb = gpu(ex, "max_pool_backward", {&dy, &argmax, &dx}))
    return gb->max_pool_backward(g, dy, argmax, dx);
  cpu::max_pool_backward(g, dy.f32(), argmax.i32(), dx.f32(), ex.threads);
}

void avg_pool_forward(const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y) {
  if (GpuBackend* gb = gpu(ex, "avg_pool", {&x, &y})) return gb->avg_pool_forward(g, x, y);
  cpu::avg_pool_forward(g, x.f32(), y.f32(), ex.threads);
}

void avg_pool_backward(const Exec& ex, const PoolGeometry& g, const Tensor& dy, Tensor& dx) {
  if (GpuBackend* gb = gpu(ex, "avg_pool_backward", {&dy, &dx}))
    return gb->avg_pool_backward(g, dy, dx);
  cpu::avg_pool_backward(g, dy.f32(), dx.f32(), ex.threads);
}

void global_avg_pool_forward(const Exec& ex, const Tensor& x, Tensor& y) {
  if (GpuBackend* g = gpu(ex, "global_avg_pool", {&x, &y})) return g->global_avg_pool_forward(x, y);
  const int64_t n = x.dim(0), c = x.dim(-1);
  cpu::global_avg_pool_forward(n, x.numel() / (n * c), c, x.f32(), y.f32());
}

void global_avg_pool_backward(const Exec& ex, const Tensor& dy, Tensor& dx) {
  if (GpuBackend* g = gpu(ex, "global_avg_pool_backward", {&dy, &dx}))
    return g->global_avg_pool_backward(dy, dx);
  const int64_t n = dx.dim(0), c = dx.dim(-1);
  cpu::global_avg_pool_backward(n, dx.numel() / (n * c), c, dy.f32(), dx.f32());
}

void batchnorm_forward_train(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, float momentum, Tensor& moving_mean,
                             Tensor& moving_var, Tensor& mean, Tensor& inv_std, Tensor& y) {
  if (GpuBackend* g =
          gpu(ex, "batchnorm", {&x, &gamma, &beta, &moving_mean, &moving_var, &mean, &inv_std, &y}))
    return g->batchnorm_forward_train(x, gamma, beta, eps, momentum, moving_mean, moving_var, mean,
                                      inv_std, y);
  const int64_t c = gamma.numel();
  cpu::batchnorm_forward_train(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps, momentum,
                               moving_mean.f32(), moving_var.f32(), mean.f32(), inv_std.f32(),
                               y.f32());
}

void batchnorm_forward_infer(const Exec& ex, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, float eps, const Tensor& moving_mean,
                             const Tensor& moving_var, Tensor& y) {
  if (GpuBackend* g = gpu(ex, "batchnorm", {&x, &gamma, &beta, &moving_mean, &moving_var, &y}))
    return g->batchnorm_forward_infer(x, gamma, beta, eps, moving_mean, moving_var, y);
  const int64_t c = gamma.numel();
  cpu::batchnorm_forward_infer(x.f32(), x.numel() / c, c, gamma.f32(), beta.f32(), eps,
                               moving_mean.f32(), moving_var.f32(), y.f32());
}

void batchnorm_backward(const Exec& ex, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                        const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                        Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  if (GpuBackend* g =
          gpu(ex, "batchnorm_backward", {&x, &dy, &gamma, &mean, &inv_std, &dx, &dgamma, &dbeta}))
    return g->batchnorm_backward(x, dy, gamma, mean, inv_std, batch_statistics, dx, dgamma, dbeta);
  const int64_t c = gamma.numel();
  cpu::batchnorm_backward(x.f32(), dy.f32(), x.numel() / c, c, gamma.f32(), mean.f32(),
                          inv_std.f32(), batch_statistics, dx.f32(), dgamma.f32(), dbeta.f32());
}

double loss_forward_backward(const Exec& ex, LossKind kind, const Tensor& pred,
                             const Tensor& target, Tensor& grad, int64_t* bad_row) {
  same_size(pred, grad, "loss");
  const int64_t rows = pred.dim(0), cols = pred.numel() / rows;
  *bad_row = -1;
  if (kind != LossKind::softmax_xent_sparse && kind != LossKind::xent_sparse)
    same_size(pred, target, "loss");
  if (GpuBackend* g = gpu(ex, "loss", {&pred, &target, &grad}))
    return g->loss_forward_backward(kind, pred, target, grad, bad_row);
  switch (kind) {
    case LossKind::softmax_xent_sparse:
      return cpu::softmax_xent_sparse(pred.f32(), target.i32(), rows, cols, grad.f32(), bad_row);
    case LossKind::xent_sparse:
      return cpu::xent_sparse_probs(pred.f32(), target.i32(), rows, cols, grad.f32(), bad_row);
    case LossKind::softmax_xent:
      return cpu::softmax_xent_dense(pred.f32(), target.f32(), rows, cols, grad.f32());
    case LossKind::xent:
      return cpu::xent_dense_probs(pred.f32(), target.f32(), rows, cols, grad.f32());
    case LossKind::sigmoid_bce:
      return cpu::sigmoid_bce(pred.f32(), target.f32(), pred.numel(), grad.f32());
    case LossKind::bce:
      return cpu::bce_probs(pred.f32(), target.f32(), pred.numel(), grad.f32());
    case LossKind::mse:
      return cpu::mse(pred.f32(), target.f32(), pred.numel(), grad.f32());
  }
  return 0.0;
}

void argmax_rows(const Exec& ex, const Tensor& x, Tensor& out) {
  if (GpuBackend* g = gpu(ex, "argmax", {&x, &out})) return g->argmax_rows(x, out);
  const int64_t rows = x.dim(0);
  cpu::argmax_rows(x.f32(), rows, x.numel() / rows, out.i32());
}

void sgd_update(const Tensor& g, Tensor& w, float lr, float weight_decay) {
  same_size(g, w, "sgd");
  if (GpuBackend* gb = gpu(where(w), "sgd", {&g})) return gb->sgd_update(g, w, lr, weight_decay);
  cpu::sgd(w.f32(), g.f32(), w.numel(), lr, weight_decay);
}

void sgd_momentum_update(const Tensor& g, Tensor& w, Tensor& v, float lr, float momentum,
                         bool nesterov, float weight_decay) {
  same_size(g, w, "sgd");
  if (GpuBackend* gb = gpu(where(w), "sgd", {&g, &v}))
    return gb->sgd_momentum_update(g, w, v, lr, momentum, nesterov, weight_decay);
  cpu::sgd_momentum(w.f32(), g.f32(), v.f32(), w.numel(), lr, momentum, nesterov, weight_decay);
}

void adagrad_update(const Tensor& g, Tensor& w, Tensor& acc, float lr, float epsilon,
                    float weight_decay) {
  same_size(g, w, "adagrad");
  if (GpuBackend* gb = gpu(where(w), "adagrad", {&g, &acc}))
    return gb->adagrad_update(g, w, acc, lr, epsilon, weight_decay);
  cpu::adagrad(w.f32(), g.f32(), acc.f32(), w.numel(), lr, epsilon, weight_decay);
}

void adam_update(const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat, float lr_t,
                 float beta_1, float beta_2, float epsilon, float weight_decay) {
  same_size(g, w, "adam");
  if (GpuBackend* gb = gpu(where(w), "adam", {&g, &m, &v, vhat}))
    return gb->adam_update(g, w, m, v, vhat, lr_t, beta_1, beta_2, epsilon, weight_decay);
  cpu::adam(w.f32(), g.f32(), m.f32(), v.f32(), vhat ? vhat->f32() : nullptr, w.numel(), lr_t,
            beta_1, beta_2, epsilon, weight_decay);
}

void rmsprop_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, float lr, float rho,
                    float epsilon, float weight_decay) {
  same_size(g, w, "rmsprop");
  if (GpuBackend* gb = gpu(where(w), "rmsprop", {&g, &rms, mg}))
    return gb->rmsprop_update(g, w, rms, mg, lr, rho, epsilon, weight_decay);
  cpu::rmsprop(w.f32(), g.f32(), rms.f32(), mg ? mg->f32() : nullptr, w.numel(), lr, rho, epsilon,
               weight_decay);
}

void rmsprop_momentum_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, Tensor& mom,
                             float lr, float rho, float momentum, float epsilon,
                             float weight_decay) {
  same_size(g, w, "rmsprop");
  if (GpuBackend* gb = gpu(where(w), "rmsprop", {&g, &rms, mg, &mom}))
    return gb->rmsprop_momentum_update(g, w, rms, mg, mom, lr, rho, momentum, epsilon,
                                       weight_decay);
  cpu::rmsprop_momentum(w.f32(), g.f32(), rms.f32(), mg ? mg->f32() : nullptr, mom.f32(), w.numel(),
                        lr, rho, momentum, epsilon, weight_decay);
}

void synchronize(const Exec& ex) {
  if (GpuBackend* g = gpu(ex, "synchronize", {})) g->synchronize(ex);
}

InputStager::InputStager(const Exec& ex) {
  if (GpuBackend* g = gpu(ex, "input staging", {})) gpu_ = g->make_stager(ex);
}

InputStager::~InputStager() = default;

const Tensor& InputStager::stage(const Tensor& host) {
  return gpu_ ? gpu_->stage(host) : host;
}

}  // namespace drun::kernels
