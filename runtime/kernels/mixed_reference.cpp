#include "kernels/mixed_reference.hpp"

namespace drun::kernels::mixed_reference {

namespace {

// y's float32 values rounded to `type` (and back).
void round_in_place(const Exec& ex, Tensor& y, DType type) {
  Tensor narrow(y.shape(), type);
  cast(ex, y, narrow);
  cast(ex, narrow, y);
}

// x in float32 with values of `type`: a float32 x rounded to it, a narrow x widened.
Tensor widened(const Exec& ex, const Tensor& x, DType type) {
  Tensor t(x.shape());
  cast(ex, x, t);
  if (x.dtype() == DType::f32) round_in_place(ex, t, type);
  return t;
}

}  // namespace

void matmul(const Exec& ex, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
            const Tensor& a, const Tensor& b, float beta, Tensor& y) {
  const DType type = compute_type(a, b);
  kernels::matmul(ex, ta, tb, m, n, k, alpha, widened(ex, a, type), widened(ex, b, type), beta, y);
}

void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                    const Tensor& b, Tensor& y, bool relu, Tensor& ws) {
  const DType type = compute_type(x, w);
  kernels::conv2d_forward(ex, g, widened(ex, x, type), widened(ex, w, type), Tensor(), y, false, ws,
                          nullptr);
  round_in_place(ex, y, type);
  if (b.defined()) bias_add(ex, y, b);
  if (relu) activation_forward(ex, Activation::relu, y, y);
}

void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                            Tensor& ws) {
  const DType type = compute_type(x, dy);
  Tensor masked = dy;
  if (relu_y) {
    masked = Tensor(dy.shape());
    activation_backward(ex, Activation::relu, Tensor(), *relu_y, dy, masked);
  }
  kernels::conv2d_backward_filter(ex, g, widened(ex, x, type), widened(ex, masked, type), nullptr,
                                  dw, db, ws);
  round_in_place(ex, dw, type);
  // The bias gradient from the float32 gradient, as on the GPU.
  if (db.defined()) column_sums(ex, masked, db);
}

void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                          Tensor& dx, Tensor& ws) {
  const DType type = compute_type(w, dy);
  kernels::conv2d_backward_data(ex, g, widened(ex, dy, type), widened(ex, w, type), dx, ws);
  round_in_place(ex, dx, type);
}

}  // namespace drun::kernels::mixed_reference
