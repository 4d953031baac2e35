// The GPU side of the backend interface (ops.hpp): ops.cpp holds the CPU
// implementation and hands every op on a GPU tensor to the GpuBackend of the
// build (kernels/cuda/ops_cuda.cpp), or refuses where none is built. The
// methods take the same arguments as the ops, after ops.cpp's checks.
#pragma once
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
  virtual void synchronize(const Exec& ex) = 0;
  virtual std::unique_ptr<GpuStager> make_stager(const Exec& ex) = 0;

  virtual void matmul(const Exec& ex, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                      float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& y) = 0;
  virtual void bias_add(Tensor& y, const Tensor& b) = 0;
  virtual void column_sums(const Tensor& x, Tensor& s) = 0;
  virtual void activation_forward(Activation a, const Tensor& x, Tensor& y) = 0;
  virtual void activation_backward(Activation a, const Tensor& y, const Tensor& dy, Tensor& dx) = 0;
  virtual void add(const Tensor& a, const Tensor& b, Tensor& y) = 0;
  virtual void axpy(float alpha, const Tensor& x, Tensor& y) = 0;
  virtual void scale(float alpha, Tensor& y) = 0;
  virtual void mul(const Tensor& a, const Tensor& b, Tensor& y) = 0;
  virtual bool all_finite(const Tensor& x) = 0;

  virtual int64_t conv2d_workspace_floats(const Exec& ex, const ConvGeometry& g) = 0;
  virtual void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                              const Tensor& w, const Tensor& b, Tensor& y, bool relu,
                              Tensor& workspace) = 0;
  virtual void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                                      const Tensor& dy, const Tensor* relu_y, Tensor& dw,
                                      Tensor& db, Tensor& workspace) = 0;
  virtual void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy,
                                    const Tensor& w, Tensor& dx, Tensor& workspace) = 0;

  virtual void max_pool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y,
                                Tensor& argmax) = 0;
  virtual void max_pool_backward(const PoolGeometry& g, const Tensor& dy, const Tensor& argmax,
                                 Tensor& dx) = 0;
  virtual void avg_pool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y) = 0;
  virtual void avg_pool_backward(const PoolGeometry& g, const Tensor& dy, Tensor& dx) = 0;
  virtual void global_avg_pool_forward(const Tensor& x, Tensor& y) = 0;
  virtual void global_avg_pool_backward(const Tensor& dy, Tensor& dx) = 0;

  virtual void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       float eps, float momentum, Tensor& moving_mean,
                                       Tensor& moving_var, Tensor& mean, Tensor& inv_std,
                                       Tensor& y) = 0;
  virtual void batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       float eps, const Tensor& moving_mean,
                                       const Tensor& moving_var, Tensor& y) = 0;
  virtual void batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                  const Tensor& mean, const Tensor& inv_std, bool batch_statistics,
                                  Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;

  virtual double loss_forward_backward(LossKind kind, const Tensor& pred, const Tensor& target,
                                       Tensor& grad, int64_t* bad_row) = 0;
  virtual void argmax_rows(const Tensor& x, Tensor& out) = 0;

  virtual void sgd_update(const Tensor& g, Tensor& w, float lr, float weight_decay) = 0;
  virtual void sgd_momentum_update(const Tensor& g, Tensor& w, Tensor& v, float lr, float momentum,
                                   bool nesterov, float weight_decay) = 0;
  virtual void adagrad_update(const Tensor& g, Tensor& w, Tensor& acc, float lr, float epsilon,
                              float weight_decay) = 0;
  virtual void adam_update(const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat,
                           float lr_t, float beta_1, float beta_2, float epsilon,
                           float weight_decay) = 0;
  virtual void rmsprop_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, float lr,
                              float rho, float epsilon, float weight_decay) = 0;
  virtual void rmsprop_momentum_update(const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg,
                                       Tensor& mom, float lr, float rho, float momentum,
                                       float epsilon, float weight_decay) = 0;
};

// The build's GPU backend; null where none is built.
GpuBackend* gpu_backend();

}  // namespace drun::kernels
